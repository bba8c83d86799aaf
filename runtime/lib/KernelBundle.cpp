//===- KernelBundle.cpp - Kernel bundle files, directory and index --------===//

#include "dgemm/Runtime/KernelBundle.h"

#include "BundleText.h"

#include "dgemm/Runtime/Overrides.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace dgemm::runtime;
using namespace dgemm::runtime::bundle_text;

#ifndef DGEMM_DEFAULT_KERNEL_DIR
#define DGEMM_DEFAULT_KERNEL_DIR ""
#endif

namespace {

std::mutex &kernelDirMutex() {
  static std::mutex mutex;
  return mutex;
}

std::string &apiKernelDir() {
  static std::string dir;
  return dir;
}

} // namespace

Status dgemm::runtime::readFile(const std::string &path,
                                std::string &contents) {
  // A bundle is data the runtime trusts only this far: the file must be a
  // regular file inside the bundle directory (a symlink may point within
  // it), of bounded size. Errors never quote the file, whose content may be
  // something the link pointed at.
  auto unfit = [&](const std::string &why) {
    return Status::error(ErrorCode::BadKernelBundle,
                         "kernel bundle file '" + path + "' " + why);
  };
  auto cannotOpen = [&](int error) {
    return Status::error(ErrorCode::KernelNotFound,
                         "cannot open '" + path + "': " + std::strerror(error));
  };
  // PTX of the largest kernels is a few MiB, a cubin less; .meta and index
  // files are a few lines (an index a line per kernel).
  auto endsWith = [&](const char *ext) {
    size_t n = std::strlen(ext);
    return path.size() >= n && path.compare(path.size() - n, n, ext) == 0;
  };
  bool isPtx = endsWith(".ptx") || endsWith(".cubin");
  const uint64_t limit = isPtx ? uint64_t(64) << 20 : uint64_t(64) << 10;

  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (dir.empty())
    dir = "/";
  struct Freed {
    void operator()(char *p) const { std::free(p); }
  };
  std::unique_ptr<char, Freed> realDir(realpath(dir.c_str(), nullptr));
  if (!realDir)
    return cannotOpen(errno);
  std::unique_ptr<char, Freed> realFile(realpath(path.c_str(), nullptr));
  if (!realFile)
    return cannotOpen(errno);
  std::string inside = std::string(realDir.get());
  if (inside.back() != '/')
    inside += '/';
  if (std::string(realFile.get()).compare(0, inside.size(), inside) != 0)
    return unfit("resolves outside the bundle directory '" + dir +
                 "' (a symbolic link may only point within it)");

  // Looked at before it is opened (opening a device can act on it), and
  // again through the descriptor, in case the file was swapped meanwhile.
  auto notRegular = [&] {
    return unfit("is not a regular file (a FIFO, device, socket or "
                 "directory is never read)");
  };
  struct stat st;
  if (::stat(realFile.get(), &st) != 0)
    return cannotOpen(errno);
  if (!S_ISREG(st.st_mode))
    return notRegular();
  // O_NOFOLLOW: the name was resolved above, so a link now is a swap.
  // O_NONBLOCK: opening a FIFO swapped in must not wait for a writer.
  int fd =
      ::open(realFile.get(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno == ELOOP ? unfit("was replaced by a symbolic link")
                          : cannotOpen(errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0)
    return cannotOpen(errno);
  if (!S_ISREG(st.st_mode))
    return notRegular();
  auto tooLarge = [&] {
    return unfit(
        "is larger than " + std::to_string(limit) + " bytes, the most a " +
        (isPtx ? ".ptx or .cubin" : ".meta or index") + " file may hold");
  };
  if (uint64_t(st.st_size) > limit)
    return tooLarge();
  // Read at most one byte past the limit: the file may grow meanwhile.
  std::string data;
  char chunk[65536];
  for (;;) {
    ssize_t got = ::read(fd, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return cannotOpen(errno);
    if (got == 0)
      break;
    data.append(chunk, size_t(got));
    if (data.size() > limit)
      return tooLarge();
  }
  contents = std::move(data);
  return Status::success();
}

void dgemm::runtime::setKernelDir(const std::string &dir) {
  std::lock_guard<std::mutex> lock(kernelDirMutex());
  apiKernelDir() = dir;
}

Status dgemm::runtime::resolveKernelDir(std::string &dir) {
  if (const char *env = std::getenv("DGEMM_KERNEL_DIR"); env && *env) {
    dir = env;
    return Status::success();
  }
  {
    std::lock_guard<std::mutex> lock(kernelDirMutex());
    dir = apiKernelDir();
  }
  if (dir.empty())
    dir = DGEMM_DEFAULT_KERNEL_DIR;
  if (dir.empty())
    return Status::error(ErrorCode::KernelNotFound,
                         "no kernel bundle directory: set DGEMM_KERNEL_DIR, "
                         "call dgemm_set_kernel_dir, or configure with "
                         "-DDGEMM_DEFAULT_KERNEL_DIR");
  return Status::success();
}

std::string dgemm::runtime::regenerateCommand(const std::string &dir) {
  return "dgemm-translate --dgemm-to-ptx examples/kernels.mlir "
         "--bundle-dir=" +
         dir + " --bundle-all-candidates";
}

uint64_t dgemm::runtime::fnv1a64(const std::string &data) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char ch : data) {
    hash ^= ch;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

namespace {

std::string hex16(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016llx",
                static_cast<unsigned long long>(value));
  return buffer;
}

bool parseHex16(const std::string &text, uint64_t &value) {
  if (text.size() != 16)
    return false;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, 16);
  return ec == std::errc() && end == text.data() + text.size();
}

bool parseInt(const std::string &text, int &value) {
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

} // namespace

const BundleIndexEntry *BundleIndex::find(const std::string &entry) const {
  for (const BundleIndexEntry &kernel : kernels)
    if (kernel.entry == entry)
      return &kernel;
  return nullptr;
}

Status dgemm::runtime::parseBundleIndex(const std::string &text,
                                        const std::string &fileName,
                                        BundleIndex &index) {
  index = BundleIndex();
  std::string dir = fileName.substr(0, fileName.find_last_of('/'));
  auto regenerate = [&](const std::string &what) {
    return bad(fileName,
               what + "; regenerate the bundle with " + regenerateCommand(dir));
  };
  std::map<std::string, std::string> values;
  std::istringstream lines(text);
  std::string line;
  for (int lineNo = 1; std::getline(lines, line); ++lineNo) {
    line = trim(line.substr(0, line.find('#')));
    if (line.empty())
      continue;
    std::string where = "line " + std::to_string(lineNo);
    size_t eq = line.find('=');
    if (eq == std::string::npos) {
      // An older compiler's index: one entry name per line.
      if (!values.count("format") && isIdentifier(line))
        return regenerate(where + ": '" + line +
                          "' is a bare entry name: the index is from an "
                          "older compiler (no format=" +
                          std::to_string(kBundleIndexFormat) + " line)");
      return bad(fileName, where + ": expected key=value, got '" + line + "'");
    }
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (key != "kernel") {
      if (!values.emplace(key, value).second)
        return bad(fileName, where + ": key '" + key + "' appears twice");
      continue;
    }
    // kernel=<entry> meta=<hex> ptx=<hex> cubin=<hex|none>
    BundleIndexEntry kernel;
    std::istringstream fields(value);
    std::string field;
    fields >> kernel.entry;
    if (!isIdentifier(kernel.entry))
      return bad(fileName, where +
                               ": 'kernel=' must start with a PTX "
                               "identifier, got '" +
                               kernel.entry + "'");
    bool haveMeta = false, havePtx = false, haveCubin = false;
    while (fields >> field) {
      size_t at = field.find('=');
      std::string name = field.substr(0, at);
      std::string sum = at == std::string::npos ? "" : field.substr(at + 1);
      uint64_t parsed = 0;
      bool isNone = name == "cubin" && sum == "none";
      bool *seen = name == "meta"    ? &haveMeta
                   : name == "ptx"   ? &havePtx
                   : name == "cubin" ? &haveCubin
                                     : nullptr;
      if (!seen || *seen || (!isNone && !parseHex16(sum, parsed)))
        return bad(fileName,
                   where + ": kernel " + kernel.entry + ": '" + field +
                       "' must be meta=, ptx= or cubin= (each once) with 16 "
                       "hexadecimal digits (cubin=none for PTX only)");
      *seen = true;
      if (name == "meta")
        kernel.meta = parsed;
      else if (name == "ptx")
        kernel.ptx = parsed;
      else if (!isNone)
        kernel.cubin = parsed;
    }
    if (!haveMeta || !havePtx || !haveCubin)
      return bad(fileName, where + ": kernel " + kernel.entry +
                               " needs meta=, ptx= and cubin= checksums");
    if (index.find(kernel.entry))
      return bad(fileName,
                 where + ": kernel " + kernel.entry + " is listed twice");
    index.kernels.push_back(std::move(kernel));
  }

  auto take = [&](const char *key, std::string &out) -> Status {
    auto it = values.find(key);
    if (it == values.end())
      return bad(fileName, std::string("key '") + key + "' is missing");
    out = it->second;
    return Status::success();
  };
  std::string raw;
  if (!values.count("format"))
    return regenerate("key 'format' is missing: the index is from an older "
                      "compiler or not a dgemm bundle index");
  if (!parseInt(values["format"], index.format) ||
      index.format != kBundleIndexFormat)
    return regenerate("key 'format' must be " +
                      std::to_string(kBundleIndexFormat) + ", got '" +
                      values["format"] + "'");
  if (Status s = take("heuristics_version", raw); !s.ok())
    return s;
  if (!parseInt(raw, index.heuristicsVersion) ||
      index.heuristicsVersion != heuristics::kHeuristicsVersion)
    return regenerate("key 'heuristics_version' must be " +
                      std::to_string(heuristics::kHeuristicsVersion) +
                      " (this runtime's selection rules), got '" + raw + "'");
  if (Status s = take("kernel_abi", raw); !s.ok())
    return s;
  if (!parseInt(raw, index.kernelAbi) || index.kernelAbi != kKernelAbiVersion)
    return regenerate("key 'kernel_abi' must be " +
                      std::to_string(kKernelAbiVersion) + ", got '" + raw +
                      "'");
  if (Status s = take("git_commit", index.gitCommit); !s.ok())
    return s;
  if (Status s = take("target", index.target); !s.ok())
    return s;
  if (Status s = take("ptx_isa", index.ptxIsa); !s.ok())
    return s;
  if (values.count("ptxas"))
    index.ptxasRelease = values["ptxas"];
  if (Status s = take("checksum", raw); !s.ok())
    return s;
  if (raw != "fnv1a64")
    return bad(fileName, "key 'checksum' must be fnv1a64, got '" + raw + "'");
  if (index.kernels.empty())
    return regenerate("it lists no kernel");
  return Status::success();
}

Status dgemm::runtime::loadBundleIndex(const std::string &dir,
                                       BundleIndex &index) {
  std::string path = dir + "/index.txt";
  std::string text;
  if (Status s = readFile(path, text); !s.ok()) {
    if (s.code() != ErrorCode::KernelNotFound)
      return s;
    return Status::error(
        ErrorCode::KernelNotFound,
        "kernel bundle '" + dir + "' has no index.txt (" + s.message() +
            "): dgemm-translate writes it last, so the bundle is "
            "half-written, from an older compiler, or not a bundle; "
            "regenerate it with " +
            regenerateCommand(dir));
  }
  if (Status s = parseBundleIndex(text, path, index); !s.ok())
    return s;
  // Complete: every file the index lists is there.
  std::string missing;
  int count = 0;
  for (const BundleIndexEntry &kernel : index.kernels) {
    std::vector<std::string> exts = {".meta", ".ptx"};
    if (kernel.cubin)
      exts.push_back(".cubin");
    for (const std::string &ext : exts) {
      struct stat st;
      std::string file = dir + "/" + kernel.entry + ext;
      if (::stat(file.c_str(), &st) == 0)
        continue;
      if (count++ < 3)
        missing += (missing.empty() ? "" : ", ") + kernel.entry + ext;
    }
  }
  if (count)
    return Status::error(ErrorCode::BadKernelBundle,
                         "kernel bundle '" + dir +
                             "' is incomplete: " + std::to_string(count) +
                             " file(s) its index.txt lists are missing (" +
                             missing + (count > 3 ? ", ..." : "") +
                             "); regenerate it with " + regenerateCommand(dir));
  return Status::success();
}

Status dgemm::runtime::readIndexedFile(const std::string &dir,
                                       const std::string &entry,
                                       const std::string &ext,
                                       uint64_t checksum,
                                       std::string &contents) {
  std::string path = dir + "/" + entry + ext;
  if (Status s = readFile(path, contents); !s.ok())
    return s;
  uint64_t actual = fnv1a64(contents);
  if (actual != checksum)
    return bad(path, "checksum " + hex16(actual) + " differs from " +
                         hex16(checksum) +
                         " in index.txt (a half-written or edited bundle); "
                         "regenerate it with " +
                         regenerateCommand(dir));
  return Status::success();
}

Status dgemm::runtime::checkKernelBundle(const std::string &dir,
                                         BundleIndex &index) {
  if (Status s = loadBundleIndex(dir, index); !s.ok())
    return s;
  std::string contents;
  for (const BundleIndexEntry &kernel : index.kernels) {
    if (Status s =
            readIndexedFile(dir, kernel.entry, ".meta", kernel.meta, contents);
        !s.ok())
      return s;
    if (Status s =
            readIndexedFile(dir, kernel.entry, ".ptx", kernel.ptx, contents);
        !s.ok())
      return s;
    if (kernel.cubin)
      if (Status s = readIndexedFile(dir, kernel.entry, ".cubin", *kernel.cubin,
                                     contents);
          !s.ok())
        return s;
  }
  return Status::success();
}

Status dgemm::runtime::checkDriverCanLoadCubin(int driverVersion,
                                               const std::string &ptxasRelease,
                                               const std::string &path) {
  int major = 0;
  auto [end, ec] = std::from_chars(
      ptxasRelease.data(), ptxasRelease.data() + ptxasRelease.size(), major);
  if (ec != std::errc() || end == ptxasRelease.data() || driverVersion <= 0 ||
      driverVersion / 1000 >= major)
    return Status::success();
  return Status::error(
      ErrorCode::NoDriver,
      "no CUDA driver/device: the CUDA driver supports CUDA " +
          std::to_string(driverVersion / 1000) + "." +
          std::to_string(driverVersion % 1000 / 10) + ", but '" + path +
          "' was assembled by the ptxas of CUDA " + ptxasRelease +
          ", whose cubins need a CUDA " + std::to_string(major) +
          ".x driver; update the driver, or regenerate the bundle with a "
          "ptxas of CUDA " +
          std::to_string(driverVersion / 1000) +
          ".x (dgemm-translate --ptxas=PATH) or without cubins (--ptxas=none)");
}

std::string dgemm::runtime::ptxIsaOf(const std::string &ptx) {
  size_t at = ptx.rfind(".version ", 0) == 0 ? 0 : ptx.find("\n.version ");
  if (at == std::string::npos)
    return "";
  at = ptx.find(".version ", at) + 9;
  size_t end = ptx.find_first_of(" \t\r\n", at);
  return ptx.substr(at, end == std::string::npos ? end : end - at);
}

int dgemm::runtime::driverVersionForPtxIsa(const std::string &ptxIsa) {
  // The PTX ISA release history (PTX ISA manual, "Release Notes"): ISA 8.x
  // shipped with CUDA 12.x up to 8.5 / 12.5; 8.6 came with 12.7, 8.7 with
  // 12.8, 8.8 with 12.9, 9.0 with 13.0, 9.1 with 13.1.
  static const std::pair<const char *, int> kTable[] = {
      {"8.0", 12000}, {"8.1", 12010}, {"8.2", 12020}, {"8.3", 12030},
      {"8.4", 12040}, {"8.5", 12050}, {"8.6", 12070}, {"8.7", 12080},
      {"8.8", 12090}, {"9.0", 13000}, {"9.1", 13010},
  };
  for (const auto &[isa, driver] : kTable)
    if (ptxIsa == isa)
      return driver;
  return 0;
}

Status dgemm::runtime::writeBundleIndex(const std::string &dir) {
  std::vector<std::string> entries;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 5 && name.compare(name.size() - 5, 5, ".meta") == 0)
        entries.push_back(name.substr(0, name.size() - 5));
    }
    ::closedir(d);
  } else {
    return Status::error(ErrorCode::KernelNotFound,
                         "cannot open bundle directory '" + dir +
                             "': " + std::strerror(errno));
  }
  std::sort(entries.begin(), entries.end());
  std::string kernels, isa;
  for (const std::string &entry : entries) {
    std::string meta, ptx, cubin;
    if (Status s = readFile(dir + "/" + entry + ".meta", meta); !s.ok())
      return s;
    if (Status s = readFile(dir + "/" + entry + ".ptx", ptx); !s.ok())
      return s;
    if (isa.empty())
      isa = ptxIsaOf(ptx);
    bool haveCubin = readFile(dir + "/" + entry + ".cubin", cubin).ok();
    kernels += "kernel=" + entry + " meta=" + hex16(fnv1a64(meta)) +
               " ptx=" + hex16(fnv1a64(ptx)) +
               " cubin=" + (haveCubin ? hex16(fnv1a64(cubin)) : "none") + "\n";
  }
  std::ofstream out(dir + "/index.txt", std::ios::binary | std::ios::trunc);
  out << "format=" << kBundleIndexFormat << "\ngit_commit=hand-made\n"
      << "heuristics_version=" << heuristics::kHeuristicsVersion
      << "\nkernel_abi=" << kKernelAbiVersion
      << "\ntarget=sm_90a\nptx_isa=" << (isa.empty() ? "unknown" : isa)
      << "\nchecksum=fnv1a64\n"
      << kernels;
  out.close();
  if (!out)
    return Status::error(ErrorCode::Internal,
                         "cannot write '" + dir + "/index.txt'");
  return Status::success();
}

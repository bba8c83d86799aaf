//===- KernelBundle.cpp - Kernel bundle lookup and .meta files ------------===//

#include "dgemm/Runtime/KernelBundle.h"

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

#ifndef DGEMM_DEFAULT_KERNEL_DIR
#define DGEMM_DEFAULT_KERNEL_DIR ""
#endif

namespace {

/// An integer key: its field and inclusive range, plus an optional multiple;
/// an optional key may be absent (the field keeps its default).
struct IntKey {
  const char *name;
  int KernelMeta::*field;
  int min, max, multipleOf;
  bool optional = false;
};

// Ranges are what the launch can honour (TMA box dims <= 256, 1024 threads
// per block, portable cluster size 8); the heuristics' own rules are checked
// through checkMetaMatchesConfig.
const IntKey kIntKeys[] = {
    {"abi", &KernelMeta::abi, kKernelAbiVersion, kKernelAbiVersion, 1},
    {"block_m", &KernelMeta::blockM, 8, 256, 8},
    {"block_n", &KernelMeta::blockN, 8, 256, 8},
    // 128 FP8 or 64 BF16 elements: one 128-byte swizzle row.
    {"block_k", &KernelMeta::blockK, 64, 128, 64},
    {"stages", &KernelMeta::stages, 1, 64, 1},
    {"desc_slots", &KernelMeta::descSlots, 0, 64, 1},
    {"math_warpgroups", &KernelMeta::mathWarpgroups, 1, 7, 1},
    {"threads", &KernelMeta::threads, 128, 1024, 128},
    {"cluster_m", &KernelMeta::clusterM, 1, 8, 1},
    {"cluster_n", &KernelMeta::clusterN, 1, 8, 1},
    {"smem_bytes", &KernelMeta::smemBytes, 0, 1 << 20, 1},
    {"red_max_blocks", &KernelMeta::redMaxBlocks, 0, 1 << 20, 1, true},
    {"quad_b", &KernelMeta::quadB, 0, 1, 1, true},
    {"d_f32", &KernelMeta::dF32, 0, 1, 1, true},
    {"accumulate", &KernelMeta::accumulate, 0, 1, 1, true},
};

// How to rebuild a bundle this runtime can read (docs/Runtime.md).
constexpr const char *kRegenerateCommand =
    "`dgemm-translate --dgemm-to-ptx examples/kernels.mlir "
    "--bundle-dir=DIR --bundle-all-candidates`";

std::string trim(const std::string &s) {
  size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos)
    return "";
  size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

Status bad(const std::string &fileName, const std::string &what) {
  return Status::error(ErrorCode::BadKernelBundle, fileName + ": " + what);
}

bool isIdentifier(const std::string &s) {
  if (s.empty())
    return false;
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' ||
          ch == '$'))
      return false;
  return !std::isdigit(static_cast<unsigned char>(s[0]));
}

std::mutex &kernelDirMutex() {
  static std::mutex mutex;
  return mutex;
}

std::string &apiKernelDir() {
  static std::string dir;
  return dir;
}

} // namespace

Status dgemm::runtime::parseKernelMeta(const std::string &text,
                                       const std::string &fileName,
                                       const std::string &expectedEntry,
                                       KernelMeta &meta) {
  meta = KernelMeta();
  std::map<std::string, std::string> values;
  std::istringstream lines(text);
  std::string line;
  for (int lineNo = 1; std::getline(lines, line); ++lineNo) {
    line = trim(line.substr(0, line.find('#')));
    if (line.empty())
      continue;
    size_t eq = line.find('=');
    std::string where = "line " + std::to_string(lineNo);
    if (eq == std::string::npos)
      return bad(fileName, where + ": expected key=value, got '" + line + "'");
    std::string key = trim(line.substr(0, eq));
    if (key.empty())
      return bad(fileName, where + ": empty key");
    if (!values.emplace(key, trim(line.substr(eq + 1))).second)
      return bad(fileName, where + ": key '" + key + "' appears twice");
  }

  auto take = [&](const char *key, std::string &out) -> Status {
    auto it = values.find(key);
    if (it == values.end())
      return bad(fileName, std::string("key '") + key + "' is missing");
    out = it->second;
    return Status::success();
  };

  if (Status s = take("entry", meta.entry); !s.ok())
    return s;
  if (!isIdentifier(meta.entry))
    return bad(fileName, "key 'entry' must be a PTX identifier, got '" +
                             meta.entry + "'");
  if (!expectedEntry.empty() && meta.entry != expectedEntry)
    return bad(fileName, "key 'entry' must equal the file stem '" +
                             expectedEntry + "', got '" + meta.entry + "'");
  if (Status s = take("kind", meta.kind); !s.ok())
    return s;
  std::optional<heuristics::Kind> kind = heuristics::parseKind(meta.kind);
  if (!kind)
    return bad(fileName, "key 'kind' must be 'k_grouped_contiguous', "
                         "'m_grouped_contiguous', 'm_grouped_contiguous_psum', "
                         "'m_grouped_masked' or 'normal' (the kinds this "
                         "runtime launches), got '" +
                             meta.kind + "'");

  for (const IntKey &key : kIntKeys) {
    if (key.optional && !values.count(key.name))
      continue;
    std::string raw;
    if (Status s = take(key.name, raw); !s.ok())
      return s;
    int value = 0;
    auto [end, ec] =
        std::from_chars(raw.data(), raw.data() + raw.size(), value);
    bool parsed = ec == std::errc() && end == raw.data() + raw.size();
    if (!parsed || value < key.min || value > key.max ||
        value % key.multipleOf != 0) {
      std::string rule = key.min == key.max
                             ? "be " + std::to_string(key.min)
                             : "be an integer in [" + std::to_string(key.min) +
                                   ", " + std::to_string(key.max) + "]";
      if (key.multipleOf > 1)
        rule += " and a multiple of " + std::to_string(key.multipleOf);
      return bad(fileName, std::string("key '") + key.name + "' must " + rule +
                               ", got '" + raw + "'");
    }
    meta.*key.field = value;
  }
  if (meta.clusterM * meta.clusterN > 8)
    return bad(fileName,
               "keys 'cluster_m' * 'cluster_n' must be <= 8 (portable "
               "cluster size), got " +
                   std::to_string(meta.clusterM * meta.clusterN));

  // The keys the epilogue enum brought. A compiler from before it wrote
  // in_place_only= and park= instead, whose kernels this runtime cannot
  // name.
  auto takeNew = [&](const char *key, std::string &out) -> Status {
    if (values.count(key)) {
      out = values.at(key);
      return Status::success();
    }
    std::string what = std::string("key '") + key + "' is missing";
    if (values.count("in_place_only") || values.count("park"))
      what += " (it has the retired keys 'in_place_only'/'park')";
    return bad(fileName, what +
                             ": the bundle is from an older compiler and "
                             "must be regenerated with " +
                             kRegenerateCommand);
  };
  std::string raw;
  if (Status s = takeNew("epilogue", raw); !s.ok())
    return s;
  std::optional<heuristics::Epilogue> epilogue = heuristics::parseEpilogue(raw);
  if (!epilogue)
    return bad(fileName, "key 'epilogue' must be register, reduction, "
                         "in_place or parked, got '" +
                             raw + "'");
  meta.epilogue = *epilogue;
  if (Status s = takeNew("unsafe", raw); !s.ok())
    return s;
  std::optional<unsigned> unsafe = heuristics::parseUnsafe(raw);
  if (!unsafe)
    return bad(fileName, "key 'unsafe' must be none or a comma-separated "
                         "list of skip_descriptor_drain and "
                         "skip_proxy_fence, got '" +
                             raw + "'");
  meta.unsafe = *unsafe;
  if (Status s = takeNew("heuristics_version", raw); !s.ok())
    return s;
  auto [end, ec] = std::from_chars(raw.data(), raw.data() + raw.size(),
                                   meta.heuristicsVersion);
  if (ec != std::errc() || end != raw.data() + raw.size() ||
      meta.heuristicsVersion != heuristics::kHeuristicsVersion)
    return bad(fileName,
               "key 'heuristics_version' must be " +
                   std::to_string(heuristics::kHeuristicsVersion) +
                   " (this runtime's selection rules), got '" + raw +
                   "': the bundle was built with other rules and may lack "
                   "the kernels this runtime selects; regenerate it with " +
                   kRegenerateCommand);

  // The BF16 kernels' keys, absent from an FP8 kernel's file.
  if (auto it = values.find("dtype"); it != values.end()) {
    std::optional<heuristics::Dtype> dtype = heuristics::parseDtype(it->second);
    if (!dtype)
      return bad(fileName,
                 "key 'dtype' must be fp8 or bf16, got '" + it->second + "'");
    meta.dtype = *dtype;
  }
  for (auto [key, field] : {std::pair{"major_a", &KernelMeta::majorA},
                            std::pair{"major_b", &KernelMeta::majorB}}) {
    auto it = values.find(key);
    if (it == values.end())
      continue;
    std::optional<heuristics::Major> major = heuristics::parseMajor(it->second);
    if (!major)
      return bad(fileName, std::string("key '") + key +
                               "' must be k or mn, got '" + it->second + "'");
    meta.*field = *major;
  }
  return Status::success();
}

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

Status dgemm::runtime::loadKernelMeta(const std::string &dir,
                                      const std::string &entry,
                                      KernelMeta &meta) {
  std::string path = dir + "/" + entry + ".meta";
  std::string text;
  if (Status s = readFile(path, text); !s.ok()) {
    // A file that is there but not readable as a bundle file (not regular,
    // outside the bundle, too large) is a bad bundle, as for the .ptx.
    if (s.code() != ErrorCode::KernelNotFound)
      return s;
    return Status::error(
        ErrorCode::KernelNotFound,
        "kernel bundle '" + dir + "' has no kernel '" + entry + "' (" +
            s.message() +
            "); build the bundle for every configuration the heuristics can "
            "select: " +
            regenerateCommand(dir));
  }
  return parseKernelMeta(text, path, entry, meta);
}

Status dgemm::runtime::checkKernelSafety(const KernelMeta &meta,
                                         const std::string &fileName,
                                         bool allowUnsafe) {
  if (meta.unsafe == 0 || allowUnsafe)
    return Status::success();
  bool several = (meta.unsafe & (meta.unsafe - 1)) != 0;
  return bad(fileName, "kernel " + meta.entry + " was built with unsafe " +
                           (several ? "options " : "option ") +
                           heuristics::unsafeNames(meta.unsafe) +
                           " (a race demonstration); refusing to load it: "
                           "call dgemm_set_allow_unsafe_kernels(1) or set "
                           "DGEMM_ALLOW_UNSAFE_KERNELS=1");
}

Status dgemm::runtime::checkMetaMatchesConfig(
    const KernelMeta &meta, const heuristics::KernelConfig &config,
    const std::string &fileName, bool allowUnsafe) {
  if (Status s = checkKernelSafety(meta, fileName, allowUnsafe); !s.ok())
    return s;
  struct Pair {
    const char *key;
    std::string meta, config;
  };
  auto text = [](int value) { return std::to_string(value); };
  auto unsafeText = [](unsigned unsafe) {
    return unsafe ? heuristics::unsafeNames(unsafe) : std::string("none");
  };
  // The tiling keys, then what the configuration implies: its epilogue and
  // unsafe options (named by the entry, so a mismatch is a renamed file),
  // and the launch's block size and shared memory.
  const Pair pairs[] = {
      {"kind", meta.kind, heuristics::kindName(config.kind)},
      {"block_m", text(meta.blockM), text(config.blockM)},
      {"block_n", text(meta.blockN), text(config.blockN)},
      {"block_k", text(meta.blockK), text(config.blockK)},
      {"stages", text(meta.stages), text(config.stages)},
      {"desc_slots", text(meta.descSlots), text(config.descSlots)},
      {"math_warpgroups", text(meta.mathWarpgroups),
       text(config.mathWarpgroups)},
      {"cluster_m", text(meta.clusterM), text(config.clusterM)},
      {"cluster_n", text(meta.clusterN), text(config.clusterN)},
      {"red_max_blocks", text(meta.redMaxBlocks), text(config.redMaxBlocks)},
      {"epilogue", heuristics::epilogueName(meta.epilogue),
       heuristics::epilogueName(config.epilogue)},
      {"quad_b", text(meta.quadB), text(config.quadB)},
      {"unsafe", unsafeText(meta.unsafe), unsafeText(config.unsafe)},
      {"dtype", heuristics::dtypeName(meta.dtype),
       heuristics::dtypeName(config.dtype)},
      {"major_a", heuristics::majorName(meta.majorA),
       heuristics::majorName(config.majorA)},
      {"major_b", heuristics::majorName(meta.majorB),
       heuristics::majorName(config.majorB)},
      {"d_f32", text(meta.dF32), text(config.dF32)},
      {"accumulate", text(meta.accumulate), text(config.accumulate)},
      {"threads", text(meta.threads), text(config.threads())},
      {"smem_bytes", text(meta.smemBytes), text(config.smemBytes())},
  };
  for (const Pair &p : pairs)
    if (p.meta != p.config)
      return bad(fileName, std::string("key '") + p.key + "' is " + p.meta +
                               " but the selected configuration has " +
                               p.config +
                               " (bundle built from other heuristics?)");
  return Status::success();
}

Status
dgemm::runtime::checkMetaMatchesConfig(const KernelMeta &meta,
                                       const heuristics::KernelConfig &config,
                                       const std::string &fileName) {
  return checkMetaMatchesConfig(meta, config, fileName, unsafeKernelsAllowed());
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

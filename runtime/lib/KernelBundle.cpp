//===- KernelBundle.cpp - Kernel bundle lookup and .meta files ------------===//

#include "dgemm/Runtime/KernelBundle.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

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
    {"block_k", &KernelMeta::blockK, 128, 128, 1},
    {"stages", &KernelMeta::stages, 1, 64, 1},
    {"desc_slots", &KernelMeta::descSlots, 1, 64, 1},
    {"math_warpgroups", &KernelMeta::mathWarpgroups, 1, 7, 1},
    {"threads", &KernelMeta::threads, 128, 1024, 128},
    {"cluster_m", &KernelMeta::clusterM, 1, 8, 1},
    {"cluster_n", &KernelMeta::clusterN, 1, 8, 1},
    {"smem_bytes", &KernelMeta::smemBytes, 0, 1 << 20, 1},
    {"red_max_blocks", &KernelMeta::redMaxBlocks, 0, 1 << 20, 1, true},
    {"in_place_only", &KernelMeta::inPlaceOnly, 0, 1, 1, true},
    {"quad_b", &KernelMeta::quadB, 0, 1, 1, true},
    {"park", &KernelMeta::park, 0, 1, 1, true},
};

constexpr const char *kKind = "k_grouped_contiguous";

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
  if (meta.kind != kKind)
    return bad(fileName, std::string("key 'kind' must be '") + kKind +
                             "', got '" + meta.kind + "'");

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
  return Status::success();
}

Status dgemm::runtime::readFile(const std::string &path,
                                std::string &contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(ErrorCode::KernelNotFound,
                         "cannot open '" + path + "'");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  contents = buffer.str();
  return Status::success();
}

Status dgemm::runtime::loadKernelMeta(const std::string &dir,
                                      const std::string &entry,
                                      KernelMeta &meta) {
  std::string path = dir + "/" + entry + ".meta";
  std::string text;
  if (Status s = readFile(path, text); !s.ok())
    return Status::error(ErrorCode::KernelNotFound,
                         "kernel bundle '" + dir + "' has no kernel '" + entry +
                             "' (" + s.message() +
                             "); build the bundle for every configuration "
                             "the heuristics can select");
  return parseKernelMeta(text, path, entry, meta);
}

Status
dgemm::runtime::checkMetaMatchesConfig(const KernelMeta &meta,
                                       const heuristics::KernelConfig &config,
                                       const std::string &fileName) {
  struct Pair {
    const char *key;
    int meta, config;
  };
  const Pair pairs[] = {
      {"block_m", meta.blockM, config.blockM},
      {"block_n", meta.blockN, config.blockN},
      {"block_k", meta.blockK, config.blockK},
      {"stages", meta.stages, config.stages},
      {"desc_slots", meta.descSlots, config.descSlots},
      {"math_warpgroups", meta.mathWarpgroups, config.mathWarpgroups},
      {"cluster_m", meta.clusterM, config.clusterM},
      {"cluster_n", meta.clusterN, config.clusterN},
      {"red_max_blocks", meta.redMaxBlocks, config.redMaxBlocks},
      {"in_place_only", meta.inPlaceOnly, config.inPlaceOnly},
      {"quad_b", meta.quadB, config.quadB},
      {"park", meta.park, config.park},
  };
  for (const Pair &p : pairs)
    if (p.meta != p.config)
      return bad(fileName, std::string("key '") + p.key + "' is " +
                               std::to_string(p.meta) +
                               " but the selected configuration has " +
                               std::to_string(p.config) +
                               " (bundle built from other heuristics?)");
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

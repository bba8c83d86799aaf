//===- KernelMeta.cpp - A kernel's .meta file: parse, load, check ---------===//
//
// The .meta file beside each kernel of a bundle: its keys and their ranges,
// the file read from the bundle directory, and the checks against the
// configuration the heuristics chose (docs/KernelABI.md).
//
//===----------------------------------------------------------------------===//

#include "dgemm/Runtime/KernelBundle.h"

#include "BundleText.h"

#include "dgemm/Runtime/Overrides.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>

using namespace dgemm::runtime;
using namespace dgemm::runtime::bundle_text;

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

//===- Overrides.cpp - The runtime's DGEMM_* environment overrides --------===//
//
// Read once: the environment is not expected to change under a running
// process, and reading it on every call cost a getenv per variable per call
// and let a typo pass silently.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Runtime/Overrides.h"

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <mutex>
#include <string_view>

using namespace dgemm::runtime;
using dgemm::heuristics::Epilogue;

namespace {

/// Parses one variable after another, stopping at the first error.
class Parser {
public:
  Parser(const std::function<const char *(const char *)> &lookup,
         std::string &error)
      : lookup_(lookup), error_(error) {}

  /// The variable's value; nullopt when unset or empty (the same as unset),
  /// or after an error.
  std::optional<std::string_view> value(const char *name) {
    if (!error_.empty())
      return std::nullopt;
    const char *raw = lookup_(name);
    if (!raw || !*raw)
      return std::nullopt;
    return std::string_view(raw);
  }

  /// A decimal integer in [min, max] that is `rule` (its description).
  std::optional<int64_t> integer(const char *name, int64_t min, int64_t max,
                                 const std::string &rule) {
    std::optional<std::string_view> text = value(name);
    if (!text)
      return std::nullopt;
    int64_t parsed = 0;
    auto [end, ec] =
        std::from_chars(text->data(), text->data() + text->size(), parsed);
    if (ec != std::errc() || end != text->data() + text->size() ||
        parsed < min || parsed > max) {
      fail(name, rule, *text);
      return std::nullopt;
    }
    return parsed;
  }

  /// One of `allowed`, by its decimal spelling.
  std::optional<int> oneOf(const char *name, std::initializer_list<int> allowed,
                           const std::string &rule) {
    std::optional<std::string_view> text = value(name);
    if (!text)
      return std::nullopt;
    for (int v : allowed)
      if (*text == std::to_string(v))
        return v;
    fail(name, rule, *text);
    return std::nullopt;
  }

  void fail(const char *name, const std::string &rule, std::string_view got) {
    if (error_.empty())
      error_ = std::string("environment variable ") + name + " must be " +
               rule + ", got '" + std::string(got) +
               "' (unset it for the default)";
  }

  void failCombination(const std::string &message) {
    if (error_.empty())
      error_ = "environment variables " + message;
  }

  bool ok() const { return error_.empty(); }

private:
  const std::function<const char *(const char *)> &lookup_;
  std::string &error_;
};

/// DGEMM_EPILOGUE, or its older spellings DGEMM_IN_PLACE_ONLY and
/// DGEMM_PARK (the fields the epilogue replaced), into `o`.
void parseEpilogue(Parser &parser, dgemm::heuristics::ConfigOverrides &o) {
  std::optional<std::string_view> epilogue = parser.value("DGEMM_EPILOGUE");
  if (epilogue) {
    o.epilogue = dgemm::heuristics::parseEpilogue(*epilogue);
    if (!o.epilogue)
      parser.fail("DGEMM_EPILOGUE", "register, reduction, in_place or parked",
                  *epilogue);
  }
  std::optional<int> inPlaceOnly =
      parser.oneOf("DGEMM_IN_PLACE_ONLY", {0, 1}, "0 or 1");
  std::optional<int> park = parser.oneOf("DGEMM_PARK", {0, 1}, "0 or 1");
  if (!parser.ok() || (!inPlaceOnly && !park))
    return;
  if (epilogue) {
    parser.failCombination(
        "DGEMM_IN_PLACE_ONLY and DGEMM_PARK must not be set with "
        "DGEMM_EPILOGUE, which replaces them");
    return;
  }
  if (inPlaceOnly == 0) {
    if (park == 1) {
      parser.failCombination("DGEMM_PARK=1 (the parked in-place kernel) and "
                             "DGEMM_IN_PLACE_ONLY=0 contradict each other");
      return;
    }
    // Not the in-place kernel: DGEMM_RED_MAX_BLOCKS picks between the
    // register and reduction epilogues where set.
    if (!o.redMaxBlocks)
      o.epilogue = Epilogue::Register;
    return;
  }
  // DGEMM_IN_PLACE_ONLY=1, DGEMM_PARK=0 or DGEMM_PARK=1: the in-place
  // kernel, parked with DGEMM_PARK=1.
  o.epilogue = park == 1 ? Epilogue::Parked : Epilogue::InPlace;
  if (o.redMaxBlocks && *o.redMaxBlocks != 0)
    parser.failCombination(
        "DGEMM_RED_MAX_BLOCKS=" + std::to_string(*o.redMaxBlocks) +
        " (the reduction epilogue) and " +
        (inPlaceOnly ? "DGEMM_IN_PLACE_ONLY=1" : "DGEMM_PARK") +
        " (the in-place kernel) contradict each other");
}

std::once_flag &parsedOnce() {
  static std::once_flag once;
  return once;
}

std::shared_ptr<const EnvOverrides> &current() {
  static std::shared_ptr<const EnvOverrides> overrides;
  return overrides;
}

std::shared_ptr<const EnvOverrides> parseEnvironment() {
  return std::make_shared<const EnvOverrides>(
      parseEnvOverrides([](const char *name) { return std::getenv(name); }));
}

// -1: setAllowUnsafeKernels never called; else its value.
std::atomic<int> apiAllowsUnsafe{-1};

} // namespace

EnvOverrides dgemm::runtime::parseEnvOverrides(
    const std::function<const char *(const char *)> &lookup) {
  EnvOverrides env;
  Parser parser(lookup, env.error);
  heuristics::ConfigOverrides &o = env.config;
  o.descSlots = parser.oneOf("DGEMM_DESC_SLOTS", {1, 2}, "1 or 2");
  o.clusterM = parser.oneOf("DGEMM_CLUSTER_M", {1, 2}, "1 or 2");
  if (std::optional<int64_t> blockN = parser.integer(
          "DGEMM_BLOCK_N", 8, 256,
          "a multiple of 8 in [8, 256] (a tile width in columns)");
      blockN && *blockN % 8 != 0)
    parser.fail("DGEMM_BLOCK_N",
                "a multiple of 8 in [8, 256] (a tile width in columns)",
                std::to_string(*blockN));
  else if (blockN)
    o.blockN = int(*blockN);
  o.blockM = parser.oneOf("DGEMM_BLOCK_M", {64, 128, 192},
                          "64, 128 or 192 (a tile height in rows)");
  if (std::optional<int64_t> stages = parser.integer(
          "DGEMM_STAGES", 2, 64, "an integer in [2, 64] (pipeline stages)"))
    o.stages = int(*stages);
  if (std::optional<int64_t> blocks =
          parser.integer("DGEMM_RED_MAX_BLOCKS", 0, 1 << 20,
                         "an integer in [0, 1048576] (K blocks; 0: the "
                         "register epilogue)"))
    o.redMaxBlocks = int(*blocks);
  parseEpilogue(parser, o);
  o.quadB = parser.oneOf("DGEMM_QUAD_B", {0, 1}, "0 or 1");
  if (std::optional<std::string_view> unsafe = parser.value("DGEMM_UNSAFE")) {
    if (std::optional<unsigned> bits = heuristics::parseUnsafe(*unsafe))
      o.unsafe = *bits;
    else
      parser.fail("DGEMM_UNSAFE",
                  "none, or a comma-separated list of skip_descriptor_drain "
                  "and skip_proxy_fence",
                  *unsafe);
  }
  if (std::optional<int64_t> band =
          parser.integer("DGEMM_RASTER_BAND", 0, 65536,
                         "an integer in [0, 65536] (m-blocks per band)"))
    env.rasterBand = uint32_t(*band);
  if (std::optional<int> allow =
          parser.oneOf("DGEMM_ALLOW_UNSAFE_KERNELS", {0, 1}, "0 or 1"))
    env.allowUnsafeKernels = *allow == 1;
  // The rules of the values together (red_max_blocks against the epilogue).
  if (parser.ok())
    if (std::string why = heuristics::checkOverrides(o); !why.empty())
      parser.failCombination("DGEMM_*: " + why);
  return env;
}

std::shared_ptr<const EnvOverrides> dgemm::runtime::envOverrides() {
  std::call_once(parsedOnce(),
                 [] { std::atomic_store(&current(), parseEnvironment()); });
  return std::atomic_load(&current());
}

void dgemm::runtime::reloadEnvOverridesForTesting() {
  std::call_once(parsedOnce(), [] {});
  std::atomic_store(&current(), parseEnvironment());
}

void dgemm::runtime::setAllowUnsafeKernels(bool allow) {
  apiAllowsUnsafe.store(allow ? 1 : 0);
}

bool dgemm::runtime::unsafeKernelsAllowed() {
  int api = apiAllowsUnsafe.load();
  if (api >= 0)
    return api == 1;
  std::shared_ptr<const EnvOverrides> env = envOverrides();
  return env->error.empty() && env->allowUnsafeKernels;
}

void dgemm::runtime::resetAllowUnsafeKernelsForTesting() {
  apiAllowsUnsafe.store(-1);
}

//===- Validation.cpp - Argument checks of the k-grouped GEMM -------------===//
//
// Messages use the C ABI's argument names (dgemm_runtime.h), which are also
// the Python package's.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Runtime/Validation.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <optional>

using namespace dgemm::runtime;
using dgemm::heuristics::KernelConfig;

namespace {

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
// cuTensorMapEncodeTiled: every globalDim must be <= 2^32.
constexpr int64_t kMaxTensorMapDim = int64_t(1) << 32;
constexpr int64_t kBlockK = 128;

/// The decimal integer that environment variable `name` holds as a whole, if
/// it is set to one (experiment overrides ignore anything else).
std::optional<long> envInteger(const char *name) {
  const char *env = std::getenv(name);
  if (!env || !*env)
    return std::nullopt;
  char *end = nullptr;
  long value = std::strtol(env, &end, 10);
  if (*end != '\0')
    return std::nullopt;
  return value;
}

Status invalid(const std::string &message) {
  return Status::error(ErrorCode::InvalidArgument, message);
}

std::string hex(const void *p) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%" PRIxPTR,
                reinterpret_cast<uintptr_t>(p));
  return buffer;
}

Status checkPointer(const void *p, const char *name, uint64_t alignment) {
  if (!p)
    return invalid(std::string("argument '") + name + "' must not be null");
  if (reinterpret_cast<uintptr_t>(p) % alignment != 0)
    return invalid(std::string("argument '") + name + "' must be " +
                   std::to_string(alignment) + "-byte aligned, got address " +
                   hex(p));
  return Status::success();
}

Status checkExtent(int64_t value, const char *name, const char *scaleMap) {
  std::string arg = std::string("argument '") + name + "'";
  if (value < 1)
    return invalid(arg + " must be >= 1, got " + std::to_string(value));
  if (value > kMaxInt32)
    return invalid(arg +
                   " must be <= 2147483647 (the kernel takes it as a "
                   "32-bit parameter), got " +
                   std::to_string(value));
  if (value % 4 != 0)
    return invalid(arg + " must be a multiple of 4 (the row stride of the " +
                   scaleMap + " tensor map, " + name +
                   " * 4 bytes, must be a multiple of 16), got " +
                   std::to_string(value));
  return Status::success();
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace

Status dgemm::runtime::checkKGroupedArgs(const KGroupedArgs &args,
                                         KGroupedShape *shape) {
  const struct {
    const void *p;
    const char *name;
  } operands[] = {{args.a, "a"},     {args.sfa, "sfa"}, {args.b, "b"},
                  {args.sfb, "sfb"}, {args.d, "d"},     {args.c, "c"}};
  for (const auto &op : operands)
    if (Status s = checkPointer(op.p, op.name, kOperandAlignment); !s.ok())
      return s;
  if (!args.ksHost)
    return invalid("argument 'ks_host' must not be null");
  if (Status s = checkPointer(args.ksDevice, "ks_device", alignof(int32_t));
      !s.ok())
    return s;
  if (args.workspace)
    if (Status s =
            checkPointer(args.workspace, "workspace", kWorkspaceAlignment);
        !s.ok())
      return s;

  if (Status s = checkExtent(args.m, "m", "sfa"); !s.ok())
    return s;
  if (Status s = checkExtent(args.n, "n", "sfb"); !s.ok())
    return s;
  if (args.numGroups < 1 || args.numGroups > kMaxInt32)
    return invalid("argument 'num_groups' must be in [1, 2147483647], got " +
                   std::to_string(args.numGroups));

  int64_t sumK = 0; // <= 2^31 * 2^31: cannot overflow.
  for (int64_t g = 0; g < args.numGroups; ++g) {
    int64_t k = args.ksHost[g];
    std::string arg = "argument 'ks_host[" + std::to_string(g) + "]'";
    if (k < 0)
      return invalid(arg + " must be >= 0, got " + std::to_string(k));
    if (k % kBlockK != 0)
      return invalid(arg +
                     " must be a multiple of 128 (the K block of the "
                     "1D1D scaling), got " +
                     std::to_string(k));
    sumK += k;
  }

  int64_t bytes;
  if (__builtin_mul_overflow(sumK, args.m, &bytes))
    return invalid("argument 'ks_host': sum(K) * m (the size of 'a') must fit "
                   "in 64 bits, got sum(K) = " +
                   std::to_string(sumK) + ", m = " + std::to_string(args.m));
  if (__builtin_mul_overflow(sumK, args.n, &bytes))
    return invalid("argument 'ks_host': sum(K) * n (the size of 'b') must fit "
                   "in 64 bits, got sum(K) = " +
                   std::to_string(sumK) + ", n = " + std::to_string(args.n));
  int64_t scaleBlocks = std::max<int64_t>(1, sumK / kBlockK);
  if (scaleBlocks > kMaxTensorMapDim)
    return invalid("argument 'ks_host': sum(K) / 128 (a dimension of the "
                   "sfa/sfb tensor maps) must be <= 2^32, got " +
                   std::to_string(scaleBlocks));

  int64_t outBytes;
  if (__builtin_mul_overflow(args.numGroups * args.m, args.n, &outBytes) ||
      __builtin_mul_overflow(outBytes, int64_t(4), &outBytes))
    return invalid("arguments 'num_groups' * 'm' * 'n' * 4 (the size of 'd' "
                   "and 'c') must fit in 64 bits");
  // d is written while c is read, tile by tile: only exact aliasing is safe.
  uintptr_t d = reinterpret_cast<uintptr_t>(args.d);
  uintptr_t c = reinterpret_cast<uintptr_t>(args.c);
  if (c != d && c < d + uint64_t(outBytes) && d < c + uint64_t(outBytes))
    return invalid("arguments 'c' and 'd' must be the same pointer or not "
                   "overlap, got c = " +
                   hex(args.c) + ", d = " + hex(args.d) + " with " +
                   std::to_string(outBytes) + " bytes each");

  if (shape) {
    shape->sumK = sumK;
    shape->scaleBlocks = scaleBlocks;
  }
  return Status::success();
}

Status dgemm::runtime::checkWorkspaceSize(const KGroupedArgs &args,
                                          uint64_t requiredBytes) {
  if (args.workspace && args.workspaceBytes < requiredBytes)
    return invalid("argument 'workspace_bytes' must be >= " +
                   std::to_string(requiredBytes) +
                   " for this problem, got " +
                   std::to_string(args.workspaceBytes));
  return Status::success();
}

dgemm::heuristics::KGroupedProblem
dgemm::runtime::makeProblem(int64_t m, int64_t n, int numGroups,
                            const int32_t *ksHost, bool inPlace) {
  heuristics::KGroupedProblem problem;
  problem.inPlace = inPlace;
  problem.m = m;
  problem.n = n;
  problem.numGroups = numGroups;
  problem.ks.assign(ksHost, ksHost + numGroups);
  return problem;
}

int64_t dgemm::runtime::numOutputTiles(int64_t m, int64_t n, int64_t numGroups,
                                       const KernelConfig &config) {
  return numGroups * ceilDiv(m, config.blockM) * ceilDiv(n, config.blockN);
}

int64_t dgemm::runtime::gridSizeFor(int64_t m, int64_t n, int64_t numGroups,
                                    const KernelConfig &config, int smCount) {
  int64_t grid = numOutputTiles(m, n, numGroups, config);
  grid = std::min<int64_t>(grid, smCount);
  if (config.numSMs > 0)
    grid = std::min<int64_t>(grid, config.numSMs);
  // The launch needs whole clusters; CTAs beyond the tiles find no work.
  int64_t cluster = int64_t(config.clusterM) * config.clusterN;
  return std::max(cluster, grid / cluster * cluster);
}

uint64_t dgemm::runtime::workspaceBytesFor(int64_t gridX, int descSlots) {
  // Two 128-byte CUtensorMaps (A and B) per descriptor slot per CTA.
  return uint64_t(gridX) * uint64_t(descSlots) * 2 * 128;
}

KernelConfig dgemm::runtime::chooseKGroupedConfig(
    int64_t m, int64_t n, int numGroups, const int32_t *ksHost,
    const heuristics::Target &target, bool inPlace) {
  KernelConfig config = heuristics::selectKGroupedConfig(
      makeProblem(m, n, numGroups, ksHost, inPlace), target);
  // Decided again at the end, for the kernel the overrides leave.
  config.quadB = 0;
  // Experiment overrides: "1" or "2" replaces the field, anything else is
  // ignored.
  auto override12 = [](const char *name, int &field) {
    if (const char *env = std::getenv(name))
      if (std::string(env) == "1" || std::string(env) == "2")
        field = env[0] - '0';
  };
  // The most stages that fit the kernel's shared memory (with its park).
  auto mostStages = [&](const KernelConfig &c) {
    return c.park ? heuristics::maxParkedStages(c.blockM, c.blockN, target)
                  : heuristics::maxStages(c.blockM, c.blockN, target);
  };
  override12("DGEMM_DESC_SLOTS", config.descSlots);
  override12("DGEMM_CLUSTER_M", config.clusterM);
  // CTA pairs cannot park: the pair's in-place kernel.
  heuristics::unparkIfUnfit(config, target);
  // DGEMM_BLOCK_N: a tile width to use instead (with the most stages that
  // fit); a width the heuristics would not accept is ignored.
  if (const char *env = std::getenv("DGEMM_BLOCK_N")) {
    KernelConfig forced = config;
    forced.blockN = std::atoi(env);
    if (forced.blockN > 0) {
      heuristics::unparkIfUnfit(forced, target);
      forced.stages = mostStages(forced);
      if (heuristics::checkConfig(forced, target).empty())
        config = forced;
    }
  }
  // DGEMM_BLOCK_M: a tile height to use instead (64, 128 or 192 rows, one
  // math warpgroup per 64), with the most stages that fit; a height the
  // heuristics would not accept with the chosen width is ignored.
  if (std::optional<long> rows = envInteger("DGEMM_BLOCK_M");
      rows && (*rows == 64 || *rows == 128 || *rows == 192)) {
    KernelConfig forced = config;
    forced.blockM = int(*rows);
    forced.mathWarpgroups = forced.blockM / 64;
    heuristics::unparkIfUnfit(forced, target);
    forced.stages = mostStages(forced);
    // Multicast pairs need an even m-block count, and none are built with
    // three math warpgroups.
    if (forced.clusterM == 2 &&
        (forced.blockM == 192 ||
         (m + forced.blockM - 1) / forced.blockM % 2 != 0))
      forced.clusterM = 1;
    if (heuristics::checkConfig(forced, target).empty())
      config = forced;
  }
  // DGEMM_STAGES: fewer pipeline stages than fit (2 up to the most that
  // fit); any other value is ignored.
  auto overrideStages = [&] {
    if (std::optional<long> stages = envInteger("DGEMM_STAGES");
        stages && *stages >= 2 && *stages <= mostStages(config)) {
      KernelConfig forced = config;
      forced.stages = int(*stages);
      if (heuristics::checkConfig(forced, target).empty())
        config = forced;
    }
  };
  overrideStages();
  // Whether the tiles are parked follows the epilogue the overrides leave:
  // only the in-place kernel parks them.
  auto setPark = [&](int park) {
    if (config.park == park)
      return;
    config.park = park;
    config.stages = mostStages(config);
    overrideStages();
  };
  if (std::optional<long> blocks = envInteger("DGEMM_RED_MAX_BLOCKS");
      blocks && inPlace && *blocks >= 0 && *blocks <= (1 << 20)) {
    KernelConfig forced = config;
    forced.redMaxBlocks = int(*blocks);
    forced.inPlaceOnly = 0;
    forced.park = 0;
    forced.stages = mostStages(forced);
    if (heuristics::checkConfig(forced, target).empty()) {
      config = forced;
      overrideStages();
    }
  }
  if (const char *env = std::getenv("DGEMM_IN_PLACE_ONLY"); env && inPlace) {
    std::string value(env);
    if (value == "0" || value == "1") {
      config.inPlaceOnly = value == "1";
      if (config.inPlaceOnly) {
        config.redMaxBlocks = 0;
        // The heuristics never pair the in-place kernel, so a bundle holds
        // a paired one only when built with cluster-m=2: keep the pair only
        // when DGEMM_CLUSTER_M=2 asked for it.
        const char *pairs = std::getenv("DGEMM_CLUSTER_M");
        if (config.clusterM == 2 && !(pairs && std::string(pairs) == "2")) {
          config.clusterM = 1;
          config.stages = mostStages(config);
          overrideStages();
        }
      } else {
        setPark(0);
      }
    }
  }
  // DGEMM_PARK: "0" keeps the math warpgroups' own epilogue; "1" parks the
  // tiles of an in-place kernel that can (heuristics::parkFits with the
  // most stages that fit), else it is ignored.
  if (const char *env = std::getenv("DGEMM_PARK"); env && inPlace) {
    std::string value(env);
    if (value == "0") {
      setPark(0);
    } else if (value == "1" && !config.park) {
      KernelConfig parked = config;
      parked.park = 1;
      parked.stages = mostStages(parked);
      if (heuristics::parkFits(parked, target) &&
          heuristics::checkConfig(parked, target).empty())
        setPark(1);
    }
  }
  // Quad-ordered B as the heuristics apply it, decided again for the kernel
  // the overrides left; DGEMM_QUAD_B=0 keeps B's rows in order.
  config.quadB = heuristics::quadBFits(config, n, target) ? 1 : 0;
  if (const char *env = std::getenv("DGEMM_QUAD_B"); env && std::string(env) == "0")
    config.quadB = 0;
  return config;
}

uint32_t dgemm::runtime::chooseRasterBand(int64_t m, int64_t n, int numGroups,
                                          const int32_t *ksHost) {
  if (std::optional<long> band = envInteger("DGEMM_RASTER_BAND");
      band && *band >= 0 && *band <= 65536)
    return uint32_t(*band);
  return uint32_t(
      heuristics::selectRasterBand(makeProblem(m, n, numGroups, ksHost)));
}

uint64_t
dgemm::runtime::kGroupedWorkspaceBytesFor(int64_t m, int64_t n, int numGroups,
                                          const int32_t *ksHost,
                                          const heuristics::Target &target) {
  if (m < 1 || n < 1 || numGroups < 1 || !ksHost || target.numSMs < 1)
    return 0;
  KernelConfig config =
      chooseKGroupedConfig(m, n, numGroups, ksHost, target);
  return workspaceBytesFor(gridSizeFor(m, n, numGroups, config, target.numSMs),
                           config.descSlots);
}

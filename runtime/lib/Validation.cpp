//===- Validation.cpp - Argument checks of the k-grouped GEMM -------------===//
//
// Messages use the C ABI's argument names (dgemm_runtime.h), which are also
// the Python package's.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Runtime/Validation.h"

#include "dgemm/Runtime/Overrides.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

using namespace dgemm::runtime;
using dgemm::heuristics::KernelConfig;

namespace {

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
// cuTensorMapEncodeTiled: every globalDim must be <= 2^32.
constexpr int64_t kMaxTensorMapDim = int64_t(1) << 32;
constexpr int64_t kBlockK = 128;

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

/// ceil(a / b) for a >= 0 and b > 0, without the overflow of a + b - 1.
int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/// a * b, or INT64_MAX where it does not fit (a, b >= 0).
int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product))
    return std::numeric_limits<int64_t>::max();
  return product;
}

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
                   std::to_string(requiredBytes) + " for this problem, got " +
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
  if (ksHost && numGroups > 0)
    problem.ks.assign(ksHost, ksHost + numGroups);
  return problem;
}

int64_t dgemm::runtime::numOutputTiles(int64_t m, int64_t n, int64_t numGroups,
                                       const KernelConfig &config) {
  if (m < 1 || n < 1 || numGroups < 1 || config.blockM < 1 || config.blockN < 1)
    return 0;
  return saturatingMul(saturatingMul(numGroups, ceilDiv(m, config.blockM)),
                       ceilDiv(n, config.blockN));
}

int64_t dgemm::runtime::gridSizeFor(int64_t m, int64_t n, int64_t numGroups,
                                    const KernelConfig &config, int smCount) {
  int64_t grid = numOutputTiles(m, n, numGroups, config);
  grid = std::min<int64_t>(grid, smCount);
  if (config.numSMs > 0)
    grid = std::min<int64_t>(grid, config.numSMs);
  // The launch needs whole clusters; CTAs beyond the tiles find no work.
  int64_t cluster =
      std::max<int64_t>(1, int64_t(config.clusterM) * config.clusterN);
  return std::max(cluster, grid / cluster * cluster);
}

uint64_t dgemm::runtime::workspaceBytesFor(int64_t gridX, int descSlots) {
  // Two 128-byte CUtensorMaps (A and B) per descriptor slot per CTA.
  return uint64_t(gridX) * uint64_t(descSlots) * 2 * 128;
}

Status dgemm::runtime::chooseKGroupedConfig(int64_t m, int64_t n, int numGroups,
                                            const int32_t *ksHost,
                                            const heuristics::Target &target,
                                            bool inPlace,
                                            KernelConfig &config) {
  std::shared_ptr<const EnvOverrides> env = envOverrides();
  if (!env->error.empty())
    return invalid(env->error);
  heuristics::KGroupedProblem problem =
      makeProblem(m, n, numGroups, ksHost, inPlace);
  config = heuristics::selectKGroupedConfig(problem, target);
  if (std::string why =
          heuristics::applyOverrides(config, env->config, target, &problem);
      !why.empty())
    return invalid("DGEMM_* overrides: " + why);
  return Status::success();
}

KernelConfig dgemm::runtime::chooseKGroupedConfig(
    int64_t m, int64_t n, int numGroups, const int32_t *ksHost,
    const heuristics::Target &target, bool inPlace) {
  KernelConfig config;
  if (!chooseKGroupedConfig(m, n, numGroups, ksHost, target, inPlace, config)
           .ok()) {
    config = KernelConfig();
    config.blockM = 0; // what checkConfig rejects first
  }
  return config;
}

uint32_t dgemm::runtime::chooseRasterBand(int64_t m, int64_t n, int numGroups,
                                          const int32_t *ksHost) {
  if (std::shared_ptr<const EnvOverrides> env = envOverrides();
      env->error.empty() && env->rasterBand)
    return *env->rasterBand;
  return uint32_t(
      heuristics::selectRasterBand(makeProblem(m, n, numGroups, ksHost)));
}

uint64_t
dgemm::runtime::kGroupedWorkspaceBytesFor(int64_t m, int64_t n, int numGroups,
                                          const int32_t *ksHost,
                                          const heuristics::Target &target) {
  if (m < 1 || n < 1 || numGroups < 1 || !ksHost || target.numSMs < 1)
    return 0;
  KernelConfig config;
  if (!chooseKGroupedConfig(m, n, numGroups, ksHost, target, false, config)
           .ok())
    return 0;
  return workspaceBytesFor(gridSizeFor(m, n, numGroups, config, target.numSMs),
                           config.descSlots);
}

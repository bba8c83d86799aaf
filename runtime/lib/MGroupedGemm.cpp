//===- MGroupedGemm.cpp - The FP8 1D2D GEMMs, launch path -----------------===//

#include "dgemm/Runtime/MGroupedGemm.h"

#include "dgemm/Heuristics/MGroupedConfig.h"
#include "dgemm/Runtime/KGroupedGemm.h"
#include "dgemm/Runtime/TensorMaps.h"

#include "Launch.h"

#include <algorithm>
#include <string>

using namespace dgemm::runtime;
using dgemm::heuristics::KernelConfig;
namespace heuristics = dgemm::heuristics;

namespace {

Status invalid(const std::string &message) {
  return Status::error(ErrorCode::InvalidArgument, message);
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

using dgemm::heuristics::Kind;

/// What the row mapping of a kind makes of the extents: the rows of a and
/// d, the groups of ceil(k/128) sfa rows, the groups the tile schedule
/// walks, and the int32 device array the kernel reads (kernel parameter 9).
struct RowShape {
  int64_t rows, sfaGroups, tileGroups;
  const char *arrayName; ///< null: none (normal)
  const int32_t *array;
  int64_t arrayBytes;
};

RowShape rowShapeOf(const MGroupedArgs &args) {
  switch (args.kind) {
  case Kind::MGroupedMasked:
    // G blocks of M_max rows; masked_m holds one count per group.
    return {args.numGroups * args.mSum,
            args.numGroups,
            args.numGroups,
            "masked_m",
            args.maskedM,
            args.numGroups * 4};
  case Kind::Normal:
    return {args.mSum, 1, 1, nullptr, nullptr, 0};
  case Kind::MGroupedContiguousPsum:
    // One prefix sum per expert.
    return {args.mSum, 1, 1, "psum", args.groupedLayout, args.numGroups * 4};
  default:
    // The grouped layout: one expert per row.
    return {args.mSum,    1, 1, "grouped_layout", args.groupedLayout,
            args.mSum * 4};
  }
}

/// The rules particular to the row mapping.
Status checkRowMapping(const MGroupedArgs &args) {
  if (!heuristics::isOneDTwoDKind(args.kind))
    return invalid("argument 'kind' must be m_grouped_contiguous, "
                   "m_grouped_contiguous_psum, m_grouped_masked or normal, "
                   "got " +
                   std::string(heuristics::kindName(args.kind)));
  if (Status s = checkRowMappingArgs(args.kind, args.mSum, args.numGroups,
                                     args.expectedM);
      !s.ok())
    return s;
  // sfa's K-block rows are 32-bit coordinates in the kernel.
  if (args.kind == Kind::MGroupedMasked &&
      args.numGroups * (args.k / 128) > heuristics::kMaxProblemExtent)
    return invalid("argument 'num_groups * k / 128' must be <= 2^31 - 1 "
                   "(the K-block rows of sfa), got " +
                   std::to_string(args.numGroups * (args.k / 128)));
  return Status::success();
}

} // namespace

Status dgemm::runtime::checkMGroupedArguments(const MGroupedArgs &args) {
  heuristics::MGroupedProblem problem{args.mSum, args.n, args.k,
                                      args.numGroups, args.kind};
  if (std::string why = heuristics::checkMGroupedProblem(problem);
      !why.empty())
    return invalid("argument " + why);
  if (args.k % 128 != 0)
    return invalid("argument 'k' must be a multiple of 128 (the FP8 scales "
                   "cover 128-deep K blocks), got " +
                   std::to_string(args.k));
  if (args.n % 8 != 0)
    return invalid("argument 'n' must be a multiple of 8 (16-byte rows of "
                   "the BF16 d), got " +
                   std::to_string(args.n));
  if (Status s = checkRowMapping(args); !s.ok())
    return s;
  RowShape shape = rowShapeOf(args);
  // The kernel counts its tiles in 32 bits; the smallest tile (64 x 16)
  // bounds every configuration's count. (No overflow: for masked G * M_max
  // is below 2^31, for the others the groups are one.)
  int64_t mostTiles =
      shape.tileGroups * ceilDiv(args.mSum, 64) * ceilDiv(args.n, 16);
  if (mostTiles > heuristics::kMaxProblemExtent)
    return invalid("arguments: the tile count (up to " +
                   std::to_string(mostTiles) +
                   " tiles of 64 x 16) must be <= 2^31 - 1; split the call");
  if (Status s = checkPointers({{"a", args.a, 16},
                                {"sfa", args.sfa, 16},
                                {"b", args.b, 16},
                                {"sfb", args.sfb, 4},
                                {"d", args.d, 16},
                                {shape.arrayName, shape.array, 4}});
      !s.ok())
    return s;
  // Extents are below 2^31, so every size fits 64 bits.
  int64_t kBlocks = args.k / 128, mPad = (args.mSum + 3) / 4 * 4;
  return checkOutputOverlap(
      spanOf("d", args.d, shape.rows * args.n * 2),
      {spanOf("a", args.a, shape.rows * args.k),
       spanOf("sfa", args.sfa, shape.sfaGroups * kBlocks * mPad * 4),
       spanOf("b", args.b, args.numGroups * args.n * args.k),
       spanOf("sfb", args.sfb,
              args.numGroups * ceilDiv(args.n, 128) * kBlocks * 4),
       spanOf(shape.arrayName ? shape.arrayName : "", shape.array,
              shape.arrayBytes)});
}

Status dgemm::runtime::chooseMGroupedConfig(const MGroupedArgs &args,
                                            const heuristics::Target &target,
                                            KernelConfig &config) {
  // Masked: the tiles of expected_m rows per group, not of M_max. Psum with
  // a hint: G segments of expected_m rows, each aligned to 128 rows.
  int64_t m = plannedRows(args.kind, args.mSum, args.expectedM, args.numGroups);
  config = heuristics::selectMGroupedConfig(
      {m, args.n, args.k, args.numGroups, args.kind}, target);
  return applyEnvOverrides(config, target);
}

Status dgemm::runtime::mGroupedFp8GemmNt(const MGroupedArgs &args,
                                         CUstream stream) {
  if (Status s = checkMGroupedArguments(args); !s.ok())
    return s;
  RowShape shape = rowShapeOf(args);
  RowMappedLaunch launch;
  launch.a = args.a;
  launch.b = args.b;
  launch.d = args.d;
  // Parameter 9: the grouped layout (contiguous), the prefix sums (psum),
  // masked_m (masked) or null (normal).
  launch.rowArray = shape.array;
  launch.sfb = args.sfb;
  launch.m = args.mSum;
  launch.n = args.n;
  launch.numGroups = args.numGroups;
  launch.k = args.k;
  launch.tileGroups = shape.tileGroups;
  auto choose = [&](const heuristics::Target &target, KernelConfig &config) {
    return chooseMGroupedConfig(args, target, config);
  };
  // A: the rows of a (M_sum, G * M_max or M) by K, FP8; B: the groups'
  // [N, K] stacked as [G * N, K], group g's rows from g * N; sfa: per group
  // ceil(K / 128) rows of mSum floats (masked: group g's K block kb is row
  // g * K/128 + kb), row stride align(mSum, 4). One 128-byte K row per box
  // row (SWIZZLE_128B).
  auto describe = [&](const KernelConfig &config,
                      TensorMapSpec specs[kNumTensorMaps]) {
    auto operand = [](TensorMapSpec &spec, const char *name, const void *ptr,
                      int64_t rows, int64_t k, int boxRows) {
      spec.name = name;
      spec.dataType = CU_TENSOR_MAP_DATA_TYPE_UINT8;
      spec.address = const_cast<void *>(ptr);
      spec.globalDim[0] = cuuint64_t(k);
      spec.globalDim[1] = cuuint64_t(rows);
      spec.globalStride[0] = cuuint64_t(k);
      spec.boxDim[0] = 128;
      spec.boxDim[1] = cuuint32_t(boxRows);
      spec.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    };
    operand(specs[kMapA], "a", args.a, shape.rows, args.k, config.blockM);
    operand(specs[kMapB], "b", args.b, args.numGroups * args.n, args.k,
            config.blockN);
    TensorMapSpec &sfa = specs[kMapSfa];
    sfa.name = "sfa";
    sfa.dataType = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    sfa.address = const_cast<void *>(args.sfa);
    sfa.globalDim[0] = cuuint64_t(args.mSum);
    sfa.globalDim[1] = cuuint64_t(shape.sfaGroups * (args.k / 128));
    sfa.globalStride[0] = cuuint64_t((args.mSum + 3) / 4 * 4) * 4;
    sfa.boxDim[0] = cuuint32_t(config.blockM);
    sfa.boxDim[1] = 1;
    // The kernel reads neither the sfb nor the d map: valid copies of A's.
    specs[kMapSfb] = specs[kMapA];
    specs[kMapD] = specs[kMapA];
  };
  return launchRowMapped(launch, stream, choose, describe);
}

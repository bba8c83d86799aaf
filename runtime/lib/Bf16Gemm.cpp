//===- Bf16Gemm.cpp - The BF16 GEMMs: checks, maps, launch ----------------===//
//
// Messages use the C entries' argument names (dgemm_runtime.h), which are
// also the Python package's where it has them.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Runtime/Bf16Gemm.h"

#include "dgemm/Heuristics/Bf16Config.h"

#include "Launch.h"

#include <algorithm>
#include <cstdint>
#include <string>

using namespace dgemm::runtime;
namespace heuristics = dgemm::heuristics;
using heuristics::KernelConfig;
using heuristics::Kind;
using heuristics::Major;

namespace {

constexpr int64_t kMaxExtent = heuristics::kMaxProblemExtent;
/// Row strides in BF16 elements: TMA's global strides are multiples of 16
/// bytes.
constexpr int64_t kStrideMultiple = 8;
/// The smallest tile of any BF16 configuration the runtime may launch (64
/// rows, 16 columns): it bounds every configuration's tile count.
constexpr int64_t kSmallestTileM = 64, kSmallestTileN = 16;

Status invalid(const std::string &message) {
  return Status::error(ErrorCode::InvalidArgument, message);
}

int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

bool isContiguousKind(Kind kind) {
  return kind == Kind::MGroupedContiguous ||
         kind == Kind::MGroupedContiguousPsum;
}

/// The C name of the int32 array of kernel parameter 9; null for the normal
/// GEMM, which has none.
const char *rowArrayName(Kind kind) {
  switch (kind) {
  case Kind::MGroupedContiguous:
    return "grouped_layout";
  case Kind::MGroupedContiguousPsum:
    return "psum";
  case Kind::MGroupedMasked:
    return "masked_m";
  case Kind::KGroupedContiguous:
    return "ks_device";
  default:
    return nullptr;
  }
}

heuristics::Bf16Problem problemOf(const Bf16Args &args, int64_t m, int64_t k) {
  heuristics::Bf16Problem p;
  p.kind = args.kind;
  p.majorA = args.majorA;
  p.majorB = args.majorB;
  p.dF32 = args.dF32 != 0;
  p.accumulate = args.accumulate != 0;
  p.m = m;
  p.n = args.n;
  p.k = k;
  p.numGroups = args.numGroups;
  return p;
}

/// The k-grouped call's K_g: each >= 0 and a multiple of 64, their sum
/// within 32 bits; `sum` receives it.
Status sumGroupKs(const Bf16Args &args, int64_t &sum) {
  if (args.numGroups < 1 || args.numGroups > kMaxExtent)
    return invalid("argument 'num_groups' must be in [1, 2^31 - 1], got " +
                   std::to_string(args.numGroups));
  if (!args.ksHost)
    return invalid("argument 'ks_host' must not be null");
  sum = 0; // at most 2^31 values below 2^31: no overflow
  for (int64_t g = 0; g < args.numGroups; ++g) {
    int64_t k = args.ksHost[g];
    std::string arg = "argument 'ks_host[" + std::to_string(g) + "]'";
    if (k < 0)
      return invalid(arg + " must be >= 0, got " + std::to_string(k));
    if (k % heuristics::kBf16KGroupAlignment != 0)
      return invalid(arg +
                     " must be a multiple of 64 (a 64-deep K block of the "
                     "kernel must not straddle two groups), got " +
                     std::to_string(k));
    sum += k;
  }
  if (sum > kMaxExtent)
    return invalid("argument 'ks_host': sum(K) must be <= 2^31 - 1 (the "
                   "kernel's K, a 32-bit parameter), got " +
                   std::to_string(sum));
  return Status::success();
}

/// One operand's row stride: `name` is its argument (lda, ldb), or, for
/// the kinds that take their operands contiguous, the argument of the
/// extent that is the stride.
struct Stride {
  const char *name;
  int64_t value;
  const char *operand;
  const char *extentName;
  int64_t extent;
};

Status checkStride(const Stride &s) {
  std::string arg = std::string("argument '") + s.name + "'";
  if (s.value % kStrideMultiple != 0)
    return invalid(arg + " must be a multiple of 8 (" + s.operand +
                   "'s row stride, in BF16 elements, must be a multiple of "
                   "16 bytes for TMA), got " +
                   std::to_string(s.value));
  if (s.value < s.extent)
    return invalid(arg + " must be >= " + s.extentName + " = " +
                   std::to_string(s.extent) + " (each row of " + s.operand +
                   " holds " + s.extentName + " contiguous elements), got " +
                   std::to_string(s.value));
  if (s.value > kMaxExtent)
    return invalid(arg + " must be <= 2^31 - 1, got " +
                   std::to_string(s.value));
  return Status::success();
}

/// The rules of the row mappings (docs/KernelABI.md, "The BF16 kernels").
Status checkRowMapping(const Bf16Args &args) {
  if (Status s = checkRowMappingArgs(args.kind, args.m, args.numGroups,
                                     args.expectedM);
      !s.ok())
    return s;
  if (isContiguousKind(args.kind) && args.majorB == Major::MN) {
    // b is [G, K, N]: group g's K rows start at row g * K, so a K block
    // past K would read the next group's rows.
    if (args.k % heuristics::kBf16BlockK != 0)
      return invalid("argument 'k' must be a multiple of 64 with major_b = "
                     "mn (b is [G, K, N]: a 64-deep K block past a group's K "
                     "rows would read the next group's), got " +
                     std::to_string(args.k));
    if (args.numGroups * args.k > kMaxExtent)
      return invalid("argument 'num_groups * k' must be <= 2^31 - 1 (the "
                     "rows of b), got " +
                     std::to_string(args.numGroups * args.k));
  }
  return Status::success();
}

/// A buffer's span, refused where it runs past the 64-bit address space.
Status spanWithin(const char *name, const void *p, int64_t bytes, Span &out) {
  uintptr_t at = reinterpret_cast<uintptr_t>(p);
  if (uintptr_t(bytes) > UINTPTR_MAX - at)
    return invalid(std::string("argument '") + name + "': its " +
                   std::to_string(bytes) +
                   " bytes must end within the 64-bit address space");
  out = spanOf(name, p, bytes);
  return Status::success();
}

/// Bytes of a [rows, ld] view whose rows hold `extent` elements, from the
/// first element to the last (0 rows: 0).
int64_t viewBytes(int64_t rows, int64_t ld, int64_t extent) {
  return rows == 0 ? 0 : ((rows - 1) * ld + extent) * 2;
}

Status chooseFor(const Bf16Args &args, int64_t kTotal,
                 const heuristics::Target &target, KernelConfig &config) {
  int64_t m = plannedRows(args.kind, args.m, args.expectedM, args.numGroups);
  config = heuristics::selectBf16Config(problemOf(args, m, kTotal), target);
  return applyEnvOverrides(config, target);
}

} // namespace

Status dgemm::runtime::checkBf16Arguments(const Bf16Args &args,
                                          Bf16Shape *out) {
  for (auto [name, value] : {std::pair{"d_f32", args.dF32},
                             std::pair{"accumulate", args.accumulate}})
    if (value != 0 && value != 1)
      return invalid(std::string("argument '") + name +
                     "' must be 0 or 1, got " + std::to_string(value));
  bool kGrouped = args.kind == Kind::KGroupedContiguous;
  bool masked = args.kind == Kind::MGroupedMasked;
  Bf16Shape shape;
  shape.kTotal = args.k;
  if (kGrouped)
    if (Status s = sumGroupKs(args, shape.kTotal); !s.ok())
      return s;
  if (std::string why =
          heuristics::checkBf16Problem(problemOf(args, args.m, shape.kTotal));
      !why.empty())
    return invalid("argument " + why);
  bool emptyK = shape.kTotal == 0; // k-grouped only
  if (emptyK && !args.accumulate)
    return invalid("argument 'ks_host': sum(K) = 0 leaves nothing to "
                   "multiply; without accumulate d must be set to zero by "
                   "the caller (the kernel is not launched for an empty K)");
  if (args.n % 8 != 0)
    return invalid("argument 'n' must be a multiple of 8 (16-byte rows of "
                   "d), got " +
                   std::to_string(args.n));
  if (Status s = checkRowMapping(args); !s.ok())
    return s;

  // The operands' row strides: the normal GEMM's arguments, the contiguous
  // extents elsewhere.
  bool aK = args.majorA == Major::K, bK = args.majorB == Major::K;
  const char *aExtentName = aK ? "k" : "m", *bExtentName = bK ? "k" : "n";
  int64_t aExtent = aK ? shape.kTotal : args.m;
  int64_t bExtent = bK ? shape.kTotal : args.n;
  bool normal = args.kind == Kind::Normal;
  shape.lda = normal ? args.lda : aExtent;
  shape.ldb = normal ? args.ldb : bExtent;
  if (Status s = checkStride(
          {normal ? "lda" : aExtentName, shape.lda, "a", aExtentName, aExtent});
      !s.ok())
    return s;
  if (Status s = checkStride(
          {normal ? "ldb" : bExtentName, shape.ldb, "b", bExtentName, bExtent});
      !s.ok())
    return s;

  shape.tileGroups = masked || kGrouped ? args.numGroups : 1;
  int64_t rows = masked ? args.numGroups * args.m : args.m;
  shape.aRows = aK ? rows : shape.kTotal;
  shape.bRows =
      bK ? args.numGroups * args.n
         : (isContiguousKind(args.kind) ? args.numGroups : 1) * shape.kTotal;
  shape.dRows = kGrouped ? args.numGroups * args.m : rows;
  int64_t dBytes = 0, tiles = 0;
  if (__builtin_mul_overflow(shape.dRows, args.n * (args.dF32 ? 4 : 2),
                             &dBytes))
    return invalid("arguments 'num_groups' * 'm' * 'n' * 4 (the size of 'd') "
                   "must fit in 64 bits");
  // The kernel counts its tiles in 32 bits.
  if (__builtin_mul_overflow(shape.tileGroups,
                             ceilDiv(args.m, kSmallestTileM) *
                                 ceilDiv(args.n, kSmallestTileN),
                             &tiles) ||
      tiles > kMaxExtent)
    return invalid("arguments: the tile count, in tiles of 64 x 16 (the "
                   "smallest), must be <= 2^31 - 1; split the call");

  const char *arrayName = rowArrayName(args.kind);
  if (Status s = checkPointers({{emptyK ? nullptr : "a", args.a, 16},
                                {emptyK ? nullptr : "b", args.b, 16},
                                {"d", args.d, 16},
                                {arrayName, args.rowArray, 4}});
      !s.ok())
    return s;
  int64_t arrayEntries = !arrayName ? 0
                         : args.kind == Kind::MGroupedContiguous
                             ? args.m
                             : args.numGroups;
  Span a, b, d, array;
  if (Status s = spanWithin(
          "a", args.a, emptyK ? 0 : viewBytes(shape.aRows, shape.lda, aExtent),
          a);
      !s.ok())
    return s;
  if (Status s = spanWithin(
          "b", args.b, emptyK ? 0 : viewBytes(shape.bRows, shape.ldb, bExtent),
          b);
      !s.ok())
    return s;
  if (Status s = spanWithin("d", args.d, dBytes, d); !s.ok())
    return s;
  if (Status s = spanWithin(arrayName ? arrayName : "", args.rowArray,
                            arrayEntries * 4, array);
      !s.ok())
    return s;
  if (Status s = checkOutputOverlap(d, {a, b, array}); !s.ok())
    return s;
  if (out)
    *out = shape;
  return Status::success();
}

Status dgemm::runtime::chooseBf16Config(const Bf16Args &args,
                                        const heuristics::Target &target,
                                        KernelConfig &config) {
  int64_t kTotal = args.k;
  if (args.kind == Kind::KGroupedContiguous && !sumGroupKs(args, kTotal).ok())
    kTotal = 0;
  return chooseFor(args, kTotal, target, config);
}

void dgemm::runtime::describeBf16TensorMaps(
    const Bf16Args &args, const Bf16Shape &shape, const KernelConfig &config,
    TensorMapSpec specs[kNumTensorMaps]) {
  // Either major: dimension 0 is the contiguous extent (K, or M/N), one
  // 64-element (128-byte) box row per swizzle row. A K-major operand's box
  // is a whole tile of rows; an MN-major one's is 64 x 64, the kernel
  // loading block_m / 64 (block_n / 64) of them per stage.
  auto operand = [](TensorMapSpec &spec, const char *name, const void *ptr,
                    bool kMajor, int64_t inner, int64_t rows, int64_t ld,
                    int tileRows) {
    spec.name = name;
    spec.dataType = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    spec.address = const_cast<void *>(ptr);
    spec.globalDim[0] = cuuint64_t(inner);
    spec.globalDim[1] = cuuint64_t(rows);
    spec.globalStride[0] = cuuint64_t(ld) * 2;
    spec.boxDim[0] = cuuint32_t(heuristics::kBf16BlockK);
    spec.boxDim[1] =
        cuuint32_t(kMajor ? tileRows : int(heuristics::kBf16BlockK));
    spec.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  };
  bool aK = args.majorA == Major::K, bK = args.majorB == Major::K;
  operand(specs[kMapA], "a", args.a, aK, aK ? shape.kTotal : args.m,
          shape.aRows, shape.lda, config.blockM);
  operand(specs[kMapB], "b", args.b, bK, bK ? shape.kTotal : args.n,
          shape.bRows, shape.ldb, config.blockN);
  // The kernel reads no other map: valid copies of A's.
  specs[kMapSfa] = specs[kMapA];
  specs[kMapSfb] = specs[kMapA];
  specs[kMapD] = specs[kMapA];
}

Status dgemm::runtime::bf16Gemm(const Bf16Args &args, CUstream stream) {
  Bf16Shape shape;
  if (Status s = checkBf16Arguments(args, &shape); !s.ok())
    return s;
  // Only a k-grouped call that accumulates gets here with an empty K:
  // d += 0 leaves d as it is.
  if (shape.kTotal == 0)
    return Status::success();
  RowMappedLaunch launch;
  launch.a = args.a;
  launch.b = args.b;
  launch.d = args.d;
  // Parameter 9: the grouped layout, the prefix sums, masked_m, the K_g;
  // null for the normal GEMM.
  launch.rowArray = rowArrayName(args.kind) ? args.rowArray : nullptr;
  launch.m = args.m;
  launch.n = args.n;
  launch.numGroups = args.numGroups;
  launch.k = shape.kTotal;
  launch.tileGroups = shape.tileGroups;
  auto choose = [&](const heuristics::Target &target, KernelConfig &config) {
    return chooseFor(args, shape.kTotal, target, config);
  };
  auto describe = [&](const KernelConfig &config,
                      TensorMapSpec specs[kNumTensorMaps]) {
    describeBf16TensorMaps(args, shape, config, specs);
  };
  return launchRowMapped(launch, stream, choose, describe);
}

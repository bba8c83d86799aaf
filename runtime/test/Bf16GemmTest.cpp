//===- Bf16GemmTest.cpp - The BF16 entries without a GPU ------------------===//
//
// checkBf16Arguments for every kind and layout (each rule, the message
// naming the argument), the C entries refusing bad arguments before the
// driver, the tensor maps of each majorness against docs/KernelABI.md, and
// the selection returning one of the bundle's candidates.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Runtime/Bf16Gemm.h"
#include "dgemm/Heuristics/Bf16Config.h"
#include "dgemm/Runtime/dgemm_runtime.h"

#include "TestUtils.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace dgemm::runtime;
using dgemm::heuristics::KernelConfig;
using dgemm::heuristics::Kind;
using dgemm::heuristics::Major;
using dgemm::test::ScopedEnv;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

template <typename T = void> T *fake(uintptr_t address) {
  return reinterpret_cast<T *>(address);
}

constexpr uintptr_t kGiB = uintptr_t(1) << 30;
constexpr Major K = Major::K, MN = Major::MN;

/// The K_g of the valid k-grouped call: an empty group, 64-row multiples.
const int32_t kKs[] = {128, 0, 256, 64};

/// A valid call of `kind` with the given majorness: buffers 1 GiB apart,
/// normal M = 256, N = 4096, K = 7168 (dense strides); contiguous M_sum =
/// 1024; masked G = 4 groups of M_max = 256; k-grouped G = 4, M = 256, FP32
/// d accumulated.
Bf16Args valid(Kind kind, Major majorA = K, Major majorB = K) {
  Bf16Args args;
  args.kind = kind;
  args.majorA = majorA;
  args.majorB = majorB;
  args.a = fake(1 * kGiB);
  args.b = fake(3 * kGiB);
  args.d = fake(5 * kGiB);
  args.m = 256;
  args.n = 4096;
  args.k = 7168;
  args.numGroups = 4;
  switch (kind) {
  case Kind::Normal:
    args.numGroups = 1;
    args.lda = majorA == K ? args.k : args.m;
    args.ldb = majorB == K ? args.k : args.n;
    break;
  case Kind::MGroupedContiguous:
  case Kind::MGroupedContiguousPsum:
    args.m = 1024;
    args.rowArray = fake<const int32_t>(7 * kGiB);
    break;
  case Kind::MGroupedMasked:
    args.rowArray = fake<const int32_t>(7 * kGiB);
    args.expectedM = 64;
    break;
  case Kind::KGroupedContiguous:
    args.majorA = args.majorB = MN;
    args.dF32 = args.accumulate = 1;
    args.k = 0;
    args.ksHost = kKs;
    args.rowArray = fake<const int32_t>(7 * kGiB);
    break;
  }
  return args;
}

std::string message(const Bf16Args &args) {
  return checkBf16Arguments(args).message();
}

void expectRefused(const Bf16Args &args, const std::string &part) {
  Status s = checkBf16Arguments(args);
  ASSERT_FALSE(s.ok()) << "accepted; expected: " << part;
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr(part));
}

/// Every kind with every layout its kernels take.
std::vector<Bf16Args> everyValidCall() {
  std::vector<Bf16Args> out;
  for (Major a : {K, MN})
    for (Major b : {K, MN})
      for (auto [f32, acc] : {std::pair{0, 0}, {1, 0}, {1, 1}}) {
        Bf16Args args = valid(Kind::Normal, a, b);
        args.dF32 = f32;
        args.accumulate = acc;
        out.push_back(args);
      }
  for (Kind kind : {Kind::MGroupedContiguous, Kind::MGroupedContiguousPsum})
    for (Major b : {K, MN})
      out.push_back(valid(kind, K, b));
  out.push_back(valid(Kind::MGroupedMasked));
  Bf16Args kGrouped = valid(Kind::KGroupedContiguous);
  out.push_back(kGrouped);
  kGrouped.accumulate = 0;
  out.push_back(kGrouped);
  return out;
}

std::string describe(const Bf16Args &args) {
  return std::string(dgemm::heuristics::kindName(args.kind)) + " " +
         dgemm::heuristics::bf16LayoutName(args.majorA, args.majorB) +
         " d_f32=" + std::to_string(args.dF32) +
         " accumulate=" + std::to_string(args.accumulate);
}

TEST(Bf16ValidationTest, AcceptsEveryKindAndLayout) {
  for (const Bf16Args &args : everyValidCall())
    EXPECT_TRUE(checkBf16Arguments(args).ok())
        << describe(args) << ": " << message(args);
}

TEST(Bf16ValidationTest, LayoutAndOutputRulesNameTheArgument) {
  Bf16Args args = valid(Kind::MGroupedMasked, K, MN);
  expectRefused(args, "argument major_b must be k (0) for m_grouped_masked");
  args = valid(Kind::MGroupedContiguous, MN, K);
  expectRefused(args, "argument major_a must be k (0) for "
                      "m_grouped_contiguous");
  args = valid(Kind::MGroupedContiguous);
  args.dF32 = 1;
  expectRefused(args, "argument d_f32 must be 0 for m_grouped_contiguous");
  args = valid(Kind::Normal);
  args.accumulate = 1;
  expectRefused(args, "argument accumulate must be 0 with a BF16 d (only an "
                      "FP32 d accumulates)");
  args = valid(Kind::KGroupedContiguous);
  args.dF32 = 0;
  args.accumulate = 0;
  expectRefused(args, "argument d_f32 must be 1 for the k-grouped BF16 GEMM");
  args = valid(Kind::Normal);
  args.majorA = Major(2);
  expectRefused(args, "argument major_a must be k (0) or mn (1), got 2");
  args = valid(Kind::Normal);
  args.dF32 = 2;
  expectRefused(args, "argument 'd_f32' must be 0 or 1, got 2");
  args = valid(Kind::Normal);
  args.accumulate = -1;
  expectRefused(args, "argument 'accumulate' must be 0 or 1, got -1");
}

TEST(Bf16ValidationTest, ExtentsNameTheArgument) {
  Bf16Args args = valid(Kind::Normal);
  args.m = 0;
  expectRefused(args, "argument m must be in [1, 2^31 - 1], got 0");
  args = valid(Kind::MGroupedMasked);
  args.m = 0;
  expectRefused(args, "argument m_max must be in [1");
  args = valid(Kind::MGroupedContiguous);
  args.m = int64_t(1) << 31;
  expectRefused(args, "argument m_sum must be in [1");
  args = valid(Kind::Normal);
  args.k = 0;
  expectRefused(args, "argument k must be in [1");
  args = valid(Kind::Normal);
  args.n = 4100;
  expectRefused(args, "argument 'n' must be a multiple of 8");
  args = valid(Kind::Normal);
  args.numGroups = 2;
  expectRefused(args, "argument 'num_groups' must be 1 for the normal GEMM");
  args = valid(Kind::MGroupedContiguous);
  args.numGroups = 0;
  expectRefused(args, "argument num_groups must be in [1");
  args = valid(Kind::MGroupedContiguous);
  args.numGroups = 1 << 20;
  expectRefused(args, "argument n * num_groups must be <= 2^31 - 1");
}

TEST(Bf16ValidationTest, NormalRowStrides) {
  Bf16Args args = valid(Kind::Normal);
  args.lda = 7172;
  expectRefused(args, "argument 'lda' must be a multiple of 8 (a's row "
                      "stride");
  args.lda = 7160;
  expectRefused(args, "argument 'lda' must be >= k = 7168");
  args = valid(Kind::Normal, MN, MN);
  args.lda = 248;
  expectRefused(args, "argument 'lda' must be >= m = 256");
  args = valid(Kind::Normal, MN, MN);
  args.ldb = 4088;
  expectRefused(args, "argument 'ldb' must be >= n = 4096");
  args = valid(Kind::Normal, K, K);
  args.ldb = 4;
  expectRefused(args, "argument 'ldb' must be a multiple of 8");
  args = valid(Kind::Normal);
  args.lda = int64_t(1) << 31;
  expectRefused(args, "argument 'lda' must be <= 2^31 - 1");
  // Padded rows are taken as they are, and K needs no multiple of 64.
  args = valid(Kind::Normal, MN, K);
  args.lda = 512;
  args.k = 100;
  args.ldb = 104;
  EXPECT_TRUE(checkBf16Arguments(args).ok()) << message(args);
}

TEST(Bf16ValidationTest, ContiguousOperandsNameTheirExtent) {
  // The kinds without stride arguments take a and b dense: the extent is
  // the stride.
  Bf16Args args = valid(Kind::MGroupedContiguous);
  args.k = 7172;
  expectRefused(args, "argument 'k' must be a multiple of 8 (a's row stride");
  args = valid(Kind::MGroupedMasked);
  args.k = 100;
  expectRefused(args, "argument 'k' must be a multiple of 8");
  args = valid(Kind::KGroupedContiguous);
  args.m = 260;
  expectRefused(args, "argument 'm' must be a multiple of 8 (a's row stride");
  // K-major operands need no K % 64 (TMA zero-fills the last block).
  for (Kind kind : {Kind::MGroupedContiguous, Kind::MGroupedContiguousPsum,
                    Kind::MGroupedMasked}) {
    args = valid(kind);
    args.k = 7176;
    EXPECT_TRUE(checkBf16Arguments(args).ok())
        << dgemm::heuristics::kindName(kind) << ": " << message(args);
  }
}

TEST(Bf16ValidationTest, MnMajorGroupedBNeedsWholeKBlocks) {
  for (Kind kind : {Kind::MGroupedContiguous, Kind::MGroupedContiguousPsum}) {
    Bf16Args args = valid(kind, K, MN);
    args.k = 7176;
    expectRefused(args, "argument 'k' must be a multiple of 64 with major_b "
                        "= mn");
    args = valid(kind, K, MN);
    args.n = 8;
    args.k = 1 << 20;
    args.numGroups = 4096;
    expectRefused(args, "argument 'num_groups * k' must be <= 2^31 - 1");
  }
}

TEST(Bf16ValidationTest, MaskedRules) {
  Bf16Args args = valid(Kind::MGroupedMasked);
  args.expectedM = 0;
  expectRefused(args, "argument 'expected_m' must be in [1, 2^31 - 1], got 0");
  args = valid(Kind::MGroupedMasked);
  args.m = 1 << 30;
  args.numGroups = 2;
  args.n = 8;
  expectRefused(args, "argument 'num_groups * m_max' must be <= 2^31 - 1");
  args = valid(Kind::MGroupedMasked);
  args.rowArray = nullptr;
  expectRefused(args, "argument 'masked_m' must not be null");
  args.rowArray = fake<const int32_t>(7 * kGiB + 2);
  expectRefused(args, "argument 'masked_m' must be 4-byte aligned");
  // masked_m is [G] int32: 16 bytes, so right after d (4 x 256 x 4096 BF16 =
  // 8 MiB) it is accepted and 4 bytes earlier it overlaps.
  args.rowArray = fake<const int32_t>(5 * kGiB + (8 << 20));
  EXPECT_TRUE(checkBf16Arguments(args).ok()) << message(args);
  args.rowArray = fake<const int32_t>(5 * kGiB + (8 << 20) - 4);
  expectRefused(args, "argument 'd' must not overlap 'masked_m'");
}

TEST(Bf16ValidationTest, ContiguousRowArrays) {
  Bf16Args args = valid(Kind::MGroupedContiguous);
  args.rowArray = nullptr;
  expectRefused(args, "argument 'grouped_layout' must not be null");
  // The layout has one entry per row (M_sum = 1024: 4 KiB).
  args.rowArray = fake<const int32_t>(5 * kGiB - 4096);
  EXPECT_TRUE(checkBf16Arguments(args).ok()) << message(args);
  args.rowArray = fake<const int32_t>(5 * kGiB - 4092);
  expectRefused(args, "argument 'd' must not overlap 'grouped_layout'");
  args = valid(Kind::MGroupedContiguousPsum);
  args.rowArray = nullptr;
  expectRefused(args, "argument 'psum' must not be null");
  args = valid(Kind::MGroupedContiguousPsum);
  args.expectedM = -1;
  expectRefused(args, "argument 'expected_m' must be 0 (none) or in [1");
  args.expectedM = 200; // a hint is optional
  EXPECT_TRUE(checkBf16Arguments(args).ok()) << message(args);
}

TEST(Bf16ValidationTest, KGroupedGroupSizes) {
  Bf16Args args = valid(Kind::KGroupedContiguous);
  args.ksHost = nullptr;
  expectRefused(args, "argument 'ks_host' must not be null");
  args = valid(Kind::KGroupedContiguous);
  args.numGroups = 0;
  expectRefused(args, "argument 'num_groups' must be in [1, 2^31 - 1], got 0");
  int32_t negative[] = {128, -64, 0, 0};
  args = valid(Kind::KGroupedContiguous);
  args.ksHost = negative;
  expectRefused(args, "argument 'ks_host[1]' must be >= 0, got -64");
  int32_t ragged[] = {128, 0, 100, 0};
  args.ksHost = ragged;
  expectRefused(args, "argument 'ks_host[2]' must be a multiple of 64");
  int32_t huge[] = {2147483584, 2147483584, 0, 0};
  args.ksHost = huge;
  expectRefused(args, "argument 'ks_host': sum(K) must be <= 2^31 - 1");
  args = valid(Kind::KGroupedContiguous);
  args.rowArray = nullptr;
  expectRefused(args, "argument 'ks_device' must not be null");
  args.rowArray = fake<const int32_t>(5 * kGiB + 4);
  expectRefused(args, "argument 'd' must not overlap 'ks_device'");
}

TEST(Bf16ValidationTest, KGroupedEmptyK) {
  // Every group empty: accumulating adds nothing (a and b are not read, so
  // they may be null); overwriting is the caller's.
  int32_t empty[] = {0, 0, 0, 0};
  Bf16Args args = valid(Kind::KGroupedContiguous);
  args.ksHost = empty;
  args.a = args.b = nullptr;
  Bf16Shape shape;
  ASSERT_TRUE(checkBf16Arguments(args, &shape).ok()) << message(args);
  EXPECT_EQ(shape.kTotal, 0);
  EXPECT_TRUE(bf16Gemm(args, nullptr).ok()); // launches nothing
  args.accumulate = 0;
  expectRefused(args, "argument 'ks_host': sum(K) = 0 leaves nothing to "
                      "multiply");
}

TEST(Bf16ValidationTest, TileCountAndOutputSizeFit) {
  Bf16Args args = valid(Kind::Normal);
  args.m = 1 << 26;
  args.n = 1 << 24;
  args.lda = args.k;
  args.ldb = args.k;
  expectRefused(args, "the tile count");
  std::vector<int32_t> ks(1024, 0);
  args = valid(Kind::KGroupedContiguous);
  args.numGroups = 1024;
  args.ksHost = ks.data();
  args.m = args.n = 1 << 20;
  expectRefused(args, "the tile count");
  // G * N within 32 bits, but G * M * N * 4 beyond 64.
  std::vector<int32_t> many(1 << 20, 0);
  args.numGroups = 1 << 20;
  args.ksHost = many.data();
  args.n = 2040;
  args.m = 2147483640;
  expectRefused(args, "'num_groups' * 'm' * 'n' * 4 (the size of 'd') must "
                      "fit in 64 bits");
}

TEST(Bf16ValidationTest, PointersNameTheArgument) {
  for (const Bf16Args &base : everyValidCall()) {
    SCOPED_TRACE(describe(base));
    Bf16Args args = base;
    args.a = nullptr;
    expectRefused(args, "argument 'a' must not be null");
    args = base;
    args.b = fake(3 * kGiB + 8);
    expectRefused(args, "argument 'b' must be 16-byte aligned");
    args = base;
    args.d = fake(5 * kGiB + 4);
    expectRefused(args, "argument 'd' must be 16-byte aligned");
  }
}

TEST(Bf16ValidationTest, OverlapCountsTheViewExactly) {
  // a: 256 rows of stride 8192 holding 7168 elements: it ends at
  // (255 * 8192 + 7168) * 2 bytes.
  Bf16Args args = valid(Kind::Normal);
  args.lda = 8192;
  int64_t aEnd = (255 * 8192 + 7168) * 2;
  args.d = fake(1 * kGiB + aEnd);
  EXPECT_TRUE(checkBf16Arguments(args).ok()) << message(args);
  args.d = fake(1 * kGiB + aEnd - 16);
  expectRefused(args, "argument 'd' must not overlap 'a'");
  // An FP32 d is twice the bytes of a BF16 one: b placed after a BF16 d
  // overlaps an FP32 one.
  args = valid(Kind::Normal);
  args.b = fake(5 * kGiB + 256 * 4096 * 2);
  EXPECT_TRUE(checkBf16Arguments(args).ok()) << message(args);
  args.dF32 = 1;
  expectRefused(args, "argument 'd' must not overlap 'b'");
  // The inputs may overlap each other.
  args = valid(Kind::Normal);
  args.b = args.a;
  EXPECT_TRUE(checkBf16Arguments(args).ok()) << message(args);
}

TEST(Bf16ValidationTest, BuffersEndWithinTheAddressSpace) {
  Bf16Args args = valid(Kind::Normal);
  args.a = fake(UINTPTR_MAX - 1023);
  expectRefused(args, "argument 'a': its 3670016 bytes must end within the "
                      "64-bit address space");
}

// --- The C entries ------------------------------------------------------

struct Err {
  char text[512] = "";
};

TEST(Bf16CEntryTest, EachEntryRefusesBeforeTheDriver) {
  Err e;
  EXPECT_EQ(dgemm_bf16_gemm(fake(1 * kGiB), 7000, 0, fake(3 * kGiB), 7168, 0,
                            fake(5 * kGiB), 0, 0, 256, 4096, 7168, nullptr,
                            e.text, sizeof(e.text)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(e.text, HasSubstr("argument 'lda' must be >= k = 7168"));
  EXPECT_EQ(dgemm_bf16_gemm(fake(1 * kGiB), 7168, 0, fake(3 * kGiB), 7168, 0,
                            fake(5 * kGiB), 0, 1, 256, 4096, 7168, nullptr,
                            e.text, sizeof(e.text)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(e.text, HasSubstr("argument accumulate must be 0 with a BF16 d"));
  EXPECT_EQ(dgemm_m_grouped_bf16_gemm_contiguous(
                fake(1 * kGiB), fake(3 * kGiB), 1, fake(5 * kGiB), nullptr,
                1024, 4096, 7168, 4, nullptr, e.text, sizeof(e.text)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(e.text, HasSubstr("argument 'grouped_layout' must not be null"));
  EXPECT_EQ(dgemm_m_grouped_bf16_gemm_contiguous_psum(
                fake(1 * kGiB), fake(3 * kGiB), 1, fake(5 * kGiB),
                fake<const int32_t>(7 * kGiB), 1024, 4096, 7176, 4, 0, nullptr,
                e.text, sizeof(e.text)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(e.text, HasSubstr("argument 'k' must be a multiple of 64 with "
                                "major_b = mn"));
  EXPECT_EQ(dgemm_m_grouped_bf16_gemm_nt_masked(
                fake(1 * kGiB), fake(3 * kGiB), fake(5 * kGiB),
                fake<const int32_t>(7 * kGiB), 256, 4096, 7168, 4, 0, nullptr,
                e.text, sizeof(e.text)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(e.text, HasSubstr("argument 'expected_m' must be in [1"));
  int32_t ks[] = {128, 96};
  EXPECT_EQ(dgemm_k_grouped_bf16_gemm_tn_contiguous(
                fake(1 * kGiB), fake(3 * kGiB), fake(5 * kGiB), 1, 256, 4096, 2,
                ks, fake<const int32_t>(7 * kGiB), nullptr, e.text,
                sizeof(e.text)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(e.text, HasSubstr("argument 'ks_host[1]' must be a multiple of "
                                "64"));
}

TEST(Bf16CEntryTest, KGroupedEntryTakesBothOperandsMnMajorAndAnFp32D) {
  // What the entry fixes: a [sum_k, m] needs m % 8 (its row stride) and no
  // K-major rule applies; an accumulate of 2 is refused.
  Err e;
  int32_t ks[] = {64};
  EXPECT_EQ(dgemm_k_grouped_bf16_gemm_tn_contiguous(
                fake(1 * kGiB), fake(3 * kGiB), fake(5 * kGiB), 1, 260, 4096, 1,
                ks, fake<const int32_t>(7 * kGiB), nullptr, e.text,
                sizeof(e.text)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(e.text, HasSubstr("argument 'm' must be a multiple of 8"));
  EXPECT_EQ(dgemm_k_grouped_bf16_gemm_tn_contiguous(
                fake(1 * kGiB), fake(3 * kGiB), fake(5 * kGiB), 2, 256, 4096, 1,
                ks, fake<const int32_t>(7 * kGiB), nullptr, e.text,
                sizeof(e.text)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(e.text, HasSubstr("argument 'accumulate' must be 0 or 1"));
}

// --- Tensor maps --------------------------------------------------------

/// The maps of valid `args` for a block_m x block_n tile.
struct Maps {
  Bf16Shape shape;
  TensorMapSpec specs[kNumTensorMaps];
  explicit Maps(const Bf16Args &args, int blockM = 128, int blockN = 128) {
    EXPECT_TRUE(checkBf16Arguments(args, &shape).ok()) << message(args);
    KernelConfig config;
    config.blockM = blockM;
    config.blockN = blockN;
    describeBf16TensorMaps(args, shape, config, specs);
  }
};

void expectMap(const TensorMapSpec &spec, const void *address, cuuint64_t inner,
               cuuint64_t rows, cuuint64_t strideBytes, cuuint32_t boxRows) {
  EXPECT_EQ(spec.dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(spec.rank, 2);
  EXPECT_EQ(spec.address, address);
  EXPECT_EQ(spec.globalDim[0], inner);
  EXPECT_EQ(spec.globalDim[1], rows);
  EXPECT_EQ(spec.globalStride[0], strideBytes);
  EXPECT_EQ(spec.globalStride[0] % 16, 0u);
  EXPECT_EQ(spec.boxDim[0], 64u); // 128 bytes: one swizzle row
  EXPECT_EQ(spec.boxDim[1], boxRows);
  EXPECT_EQ(spec.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
}

TEST(Bf16TensorMapsTest, NormalKMajorOperandsLoadWholeTiles) {
  Bf16Args args = valid(Kind::Normal);
  args.lda = 8192;
  Maps x(args, 128, 256);
  expectMap(x.specs[kMapA], args.a, 7168, 256, 8192 * 2, 128);
  expectMap(x.specs[kMapB], args.b, 7168, 4096, 7168 * 2, 256);
}

TEST(Bf16TensorMapsTest, NormalMnMajorOperandsLoad64By64Boxes) {
  Bf16Args args = valid(Kind::Normal, MN, MN);
  args.lda = 264;
  Maps x(args, 128, 128);
  // A [K, M]: dimension 0 is M, rows are K.
  expectMap(x.specs[kMapA], args.a, 256, 7168, 264 * 2, 64);
  expectMap(x.specs[kMapB], args.b, 4096, 7168, 4096 * 2, 64);
  // nn and tt: one operand of each.
  Maps nn(valid(Kind::Normal, K, MN), 64, 128);
  expectMap(nn.specs[kMapA], args.a, 7168, 256, 7168 * 2, 64);
  expectMap(nn.specs[kMapB], args.b, 4096, 7168, 4096 * 2, 64);
  Maps tt(valid(Kind::Normal, MN, K), 128, 64);
  expectMap(tt.specs[kMapA], args.a, 256, 7168, 256 * 2, 64);
  expectMap(tt.specs[kMapB], args.b, 7168, 4096, 7168 * 2, 64);
}

TEST(Bf16TensorMapsTest, GroupedBStacksTheGroups) {
  // nt: B [G, N, K] as [G * N, K]; nn: B [G, K, N] as [G * K, N].
  Bf16Args args = valid(Kind::MGroupedContiguous);
  Maps nt(args, 128, 128);
  expectMap(nt.specs[kMapA], args.a, 7168, 1024, 7168 * 2, 128);
  expectMap(nt.specs[kMapB], args.b, 7168, 4 * 4096, 7168 * 2, 128);
  Maps nn(valid(Kind::MGroupedContiguousPsum, K, MN), 64, 256);
  expectMap(nn.specs[kMapA], args.a, 7168, 1024, 7168 * 2, 64);
  expectMap(nn.specs[kMapB], args.b, 4096, 4 * 7168, 4096 * 2, 64);
}

TEST(Bf16TensorMapsTest, MaskedRowsAreTheGroupsBlocks) {
  Bf16Args args = valid(Kind::MGroupedMasked);
  Maps x(args, 64, 128);
  expectMap(x.specs[kMapA], args.a, 7168, 4 * 256, 7168 * 2, 64);
  expectMap(x.specs[kMapB], args.b, 7168, 4 * 4096, 7168 * 2, 128);
  EXPECT_EQ(x.shape.tileGroups, 4);
  EXPECT_EQ(x.shape.dRows, 4 * 256);
}

TEST(Bf16TensorMapsTest, KGroupedOperandsSpanEveryGroup) {
  Bf16Args args = valid(Kind::KGroupedContiguous);
  Maps x(args, 128, 256);
  // sum(K) = 448 rows of a [sum_k, M] and b [sum_k, N].
  expectMap(x.specs[kMapA], args.a, 256, 448, 256 * 2, 64);
  expectMap(x.specs[kMapB], args.b, 4096, 448, 4096 * 2, 64);
  EXPECT_EQ(x.shape.kTotal, 448);
  EXPECT_EQ(x.shape.tileGroups, 4);
  EXPECT_EQ(x.shape.dRows, 4 * 256);
}

TEST(Bf16TensorMapsTest, UnreadMapsAreCopiesOfA) {
  for (const Bf16Args &args : everyValidCall()) {
    SCOPED_TRACE(describe(args));
    Maps x(args);
    for (int i : {kMapSfa, kMapSfb, kMapD}) {
      EXPECT_EQ(x.specs[i].address, x.specs[kMapA].address);
      EXPECT_EQ(x.specs[i].globalDim[1], x.specs[kMapA].globalDim[1]);
      EXPECT_EQ(x.specs[i].dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
    }
  }
}

// --- Selection ----------------------------------------------------------

dgemm::heuristics::Bf16Problem problemOf(const Bf16Args &args) {
  dgemm::heuristics::Bf16Problem p;
  p.kind = args.kind;
  p.majorA = args.majorA;
  p.majorB = args.majorB;
  p.dF32 = args.dF32;
  p.accumulate = args.accumulate;
  return p;
}

TEST(Bf16SelectionTest, ReturnsACandidateOfTheBundle) {
  dgemm::heuristics::Target target;
  for (const Bf16Args &args : everyValidCall()) {
    SCOPED_TRACE(describe(args));
    KernelConfig config;
    Status s = chooseBf16Config(args, target, config);
    ASSERT_TRUE(s.ok()) << s.message();
    std::vector<KernelConfig> candidates =
        dgemm::heuristics::candidateBf16Configs(problemOf(args), target);
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), config),
              candidates.end())
        << config.entryName();
    EXPECT_EQ(config.dtype, dgemm::heuristics::Dtype::Bf16);
    EXPECT_EQ(config.majorA, args.majorA);
    EXPECT_EQ(config.majorB, args.majorB);
    EXPECT_EQ(config.dF32, args.dF32);
    EXPECT_EQ(config.accumulate, args.accumulate);
    EXPECT_THAT(config.entryName(), HasSubstr(std::string("_bf16_") +
                                              dgemm::heuristics::bf16LayoutName(
                                                  args.majorA, args.majorB)));
  }
}

TEST(Bf16SelectionTest, OverridesApply) {
  Bf16Args args = valid(Kind::Normal);
  KernelConfig config;
  {
    ScopedEnv env("DGEMM_BLOCK_N", "64");
    ASSERT_TRUE(
        chooseBf16Config(args, dgemm::heuristics::Target(), config).ok());
    EXPECT_EQ(config.blockN, 64);
    EXPECT_THAT(config.entryName(), StartsWith("dgemm_normal_bf16_nt_bm"));
  }
  {
    ScopedEnv env("DGEMM_STAGES", "x3");
    Status s = chooseBf16Config(args, dgemm::heuristics::Target(), config);
    EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("DGEMM_STAGES"));
  }
}

} // namespace

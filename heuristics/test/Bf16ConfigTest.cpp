//===- Bf16ConfigTest.cpp - The BF16 kernels' configurations --------------===//

#include "dgemm/Heuristics/Bf16Config.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace dgemm::heuristics;

namespace {

Bf16Problem problem(Kind kind, Major a, Major b, bool dF32, bool acc,
                    int64_t m = 4096, int64_t n = 4096, int64_t k = 7168,
                    int64_t groups = 1) {
  Bf16Problem p;
  p.kind = kind;
  p.majorA = a;
  p.majorB = b;
  p.dF32 = dF32;
  p.accumulate = acc;
  p.m = m;
  p.n = n;
  p.k = k;
  p.numGroups = groups;
  return p;
}

TEST(Bf16ConfigTest, EntryNamesSayKindLayoutAndD) {
  Target t;
  EXPECT_EQ(
      makeBf16Config(problem(Kind::Normal, Major::K, Major::K, false, false),
                     128, 256, t)
          .entryName(),
      "dgemm_normal_bf16_nt_bm128_bn256_s4");
  EXPECT_EQ(
      makeBf16Config(problem(Kind::Normal, Major::MN, Major::K, true, true), 64,
                     64, t)
          .entryName(),
      "dgemm_normal_bf16_tt_bm64_bn64_s8_f32_acc");
  EXPECT_EQ(makeBf16Config(problem(Kind::MGroupedContiguousPsum, Major::K,
                                   Major::MN, false, false),
                           128, 128, t)
                .entryName(),
            "dgemm_mgrouped_psum_bf16_nn_bm128_bn128_s7");
  EXPECT_EQ(makeBf16Config(problem(Kind::KGroupedContiguous, Major::MN,
                                   Major::MN, true, false),
                           128, 128, t)
                .entryName(),
            "dgemm_kgrouped_bf16_tn_bm128_bn128_s7_f32");
}

TEST(Bf16ConfigTest, MetaCarriesTheOperandFields) {
  Target t;
  std::string meta = makeBf16Config(problem(Kind::KGroupedContiguous, Major::MN,
                                            Major::MN, true, true),
                                    128, 128, t)
                         .toMeta();
  EXPECT_NE(meta.find("block_k=64\n"), std::string::npos) << meta;
  EXPECT_NE(meta.find("dtype=bf16\nmajor_a=mn\nmajor_b=mn\nd_f32=1\n"
                      "accumulate=1\n"),
            std::string::npos)
      << meta;
  // An FP8 kernel's .meta leaves them out.
  EXPECT_EQ(KernelConfig().toMeta().find("dtype="), std::string::npos);
}

TEST(Bf16ConfigTest, StagesFillSharedMemoryWithoutScaleSlices) {
  Target t;
  // 128 x 64 BF16 A (16 KiB) and 256 x 64 B (32 KiB) per stage: 4 stages.
  KernelConfig c = makeBf16Config(
      problem(Kind::Normal, Major::K, Major::K, false, false), 128, 256, t);
  SmemLayout l = smemLayoutFor(c);
  EXPECT_EQ(l.aBytes, 128 * 64 * 2);
  EXPECT_EQ(l.bBytes, 256 * 64 * 2);
  EXPECT_EQ(l.sfaBytes, 0);
  EXPECT_EQ(l.sfbBytes, 0);
  EXPECT_EQ(c.stages, 4);
  EXPECT_EQ(checkConfig(c, t), "");
  ++c.stages;
  EXPECT_NE(checkConfig(c, t).find("smem_bytes must be <="), std::string::npos);
}

TEST(Bf16ConfigTest, KindsTakeDeepGemmsLayoutsAndOutputs) {
  struct Case {
    Bf16Problem p;
    const char *error; // "" if accepted
  } cases[] = {
      {problem(Kind::Normal, Major::MN, Major::MN, true, true), ""},
      {problem(Kind::Normal, Major::K, Major::MN, false, false), ""},
      {problem(Kind::MGroupedContiguous, Major::K, Major::MN, false, false,
               8192, 4096, 7168, 4),
       ""},
      {problem(Kind::MGroupedContiguous, Major::MN, Major::K, false, false),
       "major_a must be k (0) for m_grouped_contiguous"},
      {problem(Kind::MGroupedMasked, Major::K, Major::MN, false, false),
       "major_b must be k (0) for m_grouped_masked"},
      {problem(Kind::MGroupedMasked, Major::K, Major::K, true, false),
       "d_f32 must be 0 for m_grouped_masked (BF16 d)"},
      {problem(Kind::KGroupedContiguous, Major::K, Major::MN, true, true),
       "major_a must be mn (1) for the k-grouped BF16 GEMM"},
      {problem(Kind::KGroupedContiguous, Major::MN, Major::MN, false, false),
       "d_f32 must be 1 for the k-grouped BF16 GEMM"},
      {problem(Kind::Normal, Major::K, Major::K, false, true),
       "accumulate must be 0 with a BF16 d"},
      {problem(Kind::Normal, Major::K, Major::K, false, false, 0),
       "m must be in [1, 2^31 - 1], got 0"},
      {problem(Kind::KGroupedContiguous, Major::MN, Major::MN, true, true, 64,
               64, 0, 2),
       ""},
  };
  for (const Case &c : cases) {
    std::string got = checkBf16Problem(c.p);
    if (*c.error == '\0')
      EXPECT_EQ(got, "") << kindName(c.p.kind);
    else
      EXPECT_NE(got.find(c.error), std::string::npos) << got;
  }
}

TEST(Bf16ConfigTest, ConfigRulesNameTheField) {
  Target t;
  Bf16Problem p = problem(Kind::Normal, Major::K, Major::MN, false, false);
  KernelConfig ok = makeBf16Config(p, 128, 128, t);
  ASSERT_EQ(checkConfig(ok, t), "");
  KernelConfig c = ok;
  c.blockK = 128;
  EXPECT_NE(checkConfig(c, t).find("block_k must be 64"), std::string::npos);
  c = ok;
  c.blockN = 96; // not whole 64-column blocks of an MN-major B
  EXPECT_NE(checkConfig(c, t).find("block_n must be a multiple of 64 with "
                                   "major_b = mn"),
            std::string::npos);
  c = ok;
  c.descSlots = 2;
  EXPECT_NE(checkConfig(c, t).find("desc_slots must be 0"), std::string::npos);
  c = ok;
  c.unsafe = unsigned(Unsafe::SkipDescriptorDrain);
  EXPECT_NE(checkConfig(c, t).find("unsafe must be none or skip_proxy_fence"),
            std::string::npos);
  // The FP8 kernels keep the operand fields' defaults.
  KernelConfig fp8;
  fp8.stages = 6;
  fp8.dF32 = 1;
  EXPECT_NE(checkConfig(fp8, t).find("must keep their defaults"),
            std::string::npos);
}

TEST(Bf16ConfigTest, CandidatesAreSixTilesLargestFirst) {
  Target t;
  std::vector<KernelConfig> c = candidateBf16Configs(
      problem(Kind::MGroupedMasked, Major::K, Major::K, false, false), t);
  ASSERT_EQ(c.size(), 6u);
  const int expected[][2] = {{128, 256}, {128, 128}, {128, 64},
                             {64, 256},  {64, 128},  {64, 64}};
  std::set<std::string> names;
  for (size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(c[i].blockM, expected[i][0]);
    EXPECT_EQ(c[i].blockN, expected[i][1]);
    EXPECT_EQ(c[i].kind, Kind::MGroupedMasked);
    EXPECT_EQ(checkConfig(c[i], t), "");
    names.insert(c[i].entryName());
  }
  EXPECT_EQ(names.size(), 6u);
}

TEST(Bf16ConfigTest, SelectionModelsWaves) {
  Target t;
  // 32 x 16 tiles of 128 x 256: 4 waves, against 8 of 128 x 128.
  KernelConfig dense = selectBf16Config(
      problem(Kind::Normal, Major::K, Major::K, false, false), t);
  EXPECT_EQ(dense.blockM, 128);
  EXPECT_EQ(dense.blockN, 256);
  // A decode step, 8 groups of 64 rows: 64-row tiles, one wave.
  KernelConfig decode =
      selectBf16Config(problem(Kind::MGroupedMasked, Major::K, Major::K, false,
                               false, 64, 4096, 7168, 8),
                       t);
  EXPECT_EQ(decode.blockM, 64);
  EXPECT_EQ(decode.blockN, 256);
  // Every selection is a candidate (the bundle holds it).
  for (int64_t m : {1, 64, 200, 1000, 4096, 20000})
    for (int64_t n : {64, 512, 2048, 7168}) {
      Bf16Problem p =
          problem(Kind::Normal, Major::MN, Major::K, true, false, m, n);
      KernelConfig s = selectBf16Config(p, t);
      bool found = false;
      for (const KernelConfig &c : candidateBf16Configs(p, t))
        found |= c == s;
      EXPECT_TRUE(found) << m << " x " << n << ": " << s.entryName();
    }
}

TEST(Bf16ConfigTest, OverridesStayAmongTheCandidates) {
  Target t;
  Bf16Problem p = problem(Kind::Normal, Major::K, Major::K, false, false);
  KernelConfig c = selectBf16Config(p, t);
  ConfigOverrides o;
  o.blockN = 64;
  o.blockM = 64;
  ASSERT_EQ(applyOverrides(c, o, t, nullptr), "");
  EXPECT_EQ(c.blockM, 64);
  EXPECT_EQ(c.blockN, 64);
  EXPECT_EQ(c.dtype, Dtype::Bf16);
  // 96 columns would pass the kernel's rules but is no candidate: ignored.
  o = ConfigOverrides();
  o.blockN = 96;
  KernelConfig before = c;
  ASSERT_EQ(applyOverrides(c, o, t, nullptr), "");
  EXPECT_EQ(c, before);
  // 256 is reachable (the FP8 kernels ignore it).
  o.blockN = 256;
  ASSERT_EQ(applyOverrides(c, o, t, nullptr), "");
  EXPECT_EQ(c.blockN, 256);
}

} // namespace

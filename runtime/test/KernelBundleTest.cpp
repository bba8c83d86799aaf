//===- KernelBundleTest.cpp - .meta parsing and bundle lookup -------------===//

#include "dgemm/Runtime/KernelBundle.h"

#include "dgemm/Heuristics/Bf16Config.h"
#include "dgemm/Runtime/Overrides.h"
#include "dgemm/Runtime/dgemm_runtime.h"

#include "TestUtils.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

using namespace dgemm::runtime;
using dgemm::heuristics::Epilogue;
using dgemm::heuristics::Unsafe;
using dgemm::test::ScopedEnv;
using dgemm::test::TempDir;
using ::testing::HasSubstr;

namespace {

const char *kEntry = "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2";

/// The example of docs/KernelABI.md, comments and all.
std::string goodMeta() {
  return "entry=dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2   # PTX entry name\n"
         "kind=k_grouped_contiguous\n"
         "abi=4                      # version of the parameter table\n"
         "block_m=128\n"
         "block_n=128\n"
         "block_k=128\n"
         "stages=6\n"
         "desc_slots=2\n"
         "math_warpgroups=2\n"
         "threads=384\n"
         "cluster_m=1\n"
         "cluster_n=1\n"
         "smem_bytes=204800          # dynamic shared memory\n"
         "red_max_blocks=0\n"
         "epilogue=register          # register, reduction, in_place, parked\n"
         "quad_b=0\n"
         "unsafe=none\n"
         "heuristics_version=3\n";
}

/// goodMeta() with the line of `key` replaced by `line` (removed if empty).
std::string withLine(const std::string &key, const std::string &line) {
  std::string text = goodMeta();
  size_t begin = text.find(key + "=");
  size_t end = text.find('\n', begin);
  text.replace(begin, end - begin + 1, line.empty() ? "" : line + "\n");
  return text;
}

Status parse(const std::string &text, KernelMeta &meta) {
  return parseKernelMeta(text, "bundle/x.meta", kEntry, meta);
}

/// A configuration with `meta`'s tiling keys and every other field at its
/// default.
dgemm::heuristics::KernelConfig tilingOf(const KernelMeta &meta) {
  dgemm::heuristics::KernelConfig config;
  config.blockM = meta.blockM;
  config.blockN = meta.blockN;
  config.blockK = meta.blockK;
  config.stages = meta.stages;
  config.descSlots = meta.descSlots;
  config.mathWarpgroups = meta.mathWarpgroups;
  config.clusterM = meta.clusterM;
  config.clusterN = meta.clusterN;
  return config;
}

void expectBad(const std::string &text, const std::string &key,
               const std::string &rule) {
  KernelMeta meta;
  Status s = parse(text, meta);
  ASSERT_FALSE(s.ok()) << "accepted:\n" << text;
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr("bundle/x.meta"));
  EXPECT_THAT(s.message(), HasSubstr(key));
  EXPECT_THAT(s.message(), HasSubstr(rule));
}

TEST(KernelMetaTest, ParsesTheAbiExample) {
  KernelMeta meta;
  Status s = parse(goodMeta(), meta);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(meta.entry, kEntry);
  EXPECT_EQ(meta.kind, "k_grouped_contiguous");
  EXPECT_EQ(meta.abi, 4);
  EXPECT_EQ(meta.blockM, 128);
  EXPECT_EQ(meta.blockN, 128);
  EXPECT_EQ(meta.blockK, 128);
  EXPECT_EQ(meta.stages, 6);
  EXPECT_EQ(meta.descSlots, 2);
  EXPECT_EQ(meta.mathWarpgroups, 2);
  EXPECT_EQ(meta.threads, 384);
  EXPECT_EQ(meta.clusterM, 1);
  EXPECT_EQ(meta.clusterN, 1);
  EXPECT_EQ(meta.smemBytes, 204800);
  EXPECT_EQ(meta.redMaxBlocks, 0);
  EXPECT_EQ(meta.epilogue, Epilogue::Register);
  EXPECT_EQ(meta.quadB, 0);
  EXPECT_EQ(meta.unsafe, 0u);
  EXPECT_EQ(meta.heuristicsVersion, dgemm::heuristics::kHeuristicsVersion);
}

TEST(KernelMetaTest, ParsesTheHeuristicsOwnMeta) {
  // Every candidate, and its race-demonstration variants (allowed here).
  for (dgemm::heuristics::KernelConfig config :
       dgemm::heuristics::candidateKGroupedConfigs(dgemm::heuristics::Target()))
    for (unsigned unsafe : {0u, 1u, 2u, 3u}) {
      config.unsafe = unsafe;
      KernelMeta meta;
      Status s = parseKernelMeta(config.toMeta(), "gen.meta",
                                 config.entryName(), meta);
      ASSERT_TRUE(s.ok()) << config.entryName() << ": " << s.message();
      s = checkMetaMatchesConfig(meta, config, "gen.meta",
                                 /*allowUnsafe=*/true);
      EXPECT_TRUE(s.ok()) << config.entryName() << ": " << s.message();
      EXPECT_EQ(meta.threads, config.threads());
      EXPECT_EQ(meta.smemBytes, config.smemBytes());
      EXPECT_EQ(meta.epilogue, config.epilogue);
      EXPECT_EQ(meta.unsafe, unsafe);
    }
}

TEST(KernelMetaTest, IgnoresBlankLinesCommentsAndUnknownKeys) {
  KernelMeta meta;
  Status s = parse("\n# header\n  \n" + goodMeta() + "future_key = 7\n", meta);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(KernelMetaTest, RejectsMissingKey) {
  expectBad(withLine("stages", ""), "'stages'", "is missing");
}

TEST(KernelMetaTest, RejectsDuplicateKey) {
  expectBad(goodMeta() + "stages=4\n", "'stages'", "appears twice");
}

TEST(KernelMetaTest, RejectsLineWithoutEquals) {
  expectBad(goodMeta() + "stages 4\n", "line 19", "expected key=value");
}

TEST(KernelMetaTest, RejectsNonInteger) {
  expectBad(withLine("block_n", "block_n=12x"), "'block_n'", "got '12x'");
  expectBad(withLine("block_n", "block_n="), "'block_n'", "got ''");
  expectBad(withLine("block_n", "block_n=99999999999"), "'block_n'",
            "integer in [8, 256]");
}

TEST(KernelMetaTest, RejectsOutOfRange) {
  expectBad(withLine("block_m", "block_m=512"), "'block_m'",
            "integer in [8, 256]");
  expectBad(withLine("threads", "threads=2048"), "'threads'",
            "integer in [128, 1024]");
  expectBad(withLine("stages", "stages=0"), "'stages'", "integer in [1, 64]");
}

TEST(KernelMetaTest, RejectsNonMultiple) {
  expectBad(withLine("block_n", "block_n=100"), "'block_n'", "multiple of 8");
  expectBad(withLine("threads", "threads=200"), "'threads'", "multiple of 128");
}

TEST(KernelMetaTest, RejectsWrongBlockK) {
  // 128 FP8 or 64 BF16 elements; which one the kernel needs is the
  // configuration's (checkMetaMatchesConfig).
  expectBad(withLine("block_k", "block_k=32"), "'block_k'",
            "must be an integer in [64, 128] and a multiple of 64");
  expectBad(withLine("block_k", "block_k=96"), "'block_k'", "multiple of 64");
  KernelMeta meta;
  ASSERT_TRUE(parse(withLine("block_k", "block_k=64"), meta).ok());
  EXPECT_EQ(meta.blockK, 64);
}

TEST(KernelMetaTest, RejectsOtherAbi) {
  expectBad(withLine("abi", "abi=3"), "'abi'", "must be 4");
}

TEST(KernelMetaTest, RejectsOtherKind) {
  expectBad(withLine("kind", "kind=m_grouped"), "'kind'",
            "must be 'k_grouped_contiguous'");
}

TEST(KernelMetaTest, RejectsEntryOtherThanFileStem) {
  expectBad(withLine("entry", "entry=other_kernel"), "'entry'",
            "must equal the file stem");
}

TEST(KernelMetaTest, RejectsEntryThatIsNoIdentifier) {
  expectBad(withLine("entry", "entry=9lives"), "'entry'",
            "must be a PTX identifier");
}

TEST(KernelMetaTest, RejectsOversizedCluster) {
  std::string text = withLine("cluster_m", "cluster_m=4");
  text = text.replace(text.find("cluster_n=1"), 11, "cluster_n=4");
  expectBad(text, "'cluster_n'", "must be <= 8");
}

TEST(KernelMetaTest, MismatchWithConfigNamesTheKey) {
  KernelMeta meta;
  ASSERT_TRUE(parse(goodMeta(), meta).ok());
  dgemm::heuristics::KernelConfig config;
  config.blockM = 128;
  config.blockN = 128;
  config.stages = 5;
  config.mathWarpgroups = 2;
  Status s = checkMetaMatchesConfig(meta, config, "x.meta");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr("x.meta: key 'stages' is 6"));
  config.stages = 6;
  EXPECT_TRUE(checkMetaMatchesConfig(meta, config, "x.meta").ok());
  // A kernel without the reduction epilogue is not the reducing one.
  config.epilogue = Epilogue::Reduction;
  config.redMaxBlocks = 8;
  s = checkMetaMatchesConfig(meta, config, "x.meta");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("x.meta: key 'red_max_blocks' is 0"));
}

TEST(KernelMetaTest, ThreadsAndSmemMustBeWhatTheConfigImplies) {
  KernelMeta meta;
  ASSERT_TRUE(parse(goodMeta(), meta).ok());
  dgemm::heuristics::KernelConfig config = tilingOf(meta);
  ASSERT_TRUE(checkMetaMatchesConfig(meta, config, "x.meta").ok());
  // An older compiler's 8 KiB of epilogue buffers, or a parked kernel's
  // park under an unparked name: launching with them would misplace it.
  ASSERT_TRUE(parse(withLine("smem_bytes", "smem_bytes=221184"), meta).ok());
  Status s = checkMetaMatchesConfig(meta, config, "x.meta");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(),
              HasSubstr("x.meta: key 'smem_bytes' is 221184 but the selected "
                        "configuration has 204800"));
  ASSERT_TRUE(parse(withLine("threads", "threads=512"), meta).ok());
  s = checkMetaMatchesConfig(meta, config, "x.meta");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(),
              HasSubstr("x.meta: key 'threads' is 512 but the selected "
                        "configuration has 384"));
}

TEST(KernelMetaTest, EpilogueIsRequiredAndMustMatch) {
  for (Epilogue e : {Epilogue::Register, Epilogue::Reduction, Epilogue::InPlace,
                     Epilogue::Parked}) {
    KernelMeta meta;
    std::string name = dgemm::heuristics::epilogueName(e);
    ASSERT_TRUE(parse(withLine("epilogue", "epilogue=" + name), meta).ok());
    EXPECT_EQ(meta.epilogue, e);
  }
  expectBad(withLine("epilogue", "epilogue=inplace"), "'epilogue'",
            "must be register, reduction, in_place or parked, got 'inplace'");
  expectBad(withLine("epilogue", "epilogue=2"), "'epilogue'", "got '2'");
  // The in-place kernel is not the register one of the same tile.
  KernelMeta meta;
  ASSERT_TRUE(parse(withLine("epilogue", "epilogue=in_place"), meta).ok());
  dgemm::heuristics::KernelConfig config = tilingOf(meta);
  Status s = checkMetaMatchesConfig(meta, config, "x.meta");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(),
              HasSubstr("x.meta: key 'epilogue' is in_place but the "
                        "selected configuration has register"));
  config.epilogue = Epilogue::InPlace;
  EXPECT_TRUE(checkMetaMatchesConfig(meta, config, "x.meta").ok());
}

TEST(KernelMetaTest, OlderCompilersMetaIsRefusedWithTheCommandToRebuild) {
  // What the compiler wrote before the epilogue key: in_place_only and
  // park, neither epilogue, unsafe nor heuristics_version.
  std::string old = goodMeta();
  for (std::string key : {"epilogue=", "unsafe=", "heuristics_version="}) {
    size_t begin = old.find(key);
    old.erase(begin, old.find('\n', begin) - begin + 1);
  }
  const std::string rebuild =
      "the bundle is from an older compiler and must be regenerated with "
      "`dgemm-translate --dgemm-to-ptx examples/kernels.mlir "
      "--bundle-dir=DIR --bundle-all-candidates`";
  expectBad(old + "in_place_only=1\npark=1\n", "'epilogue' is missing",
            "(it has the retired keys 'in_place_only'/'park'): " + rebuild);
  expectBad(old + "in_place_only=0\n", "'epilogue' is missing", rebuild);
  expectBad(old, "'epilogue' is missing", rebuild);
  // With the epilogue but without the others: the same advice.
  expectBad(old + "epilogue=register\n", "'unsafe' is missing", rebuild);
  expectBad(old + "epilogue=register\nunsafe=none\n",
            "'heuristics_version' is missing", rebuild);
}

TEST(KernelMetaTest, HeuristicsVersionMustBeThisRuntimes) {
  expectBad(withLine("heuristics_version", "heuristics_version=1"),
            "'heuristics_version'",
            "must be " + std::to_string(dgemm::heuristics::kHeuristicsVersion) +
                " (this runtime's selection rules), got '1': the bundle "
                "was built with other rules");
  expectBad(withLine("heuristics_version", "heuristics_version=one"),
            "'heuristics_version'", "got 'one'");
  expectBad(withLine("heuristics_version", "heuristics_version=2x"),
            "'heuristics_version'", "regenerate it with `dgemm-translate");
}

TEST(KernelMetaTest, UnsafeIsRequiredAndMustMatch) {
  KernelMeta meta;
  ASSERT_TRUE(
      parse(withLine("unsafe", "unsafe=skip_descriptor_drain"), meta).ok());
  EXPECT_EQ(meta.unsafe, unsigned(Unsafe::SkipDescriptorDrain));
  ASSERT_TRUE(
      parse(withLine("unsafe", "unsafe=skip_descriptor_drain,skip_proxy_fence"),
            meta)
          .ok());
  EXPECT_EQ(meta.unsafe, 3u);
  expectBad(withLine("unsafe", "unsafe="), "'unsafe'",
            "must be none or a comma-separated list of skip_descriptor_drain "
            "and skip_proxy_fence, got ''");
  expectBad(withLine("unsafe", "unsafe=skip_drain"), "'unsafe'",
            "got 'skip_drain'");
  // Allowed, it must still be the kernel the configuration names.
  ASSERT_TRUE(parse(withLine("unsafe", "unsafe=skip_proxy_fence"), meta).ok());
  dgemm::heuristics::KernelConfig config = tilingOf(meta);
  Status s = checkMetaMatchesConfig(meta, config, "x.meta", true);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("key 'unsafe' is skip_proxy_fence but "
                                     "the selected configuration has none"));
  config.unsafe = unsigned(Unsafe::SkipProxyFence);
  EXPECT_TRUE(checkMetaMatchesConfig(meta, config, "x.meta", true).ok());
}

TEST(KernelMetaTest, UnsafeKernelIsRefusedUnlessAllowed) {
  KernelMeta meta;
  ASSERT_TRUE(
      parse(withLine("unsafe", "unsafe=skip_descriptor_drain"), meta).ok());
  dgemm::heuristics::KernelConfig config = tilingOf(meta);
  config.unsafe = meta.unsafe;
  // Refused first, even by a configuration that asks for it.
  Status s = checkMetaMatchesConfig(meta, config, "x.meta", false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_EQ(s.message(),
            "x.meta: kernel dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2 was "
            "built with unsafe option skip_descriptor_drain (a race "
            "demonstration); refusing to load it: call "
            "dgemm_set_allow_unsafe_kernels(1) or set "
            "DGEMM_ALLOW_UNSAFE_KERNELS=1");
  EXPECT_TRUE(checkMetaMatchesConfig(meta, config, "x.meta", true).ok());
  meta.unsafe = 3;
  EXPECT_THAT(checkKernelSafety(meta, "x.meta", false).message(),
              HasSubstr("unsafe options skip_descriptor_drain,"
                        "skip_proxy_fence (a race demonstration)"));
  meta.unsafe = 0;
  EXPECT_TRUE(checkKernelSafety(meta, "x.meta", false).ok());
}

TEST(KernelMetaTest, UnsafeOptInFromTheEnvironmentAndTheCApi) {
  KernelMeta meta;
  ASSERT_TRUE(parse(withLine("unsafe", "unsafe=skip_proxy_fence"), meta).ok());
  dgemm::heuristics::KernelConfig config = tilingOf(meta);
  config.unsafe = meta.unsafe;
  resetAllowUnsafeKernelsForTesting();
  {
    ScopedEnv unset("DGEMM_ALLOW_UNSAFE_KERNELS", std::nullopt);
    EXPECT_FALSE(unsafeKernelsAllowed());
    EXPECT_FALSE(checkMetaMatchesConfig(meta, config, "x.meta").ok());
  }
  {
    ScopedEnv allow("DGEMM_ALLOW_UNSAFE_KERNELS", "1");
    EXPECT_TRUE(unsafeKernelsAllowed());
    EXPECT_TRUE(checkMetaMatchesConfig(meta, config, "x.meta").ok());
    // The C entry point, once called, decides.
    EXPECT_EQ(dgemm_set_allow_unsafe_kernels(0), DGEMM_OK);
    EXPECT_FALSE(unsafeKernelsAllowed());
    EXPECT_FALSE(checkMetaMatchesConfig(meta, config, "x.meta").ok());
  }
  {
    ScopedEnv malformed("DGEMM_ALLOW_UNSAFE_KERNELS", "yes");
    resetAllowUnsafeKernelsForTesting();
    EXPECT_FALSE(unsafeKernelsAllowed());
    EXPECT_EQ(dgemm_set_allow_unsafe_kernels(1), DGEMM_OK);
    EXPECT_TRUE(unsafeKernelsAllowed());
    EXPECT_TRUE(checkMetaMatchesConfig(meta, config, "x.meta").ok());
  }
  EXPECT_EQ(dgemm_set_allow_unsafe_kernels(2), DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dgemm_set_allow_unsafe_kernels(-1), DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(unsafeKernelsAllowed()); // unchanged by the refused calls
  resetAllowUnsafeKernelsForTesting();
}

TEST(KernelMetaTest, RedMaxBlocksIsOptional) {
  KernelMeta meta;
  ASSERT_TRUE(parse(withLine("red_max_blocks", ""), meta).ok());
  EXPECT_EQ(meta.redMaxBlocks, 0);
  ASSERT_TRUE(parse(withLine("red_max_blocks", "red_max_blocks=8"), meta).ok());
  EXPECT_EQ(meta.redMaxBlocks, 8);
  expectBad(withLine("red_max_blocks", "red_max_blocks=-1"), "'red_max_blocks'",
            "must be an integer in [0, 1048576]");
  expectBad(withLine("red_max_blocks", "red_max_blocks=eight"),
            "'red_max_blocks'", "must be an integer in [0, 1048576]");
}

/// An optional 0/1 key of the .meta: absent means 0; 1 is read into
/// `metaField`; 2 is refused; and a kernel with the key set is not the
/// kernel of the same tile without it (checkMetaMatchesConfig), until the
/// config's `configField` says so too.
static void
expectOptionalFlagKey(const std::string &key, int KernelMeta::*metaField,
                      int dgemm::heuristics::KernelConfig::*configField) {
  KernelMeta meta;
  ASSERT_TRUE(parse(withLine(key, ""), meta).ok());
  EXPECT_EQ(meta.*metaField, 0);
  ASSERT_TRUE(parse(withLine(key, key + "=1"), meta).ok());
  EXPECT_EQ(meta.*metaField, 1);
  expectBad(withLine(key, key + "=2"), "'" + key + "'",
            "must be an integer in [0, 1]");
  dgemm::heuristics::KernelConfig config = tilingOf(meta);
  Status s = checkMetaMatchesConfig(meta, config, "x.meta");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("x.meta: key '" + key + "' is 1"));
  config.*configField = 1;
  EXPECT_TRUE(checkMetaMatchesConfig(meta, config, "x.meta").ok());
}

TEST(KernelMetaTest, QuadBIsOptionalAndMustMatch) {
  // The quad-ordered kernel needs a different map of B: it is not the
  // natural one of the same tile.
  expectOptionalFlagKey("quad_b", &KernelMeta::quadB,
                        &dgemm::heuristics::KernelConfig::quadB);
}

TEST(KernelMetaTest, Bf16KeysAreOptional) {
  // Absent in an FP8 kernel's file: fp8, k, k, 0, 0.
  KernelMeta meta;
  ASSERT_TRUE(parse(goodMeta(), meta).ok());
  EXPECT_EQ(meta.dtype, dgemm::heuristics::Dtype::Fp8);
  EXPECT_EQ(meta.majorA, dgemm::heuristics::Major::K);
  EXPECT_EQ(meta.majorB, dgemm::heuristics::Major::K);
  EXPECT_EQ(meta.dF32, 0);
  EXPECT_EQ(meta.accumulate, 0);
  ASSERT_TRUE(parse(goodMeta() + "dtype=bf16\nmajor_a=mn\nmajor_b = k\n"
                                 "d_f32=1\naccumulate=1\n",
                    meta)
                  .ok());
  EXPECT_EQ(meta.dtype, dgemm::heuristics::Dtype::Bf16);
  EXPECT_EQ(meta.majorA, dgemm::heuristics::Major::MN);
  EXPECT_EQ(meta.majorB, dgemm::heuristics::Major::K);
  EXPECT_EQ(meta.dF32, 1);
  EXPECT_EQ(meta.accumulate, 1);
}

TEST(KernelMetaTest, Bf16KeysRefuseBadValues) {
  expectBad(goodMeta() + "dtype=fp16\n", "'dtype'",
            "must be fp8 or bf16, got 'fp16'");
  expectBad(goodMeta() + "major_a=m\n", "'major_a'",
            "must be k or mn, got 'm'");
  expectBad(goodMeta() + "major_b=\n", "'major_b'", "must be k or mn, got ''");
  expectBad(goodMeta() + "d_f32=2\n", "'d_f32'",
            "must be an integer in [0, 1]");
  expectBad(goodMeta() + "accumulate=yes\n", "'accumulate'",
            "must be an integer in [0, 1]");
  expectBad(goodMeta() + "dtype=bf16\ndtype=bf16\n", "'dtype'",
            "appears twice");
}

TEST(KernelMetaTest, Bf16KeysMustMatch) {
  KernelMeta meta;
  ASSERT_TRUE(parse(goodMeta() + "dtype=bf16\nmajor_b=mn\nd_f32=1\n"
                                 "accumulate=1\n",
                    meta)
                  .ok());
  dgemm::heuristics::KernelConfig config = tilingOf(meta);
  Status s = checkMetaMatchesConfig(meta, config, "x.meta");
  EXPECT_THAT(s.message(), HasSubstr("key 'dtype' is bf16 but the selected "
                                     "configuration has fp8"));
  config.dtype = dgemm::heuristics::Dtype::Bf16;
  s = checkMetaMatchesConfig(meta, config, "x.meta");
  EXPECT_THAT(s.message(), HasSubstr("key 'major_b' is mn but the selected "
                                     "configuration has k"));
  config.majorB = dgemm::heuristics::Major::MN;
  s = checkMetaMatchesConfig(meta, config, "x.meta");
  EXPECT_THAT(s.message(), HasSubstr("key 'd_f32' is 1 but the selected "
                                     "configuration has 0"));
  config.dF32 = 1;
  s = checkMetaMatchesConfig(meta, config, "x.meta");
  EXPECT_THAT(s.message(), HasSubstr("key 'accumulate' is 1"));
  config.accumulate = 1;
  // Every BF16 key agrees now; what is left is the shared memory this
  // (made-up) tile has as BF16.
  s = checkMetaMatchesConfig(meta, config, "x.meta");
  EXPECT_THAT(s.message(), HasSubstr("key 'smem_bytes'"));
}

TEST(KernelMetaTest, ParsesEveryBf16CandidatesOwnMeta) {
  using dgemm::heuristics::Bf16Problem;
  using dgemm::heuristics::Kind;
  using dgemm::heuristics::Major;
  dgemm::heuristics::Target target;
  int checked = 0;
  for (Kind kind :
       {Kind::Normal, Kind::MGroupedContiguous, Kind::MGroupedContiguousPsum,
        Kind::MGroupedMasked, Kind::KGroupedContiguous})
    for (Major a : {Major::K, Major::MN})
      for (Major b : {Major::K, Major::MN})
        for (int dF32 : {0, 1})
          for (int accumulate : {0, 1}) {
            Bf16Problem problem;
            problem.kind = kind;
            problem.majorA = a;
            problem.majorB = b;
            problem.dF32 = dF32;
            problem.accumulate = accumulate;
            // Layouts a kind does not take have no candidates.
            for (dgemm::heuristics::KernelConfig config :
                 dgemm::heuristics::candidateBf16Configs(problem, target)) {
              KernelMeta meta;
              Status s = parseKernelMeta(config.toMeta(), "gen.meta",
                                         config.entryName(), meta);
              ASSERT_TRUE(s.ok()) << config.entryName() << ": " << s.message();
              s = checkMetaMatchesConfig(meta, config, "gen.meta", false);
              EXPECT_TRUE(s.ok()) << config.entryName() << ": " << s.message();
              EXPECT_EQ(meta.blockK, 64);
              EXPECT_EQ(meta.dtype, dgemm::heuristics::Dtype::Bf16);
              EXPECT_EQ(meta.majorA, a);
              EXPECT_EQ(meta.majorB, b);
              EXPECT_EQ(meta.dF32, dF32);
              EXPECT_EQ(meta.accumulate, accumulate);
              ++checked;
            }
          }
  // Normal: 4 layouts x 3 outputs; contiguous and psum: 2 layouts; masked
  // and k-grouped (FP32 d, accumulating or not): 1 and 2; 6 tiles each.
  EXPECT_EQ(checked, (12 + 2 + 2 + 1 + 2) * 6);
}

TEST(KernelBundleTest, LoadsMetaFromDirectory) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  dir.write(std::string(kEntry) + ".meta", goodMeta());
  KernelMeta meta;
  Status s = loadKernelMeta(dir.path(), kEntry, meta);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(meta.stages, 6);
}

TEST(KernelBundleTest, BadFileErrorNamesThePath) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::string path =
      dir.write(std::string(kEntry) + ".meta", withLine("smem_bytes", ""));
  KernelMeta meta;
  Status s = loadKernelMeta(dir.path(), kEntry, meta);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr(path + ": key 'smem_bytes' is missing"));
}

TEST(KernelBundleTest, MissingKernelIsKernelNotFound) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  KernelMeta meta;
  Status s = loadKernelMeta(dir.path(), kEntry, meta);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::KernelNotFound);
  EXPECT_THAT(s.message(), HasSubstr(kEntry));
  EXPECT_THAT(s.message(), HasSubstr(dir.path()));
}

TEST(KernelBundleTest, DirectoryLookupOrder) {
  ScopedEnv unset("DGEMM_KERNEL_DIR", std::nullopt);
  std::string dir;

  setKernelDir("/from/api");
  ASSERT_TRUE(resolveKernelDir(dir).ok());
  EXPECT_EQ(dir, "/from/api");
  {
    ScopedEnv env("DGEMM_KERNEL_DIR", "/from/env");
    ASSERT_TRUE(resolveKernelDir(dir).ok());
    EXPECT_EQ(dir, "/from/env");
  }
  {
    // An empty variable counts as unset.
    ScopedEnv env("DGEMM_KERNEL_DIR", "");
    ASSERT_TRUE(resolveKernelDir(dir).ok());
    EXPECT_EQ(dir, "/from/api");
  }
  setKernelDir("");
  Status s = resolveKernelDir(dir);
  if (s.ok()) {
    EXPECT_EQ(dir, DGEMM_DEFAULT_KERNEL_DIR);
  } else {
    EXPECT_EQ(std::string(DGEMM_DEFAULT_KERNEL_DIR), "");
    EXPECT_EQ(s.code(), ErrorCode::KernelNotFound);
    EXPECT_THAT(s.message(), HasSubstr("DGEMM_KERNEL_DIR"));
  }
}

} // namespace

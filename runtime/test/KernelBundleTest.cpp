//===- KernelBundleTest.cpp - .meta parsing and bundle lookup -------------===//

#include "dgemm/Runtime/KernelBundle.h"

#include "TestUtils.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

using namespace dgemm::runtime;
using dgemm::test::ScopedEnv;
using dgemm::test::TempDir;
using ::testing::HasSubstr;

namespace {

const char *kEntry = "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2";

/// The example of docs/KernelABI.md, comments and all.
std::string goodMeta() {
  return "entry=dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2   # PTX entry name\n"
         "kind=k_grouped_contiguous\n"
         "abi=3                      # version of the parameter table\n"
         "block_m=128\n"
         "block_n=128\n"
         "block_k=128\n"
         "stages=6\n"
         "desc_slots=2\n"
         "math_warpgroups=2\n"
         "threads=384\n"
         "cluster_m=1\n"
         "cluster_n=1\n"
         "smem_bytes=205000          # dynamic shared memory\n";
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

/// A configuration with `meta`'s tiling keys and every optional key at its
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
  EXPECT_EQ(meta.abi, 3);
  EXPECT_EQ(meta.blockM, 128);
  EXPECT_EQ(meta.blockN, 128);
  EXPECT_EQ(meta.blockK, 128);
  EXPECT_EQ(meta.stages, 6);
  EXPECT_EQ(meta.descSlots, 2);
  EXPECT_EQ(meta.mathWarpgroups, 2);
  EXPECT_EQ(meta.threads, 384);
  EXPECT_EQ(meta.clusterM, 1);
  EXPECT_EQ(meta.clusterN, 1);
  EXPECT_EQ(meta.smemBytes, 205000);
}

TEST(KernelMetaTest, ParsesTheHeuristicsOwnMeta) {
  dgemm::heuristics::KernelConfig config =
      dgemm::heuristics::selectKGroupedConfig(
          {2048, 2048, 4, {256, 128, 128, 256}, 0},
          dgemm::heuristics::Target());
  KernelMeta meta;
  Status s =
      parseKernelMeta(config.toMeta(), "gen.meta", config.entryName(), meta);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(checkMetaMatchesConfig(meta, config, "gen.meta").ok());
  EXPECT_EQ(meta.threads, config.threads());
  EXPECT_EQ(meta.smemBytes, config.smemBytes());
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
  expectBad(goodMeta() + "stages 4\n", "line 14", "expected key=value");
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
  expectBad(withLine("block_k", "block_k=64"), "'block_k'", "must be 128");
}

TEST(KernelMetaTest, RejectsOtherAbi) {
  expectBad(withLine("abi", "abi=2"), "'abi'", "must be 3");
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
  config.redMaxBlocks = 8;
  s = checkMetaMatchesConfig(meta, config, "x.meta");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("x.meta: key 'red_max_blocks' is 0"));
}

TEST(KernelMetaTest, RedMaxBlocksIsOptional) {
  KernelMeta meta;
  ASSERT_TRUE(parse(goodMeta(), meta).ok());
  EXPECT_EQ(meta.redMaxBlocks, 0);
  ASSERT_TRUE(parse(goodMeta() + "red_max_blocks=8\n", meta).ok());
  EXPECT_EQ(meta.redMaxBlocks, 8);
  expectBad(goodMeta() + "red_max_blocks=-1\n", "'red_max_blocks'",
            "must be an integer in [0, 1048576]");
  expectBad(goodMeta() + "red_max_blocks=eight\n", "'red_max_blocks'",
            "must be an integer in [0, 1048576]");
}

/// An optional 0/1 key of the .meta: absent means 0; 1 is read into
/// `metaField`; 2 is refused; and a kernel with the key set is not the
/// kernel of the same tile without it (checkMetaMatchesConfig), until the
/// config's `configField` says so too.
static void
expectOptionalFlagKey(const std::string &key, int KernelMeta::*metaField,
                      int dgemm::heuristics::KernelConfig::*configField) {
  KernelMeta meta;
  ASSERT_TRUE(parse(goodMeta(), meta).ok());
  EXPECT_EQ(meta.*metaField, 0);
  ASSERT_TRUE(parse(goodMeta() + key + "=1\n", meta).ok());
  EXPECT_EQ(meta.*metaField, 1);
  expectBad(goodMeta() + key + "=2\n", "'" + key + "'",
            "must be an integer in [0, 1]");
  dgemm::heuristics::KernelConfig config = tilingOf(meta);
  Status s = checkMetaMatchesConfig(meta, config, "x.meta");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("x.meta: key '" + key + "' is 1"));
  config.*configField = 1;
  EXPECT_TRUE(checkMetaMatchesConfig(meta, config, "x.meta").ok());
}

TEST(KernelMetaTest, InPlaceOnlyIsOptionalAndMustMatch) {
  // The in-place kernel is not the ordinary one of the same tile.
  expectOptionalFlagKey("in_place_only", &KernelMeta::inPlaceOnly,
                        &dgemm::heuristics::KernelConfig::inPlaceOnly);
}

TEST(KernelMetaTest, QuadBIsOptionalAndMustMatch) {
  // The quad-ordered kernel needs a different map of B: it is not the
  // natural one of the same tile.
  expectOptionalFlagKey("quad_b", &KernelMeta::quadB,
                        &dgemm::heuristics::KernelConfig::quadB);
}

TEST(KernelMetaTest, ParkIsOptionalAndMustMatch) {
  // A parked kernel runs another role in the producer warpgroup and needs
  // more shared memory: it is not the kernel of the same tile without one.
  expectOptionalFlagKey("park", &KernelMeta::park,
                        &dgemm::heuristics::KernelConfig::park);
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

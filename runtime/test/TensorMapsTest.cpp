//===- TensorMapsTest.cpp - The five tensor maps against the ABI ----------===//

#include "dgemm/Runtime/TensorMaps.h"

#include <gtest/gtest.h>

#include <vector>

using namespace dgemm::runtime;

namespace {

struct Described {
  std::vector<int32_t> ks;
  KGroupedArgs args;
  KGroupedShape shape;
  KernelMeta meta;
  TensorMapSpec specs[kNumTensorMaps];

  Described(int64_t m, int64_t n, std::vector<int32_t> groupKs, int blockM,
            int blockN, int clusterM = 1, int quadB = 0)
      : ks(std::move(groupKs)) {
    args.a = reinterpret_cast<void *>(0x100000);
    args.sfa = reinterpret_cast<void *>(0x200000);
    args.b = reinterpret_cast<void *>(0x300000);
    args.sfb = reinterpret_cast<void *>(0x400000);
    args.d = reinterpret_cast<void *>(0x10000000);
    args.c = args.d;
    args.m = m;
    args.n = n;
    args.numGroups = int64_t(ks.size());
    args.ksHost = ks.data();
    args.ksDevice = reinterpret_cast<const int32_t *>(0x500000);
    EXPECT_TRUE(checkKGroupedArgs(args, &shape).ok());
    meta.blockM = blockM;
    meta.blockN = blockN;
    meta.clusterM = clusterM;
    meta.clusterN = 1;
    meta.quadB = quadB;
    describeKGroupedTensorMaps(args, shape, meta, specs);
  }
};

TEST(TensorMapsTest, OperandTemplates) {
  Described x(2048, 1024, {256, 128, 128, 256}, 128, 192);
  const TensorMapSpec &a = x.specs[kMapA];
  EXPECT_EQ(a.dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(a.address, x.args.a);
  EXPECT_EQ(a.globalDim[0], 128u);
  EXPECT_EQ(a.globalDim[1], 2048u);
  EXPECT_EQ(a.globalStride[0], 128u);
  EXPECT_EQ(a.boxDim[0], 128u);
  EXPECT_EQ(a.boxDim[1], 128u);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);

  const TensorMapSpec &b = x.specs[kMapB];
  EXPECT_EQ(b.address, x.args.b);
  EXPECT_EQ(b.globalDim[1], 1024u);
  EXPECT_EQ(b.boxDim[1], 192u);
  EXPECT_EQ(b.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
}

TEST(TensorMapsTest, MulticastClusterLoadsHalfOfTheBTilePerCta) {
  // With cluster_m = 2 each CTA loads its half of the B tile and multicasts
  // it; A and the scales keep whole-tile boxes.
  Described x(2048, 1024, {256, 128}, 128, 192, /*clusterM=*/2);
  EXPECT_EQ(x.specs[kMapB].boxDim[1], 96u);
  EXPECT_EQ(x.specs[kMapA].boxDim[1], 128u);
  EXPECT_EQ(x.specs[kMapSfb].boxDim[0], 192u);
}

TEST(TensorMapsTest, ScaleMaps) {
  Described x(2048, 1024, {256, 128, 128, 256}, 128, 192);
  const TensorMapSpec &sfa = x.specs[kMapSfa];
  EXPECT_EQ(sfa.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(sfa.address, x.args.sfa);
  EXPECT_EQ(sfa.globalDim[0], 2048u);
  EXPECT_EQ(sfa.globalDim[1], 6u); // sum(K) / 128
  EXPECT_EQ(sfa.globalStride[0], 2048u * 4);
  EXPECT_EQ(sfa.boxDim[0], 128u);
  EXPECT_EQ(sfa.boxDim[1], 1u);
  EXPECT_EQ(sfa.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);

  const TensorMapSpec &sfb = x.specs[kMapSfb];
  EXPECT_EQ(sfb.address, x.args.sfb);
  EXPECT_EQ(sfb.globalDim[0], 1024u);
  EXPECT_EQ(sfb.globalDim[1], 6u);
  EXPECT_EQ(sfb.globalStride[0], 1024u * 4);
  EXPECT_EQ(sfb.boxDim[0], 192u);
  EXPECT_EQ(sfb.globalStride[0] % 16, 0u);
}

TEST(TensorMapsTest, OutputMapIsPerGroupSoBoxesStopAtTheGroupEnd) {
  // M = 100 is not a multiple of the 64-row box: a box at row 64 of group 0
  // must be clipped at row 100 instead of running into group 1.
  Described x(100, 1028, {128, 256, 0}, 128, 192);
  const TensorMapSpec &d = x.specs[kMapD];
  EXPECT_EQ(d.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(d.address, x.args.d);
  EXPECT_EQ(d.rank, 3);
  EXPECT_EQ(d.globalDim[0], 1028u);
  EXPECT_EQ(d.globalDim[1], 100u);
  EXPECT_EQ(d.globalDim[2], 3u);
  EXPECT_EQ(d.globalStride[0], 1028u * 4);
  EXPECT_EQ(d.globalStride[1], 100u * 1028 * 4);
  EXPECT_EQ(d.globalStride[0] % 16, 0u);
  EXPECT_EQ(d.boxDim[0], 8u); // 32 bytes: the SWIZZLE_32B span
  EXPECT_EQ(d.boxDim[1], 64u);
  EXPECT_EQ(d.boxDim[2], 1u);
  EXPECT_EQ(d.swizzle, CU_TENSOR_MAP_SWIZZLE_32B);
  // The operand and scale maps stay rank 2.
  for (int i : {kMapA, kMapB, kMapSfa, kMapSfb})
    EXPECT_EQ(x.specs[i].rank, 2) << i;
}

TEST(TensorMapsTest, QuadOrderedBIsAFiveDimensionalView) {
  for (int clusterM : {1, 2}) {
    SCOPED_TRACE(clusterM);
    Described x(2048, 1024, {256, 128}, 128, 192, clusterM, /*quadB=*/1);
    const TensorMapSpec &b = x.specs[kMapB];
    EXPECT_EQ(b.rank, 5);
    EXPECT_EQ(b.address, x.args.b);
    EXPECT_EQ(b.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
    const cuuint64_t dims[5] = {128, 2, 4, 2, 1024 / 16};
    const cuuint32_t box[5] = {128, 2, 4, 2, cuuint32_t(192 / 16 / clusterM)};
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(b.globalDim[i], dims[i]) << i;
      EXPECT_EQ(b.boxDim[i], box[i]) << i;
    }
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(b.globalStride[i] % 16, 0u) << i;
    // The box is written densely, dimension 1 fastest: box row w (WGMMA
    // column w = 8j + 2q + c of the CTA's share) must read the B row that
    // the kernel's fragment map gives that column,
    // 16 (j / 2) + 4q + 2 (j % 2) + c, and every row of the share once.
    int rows = 192 / clusterM;
    std::vector<int> seen(rows, 0);
    for (int w = 0; w < rows; ++w) {
      int index[4] = {w % 2, (w / 2) % 4, (w / 8) % 2, w / 16};
      cuuint64_t row = 0;
      for (int d = 0; d < 4; ++d)
        row += cuuint64_t(index[d]) * b.globalStride[d] / 128;
      int j = w / 8, q = (w / 2) % 4, c = w % 2;
      EXPECT_EQ(row, cuuint64_t(16 * (j / 2) + 4 * q + 2 * (j % 2) + c)) << w;
      ASSERT_LT(row, cuuint64_t(rows));
      ++seen[row];
    }
    for (int r = 0; r < rows; ++r)
      EXPECT_EQ(seen[r], 1) << r;
    // The other maps do not change.
    Described natural(2048, 1024, {256, 128}, 128, 192, clusterM);
    for (int i : {kMapA, kMapSfa, kMapSfb, kMapD}) {
      EXPECT_EQ(x.specs[i].rank, natural.specs[i].rank) << i;
      EXPECT_EQ(x.specs[i].boxDim[0], natural.specs[i].boxDim[0]) << i;
      EXPECT_EQ(x.specs[i].globalDim[0], natural.specs[i].globalDim[0]) << i;
    }
  }
}

TEST(TensorMapsTest, AllEmptyGroupsKeepScaleDimensionOne) {
  Described x(256, 256, {0, 0}, 64, 64);
  EXPECT_EQ(x.specs[kMapSfa].globalDim[1], 1u);
  EXPECT_EQ(x.specs[kMapSfb].globalDim[1], 1u);
}

} // namespace

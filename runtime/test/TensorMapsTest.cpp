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
            int blockN, int clusterM = 1)
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

TEST(TensorMapsTest, AllEmptyGroupsKeepScaleDimensionOne) {
  Described x(256, 256, {0, 0}, 64, 64);
  EXPECT_EQ(x.specs[kMapSfa].globalDim[1], 1u);
  EXPECT_EQ(x.specs[kMapSfb].globalDim[1], 1u);
}

} // namespace

//===- TensorMaps.cpp - The kernel's five CUtensorMaps --------------------===//

#include "dgemm/Runtime/TensorMaps.h"

#include <algorithm>
#include <string>

using namespace dgemm::runtime;

void dgemm::runtime::describeKGroupedTensorMaps(
    const KGroupedArgs &args, const KGroupedShape &shape,
    const KernelMeta &meta, TensorMapSpec specs[kNumTensorMaps]) {
  // A and B are templates: the kernel rewrites address, dim 0 and the stride
  // per group, so only the row count, box and swizzle matter here. One
  // 128-byte K row per box row is what SWIZZLE_128B expects.
  auto operand = [&](TensorMapSpec &spec, const char *name, const void *ptr,
                     int64_t rows, int blockRows) {
    spec.name = name;
    spec.dataType = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    spec.address = const_cast<void *>(ptr);
    spec.globalDim[0] = 128;
    spec.globalDim[1] = cuuint64_t(rows);
    spec.globalStride[0] = 128;
    spec.boxDim[0] = 128;
    spec.boxDim[1] = cuuint32_t(blockRows);
    spec.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  };
  // sfa/sfb: scaleBlocks rows of `rows` floats; one box is a block's slice of
  // one K block.
  auto scales = [&](TensorMapSpec &spec, const char *name, const void *ptr,
                    int64_t rows, int blockRows) {
    spec.name = name;
    spec.dataType = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    spec.address = const_cast<void *>(ptr);
    spec.globalDim[0] = cuuint64_t(rows);
    spec.globalDim[1] = cuuint64_t(shape.scaleBlocks);
    spec.globalStride[0] = cuuint64_t(rows) * 4;
    spec.boxDim[0] = cuuint32_t(blockRows);
    spec.boxDim[1] = 1;
    spec.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  };
  operand(specs[kMapA], "a", args.a, args.m, meta.blockM);
  // With cluster_m CTAs sharing B, each loads (and multicasts) its share.
  operand(specs[kMapB], "b", args.b, args.n,
          meta.blockN / std::max(1, meta.clusterM));
  if (meta.quadB) {
    // Quad order: B's rows as (K, c, q, h, g) over row 16g + 4q + 2h + c,
    // so that the box lands row 16g + 8h + 2q + c in shared memory: WGMMA
    // column 8j + 2q + c computes output column 16(j / 2) + 4q + 2(j % 2) + c
    // and each thread's fragment holds 4 consecutive columns per 16. Strides
    // are in 128-byte template rows; the kernel scales them by K_g.
    TensorMapSpec &b = specs[kMapB];
    b.rank = 5;
    const cuuint64_t dims[5] = {128, 2, 4, 2, cuuint64_t(args.n / 16)};
    const cuuint64_t rowSteps[4] = {1, 4, 2, 16};
    const cuuint32_t box[5] = {128, 2, 4, 2,
                               cuuint32_t(b.boxDim[1] / 16)};
    for (int i = 0; i < 5; ++i) {
      b.globalDim[i] = dims[i];
      b.boxDim[i] = box[i];
    }
    for (int i = 0; i < 4; ++i)
      b.globalStride[i] = 128 * rowSteps[i];
  }
  scales(specs[kMapSfa], "sfa", args.sfa, args.m, meta.blockM);
  scales(specs[kMapSfb], "sfb", args.sfb, args.n, meta.blockN);
  // d as G x M x N FP32, so that a box never crosses into the next group;
  // the epilogue adds 64-row x 8-column boxes (32 bytes per row, SWIZZLE_32B).
  TensorMapSpec &d = specs[kMapD];
  d.name = "d";
  d.dataType = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  d.address = args.d;
  d.rank = 3;
  d.globalDim[0] = cuuint64_t(args.n);
  d.globalDim[1] = cuuint64_t(args.m);
  d.globalDim[2] = cuuint64_t(args.numGroups);
  d.globalStride[0] = cuuint64_t(args.n) * 4;
  d.globalStride[1] = cuuint64_t(args.n) * cuuint64_t(args.m) * 4;
  d.boxDim[0] = 8;
  d.boxDim[1] = 64;
  d.boxDim[2] = 1;
  d.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
}

Status dgemm::runtime::encodeTensorMap(const DriverApi &api,
                                       const TensorMapSpec &spec,
                                       CUtensorMap &map) {
  const cuuint32_t elementStrides[5] = {1, 1, 1, 1, 1};
  CUresult result = api.cuTensorMapEncodeTiled(
      &map, spec.dataType, cuuint32_t(spec.rank), spec.address, spec.globalDim,
      spec.globalStride, spec.boxDim, elementStrides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, spec.swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result == CUDA_SUCCESS)
    return Status::success();
  auto list = [&](const auto *values, int count) {
    std::string out = "{";
    for (int i = 0; i < count; ++i)
      out += (i ? ", " : "") + std::to_string(values[i]);
    return out + "}";
  };
  return Status::error(ErrorCode::CudaError,
                       std::string("cuTensorMapEncodeTiled for '") + spec.name +
                           "' failed: " + describeCuResult(api, result) +
                           " (globalDim " + list(spec.globalDim, spec.rank) +
                           ", globalStrides " +
                           list(spec.globalStride, spec.rank - 1) +
                           ", boxDim " + list(spec.boxDim, spec.rank) + ")");
}

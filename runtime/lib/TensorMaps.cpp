//===- TensorMaps.cpp - The kernel's four CUtensorMaps --------------------===//

#include "dgemm/Runtime/TensorMaps.h"

#include <algorithm>
#include <string>

using namespace dgemm::runtime;

void dgemm::runtime::describeKGroupedTensorMaps(const KGroupedArgs &args,
                                                const KGroupedShape &shape,
                                                const KernelMeta &meta,
                                                TensorMapSpec specs[4]) {
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
    spec.globalStride = 128;
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
    spec.globalStride = cuuint64_t(rows) * 4;
    spec.boxDim[0] = cuuint32_t(blockRows);
    spec.boxDim[1] = 1;
    spec.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  };
  operand(specs[kMapA], "a", args.a, args.m, meta.blockM);
  // With cluster_m CTAs sharing B, each loads (and multicasts) its share.
  operand(specs[kMapB], "b", args.b, args.n,
          meta.blockN / std::max(1, meta.clusterM));
  scales(specs[kMapSfa], "sfa", args.sfa, args.m, meta.blockM);
  scales(specs[kMapSfb], "sfb", args.sfb, args.n, meta.blockN);
}

Status dgemm::runtime::encodeTensorMap(const DriverApi &api,
                                       const TensorMapSpec &spec,
                                       CUtensorMap &map) {
  const cuuint32_t elementStrides[2] = {1, 1};
  CUresult result = api.cuTensorMapEncodeTiled(
      &map, spec.dataType, 2, spec.address, spec.globalDim, &spec.globalStride,
      spec.boxDim, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE, spec.swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result == CUDA_SUCCESS)
    return Status::success();
  return Status::error(ErrorCode::CudaError,
                       std::string("cuTensorMapEncodeTiled for '") + spec.name +
                           "' failed: " + describeCuResult(api, result) +
                           " (globalDim {" + std::to_string(spec.globalDim[0]) +
                           ", " + std::to_string(spec.globalDim[1]) +
                           "}, globalStride " +
                           std::to_string(spec.globalStride) + ", boxDim {" +
                           std::to_string(spec.boxDim[0]) + ", " +
                           std::to_string(spec.boxDim[1]) + "})");
}

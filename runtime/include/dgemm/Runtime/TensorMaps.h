//===- TensorMaps.h - The kernel's five CUtensorMaps ------------*- C++ -*-===//
//
// The tensor maps of docs/KernelABI.md, first described as plain data (so
// tests can check them against the ABI without a driver), then encoded with
// cuTensorMapEncodeTiled.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_TENSORMAPS_H
#define DGEMM_RUNTIME_TENSORMAPS_H

#include "dgemm/Runtime/Driver.h"
#include "dgemm/Runtime/KernelBundle.h"
#include "dgemm/Runtime/Validation.h"

#include <cuda.h>

namespace dgemm {
namespace runtime {

/// The arguments of one cuTensorMapEncodeTiled call of rank 2 to 5.
/// Interleave is always NONE, L2 promotion L2_256B, OOB fill NONE, element
/// strides all 1.
struct TensorMapSpec {
  const char *name = "";
  CUtensorMapDataType dataType = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  void *address = nullptr;
  int rank = 2;
  cuuint64_t globalDim[5] = {0, 0, 1, 1, 1};
  /// Byte strides of dimensions 1 to rank - 1 (dimension 0 is packed).
  cuuint64_t globalStride[4] = {0, 0, 0, 0};
  cuuint32_t boxDim[5] = {0, 0, 1, 1, 1};
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
};

/// Index of each map in the kernel's parameter list.
enum TensorMapIndex {
  kMapA = 0,
  kMapB = 1,
  kMapSfa = 2,
  kMapSfb = 3,
  kMapD = 4
};
inline constexpr int kNumTensorMaps = 5;

/// The five maps for valid `args` (checkKGroupedArgs) and `meta`.
void describeKGroupedTensorMaps(const KGroupedArgs &args,
                                const KGroupedShape &shape,
                                const KernelMeta &meta,
                                TensorMapSpec specs[kNumTensorMaps]);

/// Encodes one map; errors name the map and repeat its arguments.
Status encodeTensorMap(const DriverApi &api, const TensorMapSpec &spec,
                       CUtensorMap &map);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_TENSORMAPS_H

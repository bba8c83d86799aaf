// RUN: dgemm-opt %s --dgemm-select-config | FileCheck %s
// RUN: not dgemm-opt %s --dgemm-select-config="cluster-m=2" 2>&1 | FileCheck %s --check-prefix=OPT

// The masked and normal kinds share the 1D2D heuristics (select-config-
// m-grouped.mlir) with their own tile counts: masked counts every group's
// tiles (G x ceil(M_max / 128) x ceil(N / block_n), M_max standing for
// expected_m), normal one group's. With one group of 128 x 4096, 64 columns
// fit one wave (64 tiles) in less time than 128 columns (32 tiles); with 8
// groups the 64-column kernel needs 4 waves against 2.
// CHECK-LABEL: dgemm.gemm @decode_one_group
// CHECK-SAME: config <kind = m_grouped_masked, block_m = 128, block_n = 64, block_k = 128, stages = 8, desc_slots = 0, math_warpgroups = 2
dgemm.gemm @decode_one_group m_grouped_masked nt m = 128 n = 4096 k = 7168 groups = 1
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// CHECK-LABEL: dgemm.gemm @decode_eight_groups
// CHECK-SAME: config <kind = m_grouped_masked, block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 0, math_warpgroups = 2
dgemm.gemm @decode_eight_groups m_grouped_masked nt m = 128 n = 4096 k = 7168 groups = 8
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// CHECK-LABEL: dgemm.gemm @dense_small
// CHECK-SAME: config <kind = normal, block_m = 128, block_n = 64, block_k = 128, stages = 8, desc_slots = 0, math_warpgroups = 2
dgemm.gemm @dense_small normal nt m = 128 n = 4096 k = 7168 groups = 1
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// CHECK-LABEL: dgemm.gemm @dense_large
// CHECK-SAME: config <kind = normal, block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 0, math_warpgroups = 2
dgemm.gemm @dense_large normal nt m = 4096 n = 7168 k = 7168 groups = 1
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// The normal 1D1D GEMM (FP32 D) gets a k-grouped kernel (no 'kind' in the
// config: k_grouped_contiguous is the default), planned for one group of K.
// CHECK-LABEL: dgemm.gemm @dense_1d1d
// CHECK-SAME: -> f32 recipe [1, 1, 128] config <block_m = {{[0-9]+}}, block_n = {{[0-9]+}}, block_k = 128, stages = {{[0-9]+}}, desc_slots = {{[12]}},
// CHECK-NOT: kind =
dgemm.gemm @dense_1d1d normal nt m = 4096 n = 7168 k = 7168 groups = 1
    : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]

// The k-grouped kernel's options have no meaning for the 1D2D kinds.
// OPT: desc-slots, cluster-m and quad-b configure the k-grouped kernel; m_grouped_masked has no descriptor slots

// The psum layout plans as the per-row layout does: M_sum rows in one
// schedule group (4 x 8192 rows of 4096 columns: 128 x 128 tiles).
// CHECK-LABEL: dgemm.gemm @forward_psum
// CHECK-SAME: config <kind = m_grouped_contiguous_psum, block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 0, math_warpgroups = 2
dgemm.gemm @forward_psum m_grouped_contiguous_psum nt m = 32768 n = 4096 k = 7168 groups = 4
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

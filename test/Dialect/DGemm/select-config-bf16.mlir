// RUN: dgemm-opt %s --dgemm-select-config | FileCheck %s
// RUN: not dgemm-opt %s --dgemm-select-config="desc-slots=1" 2>&1 | FileCheck %s --check-prefix=OPT

// The BF16 kernels (heuristics/lib/Bf16Config.cpp): the candidate of least
// modelled makespan, waves x (block_m x block_n + 64 x (block_m + block_n)),
// larger tiles winning ties. The config carries the description's operand
// fields: dtype, the majorness of A and B by the layout, an FP32 D, and
// accumulation.

// DeepGEMM's dense shape: 32 x 16 tiles of 128 x 256 are 4 waves on 132 SMs,
// against 8 of 128 x 128.
// CHECK-LABEL: dgemm.gemm @dense
// CHECK-SAME: config <kind = normal, block_m = 128, block_n = 256, block_k = 64, stages = 4, desc_slots = 0, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, dtype = bf16>
dgemm.gemm @dense normal nt m = 4096 n = 4096 k = 7168 groups = 1
    : (bf16, bf16) -> bf16

// tn with an FP32 D accumulated: both operands MN-major.
// CHECK-LABEL: dgemm.gemm @dense_tn
// CHECK-SAME: block_k = 64, {{.*}}dtype = bf16, major_a = mn, major_b = mn, d_f32 = 1, accumulate = 1>
dgemm.gemm @dense_tn normal tn m = 4096 n = 4096 k = 7168 groups = 1
    : (bf16, bf16) -> f32 accumulate

// The decode step: 8 groups of 64 expected rows; one 64-row warpgroup per
// tile and 256 columns keep the 128 tiles in one wave.
// CHECK-LABEL: dgemm.gemm @decode
// CHECK-SAME: config <kind = m_grouped_masked, block_m = 64, block_n = 256, block_k = 64, stages = 5, desc_slots = 0, math_warpgroups = 1, {{.*}}dtype = bf16>
dgemm.gemm @decode m_grouped_masked nt m = 64 n = 4096 k = 7168 groups = 8
    : (bf16, bf16) -> bf16

// m-grouped nn: B MN-major.
// CHECK-LABEL: dgemm.gemm @forward_nn
// CHECK-SAME: config <kind = m_grouped_contiguous, {{.*}}block_k = 64, {{.*}}dtype = bf16, major_b = mn>
dgemm.gemm @forward_nn m_grouped_contiguous nn m = 32768 n = 4096 k = 7168 groups = 4
    : (bf16, bf16) -> bf16

// The BF16 weight gradient: A and B MN-major, an FP32 D.
// CHECK-LABEL: dgemm.gemm @wgrad
// CHECK-SAME: config <block_m = {{[0-9]+}}, block_n = {{[0-9]+}}, block_k = 64, {{.*}}desc_slots = 0, {{.*}}dtype = bf16, major_a = mn, major_b = mn, d_f32 = 1, accumulate = 1>
dgemm.gemm @wgrad k_grouped_contiguous tn m = 4096 n = 7168 k = ? groups = 4
    : (bf16, bf16) -> f32 accumulate

// OPT: dgemm-select-config: desc-slots, cluster-m and quad-b configure the FP8 k-grouped kernel; the BF16 kernels have no descriptor slots, clusters or quad-ordered B

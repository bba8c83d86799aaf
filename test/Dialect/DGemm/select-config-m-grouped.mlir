// RUN: dgemm-opt %s --dgemm-select-config | FileCheck %s
// RUN: not dgemm-opt %s --dgemm-select-config="desc-slots=1" 2>&1 | FileCheck %s --check-prefix=OPT

// The m-grouped heuristics: 128 x 128 tiles on DeepGEMM's shape (4096
// columns), 64 columns where that cuts the waves (N = 192: 2 column tiles
// of 128 against 3 of 64 for 128 m-blocks), the most stages that fit.
// CHECK-LABEL: dgemm.gemm @wide
// CHECK-SAME: config <kind = m_grouped_contiguous, block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 0, math_warpgroups = 2
dgemm.gemm @wide m_grouped_contiguous nt m = ? n = 4096 k = 7168 groups = 8
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// CHECK-LABEL: dgemm.gemm @narrow
// CHECK-SAME: config <kind = m_grouped_contiguous, block_m = 128, block_n = 64, block_k = 128, stages = 8,
dgemm.gemm @narrow m_grouped_contiguous nt m = 16384 n = 192 k = 1024 groups = 2
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// The k-grouped kernel's options have no m-grouped meaning.
// OPT: desc-slots, cluster-m and quad-b configure the k-grouped kernel; m_grouped_contiguous has no descriptor slots

// RUN: dgemm-opt %s --dgemm-select-config -verify-diagnostics

// expected-error @+1 {{dgemm-select-config: no heuristics for kind 'm_grouped_masked' yet (only k_grouped_contiguous is lowered)}}
dgemm.gemm @masked m_grouped_masked nt m = 4096 n = 7168 k = 2048 groups = 16
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

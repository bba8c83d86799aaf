// RUN: dgemm-opt %s -split-input-file --dgemm-select-config -verify-diagnostics

// A description no kernel implements is refused by the verifier, before any
// pass runs.
// expected-error @+1 {{no kernel of kind 'm_grouped_masked' is built yet (k_grouped_contiguous and m_grouped_contiguous are)}}
dgemm.gemm @masked m_grouped_masked nt m = 4096 n = 7168 k = 2048 groups = 16
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// -----

// expected-error @+1 {{no kernel of kind 'normal' is built yet}}
dgemm.gemm @dense normal tn m = ? n = 2112 k = 7168 groups = 1
    : (bf16, bf16) -> f32 accumulate

// -----

// expected-error @+1 {{m_grouped_contiguous is the FP8 MoE forward / data gradient GEMM: it needs f8E4M3FN operands, recipe [1, 128, 128], a bf16 D and no 'accumulate'}}
dgemm.gemm @bf16fwd m_grouped_contiguous nt m = ? n = 4096 k = 7168 groups = 8
    : (bf16, bf16) -> bf16

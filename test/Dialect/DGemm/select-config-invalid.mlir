// RUN: dgemm-opt %s -split-input-file --dgemm-select-config -verify-diagnostics

// A description no kernel implements is refused by the verifier, before any
// pass runs, naming what is missing.
// expected-error @+1 {{no BF16 kernel computes m_grouped_bf16_gemm_tt_masked with a 'bf16' D: major_a must be k (0) for m_grouped_masked}}
dgemm.gemm @masked_bf16 m_grouped_masked tt m = 4096 n = 7168 k = 2048 groups = 16
    : (bf16, bf16) -> bf16

// -----

// expected-error @+1 {{'k' must give 16-byte TMA row strides for K-major operands, got 100}}
dgemm.gemm @dense normal nt m = ? n = 2112 k = 100 groups = 1
    : (bf16, bf16) -> f32 accumulate

// -----

// DeepGEMM's 1D2D rule: an f32 D (and c) only with the 1D1D recipe.
// expected-error @+1 {{a normal GEMM with recipe [1, 128, 128] needs a bf16 D and no 'accumulate'}}
dgemm.gemm @dense_f32 normal nt m = ? n = 2112 k = 7168 groups = 1
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 128, 128]

// -----

// The normal 1D1D GEMM is the k-grouped kernel with one group: its scale
// rows need 16-byte strides.
// expected-error @+1 {{'m' must be a multiple of 4 for a normal 1D1D GEMM (the k-grouped kernel computes it}}
dgemm.gemm @dense_1d1d normal nt m = 4098 n = 2112 k = 7168 groups = 1
    : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]

// -----

// A config of the description's own kind is refused for a normal 1D1D GEMM:
// its kernel is the k-grouped one.
// expected-error @+1 {{config 'kind' must be the kind of the kernel that computes the description, k_grouped_contiguous, got normal}}
dgemm.gemm @dense_1d1d_cfg normal nt m = 4096 n = 2112 k = 7168 groups = 1
    : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]
    config <kind = normal, block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 0, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// -----

// expected-error @+1 {{no BF16 kernel computes m_grouped_bf16_gemm_nt_contiguous with a 'f32' D: d_f32 must be 0 for m_grouped_contiguous (BF16 d)}}
dgemm.gemm @bf16fwd m_grouped_contiguous nt m = ? n = 4096 k = 7168 groups = 8
    : (bf16, bf16) -> f32

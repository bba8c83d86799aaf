// RUN: dgemm-opt %s -split-input-file --dgemm-lower-to-kernel -verify-diagnostics

// expected-error @+1 {{has no 'config': run dgemm-select-config first}}
dgemm.gemm @wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]

// -----

// expected-error @+1 {{multicast of A (cluster_n = 2) is not lowered; use cluster_n = 1 (cluster_m = 2 multicasts B)}}
dgemm.gemm @mc k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]
    config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 2,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132>

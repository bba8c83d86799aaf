// RUN: dgemm-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'groups' must be in [1, 2^31 - 1], got 0}}
dgemm.gemm @g k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 0 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]

// -----

// The getter is unsigned: -1 must not pass as 2^64 - 1.
// expected-error @+1 {{'groups' must be in [1, 2^31 - 1], got -1}}
dgemm.gemm @g k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = -1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]

// -----

// expected-error @+1 {{'m' must be in [1, 2^31 - 1] or '?', got 4611686018427387904}}
dgemm.gemm @g k_grouped_contiguous nt m = 4611686018427387904 n = 2048 k = ? groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]

// -----

// expected-error @+1 {{'groups' must be 1 for kind 'normal', got 2}}
dgemm.gemm @g normal nt m = 128 n = 128 k = 128 groups = 2 : (bf16, bf16) -> f32

// -----

// expected-error @+1 {{'m' must be in [1, 2^31 - 1] or '?', got 0}}
dgemm.gemm @g k_grouped_contiguous nt m = 0 n = 2048 k = ? groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]

// -----

// expected-error @+1 {{'n' must be in [1, 2^31 - 1] or '?', got -3}}
dgemm.gemm @g k_grouped_contiguous nt m = 64 n = -3 k = ? groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]

// -----

// expected-error @+1 {{element type of A must be f8E4M3FN or bf16, got 'f16'}}
dgemm.gemm @g normal nt m = 128 n = 128 k = 128 groups = 1 : (f16, f16) -> f32

// -----

// expected-error @+1 {{element type of B must be f8E4M3FN or bf16, got 'f8E5M2'}}
dgemm.gemm @g normal nt m = 128 n = 128 k = 128 groups = 1 : (f8E4M3FN, f8E5M2) -> f32 recipe [1, 128, 128]

// -----

// expected-error @+1 {{A and B element types must match, got 'f8E4M3FN' and 'bf16'}}
dgemm.gemm @g normal nt m = 128 n = 128 k = 128 groups = 1 : (f8E4M3FN, bf16) -> f32 recipe [1, 128, 128]

// -----

// expected-error @+1 {{element type of D must be f32 or bf16, got 'f16'}}
dgemm.gemm @g normal nt m = 128 n = 128 k = 128 groups = 1 : (bf16, bf16) -> f16

// -----

// expected-error @+1 {{'accumulate' needs an f32 D}}
dgemm.gemm @g normal nt m = 128 n = 128 k = 128 groups = 1 : (bf16, bf16) -> bf16 accumulate

// -----

// expected-error @+1 {{FP8 operands need a scaling 'recipe'}}
dgemm.gemm @g normal nt m = 128 n = 128 k = 128 groups = 1 : (f8E4M3FN, f8E4M3FN) -> bf16

// -----

// expected-error @+1 {{'recipe' applies to FP8 operands only; BF16 takes none}}
dgemm.gemm @g normal nt m = 128 n = 128 k = 128 groups = 1 : (bf16, bf16) -> f32 recipe [1, 1, 128]

// -----

// expected-error @+1 {{'recipe' must be [1, 1, 128] or [1, 128, 128]}}
dgemm.gemm @g normal nt m = 128 n = 128 k = 128 groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 64, 128]

// -----

// expected-error @+1 {{recipe [1, 1, 128] produces an f32 D, got 'bf16'}}
dgemm.gemm @g normal nt m = 128 n = 128 k = 128 groups = 1 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 1, 128]

// -----

// expected-error @+1 {{FP8 WGMMA reads both operands K-major: 'layout' must be nt, got nn}}
dgemm.gemm @g normal nn m = 128 n = 128 k = 128 groups = 1 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// -----

// expected-error @+1 {{k_grouped_contiguous is the FP8 weight-gradient GEMM: it needs f8E4M3FN operands and recipe [1, 1, 128]}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 2 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// -----

// A BF16 description no kernel computes is refused, naming DeepGEMM's
// function and the rule (the layouts and D types of DeepGEMM's BF16 API).
// expected-error @+1 {{no BF16 kernel computes k_grouped_bf16_gemm_nt_contiguous with a 'f32' D and 'accumulate': major_a must be mn (1) for the k-grouped BF16 GEMM}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 2 : (bf16, bf16) -> f32 accumulate

// -----

// expected-error @+1 {{no BF16 kernel computes k_grouped_bf16_gemm_tn_contiguous with a 'bf16' D: d_f32 must be 1 for the k-grouped BF16 GEMM (FP32 d)}}
dgemm.gemm @g k_grouped_contiguous tn m = 128 n = 128 k = ? groups = 2 : (bf16, bf16) -> bf16

// -----

// expected-error @+1 {{no BF16 kernel computes m_grouped_bf16_gemm_tn_contiguous with a 'bf16' D: major_a must be k (0) for m_grouped_contiguous}}
dgemm.gemm @g m_grouped_contiguous tn m = ? n = 128 k = 128 groups = 4 : (bf16, bf16) -> bf16

// -----

// expected-error @+1 {{no BF16 kernel computes m_grouped_bf16_gemm_nn_masked with a 'bf16' D: major_b must be k (0) for m_grouped_masked}}
dgemm.gemm @g m_grouped_masked nn m = 256 n = 128 k = 128 groups = 4 : (bf16, bf16) -> bf16

// -----

// expected-error @+1 {{no BF16 kernel computes m_grouped_bf16_gemm_nt_masked with a 'f32' D: d_f32 must be 0 for m_grouped_masked (BF16 d)}}
dgemm.gemm @g m_grouped_masked nt m = 256 n = 128 k = 128 groups = 4 : (bf16, bf16) -> f32

// -----

// expected-error @+1 {{'accumulate' needs an f32 D}}
dgemm.gemm @g normal tt m = 128 n = 128 k = 128 groups = 1 : (bf16, bf16) -> bf16 accumulate

// -----

// expected-error @+1 {{'m' must be a multiple of 8 with an MN-major A (16-byte TMA strides of its BF16 rows), got 100}}
dgemm.gemm @g normal tn m = 100 n = 128 k = 128 groups = 1 : (bf16, bf16) -> f32

// -----

// expected-error @+1 {{'k' must be a multiple of 64 for m_grouped_bf16_gemm_nn_contiguous (B's groups are consecutive K rows of one tensor map), got 96}}
dgemm.gemm @g m_grouped_contiguous nn m = ? n = 128 k = 96 groups = 4 : (bf16, bf16) -> bf16

// -----

// A config whose operand fields are not the description's.
// expected-error @+1 {{config's dtype, major_a, major_b, d_f32 and accumulate must be the description's (bf16, mn, k, 1, 0)}}
dgemm.gemm @g normal tt m = 128 n = 128 k = 128 groups = 1 : (bf16, bf16) -> f32
    config <kind = normal, block_m = 128, block_n = 128, block_k = 64, stages = 7, desc_slots = 0, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, dtype = bf16, d_f32 = 1>

// -----

// The BF16 config rules are the heuristics library's (checkBf16Config).
dgemm.gemm @g normal nt m = 128 n = 128 k = 128 groups = 1 : (bf16, bf16) -> bf16
    // expected-error @+1 {{invalid config: block_k must be 64 for the BF16 kernels}}
    config <kind = normal, block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 0, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, dtype = bf16>

// -----

// expected-error @+1 {{'k' must be '?' for k_grouped_contiguous}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = 1024 groups = 2 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]

// -----

// expected-error @+1 {{'m' must be a multiple of 4 (16-byte TMA stride of the FP32 scale rows), got 2050}}
dgemm.gemm @g k_grouped_contiguous nt m = 2050 n = 2048 k = ? groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]

// -----

// expected-error @+1 {{'n' must be a multiple of 4 (16-byte TMA stride of the FP32 scale rows), got 2046}}
dgemm.gemm @g k_grouped_contiguous nt m = 2048 n = 2046 k = ? groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]

// -----

// expected-error @+1 {{'k' must be a multiple of 128 (FP8 scales cover 128-deep K blocks), got 200}}
dgemm.gemm @g normal nt m = 128 n = 128 k = 200 groups = 1 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// -----

// expected-error @+1 {{'k' must give 16-byte TMA row strides for K-major operands, got 100}}
dgemm.gemm @g normal nt m = 128 n = 128 k = 100 groups = 1 : (bf16, bf16) -> f32

// -----

// expected-error @+1 {{'n' must give 16-byte row strides for D, got 100}}
dgemm.gemm @g normal nt m = 128 n = 100 k = 128 groups = 1 : (bf16, bf16) -> bf16

// -----

// expected-error @+1 {{invalid config: block_m must be 64, 128 or 192}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 256, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 4, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// -----

// expected-error @+1 {{invalid config: math_warpgroups must equal block_m / 64 = 2}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 1, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// -----

// expected-error @+1 {{invalid config: block_n must be a multiple of 8 in [8, 256] (WGMMA N), got 100}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 100, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// -----

// A field outside the heuristics library's 32-bit range is rejected before
// its rules are applied (a truncated value could pass them).
// expected-error @+1 {{invalid config: red_max_blocks must be in [0, 2^31), got -1}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = reduction, red_max_blocks = -1>

// -----

// expected-error @+1 {{invalid config: stages must be in [0, 2^31), got 4294967300}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4294967300, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// -----

// expected-error @+1 {{invalid config: red_max_blocks must be in [0, 1048576] (0: no reduction epilogue), got 2000000}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = reduction, red_max_blocks = 2000000>

// -----

// The epilogue and its bound: red_max_blocks belongs to the reduction
// epilogue alone, which needs one.
// expected-error @+1 {{invalid config: red_max_blocks must be > 0 with epilogue = reduction}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = reduction>

// -----

// expected-error @+1 {{invalid config: red_max_blocks must be 0 with epilogue = register (only the reduction epilogue has a bound), got 8}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, red_max_blocks = 8>

// -----

// expected-error @+1 {{invalid config: red_max_blocks must be 0 with epilogue = in_place (only the reduction epilogue has a bound), got 8}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = in_place, red_max_blocks = 8>

// -----

// expected-error @+1 {{invalid config: quad_b must be 0 with epilogue = in_place}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = in_place, quad_b = 1>

// -----

// expected-error @below {{expected one of [register, reduction, in_place, parked] for How a kernel's tiles reach d, got: fused}}
// expected-error @below {{failed to parse DGemm_ConfigAttr parameter 'epilogue'}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = fused>

// -----

// expected-error @below {{expected one of [none, skip_descriptor_drain, skip_proxy_fence] for Race demonstrations built into a kernel (test only), got: skip_everything}}
// expected-error @below {{failed to parse DGemm_ConfigAttr parameter 'unsafe'}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, unsafe = skip_everything>

// -----

// expected-error @+1 {{invalid config: block_n must be <= 192 (register budget}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 256, block_k = 128, stages = 2, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// -----

// expected-error @+1 {{invalid config: block_k must be 128}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 64, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// -----

// expected-error @+1 {{invalid config: stages must be >= 2}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 1, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// -----

// expected-error @+1 {{invalid config: desc_slots must be 1 or 2, got 3}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 3, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// -----

// expected-error @+1 {{invalid config: smem_bytes must be <= the target's max dynamic shared memory per block 232448}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 7, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// -----

// expected-error @+1 {{invalid config: cluster_m must be 1 or 2, got 4}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 4, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// -----

// expected-error @+1 {{invalid config: cluster_m and cluster_n must not both be 2}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 2, cluster_n = 2, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// -----

// expected-error @+1 {{invalid config: swizzle_a must be 128}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 64, swizzle_b = 128, num_sms = 132>

// -----

// expected-error @+1 {{invalid config: num_sms must be >= 1, got 0}}
dgemm.gemm @g k_grouped_contiguous nt m = 128 n = 128 k = ? groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 0>

// -----

// expected-error @+1 {{'dgemm.kernel' op expected 17 arguments (docs/KernelABI.md), got 1}}
dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%a: i32):
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %s, %p = dgemm.stage %m of 4
    // expected-error @+1 {{loads of A and B go through a descriptor 'slot'}}
    dgemm.tma.load a stage(%s) at(%m, %n)
  } math(regs = 232) {
    %z = arith.constant 0 : i32
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %s, %p = dgemm.stage %m of 4
    // expected-error @+1 {{scale loads use the kernel-parameter tensor map and take no 'slot'}}
    dgemm.tma.load sfa stage(%s) at(%m, %n) slot(%g)
  } math(regs = 232) {
    %z = arith.constant 0 : i32
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %off = arith.constant 0 : i64
    // expected-error @+1 {{only the A and B tensor maps have descriptor slots}}
    dgemm.desc.update sfb slot(%g) group(%g) k_offset(%off) k_size(%m) before_iteration(%n)
  } math(regs = 232) {
    %z = arith.constant 0 : i32
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 232) {
    %s, %p = dgemm.stage %m of 4
    %acc = dgemm.mma stage(%s) : vector<64xf32>
    // expected-error @+1 {{takes its scales from 'scales', from a 'stage', or the first columns' from 'scales' and the rest from a 'stage'; it has neither}}
    %r = dgemm.promote %acc into %acc : vector<64xf32>
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 232) {
    %s, %p = dgemm.stage %m of 4
    // expected-error @+1 {{'col_offset' must be a non-negative multiple of 8 (a 128B-swizzle atom of B rows), got 4}}
    %acc = dgemm.mma stage(%s) cols(4) : vector<32xf32>
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 232) {
    %s, %p = dgemm.stage %m of 4
    // expected-error @+1 {{columns [96, 160) exceed the tile's block_n = 128}}
    %acc = dgemm.mma stage(%s) cols(96) : vector<32xf32>
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 232) {
    %s, %p = dgemm.stage %m of 4
    // expected-error @+1 {{slice width (twice the accumulator length) must be a multiple of 8 in [8, 256], got 20}}
    %acc = dgemm.mma stage(%s) : vector<10xf32>
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 232) {
    %s, %p = dgemm.stage %m of 4
    %acc = dgemm.mma stage(%s) cols(64) : vector<32xf32>
    %sc = dgemm.load_scales stage(%s) : vector<18xf32>
    // expected-error @+1 {{'scales' were loaded for columns from 0, the slice starts at column 64}}
    %r = dgemm.promote %acc into %acc scales(%sc : vector<18xf32>) cols(64) : vector<32xf32>
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 232) {
    %s, %p = dgemm.stage %m of 4
    %acc = dgemm.mma stage(%s) : vector<32xf32>
    // expected-error @+1 {{sums cover 64 columns, the tile has block_n = 128}}
    dgemm.epilogue %acc group(%g) tile(%m, %n) : vector<32xf32>
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 232) {
    %s, %p = dgemm.stage %m of 4
    %sc0 = dgemm.load_scales stage(%s) : vector<18xf32>
    %acc = dgemm.mma stage(%s) : vector<64xf32>
    // expected-error @+1 {{'scales' must hold 2 sfa and 32 sfb values for a 128-column slice, got 18 values}}
    %sc = dgemm.promote %acc into %acc scales(%sc0 : vector<18xf32>) : vector<64xf32>
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 232) {
    %s, %p = dgemm.stage %m of 4
    %acc = dgemm.mma stage(%s) : vector<64xf32>
    // expected-error @+1 {{only 'pass' takes accumulators}}
    dgemm.turn wait(%acc : vector<64xf32>)
  }
}

// -----

dgemm.kernel @k config <block_m = 64, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 1, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 240) {
    // expected-error @+1 {{needs at least two math warpgroups to take turns, the kernel has math_warpgroups = 1}}
    dgemm.turn start
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 232) {
    %s, %p = dgemm.stage %m of 4
    // expected-error @+1 {{result must hold 2 sfa values and a whole number of sfb pairs, got 5 values}}
    %sc = dgemm.load_scales stage(%s) : vector<5xf32>
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 232) {
    %s, %p = dgemm.stage %m of 4
    // expected-error @+1 {{columns [96, 160) exceed the tile's block_n = 128}}
    %sc = dgemm.load_scales stage(%s) cols(96) : vector<18xf32>
  }
}

// -----

dgemm.kernel @k config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 232) {
    %s, %p = dgemm.stage %m of 4
    %sc0 = dgemm.load_scales stage(%s) : vector<34xf32>
    %acc = dgemm.mma stage(%s) : vector<64xf32>
    // expected-error @+1 {{with a 'stage' for the other columns, 'scales' must hold 2 sfa values and the sfb pairs of fewer than all 16 8-column groups, got 34 values}}
    %sc = dgemm.promote %acc into %acc scales(%sc0 : vector<34xf32>) stage(%s) : vector<64xf32>
  }
}

// -----

// Parked tiles (epilogue = parked): the ops, the workers role and the config's rules.
dgemm.kernel @no_park config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = in_place> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %s, %p = dgemm.stage %c0 of 1
    // expected-error @+1 {{'dgemm.park.store' op needs a kernel whose config has}}
    dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
  }
}

// -----

dgemm.kernel @reduce_in_math config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %s, %p = dgemm.stage %c0 of 1
    // expected-error @+1 {{'dgemm.park.reduce' op must be in the 'workers' region of dgemm.warp_specialize}}
    dgemm.park.reduce slot(%s)
  }
}

// -----

dgemm.kernel @two_slots config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %x = arith.constant 0 : i32
  } workers {
    %s, %p = dgemm.stage %c0 of 2
    // expected-error @+1 {{'dgemm.park.reduce' op slot must come from a dgemm.stage of 1 stage (the park holds one tile)}}
    dgemm.park.reduce slot(%s)
  } {worker_threads = 64 : i32}
}

// -----

dgemm.kernel @narrow_sums config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<32xf32>
    %s, %p = dgemm.stage %c0 of 1
    // expected-error @+1 {{'dgemm.park.store' op sums cover 64 columns, the tile has block_n = 128}}
    dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<32xf32>
  }
}

// -----

dgemm.kernel @no_worker_threads config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{'dgemm.warp_specialize' op a 'workers' region needs 'worker_threads' in [1, 96] (threads 32 to 127 of the producer warpgroup)}}
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %x = arith.constant 0 : i32
  } workers {
    %x = arith.constant 0 : i32
  }
}

// -----

// expected-error @+1 {{invalid config: cluster_m must be 1 with epilogue = parked (no multicast), got 2}}
dgemm.gemm @g k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 2, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked>

// -----

// expected-error @+1 {{invalid config: quad_b must be 0 with epilogue = parked}}
dgemm.gemm @g k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked, quad_b = 1>

// -----

// expected-error @+1 {{invalid config: smem_bytes must be <= the target's max dynamic shared memory per block 232448, got 236576}}
dgemm.gemm @g k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128] config <block_m = 128, block_n = 128, block_k = 128, stages = 5, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked>

// -----

// The lowering divides the iteration by the stage count.
func.func @stage_of_zero(%it: i32) {
  // expected-error @+1 {{'dgemm.stage' op needs at least one stage, got 0}}
  %s, %p = dgemm.stage %it of 0
  return
}

// -----

// dgemm.store_rows: the row mapping is the kernel kind's.
dgemm.kernel @store_limit_in_contiguous config <kind = m_grouped_contiguous, block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 0, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %c0 = arith.constant 0 : i32
    %z = arith.constant dense<0.0> : vector<64xf32>
    // expected-error @+1 {{'dgemm.store_rows' op takes no 'limit' in a kernel of kind m_grouped_contiguous}}
    dgemm.store_rows %z group(%c0) tile(%c0, %c0) limit(%m) : vector<64xf32>
  }
}

// -----

dgemm.kernel @store_unbounded_masked config <kind = m_grouped_masked, block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 0, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %c0 = arith.constant 0 : i32
    %z = arith.constant dense<0.0> : vector<64xf32>
    // expected-error @+1 {{'dgemm.store_rows' op needs a row 'limit' in a kernel of kind m_grouped_masked}}
    dgemm.store_rows %z group(%c0) tile(%c0, %c0) : vector<64xf32>
  }
}

// -----

dgemm.kernel @store_in_kgrouped config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %c0 = arith.constant 0 : i32
    %z = arith.constant dense<0.0> : vector<64xf32>
    // expected-error @+1 {{'dgemm.store_rows' op needs a 1D2D or BF16 kernel (the FP8 k-grouped kernel stores through dgemm.epilogue), the kernel's kind is k_grouped_contiguous}}
    dgemm.store_rows %z group(%c0) tile(%c0, %c0) limit(%m) : vector<64xf32>
  }
}

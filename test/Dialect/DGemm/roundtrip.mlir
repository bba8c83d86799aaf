// RUN: dgemm-opt %s | dgemm-opt | FileCheck %s
// RUN: dgemm-opt %s --mlir-print-op-generic | dgemm-opt | FileCheck %s

// Every GEMM kind a kernel is built for can be described (the verifier
// refuses the others: invalid.mlir).

// CHECK-LABEL: dgemm.gemm @wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
// CHECK-SAME: : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
dgemm.gemm @wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// CHECK-LABEL: dgemm.gemm @fwd m_grouped_contiguous nt m = ? n = 4096 k = 7168 groups = 8
// CHECK-SAME: : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]
dgemm.gemm @fwd m_grouped_contiguous nt m = ? n = 4096 k = 7168 groups = 8
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// CHECK-LABEL: dgemm.gemm @fwd_tuned m_grouped_contiguous
// CHECK-SAME: config <kind = m_grouped_contiguous, block_m = 128, block_n = 64, block_k = 128, stages = 8, desc_slots = 0,
dgemm.gemm @fwd_tuned m_grouped_contiguous nt m = ? n = 4096 k = 7168 groups = 8
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]
    config <kind = m_grouped_contiguous, block_m = 128, block_n = 64,
            block_k = 128, stages = 8, desc_slots = 0, math_warpgroups = 2,
            cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128,
            num_sms = 132>

// CHECK-LABEL: dgemm.gemm @decode m_grouped_masked nt m = 4096 n = 7168 k = 2048 groups = 16
// CHECK-SAME: : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]
dgemm.gemm @decode m_grouped_masked nt m = 4096 n = 7168 k = 2048 groups = 16
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// CHECK-LABEL: dgemm.gemm @dense normal nt m = ? n = 2112 k = 7168 groups = 1
// CHECK-SAME: : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]
// CHECK-SAME: config <kind = normal, block_m = 64, block_n = 32,
dgemm.gemm @dense normal nt m = ? n = 2112 k = 7168 groups = 1
    : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]
    config <kind = normal, block_m = 64, block_n = 32, block_k = 128,
            stages = 8, desc_slots = 0, math_warpgroups = 1, cluster_m = 1,
            cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// A normal 1D1D GEMM's config is the k-grouped kernel's (kind elided).
// CHECK-LABEL: dgemm.gemm @dense_1d1d normal nt m = 4096 n = 2112 k = 7168 groups = 1
// CHECK-SAME: -> f32 accumulate recipe [1, 1, 128] config <block_m = 128,
dgemm.gemm @dense_1d1d normal nt m = 4096 n = 2112 k = 7168 groups = 1
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// CHECK-LABEL: dgemm.gemm @tuned
// CHECK-SAME: config <block_m = 128, block_n = 160, block_k = 128, stages = 5, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>{{$}}
dgemm.gemm @tuned k_grouped_contiguous nt m = 4096 n = 7168 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]
    config <block_m = 128, block_n = 160, block_k = 128, stages = 5,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// The optional fields (epilogue, red_max_blocks, quad_b, unsafe) are
// printed after num_sms, in that order, and only where they differ from
// their defaults (register, 0, 0, none): an explicit default is elided.
// CHECK-LABEL: dgemm.gemm @defaults
// CHECK-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>{{$}}
dgemm.gemm @defaults k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            epilogue = register, red_max_blocks = 0, quad_b = 0, unsafe = none>

// The reduction epilogue with its bound.
// CHECK-LABEL: dgemm.gemm @reducing
// CHECK-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = reduction, red_max_blocks = 8>{{$}}
dgemm.gemm @reducing k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            epilogue = reduction, red_max_blocks = 8>

// Parameters may be given in any order; they print in the canonical one.
// CHECK-LABEL: dgemm.gemm @reordered
// CHECK-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = reduction, red_max_blocks = 8, quad_b = 1>{{$}}
dgemm.gemm @reordered k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <quad_b = 1, red_max_blocks = 8, epilogue = reduction,
            block_m = 128, block_n = 128, block_k = 128, stages = 6,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// CHECK-LABEL: dgemm.gemm @in_place
// CHECK-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = in_place>{{$}}
dgemm.gemm @in_place k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            epilogue = in_place>

// CHECK-LABEL: dgemm.gemm @parked
// CHECK-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked>{{$}}
dgemm.gemm @parked k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 128, block_k = 128, stages = 4,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            epilogue = parked>

// The race demonstrations (test only), one or both (a set of both is a
// quoted string, the flags in any order).
// CHECK-LABEL: dgemm.gemm @no_drain
// CHECK-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, unsafe = skip_descriptor_drain>{{$}}
dgemm.gemm @no_drain k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            unsafe = skip_descriptor_drain>

// CHECK-LABEL: dgemm.gemm @no_drain_no_fence
// CHECK-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, quad_b = 1, unsafe = "skip_descriptor_drain | skip_proxy_fence">{{$}}
dgemm.gemm @no_drain_no_fence k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            unsafe = "skip_proxy_fence | skip_descriptor_drain", quad_b = 1>

// dgemm.store_rows: without a limit (the grouped layout's rows) and with one
// (rows below it in the group's block).
// CHECK-LABEL: dgemm.kernel @store_layout
// CHECK: dgemm.store_rows %{{.+}} group(%{{.+}}) tile(%{{.+}}, %{{.+}}) : vector<64xf32>
dgemm.kernel @store_layout config <kind = m_grouped_contiguous, block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 0, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %c0 = arith.constant 0 : i32
    %z = arith.constant dense<0.0> : vector<64xf32>
    dgemm.store_rows %z group(%c0) tile(%c0, %c0) : vector<64xf32>
  }
}

// CHECK-LABEL: dgemm.kernel @store_limited
// CHECK: dgemm.store_rows %{{.+}} group(%{{.+}}) tile(%{{.+}}, %{{.+}}) limit(%{{.+}}) : vector<64xf32>
dgemm.kernel @store_limited config <kind = m_grouped_masked, block_m = 128, block_n = 128, block_k = 128, stages = 6, desc_slots = 0, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %c0 = arith.constant 0 : i32
    %z = arith.constant dense<0.0> : vector<64xf32>
    dgemm.store_rows %z group(%c0) tile(%c0, %c0) limit(%m) : vector<64xf32>
  }
}

// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --implicit-check-not=red.global.add.v2 --implicit-check-not="!llvm.ptr<1> -> vector"

// A configuration with epilogue = in_place (what the runtime's heuristics pick
// for in-place calls whose groups are mostly longer than 8 K blocks) builds
// the in-place kernel: its own entry name; c is taken to be d, so nothing of c
// is loaded (no vector loads from global memory at all) and every tile with
// K blocks adds its sum to d with 16-byte reductions, even with B multicast
// (cluster_m = 2: the heuristics do not pair in-place kernels, but a config
// may); a tile without K blocks does nothing. Its c is prefetched
// into L2 before the block loop, and only for tiles of 1 to 8 blocks.
// CHECK: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_c2x1_ip(
// CHECK-DAG: %[[EIGHT:.+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-DAG: %[[ZERO:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[SOME:.+]] = arith.cmpi ne, %[[BLOCKS:[0-9]+]], %[[ZERO]] : i32
// CHECK-NEXT: %[[FEW:.+]] = arith.cmpi ule, %[[BLOCKS]], %[[EIGHT]] : i32
// CHECK-NEXT: %[[SHORT:.+]] = arith.andi %[[SOME]], %[[FEW]] : i1
// CHECK-NEXT: scf.if %[[SHORT]] {
// CHECK: prefetch.global.L2
// CHECK: scf.for %{{.+}} = %c0_i32 to %[[BLOCKS]] step
// CHECK-NOT: prefetch.global.L2
// CHECK: wgmma.mma_async
// CHECK: %[[ANY:.+]] = arith.cmpi ne, %[[BLOCKS]], %[[ZERO]] : i32
// CHECK-NEXT: scf.if %[[ANY]] {
// CHECK-COUNT-24: red.global.add.v4.f32
// CHECK: } else {
// CHECK-COUNT-24: red.global.add.v4.f32
// CHECK: llvm.return

dgemm.gemm @wgrad k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 192, block_k = 128, stages = 5,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 2, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            epilogue = in_place>

// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --implicit-check-not=red.global.add.v2 --implicit-check-not="!llvm.ptr<1> -> vector"
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=red-vector-width=2 --canonicalize | FileCheck %s --check-prefix=NARROW --implicit-check-not=red.global.add.v4
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=tma-reduce-epilogue --canonicalize | FileCheck %s --check-prefix=TMARED
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=in-place-prefetch-max-blocks=16 --canonicalize | FileCheck %s --check-prefix=PF16
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=in-place-prefetch-max-blocks=0 --canonicalize | FileCheck %s --check-prefix=PFALL
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=in-place-prefetch-max-blocks=-1 --canonicalize | FileCheck %s --check-prefix=PFNONE --implicit-check-not=prefetch.global
// RUN: sed 's/in_place_only = 1/in_place_only = 1, red_max_blocks = 8/' %s | not dgemm-opt 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: sed 's/in_place_only = 1/in_place_only = 2/' %s | not dgemm-opt 2>&1 | FileCheck %s --check-prefix=BADFLAG

// A configuration with in_place_only = 1 (what the runtime's heuristics pick
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

// in-place-prefetch-max-blocks moves the bound (16), lifts it (0: every
// tile with K blocks) or drops the prefetch (-1).
// PF16-DAG: %[[SIXTEEN:.+]] = llvm.mlir.constant(16 : i32) : i32
// PF16-DAG: %[[ZERO:.+]] = llvm.mlir.constant(0 : i32) : i32
// PF16: %[[SOME:.+]] = arith.cmpi ne, %[[BLOCKS:[0-9]+]], %[[ZERO]] : i32
// PF16-NEXT: %[[FEW:.+]] = arith.cmpi ule, %[[BLOCKS]], %[[SIXTEEN]] : i32
// PF16-NEXT: %[[SHORT:.+]] = arith.andi %[[SOME]], %[[FEW]] : i1
// PF16-NEXT: scf.if %[[SHORT]] {
// PF16: prefetch.global.L2
// PF16: scf.for
// PFALL: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_c2x1_ip(
// PFALL-NOT: arith.cmpi ule
// PFALL: prefetch.global.L2
// PFALL-NOT: arith.cmpi ule
// PFALL: wgmma.mma_async
// PFNONE: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_c2x1_ip(
// PFNONE: red.global.add.v4.f32

// With tma-reduce-epilogue the tiles add their sums by TMA reduce-adds
// instead; a tile without K blocks skips those too (+0.0 added to -0.0 would
// change d).
// TMARED: %[[SAME:.+]] = llvm.icmp "eq" %{{.+}}, %{{.+}} : i64
// TMARED-NEXT: arith.xori %[[SAME]], %true : i1
// TMARED-NEXT: %[[EMPTY:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : i32
// TMARED-NEXT: scf.if %[[EMPTY]] {
// TMARED-NOT: cp.reduce
// TMARED: scf.if %[[SAME]] {
// TMARED: cp.reduce.async.bulk.tensor

// red-vector-width=2 still applies.
// NARROW: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_c2x1_ip(
// NARROW: red.global.add.v2.f32

// BOTH: invalid config: red_max_blocks must be 0 with in_place_only = 1 (the in-place kernel reduces every tile), got 8
// BADFLAG: invalid config: in_place_only must be 0 or 1, got 2
dgemm.gemm @wgrad k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 192, block_k = 128, stages = 5,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 2, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            in_place_only = 1>

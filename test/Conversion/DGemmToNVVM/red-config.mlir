// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s
// RUN: sed 's/red_max_blocks = 8/red_max_blocks = 3/' %s | dgemm-opt --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=BOUND --implicit-check-not=red.global.add.v2
// RUN: sed 's/cluster_m = 1/cluster_m = 2/' %s | dgemm-opt --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=MCAST --implicit-check-not=red.global.add.v4
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=WIDE --implicit-check-not=red.global.add.v2
// An epilogue whose sums do not come from a block loop (here: the zero
// vector) gives the reduction's bound no block count: an error, not a kernel
// silently without the reduction.
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync | sed -E 's/dgemm.epilogue %%[0-9]+#1 /dgemm.epilogue %%cst /' | not dgemm-opt --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm 2>&1 | FileCheck %s --check-prefix=NOBLOCKS
// NOBLOCKS: error: 'dgemm.epilogue' op the reduction epilogue's bound needs the tile's block count

// A configuration with epilogue = reduction, red_max_blocks = 8 (what the
// runtime's heuristics pick for in-place calls with short groups) builds the
// reduction epilogue: its own entry name, and reductions for tiles of 1 to 8
// blocks (the block loop's bound: blocks - 1 < 8 unsigned) when c is d
// (argument 8 is c, argument 7 d), the register path otherwise. Without B
// multicast the reductions are 16 bytes wide.
// CHECK: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_red8(
// CHECK-DAG: %[[ONE:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG: %[[EIGHT:.+]] = llvm.mlir.constant(8 : i32) : i32
// A tile without K blocks takes neither path: in place it touches nothing,
// with a separate c it copies c (see dgemm-to-nvvm.mlir).
// CHECK: %[[D:.+]] = llvm.ptrtoint %arg7 : !llvm.ptr<1> to i64
// CHECK-NEXT: %[[C:.+]] = llvm.ptrtoint %arg8 : !llvm.ptr<1> to i64
// CHECK-NEXT: %[[SAME:.+]] = llvm.icmp "eq" %[[C]], %[[D]] : i64
// CHECK-NEXT: %[[SEPARATE:.+]] = arith.xori %[[SAME]], %true : i1
// CHECK-NEXT: %[[EMPTY:.+]] = arith.cmpi eq, %[[BLOCKS:.+]], %{{.+}} : i32
// CHECK-NEXT: scf.if %[[EMPTY]] {
// CHECK-NEXT: scf.if %[[SEPARATE]] {
// CHECK-NOT: red.global.add
// CHECK: %[[LESS:.+]] = arith.subi %[[BLOCKS]], %[[ONE]] : i32
// CHECK-NEXT: %[[SHORT:.+]] = arith.cmpi ult, %[[LESS]], %[[EIGHT]] : i32
// CHECK-NEXT: %[[RED:.+]] = arith.andi %[[SAME]], %[[SHORT]] : i1
// CHECK-NEXT: scf.if %[[RED]] {
// CHECK: red.global.add.v4.f32
// CHECK: } else {
// CHECK: llvm.load
// CHECK: llvm.fadd

// With B multicast (cluster_m = 2) the reductions are 8 bytes wide.
// MCAST: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_c2x1_red8(
// MCAST: red.global.add.v2.f32

// The configuration's red_max_blocks is the bound (and part of the name).
// BOUND: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_red3(
// BOUND-DAG: %[[THREE:.+]] = llvm.mlir.constant(3 : i32) : i32
// BOUND: llvm.icmp "eq" %{{.+}}, %{{.+}} : i64
// BOUND: %[[LESS:.+]] = arith.subi
// BOUND-NEXT: arith.cmpi ult, %[[LESS]], %[[THREE]] : i32
// BOUND: red.global.add.v4.f32

// The 16-byte reductions: per 8-column group, each lane swaps two elements
// with its quad neighbour (lane ^ 1) and issues one 16-byte reduction; an odd
// lane takes row r + 8 and starts two columns to the left.
// WIDE: llvm.icmp "eq" %{{.+}}, %{{.+}} : i64
// WIDE: %[[BIT:.+]] = arith.andi %{{.+}}, %{{.+}} : i32
// WIDE-NEXT: %[[ODD:.+]] = arith.cmpi ne, %[[BIT]], %{{.+}} : i32
// WIDE: %[[GIVE:.+]] = arith.select %[[ODD]], %[[TOP:[0-9]+]], %[[BOTTOM:[0-9]+]] : vector<2xf32>
// WIDE-NEXT: %[[KEEP:.+]] = arith.select %[[ODD]], %[[BOTTOM]], %[[TOP]] : vector<2xf32>
// WIDE-NEXT: %[[X0:.+]] = llvm.extractelement %[[GIVE]]
// WIDE-NEXT: %[[GOT0:.+]] = nvvm.shfl.sync  bfly %c-1_i32, %[[X0]], %{{.+}}, %{{.+}} : f32 -> f32
// WIDE-NEXT: llvm.extractelement %[[KEEP]]
// WIDE: nvvm.shfl.sync  bfly
// WIDE: red.global.add.v4.f32 [$0], {$1, $2, $3, $4};
dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            epilogue = reduction, red_max_blocks = 8>

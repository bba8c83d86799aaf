// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel --canonicalize --dgemm-place-sync | FileCheck %s
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync -o /dev/null
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=2 --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync -o /dev/null
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel --canonicalize --dgemm-place-sync --dgemm-verify-sync | FileCheck %s --check-prefix=PAIR

// The seed's wgrad GEMM: every synchronization op below was derived by
// dgemm-place-sync from the resource effects of the kernel ops.

// Barrier arrival counts: one producer thread arms each full barrier, each
// of the 8 math warps releases each stage once.
// CHECK-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2
// CHECK: dgemm.warp_specialize producer(regs = 40)

// A group switch: each descriptor slot is drained of in-flight loads before
// it is rewritten, and published to the tensormap proxy right after.
// CHECK: scf.if
// CHECK: dgemm.desc.drain a slot([[SLOT:%.+]]) before_iteration([[IT:%.+]])
// CHECK-NEXT: dgemm.desc.update a slot([[SLOT]]) group({{%.+}}) k_offset({{%.+}}) k_size({{%.+}}) before_iteration([[IT]])
// CHECK-NEXT: dgemm.desc.publish a slot([[SLOT]])
// CHECK-NEXT: dgemm.desc.drain b slot([[SLOT]]) before_iteration([[IT]])
// CHECK-NEXT: dgemm.desc.update b slot([[SLOT]])
// CHECK-NEXT: dgemm.desc.publish b slot([[SLOT]])

// The producer acquires the stage (empty barrier) and arms its full barrier
// with the bytes of all four loads (128*128 + 128*128 + 128*4 + 128*4)
// before the first load writes it.
// CHECK: %[[PS:.+]], %[[PP:.+]] = dgemm.stage {{%.+}} of 6
// CHECK: dgemm.wait empty(%[[PS]]) phase(%[[PP]])
// CHECK-NEXT: dgemm.arrive full(%[[PS]]) tx 33792
// CHECK-NEXT: dgemm.tma.load a stage(%[[PS]]) at({{.*}}) slot({{%.+}})
// CHECK-NEXT: dgemm.tma.load b stage(%[[PS]])
// CHECK-NEXT: dgemm.tma.load sfa stage(%[[PS]])
// CHECK-NEXT: dgemm.tma.load sfb stage(%[[PS]])

// One block per turn (the form of an odd last block, after the loop over
// pairs of blocks shown by PAIR below, and of tiles wider than 128 columns):
// the math role waits for the full barrier before the first read of the
// stage: the scale loads, issued before the WGMMAs. The warpgroups take turns
// issuing WGMMA; handing the turn over reads the accumulator, so the WGMMA
// wait precedes it. The stage is released as soon as WGMMA (an async reader)
// completed, and the promotion reads only registers. The scale loads are
// generic-proxy reads of a stage the producer refills through the async
// proxy (TMA), so a proxy fence precedes the release.
// CHECK: math(regs = 232)
// CHECK: } {dgemm.first_block = [2, 0]}
// CHECK: %[[MS:.+]], %[[MP:.+]] = dgemm.stage {{%.+}} of 6
// CHECK-NEXT: dgemm.wait full(%[[MS]]) phase(%[[MP]])
// CHECK-NEXT: %[[SC:.+]] = dgemm.load_scales stage(%[[MS]]) : vector<34xf32>
// CHECK-NEXT: dgemm.turn wait
// CHECK-NEXT: %[[ACC:.+]] = dgemm.mma stage(%[[MS]]) : vector<64xf32>
// CHECK-NEXT: dgemm.mma.wait{{$}}
// CHECK-NEXT: dgemm.proxy.fence
// CHECK-NEXT: dgemm.arrive empty(%[[MS]])
// CHECK-NEXT: dgemm.turn pass(%[[ACC]]
// CHECK: dgemm.promote %[[ACC]] into {{%.+}} scales(%[[SC]] : vector<34xf32>)
// CHECK: dgemm.epilogue
// CHECK: } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}

dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// A 192-wide tile cannot also hold its scales in registers: the promotion
// reads them from the stage, so the release (fenced) follows the promotion.
// CHECK-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2
// CHECK: math(regs = 232)
// CHECK: %[[WS:.+]], %[[WP:.+]] = dgemm.stage {{%.+}} of 5
// CHECK-NEXT: dgemm.turn wait
// CHECK-NEXT: dgemm.wait full(%[[WS]]) phase(%[[WP]])
// CHECK-NEXT: %[[WACC:.+]] = dgemm.mma stage(%[[WS]]) : vector<96xf32>
// CHECK-NEXT: dgemm.mma.wait{{$}}
// CHECK-NEXT: dgemm.turn pass(%[[WACC]]
// CHECK: dgemm.promote %[[WACC]] into {{%.+}} stage(%[[WS]]) : vector<96xf32>
// CHECK-NEXT: dgemm.proxy.fence
// CHECK-NEXT: dgemm.arrive empty(%[[WS]])

dgemm.gemm @wide k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 192, block_k = 128, stages = 5,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// Two blocks per turn: a warpgroup issues the WGMMAs of two blocks in one
// turn, each block its own commit group. The turn is handed over once the
// first block's group completed (wait_group 1), the first block is promoted
// while the second's WGMMAs run, and the second is promoted after
// wait_group 0.
// An odd last block goes through the one-block loop. Tiles wider than 128
// (bn = 192 here) keep one block per turn: two fragments would not fit.
// PAIR-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2
// PAIR: math(regs = 232)
// PAIR: %[[K:[^ ]+]] = llvm.load
// PAIR-NEXT: %[[BLOCKS:[^ ]+]] = arith.divui %[[K]], %c128_i32 : i32
// PAIR-NEXT: %[[PAIRS:[^ ]+]] = arith.divui %[[BLOCKS]], %c2_i32 : i32
// PAIR-NEXT: scf.for %{{[^ ]+}} = %c0_i32 to %[[PAIRS]] step %c1_i32 iter_args(%[[IT:[^ ]+]] = %{{[^ ]+}}, %[[SUM:[^ ]+]] = %{{[^ ]+}})
// PAIR-NEXT: %[[S0:[^ ]+]], %[[P0:[^ ]+]] = dgemm.stage %[[IT]] of 6
// PAIR-NEXT: %[[IT1:[^ ]+]] = arith.addi %[[IT]], %c1_i32 : i32
// PAIR-NEXT: %[[S1:[^ ]+]], %[[P1:[^ ]+]] = dgemm.stage %[[IT1]] of 6
// PAIR-NEXT: dgemm.turn wait
// PAIR-NEXT: dgemm.wait full(%[[S0]]) phase(%[[P0]])
// PAIR-NEXT: %[[A0:[^ ]+]] = dgemm.mma stage(%[[S0]])
// PAIR-NEXT: dgemm.wait full(%[[S1]]) phase(%[[P1]])
// PAIR-NEXT: %[[A1:[^ ]+]] = dgemm.mma stage(%[[S1]])
// PAIR-NEXT: dgemm.mma.wait pending(1)
// PAIR-NEXT: dgemm.turn pass(%[[A0]] : vector<64xf32>)
// PAIR-NEXT: arith.addi %[[IT]], %c2_i32 : i32
// PAIR-NEXT: %[[SUM0:[^ ]+]] = dgemm.promote %[[A0]] into %[[SUM]] stage(%[[S0]])
// PAIR-NEXT: dgemm.proxy.fence
// PAIR-NEXT: dgemm.arrive empty(%[[S0]])
// PAIR-NEXT: dgemm.mma.wait{{$}}
// PAIR-NEXT: dgemm.promote %[[A1]] into %[[SUM0]] stage(%[[S1]])
// PAIR-NEXT: dgemm.proxy.fence
// PAIR-NEXT: dgemm.arrive empty(%[[S1]])
// PAIR-NEXT: scf.yield
// PAIR: %[[DONE:[^ ]+]] = arith.muli %[[PAIRS]], %c2_i32 : i32
// PAIR-NEXT: scf.for %{{.+}} = %[[DONE]] to %[[BLOCKS]] step %c1_i32
// PAIR: dgemm.mma stage
// PAIR: dgemm.epilogue
// PAIR-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2
// PAIR: math(regs = 232)
// PAIR-NOT: arith.divui %{{.+}}, %c2_i32
// PAIR: dgemm.epilogue

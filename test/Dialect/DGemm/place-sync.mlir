// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel=blocks-per-turn=1 --canonicalize --dgemm-place-sync | FileCheck %s
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync -o /dev/null
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=2 --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync -o /dev/null
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel --dgemm-place-sync=unsafe-skip-descriptor-drain | FileCheck %s --check-prefix=UNSAFE
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel --dgemm-place-sync=release-per-thread | FileCheck %s --check-prefix=PER-THREAD
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel --dgemm-place-sync=unsafe-skip-proxy-fence | FileCheck %s --check-prefix=NO-FENCE
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 "--dgemm-lower-to-kernel=mma-slices=2 alternate-warpgroups=false" --canonicalize --dgemm-place-sync --dgemm-verify-sync | FileCheck %s --check-prefix=TWO
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 "--dgemm-lower-to-kernel=mma-slices=3 alternate-warpgroups=false" --dgemm-place-sync --dgemm-verify-sync | FileCheck %s --check-prefix=THREE
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel=mma-slices=2 --dgemm-place-sync --dgemm-verify-sync -o /dev/null
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel=pass-turn-after-issue --canonicalize --dgemm-place-sync --dgemm-verify-sync | FileCheck %s --check-prefix=EARLY-PASS
// RUN: not dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel=blocks-per-turn=1 --dgemm-place-sync=unsafe-skip-proxy-fence --dgemm-verify-sync -o /dev/null 2>&1 | FileCheck %s --check-prefix=REJECT
// RUN: not dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel --dgemm-place-sync=unsafe-skip-proxy-fence --dgemm-verify-sync -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNFENCED
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel --canonicalize --dgemm-place-sync --dgemm-verify-sync | FileCheck %s --check-prefix=PAIR
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=2 "--dgemm-lower-to-kernel=blocks-per-turn=2 alternate-warpgroups=false" --dgemm-place-sync --dgemm-verify-sync -o /dev/null
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel=overlap-promotion --canonicalize --dgemm-place-sync --dgemm-verify-sync | FileCheck %s --check-prefix=OVERLAP
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=2 --dgemm-lower-to-kernel=overlap-promotion --dgemm-place-sync --dgemm-verify-sync -o /dev/null
// RUN: not dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel=overlap-promotion --dgemm-place-sync=unsafe-skip-proxy-fence --dgemm-verify-sync -o /dev/null 2>&1 | FileCheck %s --check-prefix=OVUNFENCED
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 "--dgemm-lower-to-kernel=overlap-promotion scale-register-budget=226" --canonicalize --dgemm-place-sync --dgemm-verify-sync | FileCheck %s --check-prefix=OVHELD
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel=scale-prefix-cols=64 --dgemm-place-sync --dgemm-verify-sync | FileCheck %s --check-prefix=PREFIX
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel=reload-sfa-after-turn --dgemm-place-sync --dgemm-verify-sync | FileCheck %s --check-prefix=RELOAD

// NO-FENCE-NOT: dgemm.proxy.fence

// Three slices of the 192-wide tile: each promotion waits for its own group.
// THREE-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2
// THREE: dgemm.mma stage({{%.+}}) : vector<32xf32>
// THREE-NEXT: dgemm.mma stage({{%.+}}) cols(64) : vector<32xf32>
// THREE-NEXT: dgemm.mma stage({{%.+}}) cols(128) : vector<32xf32>
// THREE: dgemm.mma.wait pending(2)
// THREE-NEXT: dgemm.promote
// THREE-NEXT: dgemm.mma.wait pending(1)
// THREE-NEXT: dgemm.promote
// THREE-NEXT: dgemm.mma.wait{{$}}
// THREE-NEXT: dgemm.promote
// REJECT: error: releases a stage to the producer's async-proxy (TMA) writes while a generic-proxy read of it is not fenced
// REJECT: note: read through the generic proxy here ('dgemm.load_scales')
// UNFENCED: error: releases a stage to the producer's async-proxy (TMA) writes while a generic-proxy read of it is not fenced
// UNFENCED: note: read through the generic proxy here ('dgemm.promote')

// PER-THREAD: {empty_arrivals = 256 : i32, full_arrivals = 1 : i32}

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

// One block per turn (blocks-per-turn=1; with the default, the form of an odd
// last block and of tiles wider than 128 columns): the math role waits for
// the full barrier before the first read of the stage: the scale loads,
// issued before the WGMMAs. The warpgroups take turns
// issuing WGMMA; handing the turn over reads the accumulator, so the WGMMA
// wait precedes it. The stage is released as soon as WGMMA (an async reader)
// completed, and the promotion reads only registers. The scale loads are
// generic-proxy reads of a stage the producer refills through the async
// proxy (TMA), so a proxy fence precedes the release.
// CHECK: math(regs = 232)
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

// UNSAFE-NOT: dgemm.desc.drain
// UNSAFE: dgemm.desc.update a
// UNSAFE-NEXT: dgemm.desc.publish a
// UNSAFE-NOT: dgemm.desc.drain
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

// pass-turn-after-issue: the turn is handed over as soon as the WGMMAs are
// issued (it reads no accumulator), and the WGMMA wait moves to the promotion.
// EARLY-PASS-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2
// EARLY-PASS: dgemm.turn wait
// EARLY-PASS-NEXT: dgemm.wait full
// EARLY-PASS-NEXT: %[[EACC:.+]] = dgemm.mma stage
// EARLY-PASS-NEXT: dgemm.turn pass{{$}}
// EARLY-PASS: dgemm.mma.wait{{$}}
// EARLY-PASS-NEXT: dgemm.promote %[[EACC]]

// Two column slices (mma-slices=2, warpgroups not alternating): the first
// slice's promotion waits only for its own WGMMA group (wait_group 1), so it
// runs while the tensor cores compute the second; the release follows the
// last promotion.
// TWO-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2
// TWO: dgemm.wait full
// TWO-NEXT: %[[TACC0:.+]] = dgemm.mma stage(%[[TS:.+]]) : vector<48xf32>
// TWO-NEXT: %[[TACC1:.+]] = dgemm.mma stage(%[[TS]]) cols(96) : vector<48xf32>
// TWO: dgemm.mma.wait pending(1)
// TWO-NEXT: dgemm.promote %[[TACC0]] into {{%.+}} stage(%[[TS]]) : vector<48xf32>
// TWO-NEXT: dgemm.mma.wait{{$}}
// TWO-NEXT: dgemm.promote %[[TACC1]] into {{%.+}} stage(%[[TS]]) cols(96) : vector<48xf32>
// TWO-NEXT: dgemm.proxy.fence
// TWO-NEXT: dgemm.arrive empty(%[[TS]])
dgemm.gemm @wide k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 192, block_k = 128, stages = 5,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// blocks-per-turn=2 (the default): a warpgroup issues the WGMMAs of two blocks in one turn,
// each block its own commit group. The turn is handed over once the first
// block's group completed (wait_group 1), the first block is promoted while
// the second's WGMMAs run, and the second is promoted after wait_group 0.
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

// overlap-promotion: block 0 is issued before the loop; each iteration
// issues the next block, waits for the previous one only (pending(1)),
// promotes and releases it, and hands the block it issued last, still in
// flight, with its stage to the next iteration; the tail completes it.
// OVERLAP-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2
// OVERLAP: math(regs = 232)
// OVERLAP-NOT: dgemm.turn
// OVERLAP: scf.if
// OVERLAP-NEXT: %[[S0:[^ ]+]], %[[P0:[^ ]+]] = dgemm.stage
// OVERLAP-NEXT: dgemm.wait full(%[[S0]]) phase(%[[P0]])
// OVERLAP-NEXT: %[[F0:[^ ]+]] = dgemm.mma stage(%[[S0]])
// OVERLAP: %[[R:[^ ]+]]:4 = scf.for {{.+}} iter_args({{.+}}, %[[F:[^ ]+]] = %[[F0]], %[[S:[^ ]+]] = %[[S0]])
// OVERLAP: %[[S1:[^ ]+]], %[[P1:[^ ]+]] = dgemm.stage
// OVERLAP-NEXT: dgemm.wait full(%[[S1]]) phase(%[[P1]])
// OVERLAP-NEXT: %[[F1:[^ ]+]] = dgemm.mma stage(%[[S1]])
// OVERLAP-NEXT: dgemm.mma.wait pending(1)
// OVERLAP-NEXT: %[[SUM1:[^ ]+]] = dgemm.promote %[[F]] into %{{[^ ]+}} stage(%[[S]])
// OVERLAP-NEXT: dgemm.proxy.fence
// OVERLAP-NEXT: dgemm.arrive empty(%[[S]])
// OVERLAP: %[[S2:[^ ]+]], %[[P2:[^ ]+]] = dgemm.stage
// OVERLAP-NEXT: dgemm.wait full(%[[S2]]) phase(%[[P2]])
// OVERLAP-NEXT: %[[F2:[^ ]+]] = dgemm.mma stage(%[[S2]])
// OVERLAP-NEXT: dgemm.mma.wait pending(1)
// OVERLAP-NEXT: %[[SUM2:[^ ]+]] = dgemm.promote %[[F1]] into %[[SUM1]] stage(%[[S1]])
// OVERLAP-NEXT: dgemm.proxy.fence
// OVERLAP-NEXT: dgemm.arrive empty(%[[S1]])
// OVERLAP-NOT: dgemm.
// OVERLAP: scf.yield %{{[^ ]+}}, %[[SUM2]], %[[F2]], %[[S2]]
// OVERLAP-NEXT: } {dgemm.first_block = [2, 1]}
// An even block count issues the last block, then completes both.
// OVERLAP: scf.if
// OVERLAP: %[[FL:[^ ]+]] = dgemm.mma stage
// OVERLAP-NEXT: dgemm.mma.wait pending(1)
// OVERLAP-NEXT: dgemm.promote %[[R]]#2 into %[[R]]#1 stage(%[[R]]#3)
// OVERLAP-NEXT: dgemm.proxy.fence
// OVERLAP-NEXT: dgemm.arrive empty(%[[R]]#3)
// OVERLAP-NEXT: dgemm.mma.wait{{$}}
// OVERLAP-NEXT: dgemm.promote %[[FL]]
// OVERLAP: } else {
// OVERLAP-NEXT: dgemm.mma.wait{{$}}
// OVERLAP-NEXT: dgemm.promote %[[R]]#2 into %[[R]]#1 stage(%[[R]]#3)
// OVERLAP-NEXT: dgemm.proxy.fence
// OVERLAP-NEXT: dgemm.arrive empty(%[[R]]#3)
// OVERLAP: dgemm.epilogue
// The 192-wide tile has no room for a second fragment: one block per turn.
// OVERLAP-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2
// OVERLAP: dgemm.turn start

// OVUNFENCED: releases a stage to the producer's async-proxy (TMA) writes while a generic-proxy read of it is not fenced

// overlap-promotion with the scales in registers (when the sum, both
// fragments and the scales fit the budget): the carried block's scales are
// read before the next block's WGMMAs are issued, and its stage is released
// as soon as the wait completes it, before the promotion.
// OVHELD-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2
// OVHELD: math(regs = 232)
// OVHELD: dgemm.mma stage
// OVHELD: scf.for {{.+}} iter_args({{.+}}, %[[F:[^ ]+]] = %{{[^ ]+}}, %[[S:[^ ]+]] = %{{[^ ]+}})
// OVHELD: %[[S1:[^ ]+]], %[[P1:[^ ]+]] = dgemm.stage
// OVHELD-NEXT: %[[SC:[^ ]+]] = dgemm.load_scales stage(%[[S]]) : vector<34xf32>
// OVHELD-NEXT: dgemm.wait full(%[[S1]]) phase(%[[P1]])
// OVHELD-NEXT: dgemm.mma stage(%[[S1]])
// OVHELD-NEXT: dgemm.mma.wait pending(1)
// OVHELD-NEXT: dgemm.proxy.fence
// OVHELD-NEXT: dgemm.arrive empty(%[[S]])
// OVHELD-NEXT: dgemm.promote %[[F]] into %{{[^ ]+}} scales(%[[SC]] : vector<34xf32>)

// scale-prefix-cols: the 192-wide tile's scales do not all fit the register
// budget; those of its first 64 columns (2 sfa + 16 sfb) are read before the
// WGMMAs, the rest during the promotion, after which the stage is released.
// PREFIX-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2
// PREFIX: math(regs = 232)
// PREFIX: %[[SC:[^ ]+]] = dgemm.load_scales stage(%[[S:[^ ]+]]) : vector<18xf32>
// PREFIX-NEXT: dgemm.turn wait
// PREFIX-NEXT: %[[F:[^ ]+]] = dgemm.mma stage(%[[S]]) : vector<96xf32>
// PREFIX-NEXT: dgemm.mma.wait
// PREFIX: dgemm.promote %[[F]] into %{{[^ ]+}} scales(%[[SC]] : vector<18xf32>) stage(%[[S]])
// PREFIX-NEXT: dgemm.proxy.fence
// PREFIX-NEXT: dgemm.arrive empty(%[[S]])

// reload-sfa-after-turn: a block whose scales are held (the 128-wide tile's
// odd block) reads its two sfa values again after the turn's hand-over and
// promotes with them; the stage's release moves after that read.
// RELOAD-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2
// RELOAD: %[[SC:[^ ]+]] = dgemm.load_scales stage(%[[S:[^ ]+]]) : vector<34xf32>
// RELOAD-NEXT: dgemm.turn wait
// RELOAD-NEXT: %[[F:[^ ]+]] = dgemm.mma stage(%[[S]]) : vector<64xf32>
// RELOAD-NEXT: dgemm.mma.wait
// RELOAD-NEXT: dgemm.turn pass(%[[F]] : vector<64xf32>)
// RELOAD-NEXT: %[[SFA:[^ ]+]] = dgemm.load_scales stage(%[[S]]) : vector<4xf32>
// RELOAD-NEXT: dgemm.proxy.fence
// RELOAD-NEXT: dgemm.arrive empty(%[[S]])
// RELOAD: llvm.extractelement %[[SFA]]
// RELOAD: %[[V1:[^ ]+]] = llvm.insertelement %{{[^ ]+}}, %[[SC]]
// RELOAD: llvm.extractelement %[[SFA]]
// RELOAD: %[[V2:[^ ]+]] = llvm.insertelement %{{[^ ]+}}, %[[V1]]
// RELOAD: dgemm.promote %[[F]] into %{{[^ ]+}} scales(%[[V2]] : vector<34xf32>) : vector<64xf32>

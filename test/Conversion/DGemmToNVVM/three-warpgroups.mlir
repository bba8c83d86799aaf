// Three math warpgroups (block_m = 192): 512 threads, 160 registers per math
// thread and 32 for the producer (128 * 32 + 384 * 160 = 65536), and the
// tensor-core turn going round the three warpgroups, handed over right after
// the WGMMAs are issued. dgemm-verify-sync accepts the schedule.
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync | FileCheck %s --check-prefix=KERNEL
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s

dgemm.gemm @w k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128] config <block_m = 192, block_n = 128, block_k = 128, stages = 5, desc_slots = 2, math_warpgroups = 3, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// The turn passes after the issue, before the wait for the WGMMAs, and the
// release follows the promotion (the scales of 128 columns do not fit next
// to the fragment and the sum).
// KERNEL: dgemm.warp_specialize producer(regs = 32)
// KERNEL: } math(regs = 160)
// KERNEL: dgemm.turn start
// KERNEL: dgemm.turn wait
// KERNEL-NEXT: dgemm.wait full(%[[S:.*]]) phase
// KERNEL-NEXT: %[[F:.*]] = dgemm.mma stage(%[[S]]) : vector<64xf32>
// KERNEL-NEXT: dgemm.turn pass{{$}}
// KERNEL: dgemm.mma.wait
// KERNEL-NEXT: dgemm.promote %[[F]] into %{{.*}} stage(%[[S]])
// KERNEL-NEXT: dgemm.proxy.fence
// KERNEL-NEXT: dgemm.arrive empty(%[[S]])
// KERNEL: dgemm.turn finish
// KERNEL: empty_arrivals = 12 : i32

// CHECK: nvvm.maxntid = array<i32: 512, 1, 1>
// CHECK: nvvm.setmaxregister  decrease 32
// CHECK: nvvm.setmaxregister  increase 160
// The last warpgroup (2) gives warpgroup 0 the first turn on barrier 1.
// CHECK: setp.eq.u32 p, $0, 2;\0A\09@p bar.arrive 1, 256;
// CHECK: "bar.sync $0, 256;"
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// Warpgroup w hands over on barrier 1 + (w + 1) % 3: w == 2 ? 1 : w + 2.
// CHECK: %[[WG:.*]] = arith.subi
// CHECK: %[[LAST:.*]] = llvm.icmp "eq" %[[WG]], %[[TWO:.*]] : i32
// CHECK: %[[NEXT:.*]] = llvm.add %[[WG]], %[[TWO]] : i32
// CHECK: %[[BAR:.*]] = llvm.select %[[LAST]], %{{.*}}, %[[NEXT]] : i1, i32
// CHECK: "bar.arrive $0, 256;", "r,~{memory}" %[[BAR]]
// CHECK-NEXT: arith.addi
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// Warpgroup 0 takes the last hand-over after its final tile.
// CHECK: setp.eq.u32 p, $0, 0;\0A\09@p bar.sync 1, 256;


// The m-grouped contiguous kernel through the same synchronization passes as
// the k-grouped one: lower-to-kernel declares effects only, place-sync
// derives the barriers, verify-sync accepts the result and rejects it with
// any one synchronization op removed.
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync | FileCheck %s
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel | FileCheck %s --check-prefix=UNSYNCED
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync > %t.mlir
// RUN: grep -v "dgemm.arrive empty" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NORELEASE
// RUN: grep -v "dgemm.wait full" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOACQUIRE
// RUN: grep -v "dgemm.mma.wait" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOMMAWAIT
// RUN: grep -v "dgemm.proxy.fence" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOFENCE
// RUN: grep -v "dgemm.wait empty" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOEMPTYWAIT
// RUN: grep -v "dgemm.arrive full" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOARM

dgemm.gemm @moe_forward m_grouped_contiguous nt m = ? n = 4096 k = 7168
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// UNSYNCED-NOT: dgemm.wait
// UNSYNCED-NOT: dgemm.arrive
// UNSYNCED-NOT: dgemm.desc

// CHECK: dgemm.kernel @dgemm_mgrouped_fp8_1d2d_bm128_bn128_s6 config <kind = m_grouped_contiguous
// The producer: per tile, the expert of its first row (the grouped layout,
// argument 9) and, for a valid one, every 128-deep K block: A, B (expert g's
// rows from g * N) and sfa through the kernel-parameter maps, no descriptor
// slot; 128*128 + 128*128 + 128*4 bytes per stage.
// CHECK: dgemm.warp_specialize producer
// CHECK: llvm.getelementptr %arg9
// CHECK: dgemm.wait empty(%[[S:.+]]) phase
// CHECK-NEXT: dgemm.arrive full(%[[S]]) tx 33280
// CHECK-NEXT: dgemm.tma.load a stage(%[[S]]) at({{.*}}){{$}}
// CHECK-NEXT: dgemm.tma.load b stage(%[[S]]) at({{.*}}){{$}}
// CHECK-NEXT: dgemm.tma.load sfa stage(%[[S]]) at({{.*}}){{$}}
// CHECK-NOT: dgemm.desc
// The math role: sfa from the stage, the B scale from global memory, the turn
// passed once the WGMMAs are issued, the stage released once they completed
// and the scale reads are fenced.
// CHECK: } math(regs = 232)
// CHECK: dgemm.turn start
// CHECK: dgemm.wait full(%[[M:.+]]) phase
// CHECK-NEXT: dgemm.load_scales stage(%[[M]]) : vector<2xf32>
// CHECK-NEXT: dgemm.load_block_scale group
// CHECK-NEXT: dgemm.turn wait
// CHECK-NEXT: %[[ACC:.+]] = dgemm.mma stage(%[[M]]) : vector<64xf32>
// CHECK-NEXT: dgemm.turn pass{{$}}
// CHECK-NEXT: dgemm.mma.wait
// CHECK-NEXT: dgemm.proxy.fence
// CHECK-NEXT: dgemm.arrive empty(%[[M]])
// CHECK-NEXT: dgemm.promote %[[ACC]] into {{.*}} block_scale
// CHECK: dgemm.store_rows
// CHECK: dgemm.turn finish
// CHECK: empty_arrivals = 8 : i32, full_arrivals = 1 : i32

// NORELEASE: error: a stage acquired in this block is never released
// NOACQUIRE: error: reads the stage sfa buffer of a stage before waiting on its full barrier
// NOMMAWAIT: error: releases a stage while an asynchronous read of it may still be in flight
// NOFENCE: error: releases a stage to the producer's async-proxy (TMA) writes while a generic-proxy read of it is not fenced
// NOEMPTYWAIT: error: writes the stage A buffer of a stage before waiting on its empty barrier
// NOARM: error: loads into a stage whose full barrier is never armed

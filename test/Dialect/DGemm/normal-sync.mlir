// The normal FP8 1D2D kernel (the 1D2D kernel with one group of M rows)
// through the synchronization passes, as masked-sync.mlir: what differs
// from the m-grouped kernels is pinned: no device array is read (no
// argument 9), every tile has ceil(K/128) K blocks, A's row and sfa's K
// block are m0 and kb, and the store is bounded by M (argument 11) in group
// 0.
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync | FileCheck %s
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel | FileCheck %s --check-prefix=UNSYNCED
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync > %t.mlir
// RUN: grep -v "dgemm.arrive empty" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NORELEASE
// RUN: grep -v "dgemm.wait full" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOACQUIRE
// RUN: grep -v "dgemm.mma.wait" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOMMAWAIT
// RUN: grep -v "dgemm.proxy.fence" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOFENCE
// RUN: grep -v "dgemm.wait empty" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOEMPTYWAIT
// RUN: grep -v "dgemm.arrive full" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOARM

dgemm.gemm @dense normal nt m = ? n = 7168 k = 2048
    groups = 1 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// UNSYNCED-NOT: dgemm.wait
// UNSYNCED-NOT: dgemm.arrive
// UNSYNCED-NOT: dgemm.desc

// CHECK: dgemm.kernel @dgemm_normal_fp8_1d2d_bm128_bn128_s6 config <kind = normal
// CHECK: dgemm.warp_specialize producer
// CHECK-NOT: %arg9
// CHECK: %[[M0:.+]] = arith.muli %{{.+}}, %c128_i32{{.*}} : i32
// CHECK: %[[KP:.+]] = arith.addi %arg16, %{{.+}} : i32
// CHECK-NEXT: %[[KB:.+]] = arith.divui %[[KP]], %{{.+}} : i32
// CHECK-NOT: %arg9
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %[[KB]] step
// CHECK: dgemm.wait empty(%[[S:.+]]) phase
// CHECK-NEXT: dgemm.arrive full(%[[S]]) tx 33280
// CHECK-NEXT: dgemm.tma.load a stage(%[[S]]) at(%{{.+}}, %[[M0]]){{$}}
// CHECK-NEXT: dgemm.tma.load b stage(%[[S]]) at({{.*}}){{$}}
// CHECK-NEXT: dgemm.tma.load sfa stage(%[[S]]) at(%{{.+}}, %[[K]]){{$}}
// CHECK-NOT: dgemm.desc
// CHECK: } math(regs = 232)
// CHECK-NOT: %arg9
// CHECK: dgemm.turn start
// CHECK: dgemm.wait full(%[[M:.+]]) phase
// CHECK-NEXT: dgemm.load_scales stage(%[[M]]) : vector<2xf32>
// CHECK-NEXT: dgemm.load_block_scale group(%[[G0:.+]]) n_block
// CHECK-NEXT: dgemm.turn wait
// CHECK-NEXT: %[[ACC:.+]] = dgemm.mma stage(%[[M]]) : vector<64xf32>
// CHECK-NEXT: dgemm.turn pass{{$}}
// CHECK-NEXT: dgemm.mma.wait
// CHECK-NEXT: dgemm.proxy.fence
// CHECK-NEXT: dgemm.arrive empty(%[[M]])
// CHECK-NEXT: dgemm.promote %[[ACC]] into {{.*}} block_scale
// CHECK: dgemm.store_rows %{{.+}} group(%[[G0]]) tile(%{{.+}}, %{{.+}}) limit(%arg11) : vector<64xf32>
// CHECK: dgemm.turn finish
// CHECK: empty_arrivals = 8 : i32, full_arrivals = 1 : i32

// NORELEASE: error: a stage acquired in this block is never released
// NOACQUIRE: error: reads the stage sfa buffer of a stage before waiting on its full barrier
// NOMMAWAIT: error: releases a stage while an asynchronous read of it may still be in flight
// NOFENCE: error: releases a stage to the producer's async-proxy (TMA) writes while a generic-proxy read of it is not fenced
// NOEMPTYWAIT: error: writes the stage A buffer of a stage before waiting on its empty barrier
// NOARM: error: loads into a stage whose full barrier is never armed

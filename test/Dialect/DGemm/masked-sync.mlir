// The m-grouped masked kernel (the 1D2D kernel with the masked row mapping)
// through the synchronization passes: lower-to-kernel declares effects only,
// place-sync derives the barriers, verify-sync accepts the result and rejects
// it with any one synchronization op removed. What differs from the
// contiguous kernel (m-grouped-sync.mlir) is pinned: the schedule of the
// valid tiles only and its group g, masked_m[g] read from argument 9 and clamped into [0, M_max], A's row
// g * M_max + m0, sfa's K-block row g * ceil(K/128) + kb, and the row limit
// of the store.
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync | FileCheck %s
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel | FileCheck %s --check-prefix=UNSYNCED
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync > %t.mlir
// RUN: grep -v "dgemm.arrive empty" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NORELEASE
// RUN: grep -v "dgemm.wait full" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOACQUIRE
// RUN: grep -v "dgemm.mma.wait" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOMMAWAIT
// RUN: grep -v "dgemm.proxy.fence" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOFENCE
// RUN: grep -v "dgemm.wait empty" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOEMPTYWAIT
// RUN: grep -v "dgemm.arrive full" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOARM

dgemm.gemm @moe_decode m_grouped_masked nt m = 4096 n = 4096 k = 7168
    groups = 8 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// UNSYNCED-NOT: dgemm.wait
// UNSYNCED-NOT: dgemm.arrive
// UNSYNCED-NOT: dgemm.desc

// CHECK: dgemm.kernel @dgemm_mgrouped_masked_fp8_1d2d_bm128_bn128_s6 config <kind = m_grouped_masked
// The schedule holds only the tiles with valid rows: its total is the sum
// over the G groups (argument 13) of ceil(clamped masked_m[g] / 128) m-blocks
// by the n-blocks, and each CTA's tile loop carries a cursor (the group of
// its previous tile and the unit that group starts at), from which a while
// loop walks forward to the group of unit t.
// CHECK: dgemm.warp_specialize producer
// CHECK: %[[NBA:.+]] = arith.addi %arg12, %{{.+}} : i32
// CHECK-NEXT: %[[NB:.+]] = arith.divui %[[NBA]], %{{.+}} : i32
// CHECK: %[[TOTAL:.+]] = scf.for %[[GI:.+]] = %{{.+}} to %arg13 step %{{.+}} iter_args(%[[SUM:.+]] = %{{.+}}) -> (i32)
// CHECK-NEXT: llvm.getelementptr %arg9[%[[GI]]]
// CHECK: %[[GB:.+]] = arith.divui %{{.+}}, %c128_i32{{.*}} : i32
// CHECK-NEXT: %[[GU:.+]] = arith.muli %[[GB]], %[[NB]] : i32
// CHECK-NEXT: %[[NSUM:.+]] = arith.addi %[[SUM]], %[[GU]] : i32
// CHECK-NEXT: scf.yield %[[NSUM]] : i32
// CHECK: scf.for %[[T:.+]] = %{{.+}} to %[[TOTAL]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %[[CG:.+]] = %{{.+}}, %[[CS:.+]] = %{{.+}}) -> (i32, i32, i32)
// CHECK: %[[W:.+]]:3 = scf.while (%[[WG:.+]] = %[[CG]], %[[WS:.+]] = %[[CS]])
// CHECK: %[[WEND:.+]] = arith.addi %[[WS]], %{{.+}} : i32
// CHECK: arith.cmpi uge, %[[T]], %[[WEND]] : i32
// CHECK: scf.condition
// CHECK: %[[R:.+]] = arith.subi %[[T]], %[[W]]#1 : i32
// CHECK: %[[M0:.+]] = arith.muli %{{.+}}, %c128_i32{{.*}} : i32
// CHECK-NEXT: %[[P:.+]] = llvm.getelementptr %arg9[%[[W]]#0]
// CHECK-NEXT: %[[MM:.+]] = llvm.load %[[P]]
// CHECK: %[[LO:.+]] = arith.maxsi %[[MM]], %{{.+}} : i32
// CHECK-NEXT: %[[LIM:.+]] = arith.minsi %[[LO]], %arg11 : i32
// CHECK-NEXT: %[[VALID:.+]] = arith.cmpi ult, %[[M0]], %[[LIM]] : i32
// CHECK: %[[NK:.+]] = arith.select %[[VALID]], %[[KB:.+]], %{{.+}} : i32
// CHECK-NEXT: %[[GM:.+]] = arith.muli %[[W]]#0, %arg11 : i32
// CHECK-NEXT: %[[AROW:.+]] = arith.addi %[[GM]], %[[M0]] : i32
// CHECK-NEXT: %[[SFA0:.+]] = arith.muli %[[W]]#0, %[[KB]] : i32
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %[[NK]] step
// CHECK: %[[SFAK:.+]] = arith.addi %[[SFA0]], %[[K]] : i32
// CHECK-NEXT: dgemm.wait empty(%[[S:.+]]) phase
// CHECK-NEXT: dgemm.arrive full(%[[S]]) tx 33280
// CHECK-NEXT: dgemm.tma.load a stage(%[[S]]) at(%{{.+}}, %[[AROW]]){{$}}
// CHECK-NEXT: dgemm.tma.load b stage(%[[S]]) at({{.*}}){{$}}
// CHECK-NEXT: dgemm.tma.load sfa stage(%[[S]]) at(%{{.+}}, %[[SFAK]]){{$}}
// CHECK-NOT: dgemm.desc
// The math role: the same pipeline as the contiguous kernel, the B scale of
// group g, and the store bounded by the clamped masked_m[g].
// CHECK: } math(regs = 232)
// CHECK: dgemm.turn start
// CHECK: scf.for %[[MT:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(
// CHECK: %[[MW:.+]]:3 = scf.while
// CHECK: llvm.getelementptr %arg9[%[[MW]]#0]
// CHECK: %[[MLIM:.+]] = arith.minsi %{{.+}}, %arg11 : i32
// CHECK: dgemm.wait full(%[[M:.+]]) phase
// CHECK-NEXT: dgemm.load_scales stage(%[[M]]) : vector<2xf32>
// CHECK-NEXT: dgemm.load_block_scale group(%[[MW]]#0)
// CHECK-NEXT: dgemm.turn wait
// CHECK-NEXT: %[[ACC:.+]] = dgemm.mma stage(%[[M]]) : vector<64xf32>
// CHECK-NEXT: dgemm.turn pass{{$}}
// CHECK-NEXT: dgemm.mma.wait
// CHECK-NEXT: dgemm.proxy.fence
// CHECK-NEXT: dgemm.arrive empty(%[[M]])
// CHECK-NEXT: dgemm.promote %[[ACC]] into {{.*}} block_scale
// CHECK: dgemm.store_rows %{{.+}} group(%[[MW]]#0) tile(%{{.+}}, %{{.+}}) limit(%[[MLIM]]) : vector<64xf32>
// CHECK: dgemm.turn finish
// CHECK: empty_arrivals = 8 : i32, full_arrivals = 1 : i32

// NORELEASE: error: a stage acquired in this block is never released
// NOACQUIRE: error: reads the stage sfa buffer of a stage before waiting on its full barrier
// NOMMAWAIT: error: releases a stage while an asynchronous read of it may still be in flight
// NOFENCE: error: releases a stage to the producer's async-proxy (TMA) writes while a generic-proxy read of it is not fenced
// NOEMPTYWAIT: error: writes the stage A buffer of a stage before waiting on its empty barrier
// NOARM: error: loads into a stage whose full barrier is never armed

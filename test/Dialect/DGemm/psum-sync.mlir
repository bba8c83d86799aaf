// The m-grouped kernel with the prefix-sum layout (m_grouped_contiguous_psum)
// through the synchronization passes: lower-to-kernel declares effects only,
// place-sync derives the barriers, verify-sync accepts the result and rejects
// it with any one synchronization op removed. What differs from the per-row
// layout (m-grouped-sync.mlir) is pinned: a tile's expert found by a binary
// search over the prefix sums in argument 9, each clamped into [0, M_sum]
// (argument 11), the tile empty unless its first row is below its expert's
// end, and the store bounded by that end, in the one block of M_sum rows.
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync | FileCheck %s
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel | FileCheck %s --check-prefix=UNSYNCED
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync > %t.mlir
// RUN: grep -v "dgemm.arrive empty" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NORELEASE
// RUN: grep -v "dgemm.wait full" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOACQUIRE
// RUN: grep -v "dgemm.mma.wait" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOMMAWAIT
// RUN: grep -v "dgemm.wait empty" %t.mlir | not dgemm-opt --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOEMPTYWAIT

dgemm.gemm @moe_forward_psum m_grouped_contiguous_psum nt m = ? n = 4096 k = 7168
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

// UNSYNCED-NOT: dgemm.wait
// UNSYNCED-NOT: dgemm.arrive

// CHECK: dgemm.kernel @dgemm_mgrouped_psum_fp8_1d2d_bm128_bn128_s6 config <kind = m_grouped_contiguous_psum
// CHECK: dgemm.warp_specialize producer
// CHECK: %[[M0:.+]] = arith.muli %{{.+}}, %c128_i32{{.*}} : i32
// The search: lo = 0, hi = G (argument 13) while hi - lo > 1; start(mid) =
// align(clamp(psum[mid - 1]), 128) <= m0 moves lo, else hi.
// CHECK: %[[LO:.+]]:2 = scf.while (%[[L:.+]] = %{{.+}}, %[[H:.+]] = %arg13)
// CHECK: arith.cmpi ugt
// CHECK: scf.condition
// CHECK: llvm.getelementptr %arg9[
// CHECK: arith.maxsi
// CHECK-NEXT: arith.minsi %{{.+}}, %arg11 : i32
// CHECK: %[[START:.+]] = arith.muli
// CHECK-NEXT: %[[LE:.+]] = arith.cmpi ule, %[[START]], %[[M0]] : i32
// CHECK-NEXT: arith.select %[[LE]]
// CHECK-NEXT: arith.select %[[LE]]
// The expert's end, clamped; the tile has K blocks only if m0 is below it.
// CHECK: llvm.getelementptr %arg9[%[[LO]]#0]
// CHECK-NEXT: %[[END:.+]] = llvm.load
// CHECK: %[[ENDLO:.+]] = arith.maxsi %[[END]], %{{.+}} : i32
// CHECK-NEXT: %[[LIM:.+]] = arith.minsi %[[ENDLO]], %arg11 : i32
// CHECK-NEXT: %[[VALID:.+]] = arith.cmpi ult, %[[M0]], %[[LIM]] : i32
// CHECK: %[[NK:.+]] = arith.select %[[VALID]], %{{.+}}, %{{.+}} : i32
// CHECK: %[[G:.+]] = arith.select %[[VALID]], %[[LO]]#0, %{{.+}} : i32
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[NK]] step
// CHECK: dgemm.wait empty(%[[S:.+]]) phase
// CHECK-NEXT: dgemm.arrive full(%[[S]]) tx 33280
// CHECK-NEXT: dgemm.tma.load a stage(%[[S]]) at(%{{.+}}, %[[M0]]){{$}}
// CHECK: } math(regs = 232)
// CHECK: dgemm.wait full(%[[MS:.+]]) phase
// CHECK-NEXT: dgemm.load_scales stage(%[[MS]]) : vector<2xf32>
// CHECK-NEXT: dgemm.load_block_scale group(%[[MG:.+]]) n_block
// CHECK-NEXT: dgemm.turn wait
// CHECK-NEXT: dgemm.mma stage(%[[MS]])
// CHECK-NEXT: dgemm.turn pass{{$}}
// CHECK-NEXT: dgemm.mma.wait
// The store: rows of the one block of M_sum rows (group 0), below the end.
// CHECK: dgemm.store_rows %{{.+}} group(%c0_i32{{.*}}) tile(%{{.+}}, %{{.+}}) limit(%{{.+}}) : vector<64xf32>

// NORELEASE: error: a stage acquired in this block is never released
// NOACQUIRE: error: reads the stage sfa buffer of a stage before waiting on its full barrier
// NOMMAWAIT: error: releases a stage while an asynchronous read of it may still be in flight
// NOEMPTYWAIT: error: writes the stage A buffer of a stage before waiting on its empty barrier

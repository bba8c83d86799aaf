// RUN: dgemm-opt %s -split-input-file --dgemm-place-sync | FileCheck %s
// RUN: dgemm-opt %s -split-input-file --dgemm-place-sync --dgemm-verify-sync -o /dev/null
// RUN: dgemm-opt %s -split-input-file --dgemm-place-sync > %t.mlir
// RUN: grep -v "dgemm.mma.wait" %t.mlir | not dgemm-opt -split-input-file --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOMMAWAIT
// RUN: grep -v "dgemm.wait full" %t.mlir | not dgemm-opt -split-input-file --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOACQUIRE
// RUN: grep -v "dgemm.arrive empty" %t.mlir | not dgemm-opt -split-input-file --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NORELEASE
// NOACQUIRE-COUNT-2: error: reads the stage A buffer of a stage before waiting on its full barrier
// NORELEASE-COUNT-2: error: a stage acquired in this block is never released

// The chained accumulator of a kernel without per-block promotion (the BF16
// kernels): each K block's WGMMAs accumulate onto the fragment the previous
// block's wrote, an asynchronous read-modify-write of its registers. The
// chained read needs no wait of its own (PTX orders the accumulator accesses
// of consecutive WGMMAs of one shape); the stage's release still waits for
// the block's WGMMAs, and that wait, placed at the end of the body, also
// completes the fragment the iteration yields. The epilogue after the loop
// reads a complete fragment.

// CHECK-LABEL: dgemm.kernel @chained_block_loop
// CHECK: math(regs = 232)
// CHECK: scf.for {{.*}} iter_args({{.*}}, %[[PREV:.+]] = %{{.+}})
// CHECK: %[[S:.+]], %[[P:.+]] = dgemm.stage {{%.+}} of 4
// CHECK-NEXT: dgemm.wait full(%[[S]]) phase(%[[P]])
// CHECK-NEXT: %[[ACC:.+]] = dgemm.mma stage(%[[S]]) chain(%[[PREV]] : vector<64xf32>) : vector<64xf32>
// CHECK-NEXT: arith.addi
// CHECK-NEXT: dgemm.mma.wait{{$}}
// CHECK-NEXT: dgemm.arrive empty(%[[S]])
// CHECK-NEXT: scf.yield {{%.+}}, %[[ACC]]
// CHECK-NOT: dgemm.mma.wait
// CHECK: dgemm.epilogue
// NOMMAWAIT: error: releases a stage while an asynchronous read of it may still be in flight
dgemm.kernel @chained_block_loop config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  dgemm.warp_specialize producer(regs = 40) {
    %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.tma.load a stage(%s) at(%kb, %m) slot(%c0)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } math(regs = 232) {
    %r:2 = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0, %prev = %zero) -> (i32, vector<64xf32>) : i32 {
      %s, %p = dgemm.stage %k of 4
      %acc = dgemm.mma stage(%s) chain(%prev : vector<64xf32>) : vector<64xf32>
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1, %acc : i32, vector<64xf32>
    }
    dgemm.epilogue %r#1 group(%c0) tile(%c0, %c0) : vector<64xf32>
  }
}

// -----

// Two blocks chained within one iteration: the second block's WGMMAs follow
// the first's with no wait between them; one wait completes both (and the
// reads of both stages) before the releases, and the epilogue reads the
// fragment only after the wait that completes the chain's last group.

// CHECK-LABEL: dgemm.kernel @chained_pair
// CHECK: math(regs = 232)
// CHECK: dgemm.wait full(%[[S0:.+]]) phase
// CHECK-NEXT: %[[A0:.+]] = dgemm.mma stage(%[[S0]]) chain(
// CHECK-NEXT: %[[S1:.+]], %{{.+}} = dgemm.stage
// CHECK-NEXT: dgemm.wait full(%[[S1]]) phase
// CHECK-NEXT: %[[A1:.+]] = dgemm.mma stage(%[[S1]]) chain(%[[A0]] : vector<64xf32>)
// CHECK-NEXT: dgemm.mma.wait{{$}}
// CHECK-DAG: dgemm.arrive empty(%[[S0]])
// CHECK-DAG: dgemm.arrive empty(%[[S1]])
// CHECK: dgemm.epilogue %[[A1]] group
// NOMMAWAIT: error: releases a stage while an asynchronous read of it may still be in flight
dgemm.kernel @chained_pair config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  dgemm.warp_specialize producer(regs = 40) {
    %s0, %p0 = dgemm.stage %c0 of 4
    dgemm.tma.load a stage(%s0) at(%c0, %m) slot(%c0)
    %s1, %p1 = dgemm.stage %c1 of 4
    dgemm.tma.load a stage(%s1) at(%c1, %m) slot(%c0)
  } math(regs = 232) {
    %s0, %p0 = dgemm.stage %c0 of 4
    %a0 = dgemm.mma stage(%s0) chain(%zero : vector<64xf32>) : vector<64xf32>
    %s1, %p1 = dgemm.stage %c1 of 4
    %a1 = dgemm.mma stage(%s1) chain(%a0 : vector<64xf32>) : vector<64xf32>
    dgemm.epilogue %a1 group(%c0) tile(%c0, %c0) : vector<64xf32>
  }
}

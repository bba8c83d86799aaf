// RUN: dgemm-opt %s -split-input-file --dgemm-place-sync -verify-diagnostics
// Schedules whose in-flight WGMMA work dgemm-place-sync cannot carry: it
// rejects them with the reason instead of placing a wrong wait.

// An scf.if without an else branch cannot take over a fragment in flight:
// on the path that skips it nobody would wait for the WGMMA or release the
// stage.
dgemm.kernel @if_without_else config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
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
    %s0, %p0 = dgemm.stage %c0 of 4
    %f0 = dgemm.mma stage(%s0) : vector<64xf32>
    %cond = arith.cmpi sgt, %n, %c0 : i32
    // expected-error @+1 {{'scf.if' op is entered with WGMMA work in flight, which only an scf.if with both branches (or an scf.for iter_arg) can take over}}
    scf.if %cond {
      %sum = dgemm.promote %f0 into %zero stage(%s0) : vector<64xf32>
    }
  }
}

// -----

// A loop that carries a fragment in flight must yield any other fragment it
// writes in flight only in a carried position: a value that enters the loop
// complete would be taken as complete by the next iteration, whose count of
// commit groups starts from the carried ones. (A loop that carries nothing
// completes everything at the end of its body: chained-acc-sync.mlir.)
dgemm.kernel @carried_from_nothing config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
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
    %s0, %p0 = dgemm.stage %c0 of 4
    %f0 = dgemm.mma stage(%s0) : vector<64xf32>
    %r:4 = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0, %f = %f0, %s = %s0, %h = %zero) -> (i32, vector<64xf32>, i32, vector<64xf32>) : i32 {
      %k1 = arith.addi %k, %c1 : i32
      %s1, %p1 = dgemm.stage %k1 of 4
      %f1 = dgemm.mma stage(%s1) : vector<64xf32>
      %sum = dgemm.promote %f into %zero stage(%s) : vector<64xf32>
      // expected-error @+1 {{'scf.yield' op iter_arg #3 is yielded with an asynchronous access in flight but enters the loop complete}}
      scf.yield %k1, %f1, %s1, %f1 : i32, vector<64xf32>, i32, vector<64xf32>
    }
  }
}

// -----

// A park that one role writes and no role reads: the writer would wait
// forever for the slot to be emptied.
dgemm.kernel @park_without_reader config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %s, %p = dgemm.stage %c0 of 1
    // expected-error @+1 {{writes the park, but no role reads it: the writer would wait forever}}
    dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
  }
}


// Running the placement twice would double every barrier operation: the
// second run refuses the synchronized kernel.
// RUN: dgemm-opt %dgemm_src/examples/seed_wgrad.mlir --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync -o %t.synced.mlir
// RUN: not dgemm-opt %t.synced.mlir --dgemm-place-sync -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: 'dgemm.warp_specialize' op is already synchronized (it has barrier arrival counts): dgemm-place-sync runs once

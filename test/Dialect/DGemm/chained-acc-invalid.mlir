// RUN: dgemm-opt %s -split-input-file --dgemm-place-sync -verify-diagnostics
// Chained accumulators dgemm-place-sync refuses: a fragment a chained WGMMA
// overwrote in place (an asynchronous read-modify-write of its registers)
// is dead, and no wait could order a later access of it.

// Two WGMMAs chained onto the same fragment (a fork): the second would read
// registers the first is rewriting.
dgemm.kernel @fork config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  dgemm.warp_specialize producer(regs = 40) {
    %s, %p = dgemm.stage %c0 of 4
    dgemm.tma.load a stage(%s) at(%c0, %m) slot(%c0)
  } math(regs = 232) {
    %s, %p = dgemm.stage %c0 of 4
    %a0 = dgemm.mma stage(%s) : vector<64xf32>
    // expected-note @+1 {{overwritten here}}
    %a1 = dgemm.mma stage(%s) chain(%a0 : vector<64xf32>) : vector<64xf32>
    // expected-error @+1 {{accesses an accumulator whose registers a chained WGMMA overwrote in place; no wait can order it}}
    %a2 = dgemm.mma stage(%s) chain(%a0 : vector<64xf32>) : vector<64xf32>
  }
}

// -----

// The epilogue reads the fragment the chain started from, not its end.
dgemm.kernel @read_chain_start config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  dgemm.warp_specialize producer(regs = 40) {
    %s, %p = dgemm.stage %c0 of 4
    dgemm.tma.load a stage(%s) at(%c0, %m) slot(%c0)
  } math(regs = 232) {
    %r:2 = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0, %prev = %zero) -> (i32, vector<64xf32>) : i32 {
      %s, %p = dgemm.stage %k of 4
      // expected-note @+1 {{overwritten here}}
      %acc = dgemm.mma stage(%s) chain(%prev : vector<64xf32>) : vector<64xf32>
      %k1 = arith.addi %k, %c1 : i32
      // expected-error @+1 {{accesses an accumulator whose registers a chained WGMMA overwrote in place; no wait can order it}}
      dgemm.epilogue %prev group(%c0) tile(%c0, %c0) : vector<64xf32>
      scf.yield %k1, %acc : i32, vector<64xf32>
    }
  }
}

// -----

// A loop iteration may not hand on the fragment it overwrote.
dgemm.kernel @yield_chain_start config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  dgemm.warp_specialize producer(regs = 40) {
    %s, %p = dgemm.stage %c0 of 4
    dgemm.tma.load a stage(%s) at(%c0, %m) slot(%c0)
  } math(regs = 232) {
    %r:2 = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0, %prev = %zero) -> (i32, vector<64xf32>) : i32 {
      %s, %p = dgemm.stage %k of 4
      // expected-note @+1 {{overwritten here}}
      %acc = dgemm.mma stage(%s) chain(%prev : vector<64xf32>) : vector<64xf32>
      %k1 = arith.addi %k, %c1 : i32
      // expected-error @+1 {{yields iter_arg #1, an accumulator a chained WGMMA overwrote in place}}
      scf.yield %k1, %prev : i32, vector<64xf32>
    }
  }
}

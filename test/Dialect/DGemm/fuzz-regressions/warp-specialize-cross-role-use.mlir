// RUN: dgemm-opt %s -split-input-file -verify-diagnostics
// Found by test/Fuzz/fuzz-opt.test (seed 11): a synced candidate kernel with
// one constant of the producer deleted and one of the math role duplicated.
// The producer's use of the deleted name was resolved to the math role's
// definition of the same name; the parse then failed in the math role, and
// freeing the regions one by one left the producer's use pointing into the
// freed math region (a heap corruption, then an abort). The error is now
// reported and nothing crashes.

dgemm.kernel @cross_role_use config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %u = arith.addi %v, %m : i32
  } math(regs = 232) {
    // expected-note @+1 {{previously defined here}}
    %v = arith.constant 1 : i32
    // expected-error @+1 {{redefinition of SSA value '%v'}}
    %v = arith.constant 2 : i32
  }
}

// -----

// The same with the failure after the regions (in the attribute dictionary).

dgemm.kernel @cross_role_use_attrs config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  dgemm.warp_specialize producer(regs = 40) {
    %u = arith.addi %v, %m : i32
  } math(regs = 232) {
    %v = arith.constant 1 : i32
  // expected-error @+1 {{expected attribute value}}
  } {full_arrivals = }
}

// RUN: dgemm-opt %s -split-input-file --dgemm-verify-sync -verify-diagnostics
// One case per hazard kind; each error names both operations (the second in
// a note).

// A correct schedule passes (the checker is not vacuous: every case below
// differs from this one by one synchronization op).
dgemm.kernel @ok config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// DeepGEMM 2.6.1's k-grouped producer: on a group switch it rewrites the
// tensor map the moment the previous group's last load is issued, while that
// load (issued with the old contents) may still be reading it. With a group of
// exactly one 128-token block the next rewrite follows the previous group's
// only load directly, which is the reported failure.
dgemm.kernel @deepgemm_2_6_1 config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      // expected-error @+1 {{rewrites the A descriptor slot while TMA loads issued with its previous contents may still read it (no dgemm.desc.drain of this slot first)}}
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        // expected-note @+1 {{this load reads the slot asynchronously ('dgemm.tma.load')}}
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// A rewritten descriptor used before the tensormap release/acquire fences.
dgemm.kernel @unpublished_descriptor config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      // expected-note @+1 {{rewritten here by the generic proxy ('dgemm.desc.update')}}
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        // expected-error @+1 {{reads the A descriptor slot through the tensormap proxy before the rewrite is published (fence.proxy.tensormap release/acquire)}}
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// WGMMA reads a stage before its TMA load has landed.
dgemm.kernel @read_before_full config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        // expected-note @+1 {{the producer writes it here ('dgemm.tma.load')}}
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      // expected-error @+1 {{reads the stage A buffer of a stage before waiting on its full barrier}}
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The producer overwrites a stage the math role may still be reading.
dgemm.kernel @write_before_empty config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.arrive full(%s) tx 16384
        // expected-error @+1 {{writes the stage A buffer of a stage before waiting on its empty barrier}}
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      // expected-note @+1 {{the math role may still be reading it here ('dgemm.mma')}}
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// A stage released to the producer before WGMMA finished reading it.
dgemm.kernel @release_before_mma_wait config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      // expected-note @+1 {{this read completes only at a dgemm.mma.wait that leaves it no longer pending ('dgemm.mma')}}
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      // expected-error @+1 {{releases a stage while an asynchronous read of it may still be in flight}}
      dgemm.arrive empty(%s)
      dgemm.mma.wait
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The scales are read with ld.shared (generic proxy) and the stage is then
// released to the producer, whose next TMA write (async proxy) is not ordered
// after those reads by the mbarrier alone: a proxy fence must come between.
dgemm.kernel @release_without_proxy_fence config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait empty(%s) phase(%p)
      dgemm.arrive full(%s) tx 16896
      dgemm.tma.load a stage(%s) at(%kb, %c0) slot(%c0)
      dgemm.tma.load sfa stage(%s) at(%c0, %kb)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      // expected-note @+1 {{read through the generic proxy here ('dgemm.load_scales')}}
      %sc = dgemm.load_scales stage(%s) : vector<34xf32>
      dgemm.mma.wait
      // expected-error @+1 {{releases a stage to the producer's async-proxy (TMA) writes while a generic-proxy read of it is not fenced (no dgemm.proxy.fence in between)}}
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The FP32 promotion reads WGMMA's accumulator registers before wgmma.wait_group.
dgemm.kernel @acc_before_mma_wait config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      // expected-note @+1 {{written asynchronously here ('dgemm.mma')}}
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      // expected-error @+1 {{reads an accumulator before the WGMMA that writes it completed}}
      %sum = dgemm.promote %acc into %acc stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// Two column slices (two WGMMA groups): wgmma.wait_group 1 completes only the
// first, so the second slice's accumulator cannot be read after it.
dgemm.kernel @acc_after_partial_wait config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      %acc0 = dgemm.mma stage(%s) : vector<32xf32>
      // expected-note @+1 {{written asynchronously here ('dgemm.mma')}}
      %acc1 = dgemm.mma stage(%s) cols(64) : vector<32xf32>
      dgemm.mma.wait pending(1)
      %sum0 = dgemm.promote %acc0 into %acc0 stage(%s) : vector<32xf32>
      // expected-error @+1 {{reads an accumulator before the WGMMA that writes it completed}}
      %sum1 = dgemm.promote %acc1 into %acc1 stage(%s) cols(64) : vector<32xf32>
      dgemm.mma.wait
      dgemm.proxy.fence
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// Handing the tensor-core turn to the other warpgroup reads the accumulator
// (its WGMMAs must be complete), so it must follow the WGMMA wait.
dgemm.kernel @turn_before_mma_wait config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    dgemm.turn start
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      dgemm.turn wait
      // expected-note @+1 {{written asynchronously here ('dgemm.mma')}}
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      // expected-error @+1 {{reads an accumulator before the WGMMA that writes it completed}}
      dgemm.turn pass(%acc : vector<64xf32>)
      dgemm.mma.wait
      %sum = dgemm.promote %acc into %acc stage(%s) : vector<64xf32>
      dgemm.proxy.fence
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    dgemm.turn finish
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The stage is released after a wait that leaves the second slice's WGMMA,
// which still reads it, pending.
dgemm.kernel @release_after_partial_wait config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      %acc0 = dgemm.mma stage(%s) : vector<32xf32>
      // expected-note @+1 {{this read completes only at a dgemm.mma.wait that leaves it no longer pending ('dgemm.mma')}}
      %acc1 = dgemm.mma stage(%s) cols(64) : vector<32xf32>
      dgemm.mma.wait pending(1)
      // expected-error @+1 {{releases a stage while an asynchronous read of it may still be in flight}}
      dgemm.arrive empty(%s)
      dgemm.mma.wait
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// A stage read again after it was handed back to the producer.
dgemm.kernel @read_after_release config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s)
      // expected-error @+1 {{reads the stage A buffer of a stage after releasing it to the producer}}
      %again = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// A stage that is never released deadlocks the producer.
dgemm.kernel @never_released config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    // expected-error @+1 {{a stage acquired in this block is never released: the producer would wait forever}}
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The transaction count does not match the bytes the loads deliver: the
// phase would complete early (or never).
dgemm.kernel @tx_mismatch config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        // expected-error @+1 {{arms the full barrier with 16000 bytes but the stage receives 16384}}
        dgemm.arrive full(%s) tx 16000
        // expected-note @+1 {{last load into the stage ('dgemm.tma.load')}}
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// Loads whose barrier is never armed.
dgemm.kernel @never_armed config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        // expected-error @+1 {{loads into a stage whose full barrier is never armed: the math role would wait forever}}
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// A schedule without synchronization at all (straight from
// dgemm-lower-to-kernel) is rejected before anything else.
dgemm.kernel @no_sync config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  // expected-error @+1 {{barrier arrival counts are not set: the schedule has no placed synchronization}}
  dgemm.warp_specialize producer(regs = 40) {
    %z = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant 0 : i32
  }
}

// -----

// A loop may carry a fragment still being written, and its stage, into the
// next iteration: there the WGMMA issued before it (pending(1) leaves only
// the newer group in flight) completes before the promotion and the release.
dgemm.kernel @carried_ok config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.0> : vector<64xf32>
  dgemm.warp_specialize producer(regs = 40) {
    %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait empty(%s) phase(%p)
      dgemm.arrive full(%s) tx 16384
      dgemm.tma.load a stage(%s) at(%kb, %m) slot(%c0)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } math(regs = 232) {
    %s0, %p0 = dgemm.stage %c0 of 4
    dgemm.wait full(%s0) phase(%p0)
    %f0 = dgemm.mma stage(%s0) : vector<64xf32>
    %r:4 = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0, %sum = %zero, %f = %f0, %s = %s0) -> (i32, vector<64xf32>, vector<64xf32>, i32) : i32 {
      %k1 = arith.addi %k, %c1 : i32
      %s1, %p1 = dgemm.stage %k1 of 4
      dgemm.wait full(%s1) phase(%p1)
      %f1 = dgemm.mma stage(%s1) : vector<64xf32>
      dgemm.mma.wait pending(1)
      %sum1 = dgemm.promote %f into %sum stage(%s) : vector<64xf32>
      dgemm.proxy.fence
      dgemm.arrive empty(%s)
      scf.yield %k1, %sum1, %f1, %s1 : i32, vector<64xf32>, vector<64xf32>, i32
    }
    dgemm.mma.wait
    %sum2 = dgemm.promote %r#2 into %r#1 stage(%r#3) : vector<64xf32>
    dgemm.proxy.fence
    dgemm.arrive empty(%r#3)
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The carried stage is released before the WGMMA that reads it (issued in the
// previous iteration) is known complete.
dgemm.kernel @carried_release_early config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.0> : vector<64xf32>
  dgemm.warp_specialize producer(regs = 40) {
    %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait empty(%s) phase(%p)
      dgemm.arrive full(%s) tx 16384
      dgemm.tma.load a stage(%s) at(%kb, %m) slot(%c0)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } math(regs = 232) {
    %s0, %p0 = dgemm.stage %c0 of 4
    dgemm.wait full(%s0) phase(%p0)
    // expected-note @+1 {{this read completes only at a dgemm.mma.wait that leaves it no longer pending ('dgemm.mma')}}
    %f0 = dgemm.mma stage(%s0) : vector<64xf32>
    %r:4 = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0, %sum = %zero, %f = %f0, %s = %s0) -> (i32, vector<64xf32>, vector<64xf32>, i32) : i32 {
      %k1 = arith.addi %k, %c1 : i32
      %s1, %p1 = dgemm.stage %k1 of 4
      dgemm.wait full(%s1) phase(%p1)
      %f1 = dgemm.mma stage(%s1) : vector<64xf32>
      // expected-error @+1 {{releases a stage while an asynchronous read of it may still be in flight}}
      dgemm.arrive empty(%s)
      dgemm.mma.wait pending(1)
      %sum1 = dgemm.promote %f into %sum stage(%s) : vector<64xf32>
      dgemm.proxy.fence
      scf.yield %k1, %sum1, %f1, %s1 : i32, vector<64xf32>, vector<64xf32>, i32
    }
    dgemm.mma.wait
    %sum2 = dgemm.promote %r#2 into %r#1 stage(%r#3) : vector<64xf32>
    dgemm.proxy.fence
    dgemm.arrive empty(%r#3)
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// pending(2) leaves the carried group in flight too: its fragment is read
// too early. (The note points at the loop-carried fragment's WGMMA.)
dgemm.kernel @carried_wait_too_short config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.0> : vector<64xf32>
  dgemm.warp_specialize producer(regs = 40) {
    %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait empty(%s) phase(%p)
      dgemm.arrive full(%s) tx 16384
      dgemm.tma.load a stage(%s) at(%kb, %m) slot(%c0)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } math(regs = 232) {
    %s0, %p0 = dgemm.stage %c0 of 4
    dgemm.wait full(%s0) phase(%p0)
    // expected-note @+1 {{written asynchronously here ('dgemm.mma')}}
    %f0 = dgemm.mma stage(%s0) : vector<64xf32>
    %r:4 = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0, %sum = %zero, %f = %f0, %s = %s0) -> (i32, vector<64xf32>, vector<64xf32>, i32) : i32 {
      %k1 = arith.addi %k, %c1 : i32
      %s1, %p1 = dgemm.stage %k1 of 4
      dgemm.wait full(%s1) phase(%p1)
      %f1 = dgemm.mma stage(%s1) : vector<64xf32>
      dgemm.mma.wait pending(2)
      // expected-error @+1 {{reads an accumulator before the WGMMA that writes it completed}}
      %sum1 = dgemm.promote %f into %sum stage(%s) : vector<64xf32>
      dgemm.proxy.fence
      dgemm.arrive empty(%s)
      scf.yield %k1, %sum1, %f1, %s1 : i32, vector<64xf32>, vector<64xf32>, i32
    }
    dgemm.mma.wait
    %sum2 = dgemm.promote %r#2 into %r#1 stage(%r#3) : vector<64xf32>
    dgemm.proxy.fence
    dgemm.arrive empty(%r#3)
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The iteration hands on the stage of the block in flight but not its
// fragment: the next iteration would promote a fragment it never waits for.
dgemm.kernel @carried_stage_dropped config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.0> : vector<64xf32>
  dgemm.warp_specialize producer(regs = 40) {
    %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait empty(%s) phase(%p)
      dgemm.arrive full(%s) tx 16384
      dgemm.tma.load a stage(%s) at(%kb, %m) slot(%c0)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } math(regs = 232) {
    %s0, %p0 = dgemm.stage %c0 of 4
    dgemm.wait full(%s0) phase(%p0)
    %f0 = dgemm.mma stage(%s0) : vector<64xf32>
    %r:4 = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0, %sum = %zero, %f = %f0, %s = %s0) -> (i32, vector<64xf32>, vector<64xf32>, i32) : i32 {
      %k1 = arith.addi %k, %c1 : i32
      %s1, %p1 = dgemm.stage %k1 of 4
      dgemm.wait full(%s1) phase(%p1)
      %f1 = dgemm.mma stage(%s1) : vector<64xf32>
      dgemm.mma.wait pending(1)
      %sum1 = dgemm.promote %f into %sum stage(%s) : vector<64xf32>
      dgemm.proxy.fence
      dgemm.arrive empty(%s)
      // expected-error @+1 {{iter_arg #2 enters the loop in flight but is yielded complete or released}}
      scf.yield %k1, %sum1, %zero, %s1 : i32, vector<64xf32>, vector<64xf32>, i32
    }
    dgemm.mma.wait
    %sum2 = dgemm.promote %r#2 into %r#1 stage(%r#3) : vector<64xf32>
    dgemm.proxy.fence
    dgemm.arrive empty(%r#3)
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// After the loop the stage it hands out must still be released.
dgemm.kernel @carried_tail_unreleased config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.0> : vector<64xf32>
  // expected-error @+1 {{a stage acquired in this block is never released: the producer would wait forever}}
  dgemm.warp_specialize producer(regs = 40) {
    %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait empty(%s) phase(%p)
      dgemm.arrive full(%s) tx 16384
      dgemm.tma.load a stage(%s) at(%kb, %m) slot(%c0)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } math(regs = 232) {
    %s0, %p0 = dgemm.stage %c0 of 4
    dgemm.wait full(%s0) phase(%p0)
    %f0 = dgemm.mma stage(%s0) : vector<64xf32>
    %r:4 = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0, %sum = %zero, %f = %f0, %s = %s0) -> (i32, vector<64xf32>, vector<64xf32>, i32) : i32 {
      %k1 = arith.addi %k, %c1 : i32
      %s1, %p1 = dgemm.stage %k1 of 4
      dgemm.wait full(%s1) phase(%p1)
      %f1 = dgemm.mma stage(%s1) : vector<64xf32>
      dgemm.mma.wait pending(1)
      %sum1 = dgemm.promote %f into %sum stage(%s) : vector<64xf32>
      dgemm.proxy.fence
      dgemm.arrive empty(%s)
      scf.yield %k1, %sum1, %f1, %s1 : i32, vector<64xf32>, vector<64xf32>, i32
    }
    dgemm.mma.wait
    %sum2 = dgemm.promote %r#2 into %r#1 stage(%r#3) : vector<64xf32>
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// A release on only one path of an scf.if (here: no else branch) does not
// count: the stage the loop hands out may never be released.
dgemm.kernel @carried_tail_released_on_one_path config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  %zero = arith.constant dense<0.0> : vector<64xf32>
  // expected-error @+1 {{a stage acquired in this block is never released: the producer would wait forever}}
  dgemm.warp_specialize producer(regs = 40) {
    %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait empty(%s) phase(%p)
      dgemm.arrive full(%s) tx 16384
      dgemm.tma.load a stage(%s) at(%kb, %m) slot(%c0)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } math(regs = 232) {
    %s0, %p0 = dgemm.stage %c0 of 4
    dgemm.wait full(%s0) phase(%p0)
    %f0 = dgemm.mma stage(%s0) : vector<64xf32>
    %r:4 = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0, %sum = %zero, %f = %f0, %s = %s0) -> (i32, vector<64xf32>, vector<64xf32>, i32) : i32 {
      %k1 = arith.addi %k, %c1 : i32
      %s1, %p1 = dgemm.stage %k1 of 4
      dgemm.wait full(%s1) phase(%p1)
      %f1 = dgemm.mma stage(%s1) : vector<64xf32>
      dgemm.mma.wait pending(1)
      %sum1 = dgemm.promote %f into %sum stage(%s) : vector<64xf32>
      dgemm.proxy.fence
      dgemm.arrive empty(%s)
      scf.yield %k1, %sum1, %f1, %s1 : i32, vector<64xf32>, vector<64xf32>, i32
    }
    %cond = arith.cmpi sgt, %n, %c0 : i32
    scf.if %cond {
      dgemm.mma.wait
      %sum2 = dgemm.promote %r#2 into %r#1 stage(%r#3) : vector<64xf32>
      dgemm.proxy.fence
      dgemm.arrive empty(%r#3)
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// A wait on a stage's barrier with a parity that is not the stage's own (here
// always 0): from the second pass over the ring on it no longer waits for the
// loads of this pass.
dgemm.kernel @math_wrong_phase config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      // expected-error @+1 {{waits on a stage's full barrier with a phase that is not the stage's}}
      dgemm.wait full(%s) phase(%c0)
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The producer's wait for a stage's release with a fixed parity: it would
// refill a stage the math role may still be reading.
dgemm.kernel @producer_wrong_phase config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        // expected-error @+1 {{waits on a stage's empty barrier with a phase that is not the stage's}}
        dgemm.wait empty(%s) phase(%c1)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The math role names the stage through a second dgemm.stage of the same
// iteration: the same stage and phase, so its wait covers the read and the
// release (accepted).
dgemm.kernel @stage_alias config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s1, %p1 = dgemm.stage %k of 4
      dgemm.wait full(%s1) phase(%p1)
      %s2, %p2 = dgemm.stage %k of 4
      %acc = dgemm.mma stage(%s2) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s2)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The rewrite of slot 0 is published as slot 1: slot 0 is read before its
// tensormap release/acquire.
dgemm.kernel @publish_other_slot config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      // expected-note @+1 {{the pending rewrite ('dgemm.desc.update')}}
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      // expected-error @+1 {{publishes a descriptor slot other than the one rewritten: loads of the rewritten slot would read it before its tensormap release/acquire}}
      dgemm.desc.publish a slot(%c1)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s2, %p2 = dgemm.stage %k of 4
      dgemm.wait full(%s2) phase(%p2)
      %acc = dgemm.mma stage(%s2) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s2)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The drain waits for the loads before iteration 0, not those before the
// update's first iteration: loads of the slot's old contents may be in flight.
dgemm.kernel @drain_other_iteration config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      // expected-note @+1 {{drained here ('dgemm.desc.drain')}}
      dgemm.desc.drain a slot(%c0) before_iteration(%c0)
      // expected-error @+1 {{rewrites the A descriptor slot after a drain for another pipeline iteration (the drain's before_iteration is not the update's)}}
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s2, %p2 = dgemm.stage %k of 4
      dgemm.wait full(%s2) phase(%p2)
      %acc = dgemm.mma stage(%s2) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s2)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The full barrier is armed twice in one iteration: the phase completes
// early, before the bytes land.
dgemm.kernel @full_armed_twice config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        // expected-note @+1 {{first armed here ('dgemm.arrive')}}
        dgemm.arrive full(%s) tx 16384
        // expected-error @+1 {{arms the full barrier of a stage twice in one iteration (full_arrivals counts one arming arrive)}}
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s2, %p2 = dgemm.stage %k of 4
      dgemm.wait full(%s2) phase(%p2)
      %acc = dgemm.mma stage(%s2) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s2)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// full_arrivals = 2: no full phase completes with the producer's one arrive.
dgemm.kernel @full_arrivals_two config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  // expected-error @+1 {{full_arrivals is 2 but a full phase completes with the producer's one arming arrive: it must be 1}}
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s2, %p2 = dgemm.stage %k of 4
      dgemm.wait full(%s2) phase(%p2)
      %acc = dgemm.mma stage(%s2) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s2)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 2 : i32}
}

// -----

// empty_arrivals = 4 with two math warpgroups (8 warps): each empty phase
// completes after half the warps released it.
dgemm.kernel @empty_arrivals_four config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  // expected-error @+1 {{empty_arrivals is 4 but an empty phase completes with one arrive per math warp: it must be 8}}
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        %s, %p = dgemm.stage %k of 4
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s2, %p2 = dgemm.stage %k of 4
      dgemm.wait full(%s2) phase(%p2)
      %acc = dgemm.mma stage(%s2) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s2)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 4 : i32, full_arrivals = 1 : i32}
}

// -----

// The producer's ring has 3 stages, the configuration (and the math role) 4.
dgemm.kernel @ring_of_three config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    %r = scf.for %t = %c0 to %g step %c1 iter_args(%it = %c0) -> (i32) : i32 {
      dgemm.desc.drain a slot(%c0) before_iteration(%it)
      dgemm.desc.update a slot(%c0) group(%t) k_offset(%k0) k_size(%m) before_iteration(%it)
      dgemm.desc.publish a slot(%c0)
      %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %it) -> (i32) : i32 {
        // expected-note @+1 {{the stage is mapped here ('dgemm.stage')}}
        %s, %p = dgemm.stage %k of 3
        // expected-error @+1 {{uses a stage of a ring of 3 stages, but the kernel's configuration has 4 stages}}
        dgemm.wait empty(%s) phase(%p)
        dgemm.arrive full(%s) tx 16384
        dgemm.tma.load a stage(%s) at(%kb, %t) slot(%c0)
        %k1 = arith.addi %k, %c1 : i32
        scf.yield %k1 : i32
      }
      scf.yield %next : i32
    }
  } math(regs = 232) {
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s2, %p2 = dgemm.stage %k of 4
      dgemm.wait full(%s2) phase(%p2)
      %acc = dgemm.mma stage(%s2) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s2)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The chained accumulator (a kernel without per-block promotion): the second
// block's WGMMAs accumulate onto the first's fragment with no wait between
// them, which PTX orders; but the epilogue reads the chain's end while its
// last group is still pending (pending(1) completes only the first block's).
dgemm.kernel @chain_end_in_flight config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  dgemm.warp_specialize producer(regs = 40) {
    %s0, %p0 = dgemm.stage %c0 of 4
    dgemm.wait empty(%s0) phase(%p0)
    dgemm.arrive full(%s0) tx 16384
    dgemm.tma.load a stage(%s0) at(%c0, %m) slot(%c0)
    %s1, %p1 = dgemm.stage %c1 of 4
    dgemm.wait empty(%s1) phase(%p1)
    dgemm.arrive full(%s1) tx 16384
    dgemm.tma.load a stage(%s1) at(%c1, %m) slot(%c0)
  } math(regs = 232) {
    %s0, %p0 = dgemm.stage %c0 of 4
    dgemm.wait full(%s0) phase(%p0)
    %a0 = dgemm.mma stage(%s0) chain(%zero : vector<64xf32>) : vector<64xf32>
    %s1, %p1 = dgemm.stage %c1 of 4
    dgemm.wait full(%s1) phase(%p1)
    // expected-note @+1 {{written asynchronously here ('dgemm.mma')}}
    %a1 = dgemm.mma stage(%s1) chain(%a0 : vector<64xf32>) : vector<64xf32>
    dgemm.mma.wait pending(1)
    dgemm.arrive empty(%s0)
    // expected-error @+1 {{reads an accumulator before the WGMMA that writes it completed}}
    dgemm.epilogue %a1 group(%c0) tile(%c0, %c0) : vector<64xf32>
    dgemm.mma.wait
    dgemm.arrive empty(%s1)
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The chain overwrote the fragment it started from: waiting for the WGMMA
// does not bring it back, so reading it after the wait is still a hazard
// (the registers hold the chain's sum).
dgemm.kernel @chain_start_read config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  dgemm.warp_specialize producer(regs = 40) {
    %s0, %p0 = dgemm.stage %c0 of 4
    dgemm.wait empty(%s0) phase(%p0)
    dgemm.arrive full(%s0) tx 16384
    dgemm.tma.load a stage(%s0) at(%c0, %m) slot(%c0)
  } math(regs = 232) {
    %s0, %p0 = dgemm.stage %c0 of 4
    dgemm.wait full(%s0) phase(%p0)
    %a0 = dgemm.mma stage(%s0) : vector<64xf32>
    // expected-note @+1 {{overwritten here ('dgemm.mma')}}
    %a1 = dgemm.mma stage(%s0) chain(%a0 : vector<64xf32>) : vector<64xf32>
    dgemm.mma.wait
    dgemm.arrive empty(%s0)
    // expected-error @+1 {{accesses an accumulator whose registers a chained WGMMA overwrote in place}}
    dgemm.epilogue %a0 group(%c0) tile(%c0, %c0) : vector<64xf32>
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// A block loop that carries nothing must yield its chained fragment
// complete: the next iteration (and the epilogue after the loop) takes the
// yielded value as complete. Here the body has no WGMMA wait at all (so its
// stage is not released either; the yield is checked first).
dgemm.kernel @chain_yielded_in_flight config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  dgemm.warp_specialize producer(regs = 40) {
    %next = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait empty(%s) phase(%p)
      dgemm.arrive full(%s) tx 16384
      dgemm.tma.load a stage(%s) at(%kb, %m) slot(%c0)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } math(regs = 232) {
    %r:2 = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0, %prev = %zero) -> (i32, vector<64xf32>) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      // expected-note @+1 {{written asynchronously here ('dgemm.mma')}}
      %acc = dgemm.mma stage(%s) chain(%prev : vector<64xf32>) : vector<64xf32>
      %k1 = arith.addi %k, %c1 : i32
      // expected-error @+1 {{yields value #1 while the WGMMA that writes it may still be in flight, out of a region that does not carry it}}
      scf.yield %k1, %acc : i32, vector<64xf32>
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

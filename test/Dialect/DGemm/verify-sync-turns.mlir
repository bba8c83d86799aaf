// RUN: dgemm-opt %s -split-input-file --dgemm-verify-sync -verify-diagnostics
// The math warpgroups' turns on the tensor cores (dgemm.turn): a deleted or
// misplaced turn unbalances the named barriers (bar.sync / bar.arrive) and
// deadlocks the CTA, so the verifier proves the sequence balances.

// Two math warpgroups taking turns, as dgemm-lower-to-kernel builds them: start at
// the role's entry, wait and pass around each block's WGMMAs, finish at its
// exit. Every case below deletes or moves one turn of this one.
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
    dgemm.turn start
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      dgemm.turn wait
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.turn pass(%acc : vector<64xf32>)
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    dgemm.turn finish
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// No start: warpgroup 0's first wait has no arrival to meet.
dgemm.kernel @no_start config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
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
      // expected-error @+1 {{waits for a turn before the turns are started (no dgemm.turn start at the math role's entry): warpgroup 0 waits forever}}
      dgemm.turn wait
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.turn pass(%acc : vector<64xf32>)
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    dgemm.turn finish
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// No finish: the last warpgroup's last pass is never taken.
dgemm.kernel @no_finish config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  // expected-error @+1 {{the math role never finishes its turns (no dgemm.turn finish at its exit): warpgroup 0's last named-barrier phase never completes and the CTA deadlocks}}
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
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.turn pass(%acc : vector<64xf32>)
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// No wait: the WGMMAs are issued without the turn.
dgemm.kernel @no_wait config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
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
      // expected-error @+1 {{issues WGMMAs outside the warpgroup's turn (no dgemm.turn wait before them, or a pass already)}}
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.turn pass(%acc : vector<64xf32>)
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    dgemm.turn finish
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// No pass: each iteration keeps the turn it took, and the next wait blocks
// forever.
dgemm.kernel @no_pass config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
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
    // expected-error @+1 {{has an iteration that keeps a turn it took (dgemm.turn wait and pass do not pair up in it): the warpgroups' named barriers fall out of step}}
    %r = scf.for %kb = %c0 to %n step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 4
      dgemm.wait full(%s) phase(%p)
      dgemm.turn wait
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    dgemm.turn finish
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// Two passes for one wait: the next warpgroup's barrier gets an arrival too
// many.
dgemm.kernel @pass_twice config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
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
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.turn pass(%acc : vector<64xf32>)
      // expected-error @+1 {{passes a turn it does not hold (no dgemm.turn wait before it): the named barriers' arrivals and syncs no longer pair up}}
      dgemm.turn pass
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    dgemm.turn finish
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// Two waits before one pass.
dgemm.kernel @wait_twice config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
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
      // expected-error @+1 {{waits for a turn while holding one (no dgemm.turn pass since the last wait): the next warpgroup never gets the turn and the CTA deadlocks}}
      dgemm.turn wait
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.turn pass(%acc : vector<64xf32>)
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    dgemm.turn finish
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// Start inside the block loop: one extra arrival per block.
dgemm.kernel @start_in_loop config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
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
      // expected-error @+1 {{starts the turns inside a loop or branch: start runs once, at the math role's entry}}
      dgemm.turn start
      dgemm.turn wait
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.turn pass(%acc : vector<64xf32>)
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    dgemm.turn finish
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// Finish while holding the turn (the last pass moved after it).
dgemm.kernel @finish_held config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
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
    %s, %p = dgemm.stage %c0 of 4
    dgemm.wait full(%s) phase(%p)
    dgemm.turn wait
    %acc = dgemm.mma stage(%s) : vector<64xf32>
    dgemm.mma.wait
    dgemm.arrive empty(%s)
    // expected-error @+1 {{finishes the turns while holding one (no dgemm.turn pass after the last wait)}}
    dgemm.turn finish
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// A turn in the producer role.
dgemm.kernel @turn_in_producer config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k0 = arith.constant 0 : i64
  dgemm.warp_specialize producer(regs = 40) {
    // expected-error @+1 {{takes a turn outside the math role: only the math warpgroups take turns on the tensor cores}}
    dgemm.turn wait
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
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.turn pass(%acc : vector<64xf32>)
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    dgemm.turn finish
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// -----

// The wait on one path only (an scf.if without else): the paths leave the
// turn in different states.
dgemm.kernel @wait_in_branch config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 1, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132> {
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
      %first = arith.cmpi eq, %kb, %c0 : i32
      // expected-error @+1 {{has a branch that keeps a turn it took (dgemm.turn wait and pass do not pair up in it): the warpgroups' named barriers fall out of step}}
      scf.if %first {
        dgemm.turn wait
      }
      %acc = dgemm.mma stage(%s) : vector<64xf32>
      dgemm.mma.wait
      dgemm.turn pass(%acc : vector<64xf32>)
      dgemm.arrive empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
    dgemm.turn finish
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
}

// RUN: dgemm-opt %s -split-input-file --dgemm-verify-sync -verify-diagnostics
// The park (config epilogue = parked): the math role writes a tile into it, the
// workers read it; its two barriers are the only order between them.

// The park handed from the math role to the workers: a correct schedule
// passes (each case below differs from it in one place).
dgemm.kernel @ok config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_empty(%s) phase(%p)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// The math role's slot may also count the tile loop's iterations from its
// induction variable: (t - lower bound) / step.
dgemm.kernel @ok_from_iv config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %cta2 = nvvm.read.ptx.sreg.ctaid.x : i32
      %grid2 = nvvm.read.ptx.sreg.nctaid.x : i32
      %off = arith.subi %t, %cta2 : i32
      %count = arith.divui %off, %grid2 : i32
      %s, %p = dgemm.stage %count of 1
      dgemm.wait park_empty(%s) phase(%p)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// The math role overwrites the park while the workers may still read it.
dgemm.kernel @no_empty_wait config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      // expected-error @+1 {{writes a park slot before waiting on its park_empty barrier}}
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// The workers read the park before the math role filled it.
dgemm.kernel @no_full_wait config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_empty(%s) phase(%p)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      // expected-error @+1 {{reads a park slot before waiting on its park_full barrier}}
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// The math role hands the park over, then writes it again.
dgemm.kernel @after_release config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_empty(%s) phase(%p)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      // expected-note @+1 {{released here ('dgemm.arrive')}}
      dgemm.arrive park_full(%s)
      // expected-error @+1 {{writes a park slot after releasing it}}
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// Two hand-overs in one tile: the second wait finds its phase complete and
// overwrites the park while the workers read it.
dgemm.kernel @twice config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      // expected-note @+1 {{first acquired here ('dgemm.wait')}}
      dgemm.wait park_empty(%s) phase(%p)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      // expected-error @+1 {{passes through the park twice in one iteration of the tile loop}}
      dgemm.wait park_empty(%s) phase(%p)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// A hand-over with nothing handed over.
dgemm.kernel @empty_hand_over config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      // expected-note @+1 {{acquired here ('dgemm.wait')}}
      dgemm.wait park_empty(%s) phase(%p)
      // expected-error @+1 {{hands the park over without accessing it after the wait}}
      dgemm.arrive park_full(%s)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// The writer waits on the reader's barrier.
dgemm.kernel @wrong_barrier config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      // expected-error @+1 {{waits on park_full in the role that writes the park, which waits on park_empty}}
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// The workers release a slot they never acquired.
dgemm.kernel @arrive_unheld config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_empty(%s) phase(%p)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      // expected-error @+1 {{arrives on a park barrier without holding the slot}}
      dgemm.arrive park_empty(%s)
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// A wait with another phase than the slot's (here always phase 0: from the
// second tile on it would not wait).
dgemm.kernel @wrong_phase config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      // expected-error @+1 {{waits on a park barrier with a phase that is not its slot's}}
      dgemm.wait park_empty(%s) phase(%c0)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// A slot that does not count the tiles (always slot 0, phase 0).
dgemm.kernel @constant_slot config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %c0 of 1
      // expected-error @+1 {{uses a park slot whose dgemm.stage does not count the iterations of the tile loop}}
      dgemm.wait park_empty(%s) phase(%p)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// The math role never hands the tile over: the workers would wait forever.
dgemm.kernel @never_released config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      // expected-error @+1 {{acquires a park slot that its iteration never releases: the other role would wait forever}}
      dgemm.wait park_empty(%s) phase(%p)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// The empty barrier expects more arrivals than there are workers.
dgemm.kernel @wrong_empty_count config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{park_empty_arrivals is 96 but the role that arrives on it has 64 threads}}
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_empty(%s) phase(%p)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 96 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// The full barrier expects fewer arrivals than there are math threads: it
// would complete before every thread's sums were written.
dgemm.kernel @wrong_full_count config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{park_full_arrivals is 128 but the role that arrives on it has 256 threads}}
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_empty(%s) phase(%p)
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 128 : i32, worker_threads = 64 : i32}
}

// -----

// The workers walk other tiles than the math role (every tile, not every
// grid-th): they would wait for tiles that are never parked.
dgemm.kernel @other_loop config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_empty(%s) phase(%p)
      // expected-note @+1 {{written here ('dgemm.park.store')}}
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %c1 iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      // expected-error @+1 {{accesses the park in a loop whose bounds differ from those of the loop that writes it}}
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// Bounds computed alike from a value that differs between threads (the
// thread index) are not the same bounds.
dgemm.kernel @thread_dependent_bound config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %tm = nvvm.read.ptx.sreg.tid.x : i32
    %tbm = arith.addi %total, %tm : i32
    %r = scf.for %t = %cta to %tbm step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_empty(%s) phase(%p)
      // expected-note @+1 {{written here ('dgemm.park.store')}}
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %tw = nvvm.read.ptx.sreg.tid.x : i32
    %tb = arith.addi %total, %tw : i32
    %r = scf.for %t = %cta to %tb step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      // expected-error @+1 {{accesses the park in a loop whose bounds differ from those of the loop that writes it}}
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// Some tiles skip the park: the two roles could pass through it a different
// number of times.
dgemm.kernel @conditional config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      %odd = arith.cmpi ne, %p, %c0 : i32
      scf.if %odd {
        // expected-error @+1 {{uses the park outside the body of its role's top-level loop}}
        dgemm.wait park_empty(%s) phase(%p)
        dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
        dgemm.arrive park_full(%s)
      }
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// Nobody reads the park.
dgemm.kernel @no_reader config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_empty(%s) phase(%p)
      // expected-error @+1 {{writes the park, but no role reads it}}
      dgemm.park.store %z slot(%s) group(%c0) tile(%c0, %c0) : vector<64xf32>
      dgemm.arrive park_full(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

// -----

// Nobody writes the park.
dgemm.kernel @no_writer config <block_m = 128, block_n = 128, block_k = 128, stages = 4, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
^bb0(%t0: !llvm.ptr, %t1: !llvm.ptr, %t2: !llvm.ptr, %t3: !llvm.ptr, %t4: !llvm.ptr, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %d: !llvm.ptr<1>, %c: !llvm.ptr<1>, %ks: !llvm.ptr<1>, %ws: !llvm.ptr<1>, %m: i32, %n: i32, %g: i32, %band: i32, %sfb: !llvm.ptr<1>, %kk: i32):
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  dgemm.warp_specialize producer(regs = 40) {
    %x = arith.constant 0 : i32
  } math(regs = 232) {
    %z = arith.constant dense<0.0> : vector<64xf32>
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1

      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } workers {
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %grid = nvvm.read.ptx.sreg.nctaid.x : i32
    %total = arith.muli %m, %g : i32
    %r = scf.for %t = %cta to %total step %grid iter_args(%k = %c0) -> (i32) : i32 {
      %s, %p = dgemm.stage %k of 1
      dgemm.wait park_full(%s) phase(%p)
      // expected-error @+1 {{reads the park, but no role writes it}}
      dgemm.park.reduce slot(%s)
      dgemm.arrive park_empty(%s)
      %k1 = arith.addi %k, %c1 : i32
      scf.yield %k1 : i32
    }
  } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
}

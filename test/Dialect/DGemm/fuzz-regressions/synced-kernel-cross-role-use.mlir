// RUN: dgemm-opt %s --dgemm-verify-sync -verify-diagnostics
// The input test/Fuzz/fuzz-opt.test found (seed 11, as it crashed: a heap
// corruption, then an abort): the synchronized candidate kernel
// bm128_bn64_s7_r2_ip_park with the producer's %c128_i32 deleted and a math
// constant duplicated. See warp-specialize-cross-role-use.mlir.
module {
  dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn64_s7_r2_ip_park config <block_m = 128, block_n = 64, block_k = 128, stages = 7, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, epilogue = parked> {
  ^bb0(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: !llvm.ptr, %arg4: !llvm.ptr, %arg5: !llvm.ptr<1>, %arg6: !llvm.ptr<1>, %arg7: !llvm.ptr<1>, %arg8: !llvm.ptr<1>, %arg9: !llvm.ptr<1>, %arg10: !llvm.ptr<1>, %arg11: i32, %arg12: i32, %arg13: i32, %arg14: i32):
    dgemm.warp_specialize producer(regs = 40) {
      %0 = nvvm.read.ptx.sreg.ctaid.x : i32
      %1 = nvvm.read.ptx.sreg.nctaid.x : i32
      %c127_i32 = arith.constant 127 : i32
      %2 = arith.addi %arg11, %c127_i32 : i32
      %3 = arith.divui %2, %c128_i32 : i32
      %c64_i32 = arith.constant 64 : i32
      %c63_i32 = arith.constant 63 : i32
      %4 = arith.addi %arg12, %c63_i32 : i32
      %5 = arith.divui %4, %c64_i32 : i32
      %6 = arith.muli %3, %5 : i32
      %7 = arith.muli %6, %arg13 : i32
      %c0_i32 = arith.constant 0 : i32
      %c0_i32_0 = arith.constant 0 : i32
      %c0_i64 = arith.constant 0 : i64
      %c-1_i32 = arith.constant -1 : i32
      %c1_i32 = arith.constant 1 : i32
      %8:5 = scf.for %arg15 = %0 to %7 step %1 iter_args(%arg16 = %c0_i32, %arg17 = %c0_i32_0, %arg18 = %c0_i64, %arg19 = %c-1_i32, %arg20 = %c1_i32) -> (i32, i32, i64, i32, i32)  : i32 {
        %9 = arith.divui %arg15, %6 : i32
        %10 = arith.remui %arg15, %6 : i32
        %11 = llvm.inline_asm has_side_effects "mov.b32 $0, $1;", "=r,r" %arg14 : (i32) -> i32
        %c1_i32_1 = arith.constant 1 : i32
        %12 = arith.maxui %11, %c1_i32_1 : i32
        %13 = arith.minui %12, %3 : i32
        %14 = arith.muli %13, %5 : i32
        %15 = arith.divui %10, %14 : i32
        %16 = arith.muli %15, %13 : i32
        %17 = arith.remui %10, %14 : i32
        %18 = arith.subi %3, %16 : i32
        %19 = arith.minui %13, %18 : i32
        %20 = arith.remui %17, %19 : i32
        %21 = arith.addi %16, %20 : i32
        %22 = arith.divui %17, %19 : i32
        %c1_i32_2 = arith.constant 1 : i32
        %23 = scf.for %arg21 = %arg17 to %9 step %c1_i32_2 iter_args(%arg22 = %arg18) -> (i64)  : i32 {
          %35 = llvm.getelementptr %arg9[%arg21] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
          %36 = llvm.load %35 : !llvm.ptr<1> -> i32
          %37 = arith.extui %36 : i32 to i64
          %38 = arith.addi %arg22, %37 : i64
          scf.yield %38 : i64
        }
        %24 = llvm.getelementptr %arg9[%9] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
        %25 = llvm.load %24 : !llvm.ptr<1> -> i32
        %c128_i32_3 = arith.constant 128 : i32
        %26 = arith.divui %25, %c128_i32_3 : i32
        %c0_i32_4 = arith.constant 0 : i32
        %27 = arith.cmpi sgt, %25, %c0_i32_4 : i32
        %28 = arith.cmpi ne, %9, %arg19 : i32
        %29 = arith.andi %28, %27 : i1
        %30 = scf.if %29 -> (i32) {
          %c2_i32 = arith.constant 2 : i32
          %c1_i32_7 = arith.constant 1 : i32
          %35 = arith.addi %arg20, %c1_i32_7 : i32
          %36 = arith.remui %35, %c2_i32 : i32
          dgemm.desc.drain a slot(%36) before_iteration(%arg16)
          dgemm.desc.update a slot(%36) group(%9) k_offset(%23) k_size(%25) before_iteration(%arg16)
          dgemm.desc.publish a slot(%36)
          dgemm.desc.drain b slot(%36) before_iteration(%arg16)
          dgemm.desc.update b slot(%36) group(%9) k_offset(%23) k_size(%25) before_iteration(%arg16)
          dgemm.desc.publish b slot(%36)
          scf.yield %36 : i32
        } else {
          scf.yield %arg20 : i32
        }
        %31 = arith.select %29, %9, %arg19 : i32
        %c128_i64 = arith.constant 128 : i64
        %32 = arith.divui %23, %c128_i64 : i64
        %33 = arith.trunci %32 : i64 to i32
        %c1_i32_5 = arith.constant 1 : i32
        %c0_i32_6 = arith.constant 0 : i32
        %34 = scf.for %arg21 = %c0_i32_6 to %26 step %c1_i32_5 iter_args(%arg22 = %arg16) -> (i32)  : i32 {
          %stage, %phase = dgemm.stage %arg22 of 7
          %c128_i32_7 = arith.constant 128 : i32
          %35 = arith.muli %arg21, %c128_i32_7 : i32
          %c128_i32_8 = arith.constant 128 : i32
          %36 = arith.muli %21, %c128_i32_8 : i32
          %c64_i32_9 = arith.constant 64 : i32
          %37 = arith.muli %22, %c64_i32_9 : i32
          %38 = arith.addi %33, %arg21 : i32
          dgemm.wait empty(%stage) phase(%phase)
          dgemm.arrive full(%stage) tx 25344
          dgemm.tma.load a stage(%stage) at(%35, %36) slot(%30)
          dgemm.tma.load b stage(%stage) at(%35, %37) slot(%30)
          dgemm.tma.load sfa stage(%stage) at(%36, %38)
          dgemm.tma.load sfb stage(%stage) at(%37, %38)
          %c1_i32_10 = arith.constant 1 : i32
          %39 = arith.addi %arg22, %c1_i32_10 : i32
          scf.yield %39 : i32
        }
        scf.yield %34, %9, %23, %31, %30 : i32, i32, i64, i32, i32
      }
    } math(regs = 232) {
      %0 = nvvm.read.ptx.sreg.ctaid.x : i32
      %1 = nvvm.read.ptx.sreg.nctaid.x : i32
      %c128_i32 = arith.constant 128 : i32
      %c127_i32 = arith.constant 127 : i32
      %2 = arith.addi %arg11, %c127_i32 : i32
      %3 = arith.divui %2, %c128_i32 : i32
      %c64_i32 = arith.constant 64 : i32
      %c63_i32 = arith.constant 63 : i32
      %4 = arith.addi %arg12, %c63_i32 : i32
      %5 = arith.divui %4, %c64_i32 : i32
      %6 = arith.muli %3, %5 : i32
      %7 = arith.muli %6, %arg13 : i32
      dgemm.turn start
      %c0_i32 = arith.constant 0 : i32
      %8 = scf.for %arg15 = %0 to %7 step %1 iter_args(%arg16 = %c0_i32) -> (i32)  : i32 {
        %9 = arith.divui %arg15, %6 : i32
        %10 = arith.remui %arg15, %6 : i32
        %11 = llvm.inline_asm has_side_effects "mov.b32 $0, $1;", "=r,r" %arg14 : (i32) -> i32
        %c1_i32 = arith.constant 1 : i32
        %12 = arith.maxui %11, %c1_i32 : i32
        %13 = arith.minui %12, %3 : i32
        %14 = arith.muli %13, %5 : i32
        %15 = arith.divui %10, %14 : i32
        %16 = arith.muli %15, %13 : i32
        %17 = arith.remui %10, %14 : i32
        %18 = arith.subi %3, %16 : i32
        %19 = arith.minui %13, %18 : i32
        %20 = arith.remui %17, %19 : i32
        %21 = arith.addi %16, %20 : i32
        %22 = arith.divui %17, %19 : i32
        %c128_i32_0 = arith.constant 128 : i32
        %23 = llvm.getelementptr %arg9[%9] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
        %24 = llvm.load %23 : !llvm.ptr<1> -> i32
        %25 = arith.divui %24, %c128_i32_0 : i32
        %cst = arith.constant dense<0.000000e+00> : vector<32xf32>
        %c2_i32 = arith.constant 2 : i32
        %26 = arith.divui %25, %c2_i32 : i32
        %c1_i32_1 = arith.constant 1 : i32
        %c0_i32_2 = arith.constant 0 : i32
        %27:2 = scf.for %arg17 = %c0_i32_2 to %26 step %c1_i32_1 iter_args(%arg18 = %arg16, %arg19 = %cst) -> (i32, vector<32xf32>)  : i32 {
          %stage_5, %phase_6 = dgemm.stage %arg18 of 7
          %c1_i32_7 = arith.constant 1 : i32
          %34 = arith.addi %arg18, %c1_i32_7 : i32
          %stage_8, %phase_9 = dgemm.stage %34 of 7
          dgemm.turn wait
          dgemm.wait full(%stage_5) phase(%phase_6)
          %35 = dgemm.mma stage(%stage_5) : vector<32xf32>
          dgemm.wait full(%stage_8) phase(%phase_9)
          %36 = dgemm.mma stage(%stage_8) : vector<32xf32>
          dgemm.mma.wait pending(1)
          dgemm.turn pass(%35 : vector<32xf32>)
          %c2_i32_10 = arith.constant 2 : i32
          %37 = arith.addi %arg18, %c2_i32_10 : i32
          %38 = dgemm.promote %35 into %arg19 stage(%stage_5) : vector<32xf32>
          dgemm.proxy.fence
          dgemm.arrive empty(%stage_5)
          dgemm.mma.wait
          %39 = dgemm.promote %36 into %38 stage(%stage_8) : vector<32xf32>
          dgemm.proxy.fence
          dgemm.arrive empty(%stage_8)
          scf.yield %37, %39 : i32, vector<32xf32>
        } {dgemm.first_block = [2, 0]}
        %c1_i32_3 = arith.constant 1 : i32
        %c2_i32_4 = arith.constant 2 : i32
        %28 = arith.muli %26, %c2_i32_4 : i32
        %29:2 = scf.for %arg17 = %28 to %25 step %c1_i32_3 iter_args(%arg18 = %27#0, %arg19 = %27#1) -> (i32, vector<32xf32>)  : i32 {
          %stage_5, %phase_6 = dgemm.stage %arg18 of 7
          dgemm.wait full(%stage_5) phase(%phase_6)
          %34 = dgemm.load_scales stage(%stage_5) : vector<18xf32>
          dgemm.turn wait
          %35 = dgemm.mma stage(%stage_5) : vector<32xf32>
          dgemm.mma.wait
          dgemm.proxy.fence
          dgemm.arrive empty(%stage_5)
          dgemm.turn pass(%35 : vector<32xf32>)
          %c1_i32_7 = arith.constant 1 : i32
          %36 = arith.addi %arg18, %c1_i32_7 : i32
          %37 = dgemm.promote %35 into %arg19 scales(%34 : vector<18xf32>) : vector<32xf32>
          scf.yield %36, %37 : i32, vector<32xf32>
        } {dgemm.first_block = [1, 0]}
        %30 = nvvm.read.ptx.sreg.nctaid.x : i32
        %31 = nvvm.read.ptx.sreg.ctaid.x : i32
        %32 = arith.subi %arg15, %31 : i32
        %33 = arith.divui %32, %30 : i32
        %stage, %phase = dgemm.stage %33 of 1
        dgemm.wait park_empty(%stage) phase(%phase)
        dgemm.park.store %29#1 slot(%stage) group(%9) tile(%21, %22) : vector<32xf32>
        dgemm.arrive park_full(%stage)
        scf.yield %29#0 : i32
      }
      dgemm.turn finish
    } workers {
      %c64_i32 = arith.constant 64 : i32
      %c63_i32 = arith.constant 63 : i32
      %0 = arith.addi %arg12, %c63_i32 : i32
      %1 = arith.divui %0, %c64_i32 : i32
      %c128_i32 = arith.constant 128 : i32
      %c127_i32 = arith.constant 127 : i32
      %2 = arith.addi %arg11, %c127_i32 : i32
      %3 = arith.divui %2, %c128_i32 : i32
      %4 = arith.muli %3, %1 : i32
      %5 = arith.muli %4, %arg13 : i32
      %6 = nvvm.read.ptx.sreg.ctaid.x : i32
      %7 = nvvm.read.ptx.sreg.nctaid.x : i32
      %c0_i32 = arith.constant 0 : i32
      %8 = scf.for %arg15 = %6 to %5 step %7 iter_args(%arg16 = %c0_i32) -> (i32)  : i32 {
        %stage, %phase = dgemm.stage %arg16 of 1
        dgemm.wait park_full(%stage) phase(%phase)
        // expected-note @+1 {{previously defined here}}
        %c1_i32 = arith.constant 1 : i32
        dgemm.park.reduce slot(%stage)
        dgemm.arrive park_empty(%stage)
        // expected-error @+1 {{redefinition of SSA value '%c1_i32'}}
        %c1_i32 = arith.constant 1 : i32
        %9 = arith.addi %arg16, %c1_i32 : i32
        scf.yield %9 : i32
      }
    } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}
  }
}


// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel=scale-register-budget=0 | FileCheck %s --check-prefix=LATE --implicit-check-not=dgemm.load_scales
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel=blocks-per-turn=1 --canonicalize | FileCheck %s --implicit-check-not=dgemm.wait --implicit-check-not=dgemm.arrive --implicit-check-not=dgemm.mma.wait --implicit-check-not=dgemm.desc.drain --implicit-check-not=dgemm.desc.publish --implicit-check-not=dgemm.gemm --implicit-check-not=dgemm.prefetch_c
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=2 --dgemm-lower-to-kernel | FileCheck %s --check-prefix=MC
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 "--dgemm-lower-to-kernel=mma-slices=2 alternate-warpgroups=false blocks-per-turn=1" --canonicalize | FileCheck %s --check-prefix=SLICES --implicit-check-not=dgemm.turn
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 "--dgemm-lower-to-kernel=scales-before-mma=false alternate-warpgroups=false blocks-per-turn=1" --canonicalize | FileCheck %s --check-prefix=OLD --implicit-check-not=dgemm.turn
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 "--dgemm-lower-to-kernel=prefetch-next-c" --canonicalize | FileCheck %s --check-prefix=BAND

// The raster band is the kernel's last argument (%arg14, in m-blocks): per
// tile it is read through an opaque mov (so nothing derived from it is
// hoisted out of the tile loop) and clamped to [1, mBlocks]; unit r of a
// group lies in band r / (band * nBlocks), the band's height is
// min(band, mBlocks - start) and the m-block varies fastest inside it.
// prefetch-next-c: at the start of each tile the math role prefetches the c
// tile of its next tile (t + gridDim.x), decomposed the same way, if there
// is one.
// BAND: %[[MB:.+]] = arith.divui %{{.+}}, %c128_i32 : i32
// BAND: %[[PER:.+]] = arith.muli %[[MB]], %[[NB:.+]] : i32
// BAND: %[[TOT:.+]] = arith.muli %[[PER]], %arg13 : i32
// BAND: scf.for %[[T:.+]] = %{{.+}} to %[[TOT]]
// BAND-NEXT: %[[G:.+]] = arith.divui %[[T]], %[[PER]] : i32
// BAND-NEXT: %[[R:.+]] = arith.remui %[[T]], %[[PER]] : i32
// BAND-NEXT: %[[ARG:.+]] = llvm.inline_asm has_side_effects "mov.b32 $0, $1;", "=r,r" %arg14
// BAND-NEXT: %[[LO:.+]] = arith.maxui %[[ARG]], %c1_i32 : i32
// BAND-NEXT: %[[BAND:.+]] = arith.minui %[[LO]], %[[MB]] : i32
// BAND-NEXT: %[[BU:.+]] = arith.muli %[[BAND]], %[[NB]] : i32
// BAND-NEXT: %[[BI:.+]] = arith.divui %[[R]], %[[BU]] : i32
// BAND-NEXT: %[[START:.+]] = arith.muli %[[BI]], %[[BAND]] : i32
// BAND-NEXT: %[[IN:.+]] = arith.remui %[[R]], %[[BU]] : i32
// BAND-NEXT: %[[LEFT:.+]] = arith.subi %[[MB]], %[[START]] : i32
// BAND-NEXT: %[[ROWS:.+]] = arith.minui %[[BAND]], %[[LEFT]] : i32
// BAND-NEXT: %[[MOFF:.+]] = arith.remui %[[IN]], %[[ROWS]] : i32
// BAND-NEXT: arith.addi %[[START]], %[[MOFF]] : i32
// BAND-NEXT: arith.divui %[[IN]], %[[ROWS]] : i32
// BAND: math(regs = 232)
// BAND: scf.for %[[MT:.+]] = %{{.+}} to %[[TOT]] step %[[STEP:[^ ]+]]
// BAND: %[[NEXT:.+]] = arith.addi %[[MT]], %[[STEP]] : i32
// BAND: arith.divui %[[NEXT]], %[[PER]] : i32
// BAND: arith.minui
// BAND: %[[HAS:.+]] = arith.cmpi slt, %[[NEXT]], %[[TOT]] : i32
// BAND-NEXT: dgemm.prefetch_c group(%{{.+}}) tile(%{{.+}}, %{{.+}}) if(%[[HAS]])

// With cluster_m = 2 each CTA of a pair loads its own A tile and half of the
// shared B tile, which it multicasts to both CTAs.
// MC-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_c2x1
// MC: dgemm.tma.load a stage({{%.+}}) at({{%.+}}, {{%.+}}) slot({{%.+}}){{$}}
// MC: dgemm.tma.load b stage({{%.+}}) at({{%.+}}, {{%.+}}) slot({{%.+}}) multicast
// MC-NEXT: dgemm.tma.load sfa
// MC-NEXT: dgemm.tma.load sfb

// The kernel builder emits only operations that declare their effects: no
// barrier, wait or fence appears before dgemm-place-sync. The description is
// replaced by its kernel; both descriptions share one configuration and so
// one kernel (M, N, G and K are launch arguments).

// CHECK-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2
// CHECK-SAME: config <block_m = 128, block_n = 128
// CHECK-NEXT: ^bb0(%[[TA:.+]]: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %[[KS:.+]]: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %[[M:.+]]: i32, %[[N:.+]]: i32, %[[G:.+]]: i32):
// CHECK: dgemm.warp_specialize producer(regs = 40)

// Producer: persistent tile loop from blockIdx.x in steps of gridDim.x.
// CHECK: %[[BID:.+]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[GRID:.+]] = nvvm.read.ptx.sreg.nctaid.x
// CHECK: scf.for %{{.+}} = %[[BID]] to %{{.+}} step %[[GRID]]
// On a group switch, rewrite both descriptor slots.
// CHECK: scf.if
// CHECK: dgemm.desc.update a slot
// CHECK-NEXT: dgemm.desc.update b slot
// The K loop: four TMA loads per 128-deep block.
// CHECK: dgemm.stage %{{.+}} of 6
// CHECK: dgemm.tma.load a stage
// CHECK-NEXT: dgemm.tma.load b stage
// CHECK-NEXT: dgemm.tma.load sfa stage
// CHECK-NEXT: dgemm.tma.load sfb stage

// Math: WGMMA block products promoted into an FP32 sum, then the epilogue.
// The scales the promotion holds in registers are read before the WGMMAs are
// issued. The two math warpgroups take turns issuing WGMMA: each waits for
// its turn, issues, and hands the turn over once its WGMMAs are complete
// (dgemm.turn pass reads the accumulator), so one's WGMMAs run while the
// other promotes.
// CHECK: math(regs = 232)
// CHECK: dgemm.turn start
// CHECK-NEXT: scf.for
// CHECK: %[[S:.+]], %{{.+}} = dgemm.stage %{{.+}} of 6
// CHECK-NEXT: %[[SC:.+]] = dgemm.load_scales stage(%[[S]]) : vector<34xf32>
// CHECK-NEXT: dgemm.turn wait
// CHECK-NEXT: %[[ACC:.+]] = dgemm.mma stage(%[[S]]) : vector<64xf32>
// CHECK-NEXT: dgemm.turn pass(%[[ACC]] : vector<64xf32>)
// CHECK: dgemm.promote %[[ACC]] into %{{.+}} scales(%[[SC]] : vector<34xf32>) : vector<64xf32>
// CHECK: dgemm.epilogue %{{.+}} group({{.+}}) tile({{.+}}) : vector<64xf32>{{$}}
// CHECK: dgemm.turn finish

// With no register budget for held scales, the promotion reads them from the
// stage itself.
// LATE: %[[LACC:.+]] = dgemm.mma stage(%[[LS:.+]]) : vector<64xf32>
// LATE: dgemm.promote %[[LACC]] into %{{.+}} stage(%[[LS]]) : vector<64xf32>

// mma-slices=2: the 128-column tile as two 64-column slices, each its own
// WGMMA group with its own accumulator, scales and sum, so that
// dgemm-place-sync can let the promotion of the first overlap the WGMMA of
// the second (without alternating warpgroups, which would wait for both).
// SLICES: math(regs = 232)
// SLICES: %[[S2:.+]], %{{.+}} = dgemm.stage %{{.+}} of 6
// SLICES-NEXT: %[[SC0:.+]] = dgemm.load_scales stage(%[[S2]]) : vector<18xf32>
// SLICES-NEXT: %[[SC1:.+]] = dgemm.load_scales stage(%[[S2]]) cols(64) : vector<18xf32>
// SLICES-NEXT: %[[ACC0:.+]] = dgemm.mma stage(%[[S2]]) : vector<32xf32>
// SLICES-NEXT: %[[ACC1:.+]] = dgemm.mma stage(%[[S2]]) cols(64) : vector<32xf32>
// SLICES: %[[P0:.+]] = dgemm.promote %[[ACC0]] into %{{.+}} scales(%[[SC0]] : vector<18xf32>) : vector<32xf32>
// SLICES-NEXT: %[[P1:.+]] = dgemm.promote %[[ACC1]] into %{{.+}} scales(%[[SC1]] : vector<18xf32>) cols(64) : vector<32xf32>
// SLICES-NEXT: scf.yield %{{.+}}, %[[P0]], %[[P1]]
// SLICES: dgemm.epilogue %[[SUMS:.+]]#1, %[[SUMS]]#2 group({{.+}}) tile({{.+}}) : vector<32xf32>, vector<32xf32>

// The earlier form: scales read after the WGMMAs are issued, warpgroups not
// alternating.
// OLD: math(regs = 232)
// OLD: %[[OS:.+]], %{{.+}} = dgemm.stage %{{.+}} of 6
// OLD-NEXT: %[[OACC:.+]] = dgemm.mma stage(%[[OS]]) : vector<64xf32>
// OLD-NEXT: %[[OSC:.+]] = dgemm.load_scales stage(%[[OS]]) : vector<34xf32>
// OLD: dgemm.promote %[[OACC]] into %{{.+}} scales(%[[OSC]] : vector<34xf32>) : vector<64xf32>
dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
dgemm.gemm @other k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 8 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

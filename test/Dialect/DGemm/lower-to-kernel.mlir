// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel --canonicalize | FileCheck %s --implicit-check-not=dgemm.wait --implicit-check-not=dgemm.arrive --implicit-check-not=dgemm.mma.wait --implicit-check-not=dgemm.desc.drain --implicit-check-not=dgemm.desc.publish --implicit-check-not=dgemm.gemm
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=2 --dgemm-lower-to-kernel | FileCheck %s --check-prefix=MC
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel --canonicalize | FileCheck %s --check-prefix=BAND

// The raster band is the kernel's last argument (%arg14, in m-blocks): per
// tile it is read through an opaque mov (so nothing derived from it is
// hoisted out of the tile loop) and clamped to [1, mBlocks]; unit r of a
// group lies in band r / (band * nBlocks), the band's height is
// min(band, mBlocks - start) and the m-block varies fastest inside it.
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

// With cluster_m = 2 each CTA of a pair loads its own A tile and half of the
// shared B tile, which it multicasts to both CTAs.
// MC-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_c2x1
// MC: dgemm.tma.load a stage({{%.+}}) at({{%.+}}, {{%.+}}) slot({{%.+}}){{$}}
// MC: dgemm.tma.load b stage({{%.+}}) at({{%.+}}, {{%.+}}) slot({{%.+}}) multicast
// MC-NEXT: dgemm.tma.load sfa
// MC-NEXT: dgemm.tma.load sfb

// The kernel builder emits only operations that declare their effects: no
// barrier, wait or fence appears before dgemm-place-sync. Each description is
// replaced by the kernel of its configuration (M, N, G and K are launch
// arguments).

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
// The two math warpgroups take turns issuing WGMMA: each waits for its turn,
// issues, and hands the turn over once its first block's WGMMAs are complete
// (dgemm.turn pass reads that accumulator), so one's WGMMAs run while the
// other promotes. Where two fragments fit the registers (block_n <= 128), a
// turn issues the WGMMAs of two blocks, promoted with the scales read from
// the stage; an odd last block goes through a one-block loop, whose scales
// the promotion holds in registers, read before the WGMMAs are issued.
// CHECK: math(regs = 232)
// CHECK: dgemm.turn start
// CHECK-NEXT: scf.for
// CHECK: %[[BLOCKS:.+]] = arith.divui %{{.+}}, %c128_i32 : i32
// CHECK-NEXT: %[[PAIRS:.+]] = arith.divui %[[BLOCKS]], %c2_i32 : i32
// CHECK-NEXT: scf.for %{{.+}} = %c0_i32 to %[[PAIRS]] step %c1_i32 iter_args(%[[IT:[^ ]+]] = %{{[^ ]+}}, %[[SUM:[^ ]+]] = %{{[^ ]+}}) -> (i32, vector<64xf32>)
// CHECK-NEXT: %[[S0:.+]], %{{.+}} = dgemm.stage %[[IT]] of 6
// CHECK-NEXT: %[[IT1:.+]] = arith.addi %[[IT]], %c1_i32 : i32
// CHECK-NEXT: %[[S1:.+]], %{{.+}} = dgemm.stage %[[IT1]] of 6
// CHECK-NEXT: dgemm.turn wait
// CHECK-NEXT: %[[A0:.+]] = dgemm.mma stage(%[[S0]]) : vector<64xf32>
// CHECK-NEXT: %[[A1:.+]] = dgemm.mma stage(%[[S1]]) : vector<64xf32>
// CHECK-NEXT: dgemm.turn pass(%[[A0]] : vector<64xf32>)
// CHECK: %[[P0:.+]] = dgemm.promote %[[A0]] into %[[SUM]] stage(%[[S0]]) : vector<64xf32>
// CHECK-NEXT: dgemm.promote %[[A1]] into %[[P0]] stage(%[[S1]]) : vector<64xf32>
// CHECK: } {dgemm.first_block = [2, 0]}
// CHECK-NEXT: %[[DONE:.+]] = arith.muli %[[PAIRS]], %c2_i32 : i32
// CHECK-NEXT: scf.for %{{.+}} = %[[DONE]] to %[[BLOCKS]] step %c1_i32
// CHECK-NEXT: %[[S:.+]], %{{.+}} = dgemm.stage %{{.+}} of 6
// CHECK-NEXT: %[[SC:.+]] = dgemm.load_scales stage(%[[S]]) : vector<34xf32>
// CHECK-NEXT: dgemm.turn wait
// CHECK-NEXT: %[[ACC:.+]] = dgemm.mma stage(%[[S]]) : vector<64xf32>
// CHECK-NEXT: dgemm.turn pass(%[[ACC]] : vector<64xf32>)
// CHECK: dgemm.promote %[[ACC]] into %{{.+}} scales(%[[SC]] : vector<34xf32>) : vector<64xf32>
// CHECK: } {dgemm.first_block = [1, 0]}
// CHECK-NEXT: dgemm.epilogue %{{.+}} group({{.+}}) tile({{.+}}) : vector<64xf32>{{$}}
// CHECK: dgemm.turn finish

// A 160-column tile (the second description's) has no room for a second
// fragment: one block per turn, its scales held in registers.
// CHECK-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn160_s6_r2
// CHECK: math(regs = 232)
// CHECK-NOT: arith.divui %{{.+}}, %c2_i32
// CHECK: %[[WS:.+]], %{{.+}} = dgemm.stage %{{.+}} of 6
// CHECK-NEXT: %[[WSC:.+]] = dgemm.load_scales stage(%[[WS]]) : vector<42xf32>
// CHECK-NEXT: dgemm.turn wait
// CHECK-NEXT: %[[WACC:.+]] = dgemm.mma stage(%[[WS]]) : vector<80xf32>
// CHECK-NEXT: dgemm.turn pass(%[[WACC]] : vector<80xf32>)
// CHECK: dgemm.promote %[[WACC]] into %{{.+}} scales(%[[WSC]] : vector<42xf32>) : vector<80xf32>
// CHECK: } {dgemm.first_block = [1, 0]}
// CHECK-NEXT: dgemm.epilogue %{{.+}} : vector<80xf32>{{$}}
dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
dgemm.gemm @other k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 8 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

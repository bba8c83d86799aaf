// narrow-tail-mma (off by default; measured no faster on the H100, bench/NOTES.md
// section 25): a tile with at most 64 or 128 of its block_n = 192 columns
// inside N runs block loops of its own, whose WGMMAs and promotions are 64
// or 128 columns wide. The width is chosen per tile from N - n_block * 192;
// the narrow sums are widened with zeros before the epilogue, which sees
// one vector<96xf32> whichever loop ran.
// RUN: dgemm-opt %s --dgemm-lower-to-kernel=narrow-tail-mma --canonicalize | FileCheck %s
// RUN: dgemm-opt %s --dgemm-lower-to-kernel=narrow-tail-mma --dgemm-place-sync --dgemm-verify-sync --convert-dgemm-to-nvvm | FileCheck %s --check-prefix=NVVM
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --canonicalize | FileCheck %s --check-prefix=OFF
// RUN: sed 's/block_n = 192, block_k = 128, stages = 5/block_n = 64, block_k = 128, stages = 8/' %s | dgemm-opt --dgemm-lower-to-kernel=narrow-tail-mma | FileCheck %s --check-prefix=OFF
// RUN: dgemm-opt %s "--dgemm-lower-to-kernel=narrow-tail-mma mma-slices=2" | FileCheck %s --check-prefix=OFF

// CHECK: math(regs = 232)
// CHECK: %[[COLS:.+]] = arith.muli %{{.+}}, %c192_i32 : i32
// CHECK-NEXT: %[[LIVE:.+]] = arith.subi %arg12, %[[COLS]] : i32
// CHECK-NEXT: %[[FITS64:.+]] = arith.cmpi sle, %[[LIVE]], %c64_i32 : i32
// CHECK-NEXT: %[[TILE:.+]]:2 = scf.if %[[FITS64]] -> (i32, vector<96xf32>) {
// CHECK: scf.for {{.+}} -> (i32, vector<32xf32>)
// CHECK: dgemm.load_scales stage(%{{.+}}) : vector<18xf32>
// CHECK: dgemm.mma stage(%{{.+}}) : vector<32xf32>
// CHECK: dgemm.promote %{{.+}} scales(%{{.+}} : vector<18xf32>) : vector<32xf32>
// CHECK: llvm.insertelement {{.+}} : vector<96xf32>
// CHECK: } else {
// CHECK-NEXT: %[[FITS128:.+]] = arith.cmpi sle, %[[LIVE]], %c128_i32 : i32
// CHECK-NEXT: scf.if %[[FITS128]] -> (i32, vector<96xf32>) {
// CHECK: scf.for {{.+}} -> (i32, vector<64xf32>)
// CHECK: dgemm.mma stage(%{{.+}}) : vector<64xf32>
// CHECK: dgemm.promote {{.+}} : vector<64xf32>
// CHECK: } else {
// CHECK-NEXT: scf.for {{.+}} -> (i32, vector<96xf32>)
// CHECK: dgemm.mma stage(%{{.+}}) : vector<96xf32>
// CHECK: dgemm.promote {{.+}} : vector<96xf32>
// CHECK: } {dgemm.narrow_tail}
// CHECK: } {dgemm.narrow_tail}
// CHECK-NEXT: dgemm.epilogue %[[TILE]]#1 group(%{{.+}}) tile(%{{.+}}, %{{.+}}) : vector<96xf32>

// Every width's WGMMAs survive the barrier placement and its verifier; the
// narrow loops are entered with no WGMMA in flight. The epilogue's test for
// a tile without K blocks takes the tile's block count through the narrow
// branches (not the live columns their condition compares).
// NVVM: nvvm.setmaxregister increase 232
// NVVM: %[[K:.+]] = llvm.load %{{.+}} : !llvm.ptr<1> -> i32
// NVVM-NEXT: %[[BLOCKS:.+]] = arith.divui %[[K]], %c128_i32{{(_[0-9]+)?}} : i32
// NVVM: %[[LIVE:.+]] = arith.subi %arg12, %{{.+}} : i32
// NVVM: arith.cmpi sle, %[[LIVE]], %c64_i32 : i32
// NVVM-COUNT-4: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 64, k = 32>
// NVVM-COUNT-4: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 128, k = 32>
// NVVM-COUNT-4: nvvm.wgmma.mma_async {{.+}} <m = 64, n = 192, k = 32>
// NVVM: } {dgemm.narrow_tail}
// NVVM: } {dgemm.narrow_tail}
// NVVM: arith.cmpi eq, %[[BLOCKS]], %{{.+}} : i32
// NVVM-NOT: nvvm.wgmma.mma_async

// OFF-NOT: dgemm.narrow_tail
// OFF: dgemm.epilogue
// OFF-NOT: dgemm.narrow_tail

dgemm.gemm @w k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128] config <block_m = 128, block_n = 192, block_k = 128, stages = 5, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// RUN: dgemm-opt %s --dgemm-lower-to-kernel=defer-epilogue --dgemm-place-sync --dgemm-verify-sync | FileCheck %s
// RUN: dgemm-opt %s --dgemm-lower-to-kernel=defer-epilogue --dgemm-place-sync --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=NVVM
// Not an in-place kernel: the option changes nothing.
// RUN: sed 's/in_place_only = 1/in_place_only = 0/' %s | dgemm-opt --dgemm-lower-to-kernel=defer-epilogue | FileCheck %s --check-prefix=PLAIN '--implicit-check-not=blocks('

// defer-epilogue on an in-place kernel with one block per turn: the tile loop
// carries the pending epilogue (group, m-block, n-block, block count: 0 for
// none yet, and the sums). A tile with K blocks prefetches its c if it has 1
// to 8 blocks, issues its first block's WGMMAs, runs the pending epilogue
// while they work (no region around it, so dgemm-place-sync keeps the
// WGMMAs in flight across it and waits for them after it), then promotes
// into fresh sums; the block loop covers blocks 1 onwards. The turn passes
// right after the first block's issue, before the pending epilogue, so the
// other warpgroup's WGMMAs run during it too. The last tile's epilogue
// follows the tile loop. dgemm-verify-sync accepts the schedule.
// CHECK: dgemm.turn start
// CHECK: %[[TILES:.+]]:6 = scf.for {{.+}} iter_args(%{{.+}} = %c0_i32, %[[PG:.+]] = %c0_i32_{{[0-9]+}}, %[[PM:.+]] = %c0_i32_{{[0-9]+}}, %[[PN:.+]] = %c0_i32_{{[0-9]+}}, %[[PB:.+]] = %c0_i32_{{[0-9]+}}, %[[PS:.+]] = %cst) -> (i32, i32, i32, i32, i32, vector<96xf32>)
// CHECK: dgemm.prefetch_c group(%{{.+}}) tile(%{{.+}}, %{{.+}}) if(%{{.+}})
// CHECK: scf.if %{{.+}} -> (i32, i32, i32, i32, i32, vector<96xf32>) {
// CHECK: dgemm.turn wait
// CHECK-NEXT: dgemm.wait full
// CHECK-NEXT: %[[F:.+]] = dgemm.mma stage
// CHECK-NEXT: dgemm.turn pass{{$}}
// CHECK-NEXT: dgemm.epilogue %[[PS]] group(%[[PG]]) tile(%[[PM]], %[[PN]]) blocks(%[[PB]]) : vector<96xf32>
// CHECK-NOT: dgemm.turn
// CHECK: dgemm.mma.wait
// CHECK-NEXT: dgemm.promote %[[F]] into %cst
// CHECK: scf.for %{{.+}} = %c1_i32{{.*}} to
// CHECK: dgemm.turn finish
// CHECK-NEXT: dgemm.epilogue %[[TILES]]#5 group(%[[TILES]]#1) tile(%[[TILES]]#2, %[[TILES]]#3) blocks(%[[TILES]]#4) : vector<96xf32>

// The deferred epilogue's reductions share one address register (immediate
// offsets of 32 bytes per 8-column group); a tile of 0 blocks reduces
// nothing.
// NVVM: arith.cmpi ne, %{{.+}}, %{{.+}} : i32
// NVVM: red.global.add.v4.f32 [$0+0], {$1, $2, $3, $4};
// NVVM: red.global.add.v4.f32 [$0+32], {$1, $2, $3, $4};
// NVVM: red.global.add.v4.f32 [$0+736], {$1, $2, $3, $4};

// PLAIN: dgemm.epilogue
dgemm.gemm @wgrad k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 192, block_k = 128, stages = 5,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            in_place_only = 1>

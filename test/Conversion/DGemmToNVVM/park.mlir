// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s
// RUN: sed 's/epilogue = parked/epilogue = in_place/' %s | dgemm-opt --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=OFF
// RUN: sed 's/block_n = 192/block_n = 128/; s/stages = 3/stages = 4/' %s | dgemm-opt --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=NARROW

// epilogue = parked: an in-place kernel whose whole tile fits after the
// pipeline (3 stages at 192 columns: 126976 bytes of stages, then
// 128 x 192 x 4 = 98304 bytes of park, then its two mbarriers) parks each
// tile's sums in shared memory, and threads 32..127 of the producer warpgroup (the workers role)
// add them to d while the math warpgroups go on. The park's barriers are
// dgemm-place-sync's dgemm.wait/arrive park_full and park_empty: park full
// expects the 256 math threads, park empty the 96 workers. The counts reach
// nvvm.mbarrier.init through nvgpu.mbarrier.init (convert-dgemm-to-nvgpu),
// as index constants truncated to i32, and each barrier as element 0 of a
// one-barrier group viewed at its offset; the LLVM conversions fold both.
// CHECK-DAG: %[[C96:.+]] = llvm.mlir.constant(96 : i32) : i32
// CHECK-DAG: %[[N96:.+]] = arith.constant 96 : index
// CHECK-DAG: %[[N256:.+]] = arith.constant 256 : index
// CHECK: %[[W256:.+]] = builtin.unrealized_conversion_cast %[[N256]] : index to i64
// CHECK-NEXT: %[[FULL:.+]] = llvm.getelementptr %{{.+}}[225280] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[FULL0:.+]] = llvm.getelementptr %[[FULL]][%{{.+}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK-NEXT: %[[T256:.+]] = llvm.trunc %[[W256]] : i64 to i32
// CHECK-NEXT: nvvm.mbarrier.init %[[FULL0]], %[[T256]]
// CHECK: %[[W96:.+]] = builtin.unrealized_conversion_cast %[[N96]] : index to i64
// CHECK-NEXT: %[[EMPTY:.+]] = llvm.getelementptr %{{.+}}[225288] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[EMPTY0:.+]] = llvm.getelementptr %[[EMPTY]][%{{.+}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK-NEXT: %[[T96:.+]] = llvm.trunc %[[W96]] : i64 to i32
// CHECK-NEXT: nvvm.mbarrier.init %[[EMPTY0]], %[[T96]]
// Producer warpgroup: thread 0 loads; threads 32..127 are the workers. Per
// tile: wait for the park (full); read the tile's coordinates the math warps
// recorded after the barriers (so the workers need not know the tile
// schedule); per loop step four 16-byte loads from the park, then their four
// reductions into d; hand the park back (empty).
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: } else {
// CHECK: arith.cmpi ult, %{{.+}}, %[[C96]] : i32
// CHECK: scf.for
// CHECK: llvm.getelementptr %{{.+}}[225280]
// CHECK: mbarrier.try_wait.parity
// CHECK-NEXT: %[[REC:.+]] = llvm.getelementptr %{{.+}}[225296]
// CHECK-NEXT: llvm.load %[[REC]] {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// CHECK: scf.for
// CHECK-COUNT-4: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-COUNT-4: red.global.add.v4.f32
// CHECK-NOT: red.global
// CHECK: llvm.getelementptr %{{.+}}[225288]
// CHECK-NEXT: builtin.unrealized_conversion_cast
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: nvvm.mbarrier.arrive
// Math warpgroups: after the block loop, wait for the park to be free, write
// the 96 sums as 48 8-byte stores; thread 128 records the coordinates; all
// arrive on park full. No reduction of their own.
// CHECK: nvvm.setmaxregister increase 232
// CHECK: wgmma.mma_async
// CHECK: llvm.getelementptr %{{.+}}[225288]
// CHECK: mbarrier.try_wait.parity
// CHECK-COUNT-48: llvm.store %{{.+}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK-NOT: llvm.store
// CHECK: %[[REC2:.+]] = llvm.getelementptr %{{.+}}[225296]
// CHECK-NEXT: llvm.store %{{.+}}, %[[REC2]] {alignment = 4 : i64} : i32, !llvm.ptr<3>
// CHECK-NOT: llvm.store
// CHECK: llvm.getelementptr %{{.+}}[225280]
// CHECK-NEXT: builtin.unrealized_conversion_cast
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: nvvm.mbarrier.arrive
// CHECK-NOT: red.global
// CHECK: llvm.return

// 128 columns, 4 stages: the park (64 KiB) starts at 136192; 32 units per
// row, so two warps (64 threads) take two rows per step; 32 stores per
// math thread.
// NARROW-DAG: %[[C64:.+]] = llvm.mlir.constant(64 : i32) : i32
// NARROW-DAG: %[[N64:.+]] = arith.constant 64 : index
// NARROW-DAG: %[[N256:.+]] = arith.constant 256 : index
// NARROW: %[[W256:.+]] = builtin.unrealized_conversion_cast %[[N256]] : index to i64
// NARROW-NEXT: %[[FULL:.+]] = llvm.getelementptr %{{.+}}[201728] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// NARROW-NEXT: %[[FULL0:.+]] = llvm.getelementptr %[[FULL]][%{{.+}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// NARROW-NEXT: %[[T256:.+]] = llvm.trunc %[[W256]] : i64 to i32
// NARROW-NEXT: nvvm.mbarrier.init %[[FULL0]], %[[T256]]
// NARROW: %[[W64:.+]] = builtin.unrealized_conversion_cast %[[N64]] : index to i64
// NARROW-NEXT: %[[EMPTY:.+]] = llvm.getelementptr %{{.+}}[201736] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// NARROW-NEXT: %[[EMPTY0:.+]] = llvm.getelementptr %[[EMPTY]][%{{.+}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// NARROW-NEXT: %[[T64:.+]] = llvm.trunc %[[W64]] : i64 to i32
// NARROW-NEXT: nvvm.mbarrier.init %[[EMPTY0]], %[[T64]]
// NARROW: arith.cmpi ult, %{{.+}}, %[[C64]] : i32
// NARROW-COUNT-4: red.global.add.v4.f32
// NARROW: nvvm.setmaxregister increase 232
// NARROW: mbarrier.try_wait.parity
// NARROW-COUNT-32: llvm.store %{{.+}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// NARROW: llvm.getelementptr %{{.+}}[201744]
// NARROW-NEXT: llvm.store
// NARROW-NOT: llvm.store
// NARROW: llvm.getelementptr %{{.+}}[201728]
// NARROW-NEXT: builtin.unrealized_conversion_cast
// NARROW-NEXT: llvm.getelementptr
// NARROW-NEXT: nvvm.mbarrier.arrive

// Without the park (epilogue = in_place), the same 3-stage kernel reduces
// from the math warps.
// OFF-NOT: 225280
// OFF: wgmma.mma_async
// OFF-COUNT-24: red.global.add.v4.f32

dgemm.gemm @wgrad k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 192, block_k = 128, stages = 3,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            epilogue = parked>


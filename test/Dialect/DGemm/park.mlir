// RUN: dgemm-opt %s --dgemm-lower-to-kernel --canonicalize --dgemm-place-sync --dgemm-verify-sync | FileCheck %s
// RUN: sed 's/block_n = 128/block_n = 192/; s/stages = 4/stages = 3/' %s | dgemm-opt --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync | FileCheck %s --check-prefix=WIDE
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync | dgemm-opt --dgemm-verify-sync -o /dev/null
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --mlir-print-op-generic | dgemm-opt --dgemm-verify-sync -o /dev/null
// RUN: sed 's/epilogue = parked/epilogue = in_place/' %s | dgemm-opt --dgemm-lower-to-kernel --dgemm-place-sync | FileCheck %s --check-prefix=OFF

// A kernel that parks its tiles (epilogue = parked): the math role ends each
// tile with dgemm.park.store instead of dgemm.epilogue, and a workers role
// walks the same tiles, taking each from the park with dgemm.park.reduce. The
// park is a ring of one slot whose phase alternates from tile to tile; the
// math role's slot comes from the tile's position in its walk.
// CHECK: dgemm.warp_specialize producer(regs = 40)
// CHECK: } math(regs = 232) {
// CHECK-DAG: %[[CTA:.+]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-DAG: %[[GRID:.+]] = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK: scf.for %[[T:.+]] = %[[CTA]] to %{{.+}} step %[[GRID]]
// CHECK-NOT: dgemm.epilogue
// CHECK: %[[SUB:.+]] = arith.subi %[[T]], %{{.+}} : i32
// CHECK: %[[COUNT:.+]] = arith.divui %[[SUB]], %{{.+}} : i32
// CHECK: %[[SLOT:.+]], %[[PHASE:.+]] = dgemm.stage %[[COUNT]] of 1
// dgemm-place-sync: the math role waits until the workers emptied the
// slot, writes it, and hands it over.
// CHECK-NEXT: dgemm.wait park_empty(%[[SLOT]]) phase(%[[PHASE]])
// CHECK-NEXT: dgemm.park.store %{{.+}} slot(%[[SLOT]]) group(%{{.+}}) tile(%{{.+}}, %{{.+}}) : vector<64xf32>
// CHECK-NEXT: dgemm.arrive park_full(%[[SLOT]])
// CHECK-NOT: dgemm.epilogue
// CHECK: } workers {
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[K:.+]] = %{{.+}}) -> (i32)
// CHECK-NEXT: %[[WSLOT:.+]], %[[WPHASE:.+]] = dgemm.stage %[[K]] of 1
// CHECK-NEXT: dgemm.wait park_full(%[[WSLOT]]) phase(%[[WPHASE]])
// CHECK-NEXT: dgemm.park.reduce slot(%[[WSLOT]])
// CHECK-NEXT: dgemm.arrive park_empty(%[[WSLOT]])
// Every math thread arrives on park_full, every worker on park_empty: 128
// columns are 32 16-byte units a row, so 64 workers take two rows at a time.
// CHECK: } {empty_arrivals = 8 : i32, full_arrivals = 1 : i32, park_empty_arrivals = 64 : i32, park_full_arrivals = 256 : i32, worker_threads = 64 : i32}

// 192 columns (48 units a row): 96 workers, two rows at a time.
// WIDE: dgemm.park.store %{{.+}} : vector<96xf32>
// WIDE: park_empty_arrivals = 96 : i32, park_full_arrivals = 256 : i32, worker_threads = 96 : i32

// The same kernel in place without the park (epilogue = in_place): the
// math role ends each tile with its own epilogue.
// OFF-NOT: park
// OFF: dgemm.epilogue
// OFF-NOT: workers

dgemm.gemm @wgrad k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 16 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 128, block_k = 128, stages = 4,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            epilogue = parked>

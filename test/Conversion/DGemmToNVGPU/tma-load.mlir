// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --canonicalize | FileCheck %s
// RUN: sed 's/cluster_m = 1/cluster_m = 2/' %s | dgemm-opt --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --canonicalize | FileCheck %s --check-prefix=MCAST
// RUN: sed 's/cluster_m = 1/cluster_m = 2/; s/epilogue = register/epilogue = register, quad_b = 1/' %s | dgemm-opt --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --canonicalize | FileCheck %s --check-prefix=QUAD

// The producer's bookkeeping: one cell per descriptor slot at the kernel's
// entry, holding the last iteration that loaded through the slot (-1: none).
// CHECK-LABEL: dgemm.kernel
// CHECK: %[[CELL0:.+]] = llvm.alloca %{{.+}} x i32 : (i32) -> !llvm.ptr
// CHECK: %[[CELL1:.+]] = llvm.alloca %{{.+}} x i32 : (i32) -> !llvm.ptr

// Before a slot's rewrite, the drain waits on the full barriers of the
// iterations that may still read it: from max(it - stages, 0) to the slot's
// last use, picked from the cells. The waits stay dgemm's
// (convert-dgemm-to-nvvm lowers them).
// CHECK: %[[LAST0:.+]] = llvm.load %[[CELL0]] : !llvm.ptr -> i32
// CHECK: %[[LAST1:.+]] = llvm.load %[[CELL1]] : !llvm.ptr -> i32
// CHECK: %[[LAST:.+]] = llvm.select %{{.+}}, %[[LAST1]], %[[LAST0]] : i1, i32
// CHECK: %[[LO:.+]] = arith.maxsi
// CHECK: %[[HI:.+]] = arith.addi %[[LAST]], %{{.+}} : i32
// CHECK: scf.for %[[IT:.+]] = %[[LO]] to %[[HI]]
// CHECK-NEXT: %[[STAGE:.+]], %[[PHASE:.+]] = dgemm.stage %[[IT]] of 3
// CHECK-NEXT: dgemm.wait full(%[[STAGE]]) phase(%[[PHASE]])
// CHECK-NEXT: }
// CHECK-NEXT: dgemm.desc.update a

// A load into this CTA only keeps dgemm's shared::cta form (nvgpu's would
// name the destination in the shared::cluster window): A through its
// descriptor slot, after recording the iteration in the slot's cell.
// CHECK: dgemm.wait empty
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK: llvm.store %{{.+}}, %[[CELL0]] : i32, !llvm.ptr
// CHECK: llvm.store %{{.+}}, %[[CELL1]] : i32, !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %{{.+}}, %{{.+}}, box[%{{.+}}, %{{.+}}] {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
// CHECK-NOT: nvgpu.tma.async.load

// With cluster_m = 2, B's load is this CTA's half of the tile, multicast to
// both CTAs: nvgpu.tma.async.load into a view of its rows of the stage
// (rank * 12288 bytes in), completing on the stage's full barrier, with a
// tensor map whose box is those 96 rows of 128 bytes.
// MCAST-LABEL: dgemm.kernel
// MCAST-DAG: %[[MASK:.+]] = llvm.mlir.constant(3 : i16) : i16
// MCAST-DAG: %[[SHARE:.+]] = llvm.mlir.constant(12288 : i32) : i32
// MCAST: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} {isCTAOnly = true}
// MCAST: %[[RANK:.+]] = llvm.urem %{{.+}}, %{{.+}} : i32
// MCAST-NEXT: %[[OFF:.+]] = llvm.mul %[[RANK]], %[[SHARE]] : i32
// MCAST-NEXT: %[[PTR:.+]] = llvm.getelementptr %{{.+}}[%[[OFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// MCAST-NEXT: %[[D0:.+]] = llvm.insertvalue %[[PTR]], %{{.+}}[0]
// MCAST: %[[DST:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<(ptr<3>, ptr<3>, i64, array<2 x i64>, array<2 x i64>)> to memref<96x128xi8, #gpu.address_space<workgroup>>
// MCAST: %[[MAP:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.ptr to !nvgpu.tensormap.descriptor<tensor = memref<96x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// MCAST-NEXT: nvgpu.tma.async.load %[[MAP]][%{{.+}}, %{{.+}}], %{{.+}}[%{{.+}}] to %[[DST]] multicast_mask = %[[MASK]]
// MCAST: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} {isCTAOnly = true}
// MCAST: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} {isCTAOnly = true}
// MCAST-NOT: nvgpu.tma.async.load

// Quad-ordered B: the 5-D box (K, c, q, h, g), outermost first in the
// memref, at (x, 0, 0, 0, y / 16).
// QUAD: %[[G:.+]] = llvm.lshr
// QUAD: %[[X:.+]] = arith.index_castui
// QUAD-NEXT: %[[GI:.+]] = arith.index_castui %[[G]] : i32 to index
// QUAD: nvgpu.tma.async.load %{{.+}}[%[[X]], %[[C0:.+]], %[[C0]], %[[C0]], %[[GI]]], {{.*}} : <tensor = memref<6x2x4x2x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, {{.*}}> -> memref<6x2x4x2x128xi8, #gpu.address_space<workgroup>>

dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 192, block_k = 128, stages = 3,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            epilogue = register>

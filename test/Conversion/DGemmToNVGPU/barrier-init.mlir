// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --canonicalize | FileCheck %s
// RUN: sed 's/cluster_m = 1/cluster_m = 2/; s/epilogue = parked/epilogue = register/' %s | dgemm-opt --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --canonicalize | FileCheck %s --check-prefix=CLUSTER

// Before the roles split, thread 0 initializes every barrier with the count
// dgemm-place-sync recorded: per stage the full barrier (1: the producer's
// arm) and the empty barrier (8: one arrive per math warp), then the park's
// pair (256 math threads fill it, 96 workers empty it). Each barrier is a
// one-barrier group viewed at its offset in the dynamic shared memory.
// The counts are then spent: dgemm.warp_specialize no longer carries them.
// CHECK: llvm.mlir.global external @dgemm_dynamic_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s3_r2_ip_park
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C96:.+]] = arith.constant 96 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[TID:.+]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[TID]], %{{.+}} : i32
// CHECK: scf.if %[[FIRST]] {
// CHECK: nvgpu.mbarrier.init %{{.+}}[%[[C0]]], %[[C1]] : <memorySpace = #gpu.address_space<workgroup>>
// CHECK: nvgpu.mbarrier.init %{{.+}}[%[[C0]]], %[[C8]] : <memorySpace = #gpu.address_space<workgroup>>
// CHECK: nvgpu.mbarrier.init {{.*}}, %[[C1]]
// CHECK: nvgpu.mbarrier.init {{.*}}, %[[C8]]
// CHECK: nvgpu.mbarrier.init {{.*}}, %[[C1]]
// CHECK: nvgpu.mbarrier.init {{.*}}, %[[C8]]
// CHECK: %[[PFULL:.+]] = llvm.getelementptr %{{.+}}[225280] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: %[[PFULLD:.+]] = llvm.insertvalue %[[PFULL]], %{{.+}}[1]
// CHECK: %[[PFULLG:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<(ptr<3>, ptr<3>, i64, array<1 x i64>, array<1 x i64>)> to !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// CHECK-NEXT: nvgpu.mbarrier.init %[[PFULLG]][%[[C0]]], %[[C256]]
// CHECK: llvm.getelementptr %{{.+}}[225288] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: nvgpu.mbarrier.init %{{.+}}[%[[C0]]], %[[C96]]
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: dgemm.warp_specialize producer(regs = 40) {
// CHECK-NOT: arrivals

// In a cluster every CTA releases every CTA's stages (16 arrivals), and the
// whole cluster syncs before any peer arrives on or multicasts into them.
// CLUSTER-DAG: %[[C16:.+]] = arith.constant 16 : index
// CLUSTER-COUNT-3: nvgpu.mbarrier.init {{.*}}, %[[C16]]
// CLUSTER: nvvm.fence.mbarrier.init
// CLUSTER-NEXT: }
// CLUSTER-NEXT: llvm.inline_asm has_side_effects "barrier.cluster.arrive.release;\0A\09barrier.cluster.wait.acquire;"
// CLUSTER-NEXT: dgemm.warp_specialize

dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 192, block_k = 128, stages = 3,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            epilogue = parked>

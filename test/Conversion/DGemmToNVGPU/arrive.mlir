// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --canonicalize | FileCheck %s
// RUN: sed 's/cluster_m = 1/cluster_m = 2/; s/epilogue = parked/epilogue = register/' %s | dgemm-opt --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --canonicalize | FileCheck %s --check-prefix=CLUSTER

// The producer arms a stage's full barrier with the bytes of its four loads
// (A 128 x 128, B 192 x 128, 512 and 768 bytes of scales).
// CHECK-LABEL: dgemm.kernel
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[TX:.+]] = arith.constant 42240 : index
// CHECK: dgemm.warp_specialize
// CHECK: dgemm.wait empty
// CHECK: %[[FULL:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<(ptr<3>, ptr<3>, i64, array<1 x i64>, array<1 x i64>)> to !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
// CHECK-NEXT: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%[[C0]]], %[[TX]]

// A math release: the warp's lanes synchronize, then lane 0 arrives on the
// stage's empty barrier for the warp.
// CHECK: %[[EMPTY:.+]] = builtin.unrealized_conversion_cast
// CHECK: nvvm.bar.warp.sync
// CHECK: scf.if
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[EMPTY]][%[[C0]]]
// CHECK-NOT: mapa

// The math warps fill the park, then every math thread arrives on park full.
// CHECK: llvm.getelementptr %{{.+}}[225280] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: %[[PFULL:.+]] = builtin.unrealized_conversion_cast
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[PFULL]][%[[C0]]]

// The workers hand the park back: every worker thread arrives on park empty.
// CHECK: llvm.getelementptr %{{.+}}[225288] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: %[[PEMPTY:.+]] = builtin.unrealized_conversion_cast
// CHECK-NEXT: nvgpu.mbarrier.arrive %[[PEMPTY]][%[[C0]]] : <memorySpace = #gpu.address_space<workgroup>> -> !nvgpu.mbarrier.token

// In a cluster a release also arrives on the peer's barrier at the same
// offset: nvgpu has no remote arrive, so its address (nvgpu.mbarrier.get)
// goes through mapa into a shared::cluster arrive.
// CLUSTER: nvvm.bar.warp.sync
// CLUSTER: scf.if
// CLUSTER-NEXT: nvgpu.mbarrier.arrive %[[BARS:.+]][%[[C0:.+]]] :
// CLUSTER-NEXT: %[[LOCAL:.+]] = nvgpu.mbarrier.get %[[BARS]][%[[C0]]] : <memorySpace = #gpu.address_space<workgroup>> -> i32
// CLUSTER: llvm.inline_asm has_side_effects "{\0A\09.reg .b32 ra;\0A\09mapa.shared::cluster.u32 ra, $0, $1;\0A\09mbarrier.arrive.shared::cluster.b64 _, [ra];\0A\09}", "r,r,~{memory}" %[[LOCAL]], %{{.+}} : (i32, i32) -> ()

dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 192, block_k = 128, stages = 3,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            epilogue = parked>

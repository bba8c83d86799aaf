// Why dgemm keeps its own form for a TMA load into this CTA only
// (docs/UpstreamNVGPU.md): MLIR 22 lowers every nvgpu.tma.async.load, with
// or without a multicast mask, to the shared::cluster form with the
// destination cast into the cluster window (ptr<7>). For a CTA-local load
// NVPTX then emits cvta.shared and cvta.to.shared::cluster per load and
// cannot fold the stage offset into the instruction, where dgemm's
// shared::cta form (isCTAOnly) takes the shared-window address as it is.
// Multicast loads need the cluster window and go through nvgpu. If this
// test starts failing, upstream changed the lowering: re-examine whether
// TmaLoadLowering can use nvgpu for every load.
// RUN: dgemm-opt %s --convert-nvgpu-to-nvvm | FileCheck %s

// CHECK-LABEL: func.func @local_load
// CHECK: %[[DST:.+]] = llvm.addrspacecast %{{.+}} : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[DST]], {{.*}} : !llvm.ptr<7>, !llvm.ptr
// CHECK-NOT: isCTAOnly
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
!tile = memref<128x128xi8, #gpu.address_space<workgroup>>
!map = !nvgpu.tensormap.descriptor<tensor = !tile, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
func.func @local_load(%map: !map, %bars: !bars, %dst: !tile, %x: index, %y: index) {
  %c0 = arith.constant 0 : index
  nvgpu.tma.async.load %map[%x, %y], %bars[%c0] to %dst : !map, !bars -> !tile
  return
}

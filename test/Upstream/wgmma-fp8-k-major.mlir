// Why dgemm lowers its FP8 WGMMAs itself (docs/UpstreamNVGPU.md): both of
// its operands are K-major in shared memory. nvgpu.warpgroup.mma takes B as
// [K][N]; its verifier accepts a K-major B only with `transposeB`, and with
// `transposeB` MLIR 22's lowering emits layout_b = row, which
// nvvm.wgmma.mma_async rejects for e4m3 (PTX transposes only f16 and bf16).
// If this test starts failing, upstream changed the lowering: re-examine
// whether dgemm.mma can lower through nvgpu.warpgroup.mma.
// RUN: dgemm-opt %s --convert-nvgpu-to-nvvm -verify-diagnostics

!a = !nvgpu.warpgroup.descriptor<tensor = memref<64x128xf8E4M3FN, #gpu.address_space<workgroup>>>
!b = !nvgpu.warpgroup.descriptor<tensor = memref<128x128xf8E4M3FN, #gpu.address_space<workgroup>>>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>>
func.func @fp8_k_major(%a: !a, %b: !b, %c: !acc) -> !acc {
  // expected-error @+1 {{requires transpose. However, this is only supported for: f16 and bf16}}
  %d = nvgpu.warpgroup.mma %a, %b, %c {transposeB} : !a, !b, !acc -> !acc
  return %d : !acc
}

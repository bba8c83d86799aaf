// Why dgemm rewrites tensor maps with inline PTX (docs/UpstreamNVGPU.md):
// neither nvgpu nor NVVM has an op for `tensormap.replace` in MLIR 22. If
// this test starts failing, upstream added one: re-examine whether
// DescUpdateLowering can use it.
// RUN: dgemm-opt %s -split-input-file -verify-diagnostics

llvm.func @nvvm_replace(%map: !llvm.ptr<1>, %addr: i64) {
  // expected-error @+1 {{custom op 'nvvm.tensormap.replace' is unknown}}
  nvvm.tensormap.replace %map, %addr : !llvm.ptr<1>, i64
  llvm.return
}

// -----

llvm.func @nvgpu_replace(%map: !llvm.ptr<1>, %addr: i64) {
  // expected-error @+1 {{custom op 'nvgpu.tensormap.replace' is unknown}}
  nvgpu.tensormap.replace %map, %addr : !llvm.ptr<1>, i64
  llvm.return
}

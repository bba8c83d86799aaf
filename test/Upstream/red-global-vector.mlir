// Why dgemm adds its sums to d with inline-PTX red.global.add.v2/.v4.f32
// (docs/UpstreamNVGPU.md): neither nvgpu nor NVVM has a vector reduction op
// in MLIR 22, and the nearest upstream form, a vector `llvm.atomicrmw fadd`,
// becomes a compare-and-swap loop in NVPTX, not one reduction. If this test
// starts failing, re-examine whether the epilogue and park patterns can use
// the upstream form.
// RUN: dgemm-opt %s --convert-nvvm-to-llvm | dgemm-translate --mlir-to-llvmir | llc -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90a -mattr=+ptx86 | FileCheck %s --implicit-check-not=red.global

// CHECK-LABEL: .func add_pair
// CHECK: [[LOOP:\$L__BB0_[0-9]+]]:
// CHECK: atom.relaxed.sys.global.cas.b64
// CHECK: bra {{.*}}[[LOOP]];
llvm.func @add_pair(%d: !llvm.ptr<1>, %v: vector<2xf32>) {
  %0 = llvm.atomicrmw fadd %d, %v monotonic : !llvm.ptr<1>, vector<2xf32>
  llvm.return
}

// Why dgemm emits its own mbarrier wait loop (docs/UpstreamNVGPU.md): MLIR 22
// lowers nvvm.mbarrier.try_wait.parity to a loop that leaves through
// `@P1 bra.uni` on the per-thread try_wait result. `.uni` asserts that every
// active lane of the warp takes the same branch, which PTX does not promise
// for try_wait (one lane may time out while another sees the phase
// complete). nvgpu.mbarrier.try_wait.parity lowers to that same op. If this
// test starts failing, upstream changed the lowering: re-examine whether
// KernelEmitter::waitParity can use the upstream op.
// RUN: dgemm-opt %s --convert-nvgpu-to-nvvm --convert-nvvm-to-llvm | FileCheck %s

// CHECK-LABEL: llvm.func @wait
// CHECK: llvm.inline_asm
// CHECK-SAME: mbarrier.try_wait.parity
// CHECK-SAME: @P1 bra.uni DONE
llvm.func @wait(%bar: !llvm.ptr<3>, %parity: i32) {
  %ticks = llvm.mlir.constant(10000000 : i32) : i32
  nvvm.mbarrier.try_wait.parity %bar, %parity, %ticks : !llvm.ptr<3>, i32, i32
  llvm.return
}

// CHECK-LABEL: func.func @nvgpu_wait
// CHECK: llvm.inline_asm
// CHECK-SAME: mbarrier.try_wait.parity
// CHECK-SAME: @P1 bra.uni DONE
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
func.func @nvgpu_wait(%bars: !bars, %stage: index, %parity: i1) {
  %ticks = arith.constant 10000000 : index
  nvgpu.mbarrier.try_wait.parity %bars[%stage], %parity, %ticks : !bars
  return
}

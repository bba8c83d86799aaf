// The stage in the dgemm-to-llvm pipeline: after dgemm-verify-sync,
// convert-dgemm-to-nvgpu leaves nvgpu ops, upstream convert-nvgpu-to-nvvm
// lowers every one of them, and convert-dgemm-to-nvvm lowers the dgemm ops
// that remain. The pass takes no options (every choice that changes the
// code is in #dgemm.config).
// RUN: dgemm-opt %s "--dgemm-to-llvm=cluster-m=2" -mlir-print-ir-after=convert-dgemm-to-nvgpu -mlir-print-ir-after=convert-nvgpu-to-nvvm -mlir-print-ir-after=convert-dgemm-to-nvvm -o /dev/null 2>&1 | FileCheck %s
// RUN: dgemm-opt --help | FileCheck %s --check-prefix=HELP --strict-whitespace

// CHECK: IR Dump After ConvertDGemmToNVGPU (convert-dgemm-to-nvgpu)
// CHECK: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_c2x1_q
// CHECK: nvgpu.mbarrier.init
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK: nvgpu.tma.async.load {{.*}} multicast_mask
// CHECK: nvgpu.mbarrier.arrive
// CHECK: nvgpu.mbarrier.get
// CHECK: IR Dump After ConvertNVGPUToNVVMPass (convert-nvgpu-to-nvvm)
// CHECK-NOT: {{^ *(%[^ ]+ = )?nvgpu\.}}
// CHECK: dgemm.kernel
// CHECK-NOT: {{^ *(%[^ ]+ = )?nvgpu\.}}
// CHECK: IR Dump After ConvertDGemmToNVVM (convert-dgemm-to-nvvm)
// CHECK-NOT: dgemm.kernel
// CHECK: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_c2x1_q(

// HELP: {{^ {6}--convert-dgemm-to-nvgpu }}
// HELP-NEXT: {{^ {6}--[a-z]}}

dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// The whole lowering as one pipeline, dgemm-to-llvm. Its options are the
// configuration's: each is forwarded to dgemm-select-config (nothing else in
// the pipeline takes options), so every kernel they change has its own
// entry name.
// RUN: dgemm-opt %s --dgemm-to-llvm | FileCheck %s
// RUN: dgemm-opt %s "--dgemm-to-llvm=desc-slots=1 quad-b=0 cluster-m=2" | FileCheck %s --check-prefix=OPTIONS
// RUN: dgemm-opt %s "--dgemm-to-llvm=num-sms=78 smem-bytes=101376 unsafe=skip_descriptor_drain,skip_proxy_fence" | FileCheck %s --check-prefix=TARGET
// RUN: dgemm-opt %s "--dgemm-to-llvm=in-place expected-k=1024 memory-bandwidth-gbps=3350" | FileCheck %s --check-prefix=INPLACE
// RUN: not dgemm-opt %s --dgemm-to-llvm=mma-slices=2 2>&1 | FileCheck %s --check-prefix=RETIRED
// RUN: dgemm-opt --help | FileCheck %s --check-prefix=HELP --strict-whitespace
// RUN: dgemm-opt --help | FileCheck %s --check-prefix=SELECT --strict-whitespace
// RUN: dgemm-opt --help | FileCheck %s --check-prefix=KERNEL --strict-whitespace
// RUN: dgemm-opt --help | FileCheck %s --check-prefix=SYNC --strict-whitespace
// RUN: dgemm-opt --help | FileCheck %s --check-prefix=NVVM --strict-whitespace

// CHECK: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_q(
// CHECK-SAME: nvvm.kernel
// CHECK-NOT: dgemm.

// OPTIONS: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r1_c2x1(

// A smaller target's shared memory holds 2 stages of a 160-column tile; the
// race demonstrations are named.
// TARGET: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn160_s2_r2_q_unsafe_nodrain_unsafe_nofence(

// INPLACE: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_red8_q(

// The variants measured no faster are no options any more.
// RETIRED: no such option mma-slices

// The pipeline has exactly these options (the next line at the indentation
// of a pass name is the next pass).
// HELP: --dgemm-to-llvm
// HELP-NEXT: --cluster-m=<int>
// HELP-NEXT: --desc-slots=<int>
// HELP-NEXT: --expected-k=<long>
// HELP-NEXT: --in-place
// HELP-NEXT: --memory-bandwidth-gbps=<int>
// HELP-NEXT: --num-sms=<int>
// HELP-NEXT: --quad-b=<int>
// HELP-NEXT: --smem-bytes=<int>
// HELP-NEXT: --unsafe=<string>
// HELP-NEXT: {{^ {6}--[a-z]}}

// So has dgemm-select-config; the other dgemm passes have none.
// SELECT: {{^ {6}--dgemm-select-config }}
// SELECT-NEXT: --cluster-m=<int>
// SELECT-NEXT: --desc-slots=<int>
// SELECT-NEXT: --expected-k=<long>
// SELECT-NEXT: --in-place
// SELECT-NEXT: --memory-bandwidth-gbps=<int>
// SELECT-NEXT: --num-sms=<int>
// SELECT-NEXT: --quad-b=<int>
// SELECT-NEXT: --smem-bytes=<int>
// SELECT-NEXT: --unsafe=<string>
// SELECT-NEXT: {{^ {6}--[a-z]}}
// KERNEL: {{^ {6}--dgemm-lower-to-kernel }}
// KERNEL-NEXT: {{^ {6}--[a-z]}}
// SYNC: {{^ {6}--dgemm-place-sync }}
// SYNC-NEXT: {{^ {6}--[a-z]}}
// NVVM: {{^ {6}--convert-dgemm-to-nvvm }}
// NVVM-NEXT: {{^ {6}--[a-z]}}

dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// Quad-ordered B (quad_b) in dgemm-select-config: by default the heuristics
// give it to every kernel but the in-place one when N is a multiple of 16;
// quad-b=0 never, quad-b=1 always, refused where N is not a multiple of 16.
// RUN: dgemm-opt %s --dgemm-select-config | FileCheck %s --check-prefix=AUTO
// RUN: dgemm-opt %s "--dgemm-select-config=in-place expected-k=8192" | FileCheck %s --check-prefix=INPLACE
// RUN: dgemm-opt %s --dgemm-select-config=quad-b=0 | FileCheck %s --check-prefix=OFF
// quad-b=1 (its expectation below enabled for this RUN line alone):
// RUN: sed 's|// ON-EXPECTED|// expected|' %s | dgemm-opt --split-input-file --dgemm-select-config=quad-b=1 -verify-diagnostics | FileCheck %s --check-prefix=ON

// AUTO-LABEL: dgemm.gemm @n2048
// AUTO-SAME: quad_b = 1>
// INPLACE-LABEL: dgemm.gemm @n2048
// INPLACE-SAME: epilogue = in_place>
// OFF-LABEL: dgemm.gemm @n2048
// OFF-SAME: num_sms = 132>
// ON: dgemm.gemm @n2048
// ON-SAME: quad_b = 1>
dgemm.gemm @n2048 k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// -----

// AUTO-LABEL: dgemm.gemm @n2056
// AUTO-SAME: num_sms = 132>
// ON-EXPECTED-error @below {{'dgemm.gemm' op dgemm-select-config: quad-b=1, but the kernel cannot read B in quad order (N % 16 == 0 and a block_n that checkConfig accepts with quad_b = 1)}}
dgemm.gemm @n2056 k_grouped_contiguous nt m = 2048 n = 2056 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// Quad-ordered B (quad_b) in dgemm-select-config: by default the heuristics
// give it to every kernel but the in-place one when N is a multiple of 16;
// quad-b=0 never, quad-b=1 always, refused where N is not a multiple of 16.
// RUN: dgemm-opt %s --split-input-file --dgemm-select-config | FileCheck %s --check-prefix=AUTO
// RUN: dgemm-opt %s --split-input-file "--dgemm-select-config=in-place expected-k=8192" | FileCheck %s --check-prefix=INPLACE
// RUN: dgemm-opt %s --split-input-file --dgemm-select-config=quad-b=0 | FileCheck %s --check-prefix=OFF
// RUN: not dgemm-opt %s --split-input-file --dgemm-select-config=quad-b=1 2>/dev/null | FileCheck %s --check-prefix=ON
// RUN: not dgemm-opt %s --split-input-file --dgemm-select-config=quad-b=1 2>&1 >/dev/null | FileCheck %s --check-prefix=ONERR

// AUTO-LABEL: dgemm.gemm @n2048
// AUTO-SAME: quad_b = 1>
// INPLACE-LABEL: dgemm.gemm @n2048
// INPLACE-SAME: in_place_only = 1>
// OFF-LABEL: dgemm.gemm @n2048
// OFF-SAME: num_sms = 132>
// ON: dgemm.gemm @n2048
// ON-SAME: quad_b = 1>
dgemm.gemm @n2048 k_grouped_contiguous nt m = 2048 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// -----

// AUTO-LABEL: dgemm.gemm @n2056
// AUTO-SAME: num_sms = 132>
// ONERR: error: 'dgemm.gemm' op dgemm-select-config: quad-b=1 needs N to be a multiple of 16, got 2056
dgemm.gemm @n2056 k_grouped_contiguous nt m = 2048 n = 2056 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

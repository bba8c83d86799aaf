// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --convert-dgemm-to-nvgpu -split-input-file -verify-diagnostics -o /dev/null

// Without dgemm-place-sync there are no barrier counts to initialize the
// barriers with.
// expected-error @+1 {{barrier arrival counts are missing: run dgemm-place-sync before convert-dgemm-to-nvgpu}}
dgemm.gemm @unsynced k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

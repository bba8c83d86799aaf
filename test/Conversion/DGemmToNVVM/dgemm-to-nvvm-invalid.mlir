// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm -verify-diagnostics -o /dev/null

// Without convert-dgemm-to-nvgpu the barriers are not initialized and the
// loads, arrives and drains are not lowered: the first of them is reported.
// expected-error @+1 {{'dgemm.desc.drain' op is lowered by convert-dgemm-to-nvgpu, which runs before convert-dgemm-to-nvvm}}
dgemm.gemm @unlowered k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

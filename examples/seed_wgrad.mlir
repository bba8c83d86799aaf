// The weight-gradient GEMM of the bug report this project answers: 4 experts
// with 256/128/128/256 tokens, hidden 2048 (M: rows of grad_y^T), FFN 2048
// (N: rows of the activations^T), FP8 e4m3 operands with per-channel scales
// on every 128-token block (1D1D), FP32 output accumulated in place.
// K varies per call and per expert, so it is `?`.
dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

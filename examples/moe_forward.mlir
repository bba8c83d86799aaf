// The MoE forward (and data-gradient) GEMM: tokens of every expert stacked
// along M (each expert's rows padded to 128; the grouped layout names each
// row's expert), one [N, K] weight per expert, FP8 e4m3 operands with
// per-token scales on A and 128x128 block scales on B (1D2D), BF16 output.
// DeepGEMM's m-grouped benchmark shape: 4 experts of 8192 tokens, N = 4096,
// K = 7168. M_sum, N and K are launch arguments: one kernel serves every
// shape.
dgemm.gemm @moe_forward m_grouped_contiguous nt m = ? n = 4096 k = 7168
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

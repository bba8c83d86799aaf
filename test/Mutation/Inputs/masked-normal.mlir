// The masked, psum and normal 1D2D descriptions of examples/kernels.mlir, for the mutation
// suite.
dgemm.gemm @moe_decode m_grouped_masked nt m = 4096 n = 4096 k = 7168
    groups = 8 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]
dgemm.gemm @dense normal nt m = ? n = 7168 k = 2048
    groups = 1 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]
dgemm.gemm @moe_forward_psum m_grouped_contiguous_psum nt m = ? n = 4096 k = 7168
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]

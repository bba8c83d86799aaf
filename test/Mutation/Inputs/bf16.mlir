// BF16 descriptions of examples/kernels.mlir, one per row map and operand
// majorness, for the mutation suite: their block loops carry a fragment and
// its stage in flight (wgmma.wait_group 1, the release one block late).
dgemm.gemm @bf16_tn_f32_acc normal tn m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> f32 accumulate
dgemm.gemm @moe_bf16_nn m_grouped_contiguous nn m = ? n = ? k = ?
    groups = 4 : (bf16, bf16) -> bf16
dgemm.gemm @moe_bf16_psum_nt m_grouped_contiguous_psum nt m = ? n = ? k = ?
    groups = 4 : (bf16, bf16) -> bf16
dgemm.gemm @moe_bf16_decode m_grouped_masked nt m = ? n = ? k = ?
    groups = 8 : (bf16, bf16) -> bf16
dgemm.gemm @wgrad_bf16_acc k_grouped_contiguous tn m = ? n = ? k = ?
    groups = 4 : (bf16, bf16) -> f32 accumulate

// Every kernel kind dgemm builds, one description each: the bundle the runtime
// loads is built from this file with every candidate configuration,
//   dgemm-translate --dgemm-to-ptx examples/kernels.mlir --bundle-dir=DIR \
//       (every candidate is the default)
// (the k-grouped weight gradient of examples/seed_wgrad.mlir, the m-grouped
// forward of examples/moe_forward.mlir (with its experts' rows per row, and by
// prefix sums: the psum layout), the masked MoE decode step, and the
// normal FP8 GEMM: 1D2D with a BF16 D, and 1D1D with an FP32 D, which the
// k-grouped kernel computes as one group).
dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
dgemm.gemm @moe_forward m_grouped_contiguous nt m = ? n = 4096 k = 7168
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]
dgemm.gemm @moe_forward_psum m_grouped_contiguous_psum nt m = ? n = 4096 k = 7168
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]
dgemm.gemm @moe_decode m_grouped_masked nt m = 4096 n = 4096 k = 7168
    groups = 8 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]
dgemm.gemm @dense normal nt m = ? n = 7168 k = 2048
    groups = 1 : (f8E4M3FN, f8E4M3FN) -> bf16 recipe [1, 128, 128]
dgemm.gemm @dense_1d1d normal nt m = ? n = 7168 k = 2048
    groups = 1 : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]

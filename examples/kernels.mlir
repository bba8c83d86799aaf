// Every kernel kind dgemm builds, one description each: the bundle the runtime
// loads is built from this file with every candidate configuration,
//   dgemm-translate --dgemm-to-ptx examples/kernels.mlir --bundle-dir=DIR \
//       (every candidate is the default)
// (the k-grouped weight gradient of examples/seed_wgrad.mlir, the m-grouped
// forward of examples/moe_forward.mlir (with its experts' rows per row, and by
// prefix sums: the psum layout), the masked MoE decode step, and the
// normal FP8 GEMM: 1D2D with a BF16 D, and 1D1D with an FP32 D, which the
// k-grouped kernel computes as one group), and the BF16 family: every kind,
// layout and D its Python functions call (DeepGEMM's bf16_gemm_{nt,nn,tn,tt}
// with a BF16 D, an FP32 D, and an FP32 D accumulated in place;
// m_grouped_bf16_gemm_{nt,nn}_contiguous with either layout of the experts'
// rows; m_grouped_bf16_gemm_nt_masked; k_grouped_bf16_gemm_tn_contiguous
// overwriting or accumulating).
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
dgemm.gemm @bf16_nt normal nt m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> bf16
dgemm.gemm @bf16_nt_f32 normal nt m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> f32
dgemm.gemm @bf16_nt_f32_acc normal nt m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> f32 accumulate
dgemm.gemm @bf16_nn normal nn m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> bf16
dgemm.gemm @bf16_nn_f32 normal nn m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> f32
dgemm.gemm @bf16_nn_f32_acc normal nn m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> f32 accumulate
dgemm.gemm @bf16_tn normal tn m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> bf16
dgemm.gemm @bf16_tn_f32 normal tn m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> f32
dgemm.gemm @bf16_tn_f32_acc normal tn m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> f32 accumulate
dgemm.gemm @bf16_tt normal tt m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> bf16
dgemm.gemm @bf16_tt_f32 normal tt m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> f32
dgemm.gemm @bf16_tt_f32_acc normal tt m = ? n = ? k = ?
    groups = 1 : (bf16, bf16) -> f32 accumulate
dgemm.gemm @moe_bf16_nt m_grouped_contiguous nt m = ? n = ? k = ?
    groups = 4 : (bf16, bf16) -> bf16
dgemm.gemm @moe_bf16_nn m_grouped_contiguous nn m = ? n = ? k = ?
    groups = 4 : (bf16, bf16) -> bf16
dgemm.gemm @moe_bf16_psum_nt m_grouped_contiguous_psum nt m = ? n = ? k = ?
    groups = 4 : (bf16, bf16) -> bf16
dgemm.gemm @moe_bf16_psum_nn m_grouped_contiguous_psum nn m = ? n = ? k = ?
    groups = 4 : (bf16, bf16) -> bf16
dgemm.gemm @moe_bf16_decode m_grouped_masked nt m = ? n = ? k = ?
    groups = 8 : (bf16, bf16) -> bf16
dgemm.gemm @wgrad_bf16 k_grouped_contiguous tn m = ? n = ? k = ?
    groups = 4 : (bf16, bf16) -> f32
dgemm.gemm @wgrad_bf16_acc k_grouped_contiguous tn m = ? n = ? k = ?
    groups = 4 : (bf16, bf16) -> f32 accumulate

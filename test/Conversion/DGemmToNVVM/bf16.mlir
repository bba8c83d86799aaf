// RUN: dgemm-opt %s -split-input-file --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s

// The BF16 kernels' WGMMAs and loads. A K block is four m64nNk16 bf16 x bf16
// WGMMAs: a tile's first block, issued before the block loop, into a fresh
// fragment (scale-d 0 on its first WGMMA), each later block chained onto the
// fragment (scale-d 1), with one block left in flight at the end of each
// iteration (wait_group 1) and none after the loop (wait_group 0). The
// layout's majorness sets the transpose bits: A "row" and B "col" are
// K-major, A "col" M-major, B "row" N-major.

// nt: both operands K-major, one box each (as the FP8 tiles: rows of 128
// bytes, here 64 BF16), descriptor steps of 32 bytes (2 units) per k16;
// K-major descriptors: LBO 1, SBO 1024 bytes, 128B swizzle
// ((1 << 62) | (64 << 32) | (1 << 16)).
// CHECK-LABEL: llvm.func @dgemm_normal_bf16_nt_bm128_bn256_s4(
// CHECK-DAG: llvm.mlir.constant(4611686293305360384 : i64)
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.fptrunc {{.*}} : vector<2xf32> to vector<2xbf16>
dgemm.gemm @dense normal nt m = 4096 n = 4096 k = 7168 groups = 1
    : (bf16, bf16) -> bf16

// -----

// tn with an FP32 D accumulated: both operands MN-major, loaded as 64-wide
// column blocks of 64 K rows (8192 bytes apart: 2 boxes of A, 4 of B at x +
// 64 c), their descriptors' LBO the column blocks' distance (8192 bytes: 512
// units in bits 16-29) and SBO 1024 bytes; each k16 step is 16 rows of 128
// bytes (2048 bytes, 128 units). The epilogue adds d's values to the sums
// and stores FP32 pairs.
// CHECK-LABEL: llvm.func @dgemm_normal_bf16_tn_bm128_bn256_s4_f32_acc(
// CHECK-DAG: llvm.mlir.constant(4611686293338849280 : i64)
// CHECK-DAG: llvm.mlir.constant(128 : i64)
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[A0:.+]], %arg0, %{{.+}}, box[
// CHECK-NEXT: llvm.getelementptr %[[A0]][8192]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg0,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[B0:.+]], %arg1, %{{.+}}, box[
// CHECK-NEXT: llvm.getelementptr %[[B0]][8192]
// CHECK: getelementptr %[[B0]][16384]
// CHECK: getelementptr %[[B0]][24576]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg1,
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK: %[[OLD:.+]] = llvm.load %{{.+}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xf32>
// CHECK-NEXT: %[[NEW:.+]] = llvm.fadd %{{.+}}, %[[OLD]] : vector<2xf32>
// CHECK-NEXT: llvm.store %[[NEW]], %{{.+}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
dgemm.gemm @dense_tn normal tn m = 4096 n = 4096 k = 7168 groups = 1
    : (bf16, bf16) -> f32 accumulate

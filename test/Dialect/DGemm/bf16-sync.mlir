// RUN: dgemm-opt %s -split-input-file --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync | FileCheck %s
// RUN: dgemm-opt %s -split-input-file --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync -o /dev/null
// RUN: dgemm-opt %s -split-input-file --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync > %t.mlir
// RUN: grep -v "dgemm.mma.wait" %t.mlir | not dgemm-opt -split-input-file --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOMMAWAIT
// RUN: grep -v "dgemm.wait empty" %t.mlir | not dgemm-opt -split-input-file --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOEMPTY
// RUN: sed 's/pending(1)/pending(2)/' %t.mlir | not dgemm-opt -split-input-file --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NOMMAWAIT
// RUN: sed 's/dgemm.arrive empty(%%arg22)/dgemm.arrive empty(%%stage_7)/' %t.mlir | not dgemm-opt -split-input-file --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=RELEASENEW
// NOMMAWAIT-COUNT-2: error: releases a stage while an asynchronous read of it may still be in flight
// NOEMPTY-COUNT-2: error:
// RUN: grep -v "dgemm.arrive empty(%%arg22)" %t.mlir | not dgemm-opt -split-input-file --dgemm-verify-sync 2>&1 | FileCheck %s --check-prefix=NORELEASE
// RELEASENEW: error: releases a stage while an asynchronous read of it may still be in flight
// NORELEASE-COUNT-2: error: a stage carried into the loop body is neither released nor carried on

// The BF16 kernels (the 1D2D builder's BF16 path): A and B only (no scales),
// 64-deep K blocks of 128-byte rows, each block's WGMMAs chained onto the
// previous block's fragment, no turns. dgemm-place-sync derives the
// pipeline from the effects: the full barrier expects both tiles' bytes,
// the math role keeps one block's WGMMAs in flight and releases a stage
// once the WGMMAs reading it completed, and no proxy fence is placed: no
// generic read of a stage remains.

// bf16_gemm_tn with an FP32 D accumulated: both operands MN-major, loaded at
// (first M or N, K) instead of (K, row); 128 x 256 tiles of 2 x 128 x 64 BF16.
// CHECK-LABEL: dgemm.kernel @dgemm_normal_bf16_tn_bm128_bn256_s4_f32_acc
// CHECK: producer(regs = 40)
// CHECK: %[[M0:.+]] = arith.muli %{{.+}}, %c128_i32{{.*}} : i32
// CHECK: %[[N0:.+]] = arith.muli %{{.+}}, %c256_i32{{.*}} : i32
// CHECK: %[[S:.+]], %{{.+}} = dgemm.stage %{{.+}} of 4
// CHECK: %[[KX:.+]] = arith.muli %{{.+}}, %c64_i32{{.*}} : i32
// CHECK-NEXT: dgemm.wait empty(%[[S]]) phase
// CHECK-NEXT: dgemm.arrive full(%[[S]]) tx 49152
// CHECK-NEXT: dgemm.tma.load a stage(%[[S]]) at(%[[M0]], %[[KX]]){{$}}
// CHECK-NEXT: dgemm.tma.load b stage(%[[S]]) at(%[[N0]], %[[KX]]){{$}}
// CHECK-NOT: dgemm.tma.load sfa
// CHECK: } math(regs = 232)
// CHECK-NOT: dgemm.turn
// The first block is issued before the block loop, which carries its
// fragment and stage in flight: each iteration chains its block onto the
// fragment, completes all but its own group (pending(1)) and only then
// releases the previous block's stage.
// CHECK: scf.if %{{.+}} -> (i32) {
// CHECK-NEXT: %[[S0:.+]], %[[P0:.+]] = dgemm.stage
// CHECK-NEXT: dgemm.wait full(%[[S0]]) phase(%[[P0]])
// CHECK-NEXT: %[[ACC0:.+]] = dgemm.mma stage(%[[S0]]) : vector<128xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}, %[[PREV:.+]] = %[[ACC0]], %[[PS:.+]] = %[[S0]])
// CHECK: %[[MS:.+]], %[[MP:.+]] = dgemm.stage
// CHECK-NEXT: dgemm.wait full(%[[MS]]) phase(%[[MP]])
// CHECK-NEXT: %[[ACC:.+]] = dgemm.mma stage(%[[MS]]) chain(%[[PREV]] : vector<128xf32>) : vector<128xf32>
// CHECK: arith.addi
// CHECK-NEXT: dgemm.mma.wait pending(1)
// CHECK-NEXT: dgemm.arrive empty(%[[PS]])
// CHECK-NEXT: scf.yield %{{.+}}, %[[ACC]], %[[MS]]
// CHECK: dgemm.mma.wait{{$}}
// CHECK-NEXT: dgemm.arrive empty(%[[LAST:.+]]#2)
// CHECK-NEXT: dgemm.store_rows %[[LAST]]#1 group(%{{.+}}) tile(%{{.+}}, %{{.+}}) limit(%arg11) : vector<128xf32>
// A tile with no K block stores the zero fragment.
// CHECK: } else {
// CHECK-NEXT: %[[Z:.+]] = arith.constant dense<0.000000e+00> : vector<128xf32>
// CHECK-NEXT: dgemm.store_rows %[[Z]] group
// CHECK-NOT: dgemm.proxy_fence
// CHECK: {empty_arrivals = 8 : i32, full_arrivals = 1 : i32}
dgemm.gemm @dense_tn normal tn m = 4096 n = 4096 k = 7168 groups = 1
    : (bf16, bf16) -> f32 accumulate

// -----

// k_grouped_bf16_gemm_tn: G schedule groups; group g's K offset is the sum
// of the K_i before it (ks, argument 9, negative read as 0), its K blocks
// K_g / 64, and both loads read K rows offset + 64 kb of the one map over
// all of K (no descriptor slot, no rewrite). Its tiles store d row g * M + r
// below M.
// CHECK-LABEL: dgemm.kernel @dgemm_kgrouped_bf16_tn_bm128_bn256_s4_f32_acc
// CHECK: producer(regs = 40)
// CHECK: %[[G:.+]] = arith.divui %arg17, %{{.+}} : i32
// CHECK: %[[OFF:.+]] = scf.for %[[I:.+]] = %{{.+}} to %[[G]] step %{{.+}} iter_args(%[[SUM:.+]] = %{{.+}}) -> (i32)
// CHECK: %[[P:.+]] = llvm.getelementptr %arg9[%[[I]]]
// CHECK-NEXT: %[[KI:.+]] = llvm.load %[[P]]
// CHECK: %[[KP:.+]] = arith.maxsi %[[KI]], %{{.+}} : i32
// CHECK-NEXT: arith.addi %[[SUM]], %[[KP]] : i32
// CHECK: llvm.getelementptr %arg9[%[[G]]]
// CHECK: %[[NKB:.+]] = arith.divui %{{.+}}, %c64_i32{{.*}} : i32
// CHECK: scf.for %[[KB:.+]] = %{{.+}} to %[[NKB]] step
// CHECK: %[[KX:.+]] = arith.muli %[[KB]], %c64_i32{{.*}} : i32
// CHECK-NEXT: %[[K:.+]] = arith.addi %[[OFF]], %[[KX]] : i32
// CHECK-NEXT: dgemm.wait empty
// CHECK-NEXT: dgemm.arrive full(%{{.+}}) tx 49152
// CHECK-NEXT: dgemm.tma.load a stage(%{{.+}}) at(%{{.+}}, %[[K]]){{$}}
// CHECK-NEXT: dgemm.tma.load b stage(%{{.+}}) at(%{{.+}}, %[[K]]){{$}}
// CHECK-NOT: dgemm.desc
// CHECK: } math(regs = 232)
// CHECK: dgemm.mma stage(%{{.+}}) chain(
// CHECK: dgemm.store_rows %{{.+}}#1 group(%[[MG:.+]]) tile(%{{.+}}, %{{.+}}) limit(%arg11) : vector<128xf32>
dgemm.gemm @wgrad k_grouped_contiguous tn m = 4096 n = 7168 k = ? groups = 4
    : (bf16, bf16) -> f32 accumulate

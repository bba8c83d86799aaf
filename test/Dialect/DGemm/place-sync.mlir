// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --canonicalize --dgemm-place-sync | FileCheck %s
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync -o /dev/null
// RUN: dgemm-opt %s --dgemm-select-config --dgemm-lower-to-kernel --dgemm-place-sync=unsafe-skip-descriptor-drain | FileCheck %s --check-prefix=UNSAFE

// The seed's wgrad GEMM: every synchronization op below was derived by
// dgemm-place-sync from the resource effects of the kernel ops.

// Barrier arrival counts: one producer thread arms each full barrier, all
// 256 math threads release each stage.
// CHECK-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2
// CHECK: dgemm.warp_specialize producer(regs = 40)

// A group switch: each descriptor slot is drained of in-flight loads before
// it is rewritten, and published to the tensormap proxy right after.
// CHECK: scf.if
// CHECK: dgemm.desc.drain a slot([[SLOT:%.+]]) before_iteration([[IT:%.+]])
// CHECK-NEXT: dgemm.desc.update a slot([[SLOT]]) group({{%.+}}) k_offset({{%.+}}) k_size({{%.+}}) before_iteration([[IT]])
// CHECK-NEXT: dgemm.desc.publish a slot([[SLOT]])
// CHECK-NEXT: dgemm.desc.drain b slot([[SLOT]]) before_iteration([[IT]])
// CHECK-NEXT: dgemm.desc.update b slot([[SLOT]])
// CHECK-NEXT: dgemm.desc.publish b slot([[SLOT]])

// The producer acquires the stage (empty barrier) and arms its full barrier
// with the bytes of all four loads (128*128 + 128*128 + 128*4 + 128*4)
// before the first load writes it.
// CHECK: %[[PS:.+]], %[[PP:.+]] = dgemm.stage {{%.+}} of 6
// CHECK: dgemm.wait empty(%[[PS]]) phase(%[[PP]])
// CHECK-NEXT: dgemm.arrive full(%[[PS]]) tx 33792
// CHECK-NEXT: dgemm.tma.load a stage(%[[PS]]) at({{.*}}) slot({{%.+}})
// CHECK-NEXT: dgemm.tma.load b stage(%[[PS]])
// CHECK-NEXT: dgemm.tma.load sfa stage(%[[PS]])
// CHECK-NEXT: dgemm.tma.load sfb stage(%[[PS]])

// The math role waits for the full barrier before WGMMA reads the stage,
// waits for WGMMA before the promotion reads the accumulator, and releases
// the stage after the promotion's scale reads.
// CHECK: math(regs = 232)
// CHECK: %[[MS:.+]], %[[MP:.+]] = dgemm.stage {{%.+}} of 6
// CHECK-NEXT: dgemm.wait full(%[[MS]]) phase(%[[MP]])
// CHECK-NEXT: %[[ACC:.+]] = dgemm.mma stage(%[[MS]]) : vector<64xf32>
// CHECK-NEXT: dgemm.mma.wait
// CHECK-NEXT: dgemm.promote %[[ACC]] into {{%.+}} scales(%[[MS]])
// CHECK-NEXT: dgemm.arrive empty(%[[MS]])
// CHECK: dgemm.epilogue
// CHECK: } {empty_arrivals = 256 : i32, full_arrivals = 1 : i32}

// UNSAFE-NOT: dgemm.desc.drain
// UNSAFE: dgemm.desc.update a
// UNSAFE-NEXT: dgemm.desc.publish a
// UNSAFE-NOT: dgemm.desc.drain
dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// The math role of the two-warpgroup kernel as it is built (the schedule's
// variants measured no faster, or wrong by design for timing, were retired;
// bench/NOTES.md keeps the record): the tensor-core turn, the WGMMA operand
// descriptors, the promotion's scale loads and the epilogue.
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync | FileCheck %s --check-prefix=LATE
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=DEFAULT
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=SETUP
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=SFB
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=UNIFORM
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=EPI

dgemm.gemm @w k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128] config <block_m = 128, block_n = 192, block_k = 128, stages = 5, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// The stage's full-barrier wait comes after the turn's (waiting for the data
// before the turn measured no faster, bench/NOTES.md).
// LATE: dgemm.turn wait
// LATE-NEXT: dgemm.wait full(%[[S:.+]]) phase
// LATE-NEXT: dgemm.mma stage(%[[S]])

// A block is one commit group, completed before the turn passes.
// DEFAULT: nvvm.wgmma.fence.aligned
// DEFAULT-COUNT-4: nvvm.wgmma.mma_async
// DEFAULT-NEXT: nvvm.wgmma.commit.group.sync.aligned
// DEFAULT-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// DEFAULT: "bar.arrive $0, 256;"
// DEFAULT-NOT: nvvm.wgmma.wait.group

// The block's two operand descriptors are built before the turn's bar.sync,
// so that once the turn arrives only the stage's full-barrier wait and the
// WGMMAs remain.
// SETUP: %[[DA:.+]] = llvm.or %{{.+}}, %{{.+}} : i64
// SETUP: %[[DB:.+]] = llvm.or %{{.+}}, %{{.+}} : i64
// SETUP: "bar.sync $0, 256;"
// SETUP: mbarrier.try_wait.parity
// SETUP: nvvm.wgmma.fence.aligned
// SETUP-NOT: llvm.or
// SETUP: nvvm.wgmma.mma_async

// The math warpgroup index is broadcast from lane 0 once (shfl.sync.idx), in
// the kernel's entry block before any role branches, and A's WGMMA
// descriptor is built from the broadcast value, so that ptxas keeps the
// descriptors in uniform registers (the per-thread index is still used for
// the fragment's rows).
// UNIFORM: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2(
// UNIFORM-NOT: scf.if
// UNIFORM: %[[TID:.+]] = nvvm.read.ptx.sreg.tid.x : i32
// UNIFORM-NEXT: %[[Q:.+]] = arith.divui %[[TID]], %{{.+}} : i32
// UNIFORM-NEXT: %[[WG:.+]] = arith.subi %[[Q]], %{{.+}} : i32
// UNIFORM-NEXT: %[[UWG:.+]] = nvvm.shfl.sync  idx %{{.+}}, %[[WG]], %{{.+}}, %{{.+}} : i32 -> i32
// UNIFORM: llvm.mul %[[UWG]], %{{.+}} : i32
// UNIFORM: nvvm.wgmma.fence.aligned
// UNIFORM-COUNT-4: nvvm.wgmma.mma_async
// UNIFORM-NOT: nvvm.shfl.sync  idx

// The promotion of the 192 columns reads the sfb pairs of all 24 8-column
// groups from shared memory, 8 bytes each.
// SFB: nvvm.wgmma.wait.group.sync.aligned 0
// SFB-COUNT-24: llvm.load {{.*}} : !llvm.ptr<3> -> vector<2xf32>
// SFB-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> vector<2xf32>
// SFB: nvvm.fence.proxy

// After the block loop the epilogue (c loads, d stores) follows directly,
// with no test of the workspace pointer (argument 10) around it.
// EPI: scf.yield {{.*}} : i32, vector<96xf32>
// EPI-NEXT: }
// EPI-NOT: llvm.ptrtoint %arg10
// EPI: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<1>

// Options that place the WGMMA descriptors (mma-setup-before-turn and
// uniform-warpgroup are on by default), move the tensor-core turn's hand-over or time the kernel
// without the promotion's cost. All are off by default and measured slower
// (turn-pass-pending, wait-before-turn) or wrong by design
// (unsafe-unscaled-promotion, unsafe-sfb-stride, unsafe-sfb-vec4,
// unsafe-skip-epilogue); bench/NOTES.md, sections 8, 11, 13 and 14.
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=turn-pass-pending=1 --canonicalize | FileCheck %s --check-prefix=PEND1
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=turn-pass-pending=2 --canonicalize | FileCheck %s --check-prefix=PEND2
// RUN: sed 's/block_n = 192, block_k = 128, stages = 5/block_n = 128, block_k = 128, stages = 6/' %s | dgemm-opt --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=turn-pass-pending=1 --canonicalize | FileCheck %s --check-prefix=PENDPAIR
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=DEFAULT
// RUN: not dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=turn-pass-pending=4 2>&1 | FileCheck %s --check-prefix=BADPEND
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync=wait-before-turn | FileCheck %s --check-prefix=EARLY
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync | FileCheck %s --check-prefix=LATE
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=unsafe-unscaled-promotion --canonicalize | FileCheck %s --check-prefix=UNSCALED
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=SETUP
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=mma-setup-before-turn=false --canonicalize | FileCheck %s --check-prefix=ATMMA
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=SFB1
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=unsafe-sfb-stride=2 --canonicalize | FileCheck %s --check-prefix=SFB2
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=unsafe-sfb-stride=0 --canonicalize | FileCheck %s --check-prefix=SFB0
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=unsafe-sfb-vec4 --canonicalize | FileCheck %s --check-prefix=SFB4
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=UNIFORM
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=unsafe-skip-epilogue --canonicalize | FileCheck %s --check-prefix=SKIPEPI
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=WITHEPI
// RUN: dgemm-opt %s --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvvm=uniform-warpgroup=false --canonicalize | FileCheck %s --check-prefix=PERTHREAD

dgemm.gemm @w k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128] config <block_m = 128, block_n = 192, block_k = 128, stages = 5, desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132>

// turn-pass-pending = N: the block's last N WGMMAs are a commit group of
// their own; the turn passes once the first group completed, and the
// promotion (and the stage's release after it) waits for the rest.
// PEND1: "bar.sync $0, 256;"
// PEND1: nvvm.wgmma.fence.aligned
// PEND1-COUNT-3: nvvm.wgmma.mma_async
// PEND1-NEXT: nvvm.wgmma.commit.group.sync.aligned
// PEND1: nvvm.wgmma.mma_async
// PEND1-NEXT: nvvm.wgmma.commit.group.sync.aligned
// PEND1-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// PEND1: "bar.arrive $0, 256;"
// PEND1-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// PEND1-NOT: nvvm.wgmma.wait.group
// PEND1: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// PEND1: nvvm.mbarrier.arrive

// PEND2: nvvm.wgmma.fence.aligned
// PEND2-COUNT-2: nvvm.wgmma.mma_async
// PEND2-NEXT: nvvm.wgmma.commit.group.sync.aligned
// PEND2-COUNT-2: nvvm.wgmma.mma_async
// PEND2-NEXT: nvvm.wgmma.commit.group.sync.aligned
// PEND2-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// PEND2: "bar.arrive $0, 256;"
// PEND2-NEXT: nvvm.wgmma.wait.group.sync.aligned 0

// At 128 columns (two blocks per turn, then the odd block with its scales in
// registers) every block is two groups: the pair's wait for its first block
// leaves the second block's two groups pending; the odd block's complete
// wait is split around the hand-over, and the stage's fence and release
// follow the second wait.
// PENDPAIR: nvvm.wgmma.wait.group.sync.aligned 2
// PENDPAIR: "bar.arrive $0, 256;"
// PENDPAIR: nvvm.wgmma.wait.group.sync.aligned 0
// PENDPAIR: nvvm.wgmma.wait.group.sync.aligned 1
// PENDPAIR: "bar.arrive $0, 256;"
// PENDPAIR-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// PENDPAIR-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// PENDPAIR: nvvm.mbarrier.arrive

// By default a block is one commit group, completed before the turn passes.
// DEFAULT: nvvm.wgmma.fence.aligned
// DEFAULT-COUNT-4: nvvm.wgmma.mma_async
// DEFAULT-NEXT: nvvm.wgmma.commit.group.sync.aligned
// DEFAULT-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// DEFAULT: "bar.arrive $0, 256;"
// DEFAULT-NOT: nvvm.wgmma.wait.group

// BADPEND: error: 'dgemm.kernel' op turn-pass-pending must be 0 to 3 (WGMMAs of a block's 4 left running at the hand-over), got 4

// wait-before-turn: the stage's full-barrier wait comes before the turn's.
// EARLY: dgemm.wait full(%[[S:.+]]) phase
// EARLY-NEXT: dgemm.turn wait
// EARLY-NEXT: dgemm.mma stage(%[[S]])
// LATE: dgemm.turn wait
// LATE-NEXT: dgemm.wait full(%[[S:.+]]) phase
// LATE-NEXT: dgemm.mma stage(%[[S]])

// unsafe-unscaled-promotion: the promotion is one add per accumulator, with
// no scale loads or products (the epilogue still adds c).
// UNSCALED: nvvm.wgmma.wait.group.sync.aligned 0
// UNSCALED-COUNT-96: llvm.fadd
// UNSCALED-NOT: llvm.intr.fma
// UNSCALED: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>

// mma-setup-before-turn (default): the block's two operand descriptors are
// built before the turn's bar.sync, so that once the turn arrives only the
// stage's full-barrier wait and the WGMMAs remain; false builds them at the
// WGMMAs, after the wait.
// SETUP: %[[DA:.+]] = llvm.or %{{.+}}, %{{.+}} : i64
// SETUP: %[[DB:.+]] = llvm.or %{{.+}}, %{{.+}} : i64
// SETUP: "bar.sync $0, 256;"
// SETUP: mbarrier.try_wait.parity
// SETUP: nvvm.wgmma.fence.aligned
// SETUP-NOT: llvm.or
// SETUP: nvvm.wgmma.mma_async
// ATMMA: "bar.sync $0, 256;"
// ATMMA-NOT: llvm.or {{.+}} : i64
// ATMMA: mbarrier.try_wait.parity
// ATMMA: llvm.or {{.+}} : i64
// ATMMA: llvm.or {{.+}} : i64
// ATMMA: nvvm.wgmma.fence.aligned

// uniform-warpgroup (default): the math warpgroup index is broadcast from
// lane 0 once, in the kernel's entry block before any role branches, and A's
// WGMMA descriptor is built from the broadcast value (the per-thread index
// is still used for the fragment's rows).
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
// PERTHREAD-NOT: nvvm.shfl.sync  idx

// unsafe-sfb-stride (timing only, wrong results unless 1): the promotion of
// the 192 columns reads the sfb pairs of all 24 8-column groups from shared
// memory by default, of every second group with 2, of none with 0.
// SFB1: nvvm.wgmma.wait.group.sync.aligned 0
// SFB1-COUNT-24: llvm.load {{.*}} : !llvm.ptr<3> -> vector<2xf32>
// SFB1-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> vector<2xf32>
// SFB1: nvvm.fence.proxy
// SFB2: nvvm.wgmma.wait.group.sync.aligned 0
// SFB2-COUNT-12: llvm.load {{.*}} : !llvm.ptr<3> -> vector<2xf32>
// SFB2-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> vector<2xf32>
// SFB2: nvvm.fence.proxy
// SFB0: nvvm.wgmma.wait.group.sync.aligned 0
// SFB0-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> vector<2xf32>
// SFB0: nvvm.fence.proxy
// unsafe-sfb-vec4 (timing only, wrong results): one 16-byte load per two
// 8-column groups, 12 for the 192 columns, and no 8-byte ones.
// SFB4: nvvm.wgmma.wait.group.sync.aligned 0
// SFB4-COUNT-12: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// SFB4-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> vector<{{[24]}}xf32>
// SFB4: nvvm.fence.proxy

// unsafe-skip-epilogue (timing only, wrong results): after the block loop
// the epilogue (c loads, d stores) sits behind a test of the workspace
// pointer (argument 10) against null, which the runtime never passes, so the
// sums stay live but are never written.
// SKIPEPI: scf.yield {{.*}} : i32, vector<96xf32>
// SKIPEPI-NEXT: }
// SKIPEPI-NEXT: %[[WS:.*]] = llvm.ptrtoint %arg10 : !llvm.ptr<1> to i64
// SKIPEPI-NEXT: %[[NULL:.*]] = arith.cmpi eq, %[[WS]], %{{.*}} : i64
// SKIPEPI-NEXT: scf.if %[[NULL]] {
// SKIPEPI: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<1>
// WITHEPI: scf.yield {{.*}} : i32, vector<96xf32>
// WITHEPI-NEXT: }
// WITHEPI-NOT: llvm.ptrtoint %arg10
// WITHEPI: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<1>

// Quad-ordered B is off here (quad-b=0): Target/PTX/seed-wgrad.test pins it.
// RUN: dgemm-opt %s "--dgemm-select-config=cluster-m=1 quad-b=0" --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --implicit-check-not="dgemm."
// RUN: dgemm-opt %s "--dgemm-select-config=cluster-m=2 quad-b=0" --dgemm-lower-to-kernel --dgemm-place-sync --convert-dgemm-to-nvgpu --convert-nvgpu-to-nvvm --convert-dgemm-to-nvvm --canonicalize | FileCheck %s --check-prefix=MC

// With cluster_m = 2: every empty barrier counts the 8 warps of both CTAs;
// the CTAs of a cluster sync after barrier initialization; a release arrives
// on this CTA's barrier and, through mapa, on the peer's; this CTA's half of
// B is multicast (mask 0b11) at offset rank * 8192 of the stage.
// (The count reaches nvvm.mbarrier.init through nvgpu.mbarrier.init, as an
// index truncated to i32; the multicast load through nvgpu.tma.async.load,
// which names the destination in the shared::cluster window.)
// MC-DAG: %[[SIXTEEN:.+]] = arith.constant 16 : index
// MC-DAG: %[[MASK:.+]] = llvm.mlir.constant(3 : i16)
// MC: %[[N:.+]] = builtin.unrealized_conversion_cast %[[SIXTEEN]] : index to i64
// MC: %[[T:.+]] = llvm.trunc %[[N]] : i64 to i32
// MC-NEXT: nvvm.mbarrier.init {{.*}}, %[[T]]
// MC: barrier.cluster.arrive.release
// MC: %[[DST:.+]] = llvm.addrspacecast {{.*}} : !llvm.ptr<3> to !llvm.ptr<7>
// MC: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[DST]], {{.*}} multicast_mask = %[[MASK]] : !llvm.ptr<7>
// MC: nvvm.mbarrier.arrive
// MC: mapa.shared::cluster.u32
// MC: barrier.cluster.arrive.release

// The kernel becomes an LLVM function: tensor maps by value as grid
// constants, a register cap for setmaxnreg (384 threads, 1 CTA per SM), one
// dynamic shared buffer; no dgemm op is left.
// CHECK: llvm.mlir.global external @dgemm_dynamic_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2(
// CHECK-SAME: %{{.+}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}
// CHECK-SAME: attributes {nvvm.kernel, nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32}

// Barrier set-up, then the role split with register moves.
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.barrier0
// CHECK: nvvm.setmaxregister decrease 40

// Producer: a descriptor rewrite is drained (full-barrier waits), rewritten
// with tensormap.replace and published with the release/acquire fences.
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: tensormap.replace.tile.global_address.global.b1024.b64
// CHECK: tensormap.replace.tile.global_dim.global.b1024.b32
// CHECK: tensormap.replace.tile.global_stride.global.b1024.b64
// CHECK: nvvm.fence.proxy.release <gpu>
// CHECK-NEXT: nvvm.fence.proxy.acquire <gpu>
// The K loop: empty wait, arm, four TMA loads.
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global

// Math: warpgroup 1 hands the first turn to warpgroup 0 (named barrier 1);
// per block: full wait, the scale loads, this warpgroup's turn (bar.sync on
// barrier 1 + warpgroup), four FP8 WGMMAs (the first overwrites) as one
// commit group, the wait for them.
// CHECK: nvvm.setmaxregister increase 232
// CHECK: @p bar.arrive 1, 256;
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: "bar.sync $0, 256;"
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0

// The release: the proxy fence that orders the scales' ld.shared before the
// producer's next TMA write, a warp-wide sync, then one arrive per warp (at
// element 0 of the barrier's one-barrier nvgpu group: docs/UpstreamNVGPU.md).
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.bar.warp.sync
// CHECK: scf.if
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: nvvm.mbarrier.arrive
// Then the turn passes to the other warpgroup (bar.arrive on barrier
// 2 - warpgroup) before the promotion; after the last tile warpgroup 0 takes
// warpgroup 1's last pass.
// CHECK: "bar.arrive $0, 256;"
// CHECK: llvm.fmul
// CHECK: llvm.intr.fma

// The epilogue tests the whole tile once (block_m / block_n against M / N).
// A tile without K blocks (an empty group) adds nothing: in place (c == d) it
// touches nothing, with a separate c it copies c to d as loaded, without an
// add (c + 0 would turn -0.0 into +0.0).
// CHECK: arith.cmpi ule
// CHECK: arith.cmpi ule
// CHECK: %[[INTERIOR:.+]] = arith.andi
// CHECK: %[[SAME:.+]] = llvm.icmp "eq" %{{.+}}, %{{.+}} : i64
// CHECK-NEXT: %[[SEPARATE:.+]] = arith.xori %[[SAME]], %true : i1
// CHECK-NEXT: %[[EMPTY:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : i32
// CHECK-NEXT: scf.if %[[EMPTY]] {
// CHECK-NEXT: scf.if %[[SEPARATE]] {
// CHECK-NEXT: scf.if %[[INTERIOR]] {
// CHECK-COUNT-32: llvm.load {{.*}} : !llvm.ptr<1> -> vector<2xf32>
// CHECK-NOT: llvm.fadd
// CHECK-NOT: llvm.load
// CHECK: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<1>{{$}}
// CHECK-NOT: llvm.fadd
// CHECK: } else {
// CHECK-NOT: llvm.fadd
// CHECK: arith.select
// CHECK-COUNT-32: llvm.load {{.*}} : !llvm.ptr<1> -> vector<2xf32>
// CHECK-NOT: llvm.fadd
// CHECK: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<1>{{$}}
// CHECK-NOT: llvm.fadd
// CHECK: } else {
// Every other tile: an interior tile issues all 32 C loads of the thread
// before the first add and store; an edge tile clamps the address of an
// out-of-range chunk's load (arith.select) and guards only the store.
// CHECK-NEXT: scf.if %[[INTERIOR]] {
// CHECK-COUNT-32: llvm.load {{.*}} : !llvm.ptr<1> -> vector<2xf32>
// CHECK-NOT: llvm.load
// CHECK: llvm.fadd
// CHECK: llvm.store
// CHECK: } else {
// CHECK: arith.select
// CHECK-COUNT-32: llvm.load {{.*}} : !llvm.ptr<1> -> vector<2xf32>
// CHECK-NOT: llvm.load
// CHECK: scf.if
// CHECK: llvm.fadd
// CHECK: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<1>{{$}}
// CHECK-NEXT: }
// CHECK: @p bar.sync 1, 256;

dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]


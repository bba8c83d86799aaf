// The race demonstrations (test only): a configuration's `unsafe` set makes
// dgemm-place-sync omit what it names, the drain before a descriptor rewrite
// (skip_descriptor_drain, DeepGEMM 2.6.1's race) or the proxy fence before a
// stage's release (skip_proxy_fence). dgemm-select-config records its
// `unsafe` option in the configurations it chooses, and the entry name says
// so; a configuration already present keeps its own set.
// RUN: dgemm-opt %s "--dgemm-select-config=cluster-m=1 unsafe=skip_descriptor_drain" --dgemm-lower-to-kernel --dgemm-place-sync | FileCheck %s --check-prefix=NODRAIN
// RUN: dgemm-opt %s "--dgemm-select-config=cluster-m=1 unsafe=skip_proxy_fence" --dgemm-lower-to-kernel --dgemm-place-sync | FileCheck %s --check-prefix=NOFENCE
// RUN: dgemm-opt %s "--dgemm-select-config=cluster-m=1 unsafe=skip_descriptor_drain,skip_proxy_fence" --dgemm-lower-to-kernel --dgemm-place-sync | FileCheck %s --check-prefix=BOTH
// RUN: dgemm-opt %s --dgemm-select-config=cluster-m=1 --dgemm-lower-to-kernel --dgemm-place-sync | FileCheck %s --check-prefix=SAFE
// dgemm-verify-sync rejects each omission (it stops at the first kernel it
// rejects). Each RUN line below enables the expectations written for it, their
// prefix replaced by the verifier's keyword.
// RUN: sed 's|// NODRAIN-EXPECTED|// expected|' %s | dgemm-opt "--dgemm-select-config=cluster-m=1 unsafe=skip_descriptor_drain" --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync -verify-diagnostics -o /dev/null
// RUN: sed 's|// NOFENCE-EXPECTED|// expected|' %s | dgemm-opt "--dgemm-select-config=cluster-m=1 unsafe=skip_proxy_fence" --dgemm-lower-to-kernel --dgemm-place-sync --dgemm-verify-sync -verify-diagnostics -o /dev/null

// NODRAIN-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_q_unsafe_nodrain config
// NODRAIN-SAME: unsafe = skip_descriptor_drain>
// NODRAIN-NOT: dgemm.desc.drain
// NODRAIN: dgemm.desc.update a
// NODRAIN-NEXT: dgemm.desc.publish a
// NODRAIN-NEXT: dgemm.desc.update b
// NODRAIN-NEXT: dgemm.desc.publish b
// NODRAIN-NOT: dgemm.desc.drain
// NODRAIN: dgemm.proxy.fence
// NODRAIN-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_unsafe_nofence

// NOFENCE-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_q_unsafe_nofence config
// NOFENCE-SAME: unsafe = skip_proxy_fence>
// NOFENCE: dgemm.desc.drain a
// NOFENCE-NOT: dgemm.proxy.fence
// NOFENCE-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_unsafe_nofence

// BOTH-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_q_unsafe_nodrain_unsafe_nofence config
// BOTH-SAME: unsafe = "skip_descriptor_drain | skip_proxy_fence">
// BOTH-NOT: dgemm.desc.drain
// BOTH-NOT: dgemm.proxy.fence
// BOTH-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_unsafe_nofence

// Without the option, the chosen kernel keeps its drains and fences.
// SAFE-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_q config
// SAFE-NOT: unsafe
// SAFE: dgemm.desc.drain a
// SAFE: dgemm.proxy.fence
// SAFE-LABEL: dgemm.kernel @dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_unsafe_nofence

// NODRAIN-EXPECTED-error @+4 {{rewrites the A descriptor slot while TMA loads issued with its previous contents may still read it (no dgemm.desc.drain of this slot first)}}
// NODRAIN-EXPECTED-note @+3 {{this load reads the slot asynchronously ('dgemm.tma.load')}}
// NOFENCE-EXPECTED-error @+2 {{releases a stage to the producer's async-proxy (TMA) writes while a generic-proxy read of it is not fenced (no dgemm.proxy.fence in between)}}
// NOFENCE-EXPECTED-note @+1 {{read through the generic proxy here ('dgemm.promote')}}
dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// A configuration that names its own race demonstration: every run above
// builds it without the proxy fence (and with the drains), whatever the
// option says.
// NODRAIN: dgemm.desc.drain a
// NODRAIN-NOT: dgemm.proxy.fence
// NOFENCE: dgemm.desc.drain a
// NOFENCE-NOT: dgemm.proxy.fence
// BOTH: dgemm.desc.drain a
// BOTH-NOT: dgemm.proxy.fence
// SAFE: dgemm.desc.drain a
// SAFE-NOT: dgemm.proxy.fence
dgemm.gemm @pinned k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = 192, block_k = 128, stages = 5,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132,
            unsafe = skip_proxy_fence>

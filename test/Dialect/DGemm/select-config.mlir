// DeepGEMM's k-grouped wgrad benchmark shapes on an H200 (132 SMs, 227 KiB):
// the expected K per group is 8192 / 4096 / 2048 for 4 / 8 / 16 groups.
// RUN: dgemm-opt %s --dgemm-select-config=expected-k=8192 | FileCheck %s --check-prefix=G4
// RUN: dgemm-opt %s --dgemm-select-config=expected-k=4096 | FileCheck %s --check-prefix=G8
// With 16 blocks per group (K 2048), 128 columns: groups of at most 16 blocks
// hold the modelled time (docs/Heuristics.md, short groups).
// RUN: dgemm-opt %s --dgemm-select-config=expected-k=2048 | FileCheck %s --check-prefix=G16
// A smaller part gets configurations sized for its SM count and shared memory.
// RUN: dgemm-opt %s --dgemm-select-config="num-sms=78 smem-bytes=101376" | FileCheck %s --check-prefix=SMALL
// DeepGEMM's single rewritten descriptor per operand, on request.
// RUN: dgemm-opt %s --dgemm-select-config=desc-slots=1 | FileCheck %s --check-prefix=ONE-SLOT
// ONE-SLOT-LABEL: dgemm.gemm @g4_4096x7168
// ONE-SLOT-SAME: desc_slots = 1,
// A configuration already present is kept.
// RUN: dgemm-opt %s --dgemm-select-config | FileCheck %s --check-prefix=KEEP
// As the runtime selects for c = d: the shortest groups (here 4 K blocks
// each) keep the register epilogue, as with a separate c (CTA pairs at
// N = 7168), on 64-column tiles; groups of 8 blocks get 128-column tiles and
// the reduction epilogue (with
// quad-ordered B, as every kernel with a register or reduction epilogue when
// N % 16 == 0), long ones (64 blocks) the in-place kernel, which never
// multicasts B (N = 7168 would otherwise pair CTAs) and keeps B's rows in
// order.
// RUN: dgemm-opt %s --dgemm-select-config="in-place expected-k=512" | FileCheck %s --check-prefix=INREG
// RUN: dgemm-opt %s --dgemm-select-config="in-place expected-k=1024" | FileCheck %s --check-prefix=INPLACE
// RUN: dgemm-opt %s --dgemm-select-config="in-place expected-k=8192" | FileCheck %s --check-prefix=INLONG
// Groups of 9-11 blocks (here 10) keep the register epilogue over the park,
// on 128-column tiles (CTA pairs at N = 7168, none at N = 2048).
// RUN: dgemm-opt %s --dgemm-select-config="in-place expected-k=1280" | FileCheck %s --check-prefix=INMID --implicit-check-not=epilogue
// INMID-LABEL: dgemm.gemm @g4_4096x7168
// INMID-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
// INMID-SAME: cluster_m = 2,
// INMID-SAME: quad_b = 1>
// INMID-LABEL: dgemm.gemm @g4_7168x2048
// INMID-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
// INMID-SAME: cluster_m = 1,
// INMID-SAME: quad_b = 1>
// The H200's calibration (memory-bandwidth-gbps from 4000; below it, or 0,
// the H100's): groups of 10 blocks take the park, groups of 4 the reduction
// kernel on 128-column tiles, and with a separate c groups of 5 blocks get
// 128 columns, not 64 (docs/Heuristics.md, calibrations).
// RUN: dgemm-opt %s --dgemm-select-config="in-place expected-k=1280 memory-bandwidth-gbps=4800" | FileCheck %s --check-prefix=H200MID
// RUN: dgemm-opt %s --dgemm-select-config="in-place expected-k=512 memory-bandwidth-gbps=4800" | FileCheck %s --check-prefix=H200RED
// RUN: dgemm-opt %s --dgemm-select-config="in-place expected-k=512 memory-bandwidth-gbps=3999" | FileCheck %s --check-prefix=INREG
// RUN: dgemm-opt %s --dgemm-select-config="expected-k=640 memory-bandwidth-gbps=4800" | FileCheck %s --check-prefix=H200SEP
// RUN: dgemm-opt %s --dgemm-select-config="expected-k=640" | FileCheck %s --check-prefix=H100SEP
// H200MID-LABEL: dgemm.gemm @g4_4096x7168
// H200MID-SAME: block_n = 128, block_k = 128, stages = 4,
// H200MID-SAME: epilogue = parked>
// H200RED-LABEL: dgemm.gemm @g4_4096x7168
// H200RED-SAME: block_n = 128, block_k = 128, stages = 6,
// H200RED-SAME: cluster_m = 2,
// H200RED-SAME: epilogue = reduction, red_max_blocks = 8, quad_b = 1>
// H200SEP-LABEL: dgemm.gemm @g4_4096x7168
// H200SEP-SAME: block_n = 128,
// H100SEP-LABEL: dgemm.gemm @g4_4096x7168
// H100SEP-SAME: block_n = 64,
// INREG-LABEL: dgemm.gemm @g4_4096x7168
// INREG-SAME: config <block_m = 128, block_n = 64, block_k = 128, stages = 8,
// INREG-SAME: cluster_m = 2,
// INREG-SAME: num_sms = 132, quad_b = 1>
// INPLACE-LABEL: dgemm.gemm @g4_4096x7168
// INPLACE-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
// INPLACE-SAME: num_sms = 132, epilogue = reduction, red_max_blocks = 8, quad_b = 1>
// Short groups on the large shapes (mean K 2048 here, at most 48 blocks):
// the in-place kernel that parks its tiles, at 128 columns with 4 stages;
// with CTA pairs requested, the paired in-place kernel without the park.
// RUN: dgemm-opt %s --dgemm-select-config="in-place expected-k=2048" | FileCheck %s --check-prefix=INPARK
// RUN: dgemm-opt %s --dgemm-select-config="in-place expected-k=2048 cluster-m=2" | FileCheck %s --check-prefix=INPAIR
// INPARK-LABEL: dgemm.gemm @g4_4096x7168
// INPARK-SAME: block_n = 128, block_k = 128, stages = 4,
// INPARK-SAME: cluster_m = 1,
// INPARK-SAME: epilogue = parked>
// INPAIR-LABEL: dgemm.gemm @g4_4096x7168
// INPAIR-SAME: block_n = 128, block_k = 128, stages = 6,
// INPAIR-SAME: cluster_m = 2,
// INPAIR-SAME: epilogue = in_place>
// INLONG-LABEL: dgemm.gemm @g4_4096x7168
// INLONG-SAME: cluster_m = 1,
// INLONG-SAME: num_sms = 132, epilogue = in_place>

// G4-LABEL: dgemm.gemm @g4_4096x7168
// G4-SAME: config <block_m = 128, block_n = 192, block_k = 128, stages = 5, desc_slots = 2, math_warpgroups = 2, cluster_m = 2, cluster_n = 1, swizzle_a = 128, swizzle_b = 128, num_sms = 132, quad_b = 1>
// SMALL-LABEL: dgemm.gemm @g4_4096x7168
// SMALL-SAME: stages = 2
// SMALL-SAME: num_sms = 78
dgemm.gemm @g4_4096x7168 k_grouped_contiguous nt m = 4096 n = 7168 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// G4-LABEL: dgemm.gemm @g4_7168x2048
// G4-SAME: config <block_m = 128, block_n = 192, block_k = 128, stages = 5,
dgemm.gemm @g4_7168x2048 k_grouped_contiguous nt m = 7168 n = 2048 k = ? groups = 4
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// G8-LABEL: dgemm.gemm @g8_4096x7168
// G8-SAME: config <block_m = 128, block_n = 192, block_k = 128, stages = 5,
dgemm.gemm @g8_4096x7168 k_grouped_contiguous nt m = 4096 n = 7168 k = ? groups = 8
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// G8-LABEL: dgemm.gemm @g8_7168x2048
// G8-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
dgemm.gemm @g8_7168x2048 k_grouped_contiguous nt m = 7168 n = 2048 k = ? groups = 8
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// G16-LABEL: dgemm.gemm @g16_4096x7168
// G16-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
dgemm.gemm @g16_4096x7168 k_grouped_contiguous nt m = 4096 n = 7168 k = ? groups = 16
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// G16-LABEL: dgemm.gemm @g16_7168x2048
// G16-SAME: config <block_m = 128, block_n = 128, block_k = 128, stages = 6,
dgemm.gemm @g16_7168x2048 k_grouped_contiguous nt m = 7168 n = 2048 k = ? groups = 16
    : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]

// KEEP-LABEL: dgemm.gemm @pinned
// KEEP-SAME: block_n = 64, block_k = 128, stages = 3,
dgemm.gemm @pinned k_grouped_contiguous nt m = 256 n = 256 k = ? groups = 2
    : (f8E4M3FN, f8E4M3FN) -> f32 recipe [1, 1, 128]
    config <block_m = 64, block_n = 64, block_k = 128, stages = 3,
            desc_slots = 1, math_warpgroups = 1, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132, quad_b = 1>

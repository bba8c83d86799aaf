//===- DGemmOps.td - The dgemm dialect ---------------------*- tablegen -*-===//
//
// Two levels live in this dialect:
//  - the description (`dgemm.gemm`): one GEMM problem family as a user states
//    it, the input of the compiler;
//  - the kernel IR (`dgemm.kernel` and the ops inside it): a warp-specialized
//    persistent kernel whose asynchronous operations declare the resources they
//    touch. Synchronization ops are added by dgemm-place-sync, never written by
//    the lowering that builds the kernel.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_OPS
#define DGEMM_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "dgemm/Dialect/DGemm/IR/DGemmInterfaces.td"

def DGemm_Dialect : Dialect {
  let name = "dgemm";
  let cppNamespace = "::mlir::dgemm";
  let summary = "Grouped GEMM descriptions and warp-specialized Hopper kernels";
  let description = [{
    The `dgemm` dialect describes the GEMM families of DeepGEMM's SM90 API
    (normal, M-grouped contiguous, M-grouped masked, K-grouped contiguous) and
    holds the kernel-level IR they are lowered to. See docs/Synchronization.md
    for the hazard model of the kernel IR.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::NVVM::NVVMDialect"];
}

class DGemm_Op<string mnemonic, list<Trait> traits = []>
    : Op<DGemm_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def DGemm_GemmKind : I32EnumAttr<"GemmKind", "GEMM problem family", [
    I32EnumAttrCase<"normal", 0>,
    I32EnumAttrCase<"m_grouped_contiguous", 1>,
    I32EnumAttrCase<"m_grouped_masked", 2>,
    I32EnumAttrCase<"k_grouped_contiguous", 3>,
    I32EnumAttrCase<"m_grouped_contiguous_psum", 4>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::dgemm";
}
def DGemm_GemmKindAttr : EnumAttr<DGemm_Dialect, DGemm_GemmKind, "kind"> {
  let assemblyFormat = "$value";
}

def DGemm_MajorLayout : I32EnumAttr<"MajorLayout",
    "Majorness of A and B in DeepGEMM's naming (N: K-major A / T: K-major B)", [
    I32EnumAttrCase<"nt", 0>, I32EnumAttrCase<"nn", 1>,
    I32EnumAttrCase<"tn", 2>, I32EnumAttrCase<"tt", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::dgemm";
}
def DGemm_MajorLayoutAttr : EnumAttr<DGemm_Dialect, DGemm_MajorLayout, "layout"> {
  let assemblyFormat = "$value";
}

def DGemm_OperandType : I32EnumAttr<"OperandType",
    "Element type of a kernel's A and B", [
    I32EnumAttrCase<"fp8", 0>, I32EnumAttrCase<"bf16", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::dgemm";
}

def DGemm_Majorness : I32EnumAttr<"Majorness",
    "Which dimension of a kernel operand is contiguous", [
    I32EnumAttrCase<"k", 0>, I32EnumAttrCase<"mn", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::dgemm";
}

def DGemm_TmaOperand : I32EnumAttr<"TmaOperand", "Operand a TMA copy moves", [
    I32EnumAttrCase<"a", 0>, I32EnumAttrCase<"b", 1>,
    I32EnumAttrCase<"sfa", 2>, I32EnumAttrCase<"sfb", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::dgemm";
}
def DGemm_TmaOperandAttr : EnumAttr<DGemm_Dialect, DGemm_TmaOperand, "operand"> {
  let assemblyFormat = "$value";
}

def DGemm_BarrierKind : I32EnumAttr<"BarrierKind",
    "Barrier of a pipeline stage or of a park slot", [
    I32EnumAttrCase<"full", 0>, I32EnumAttrCase<"empty", 1>,
    I32EnumAttrCase<"park_full", 2>, I32EnumAttrCase<"park_empty", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::dgemm";
}
def DGemm_BarrierKindAttr : EnumAttr<DGemm_Dialect, DGemm_BarrierKind, "barrier"> {
  let assemblyFormat = "$value";
}

def DGemm_Multicast : I32EnumAttr<"Multicast", "Operand shared by a 2-CTA cluster", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"a", 1>, I32EnumAttrCase<"b", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::dgemm";
}

def DGemm_TurnAction : I32EnumAttr<"TurnAction",
    "Step of the math warpgroups' alternation on the tensor cores", [
    I32EnumAttrCase<"start", 0>, I32EnumAttrCase<"wait", 1>,
    I32EnumAttrCase<"pass", 2>, I32EnumAttrCase<"finish", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::dgemm";
}
def DGemm_TurnActionAttr : EnumAttr<DGemm_Dialect, DGemm_TurnAction, "turn_action"> {
  let assemblyFormat = "$value";
}

def DGemm_KernelEpilogue : I32EnumAttr<"KernelEpilogue",
    "How a kernel's tiles reach d", [
    I32EnumAttrCase<"Register", 0, "register">,
    I32EnumAttrCase<"Reduction", 1, "reduction">,
    I32EnumAttrCase<"InPlace", 2, "in_place">,
    I32EnumAttrCase<"Parked", 3, "parked">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::dgemm";
}

def DGemm_UnsafeVariant : I32BitEnumAttr<"UnsafeVariant",
    "Race demonstrations built into a kernel (test only)", [
    I32BitEnumAttrCaseNone<"none">,
    I32BitEnumAttrCaseBit<"skip_descriptor_drain", 0>,
    I32BitEnumAttrCaseBit<"skip_proxy_fence", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::dgemm";
  let separator = " | ";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def DGemm_ConfigAttr : AttrDef<DGemm_Dialect, "Config"> {
  let mnemonic = "config";
  let summary = "Tuning configuration of one kernel";
  let description = [{
    The kernel family (`kind`, default `k_grouped_contiguous`: the FP8 1D1D
    weight gradient; `m_grouped_contiguous`: the FP8 1D2D forward/data
    gradient with BF16 d, its experts' rows named per row; with
    `m_grouped_contiguous_psum` by G prefix sums), block sizes, pipeline depth, descriptor-slot ring
    size, math warpgroups, cluster shape, swizzles and the SM count of the
    persistent grid, and:
    - `epilogue` (default `register`): how tiles reach d. `register` loads c
      and stores d from registers; `reduction` (with `red_max_blocks = B >
      0`) makes tiles of at most B 128-deep K blocks add their sum to d with
      `red.global.add` when c is d; `in_place` requires c to be d and adds
      every tile with K blocks to d with `red.global.add`; `parked` is
      `in_place` with the math warpgroups parking each tile's sums in shared
      memory for the producer warpgroup's spare warps to add to d
      (dgemm.park.store, dgemm.park.reduce).
    - `quad_b = 1` (default 0) reads B's rows in quad order through a 5-D
      tensor map, so that each thread's fragment holds 4 consecutive columns
      per 16 (docs/Kernel.md; N must be a multiple of 16).
    - `unsafe` (default `none`; test only): race demonstrations,
      `skip_descriptor_drain` and/or `skip_proxy_fence`, which
      dgemm-place-sync honours by omitting what they name. They are part of
      the entry name and the bundle's .meta, and the runtime refuses such
      kernels unless the caller opts in.
    - `dtype` (default `fp8`): the operands' element type; `bf16` is the
      BF16 family (no scales, block_k 64, chained accumulation), with
      `major_a`/`major_b` (default `k`; `mn`: the operand is MN-major in
      memory and in shared memory, read through WGMMA's transpose bit),
      `d_f32` (1: FP32 d, else BF16) and `accumulate` (1: the kernel adds its
      product to d).
    Every choice that changes generated code is here. Filled in by
    `dgemm-select-config` from the shared heuristics library (heuristics/),
    which the runtime uses too; the rules (`checkConfig`) are that library's.
  }];
  let parameters = (ins
    DefaultValuedParameter<"::mlir::dgemm::GemmKind",
                           "::mlir::dgemm::GemmKind::k_grouped_contiguous">:$kind,
    "int64_t":$block_m, "int64_t":$block_n, "int64_t":$block_k,
    "int64_t":$stages, "int64_t":$desc_slots, "int64_t":$math_warpgroups,
    "int64_t":$cluster_m, "int64_t":$cluster_n,
    "int64_t":$swizzle_a, "int64_t":$swizzle_b, "int64_t":$num_sms,
    DefaultValuedParameter<"::mlir::dgemm::KernelEpilogue",
                           "::mlir::dgemm::KernelEpilogue::Register">:$epilogue,
    DefaultValuedParameter<"int64_t", "0">:$red_max_blocks,
    DefaultValuedParameter<"int64_t", "0">:$quad_b,
    DefaultValuedParameter<"::mlir::dgemm::UnsafeVariant",
                           "::mlir::dgemm::UnsafeVariant::none">:$unsafe,
    DefaultValuedParameter<"::mlir::dgemm::OperandType",
                           "::mlir::dgemm::OperandType::fp8">:$dtype,
    DefaultValuedParameter<"::mlir::dgemm::Majorness",
                           "::mlir::dgemm::Majorness::k">:$major_a,
    DefaultValuedParameter<"::mlir::dgemm::Majorness",
                           "::mlir::dgemm::Majorness::k">:$major_b,
    DefaultValuedParameter<"int64_t", "0">:$d_f32,
    DefaultValuedParameter<"int64_t", "0">:$accumulate);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getSmemBytes() const;
    int64_t getThreads() const { return 128 * (1 + getMathWarpgroups()); }
    std::string getEntryName() const;
    /// Whether the kernel adds every tile to d itself (in_place or parked).
    bool isInPlace() const {
      return getEpilogue() == KernelEpilogue::InPlace ||
             getEpilogue() == KernelEpilogue::Parked;
    }
    bool isParked() const { return getEpilogue() == KernelEpilogue::Parked; }
    bool isBf16() const { return getDtype() == OperandType::bf16; }
    /// Bytes per element of A and B.
    int64_t getElementBytes() const { return isBf16() ? 2 : 1; }
    /// Bytes of one K block of one operand row (block_k elements): 128.
    int64_t getRowBytes() const { return getBlockK() * getElementBytes(); }
    bool hasUnsafe(UnsafeVariant v) const {
      return ::mlir::dgemm::bitEnumContainsAll(getUnsafe(), v);
    }
  }];
}

//===----------------------------------------------------------------------===//
// The description
//===----------------------------------------------------------------------===//

def DGemm_GemmOp : DGemm_Op<"gemm", [Symbol]> {
  let summary = "A GEMM problem family, as the user states it";
  let description = [{
    Describes D = A * B (+ C) for one of DeepGEMM's SM90 GEMM kinds. Dimensions
    are static where known and `?` where they vary per call; K is always `?`
    for `k_grouped_contiguous` (each group has its own K).

    ```mlir
    dgemm.gemm @seed_wgrad k_grouped_contiguous nt m = 2048 n = 2048 k = ?
        groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    ```

    `recipe [1, 1, 128]` is per-channel scaling of A and of B on every 128-deep
    K block ("1D1D"); `[1, 128, 128]` is per-row A scales with 128x128 block B
    scales ("1D2D"). BF16 operands take no recipe. `config` is optional and
    filled in by `dgemm-select-config`.

    `m_grouped_contiguous_psum` is `m_grouped_contiguous` with the experts'
    rows given by G prefix sums of rows instead of one expert per row
    (DeepGEMM's `use_psum_layout`): expert g's rows are [align(psum[g - 1],
    128), psum[g]), and the rows between one expert's end and the next
    128-row boundary are gaps, neither computed nor written.

    For `m_grouped_masked`, `m` is M_max, each group's rows of storage (of
    which masked_m[g], a launch argument, are computed). `normal` has one
    group; a `normal` 1D1D description (FP32 D) is computed by the k-grouped
    kernel with one group of K (`getKernelKind`), a 1D2D one (BF16 D) by
    the 1D2D kernel of kind `normal`.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, DGemm_GemmKindAttr:$kind,
                   DGemm_MajorLayoutAttr:$layout, I64Attr:$m, I64Attr:$n,
                   I64Attr:$k, I64Attr:$num_groups, TypeAttr:$a_type,
                   TypeAttr:$b_type, TypeAttr:$d_type, UnitAttr:$accumulate,
                   OptionalAttr<DenseI64ArrayAttr>:$recipe,
                   OptionalAttr<DGemm_ConfigAttr>:$config);
  let assemblyFormat = [{
    $sym_name `` $kind `` $layout `m` `=` custom<Dim>($m) `n` `=` custom<Dim>($n)
    `k` `=` custom<Dim>($k) `groups` `=` $num_groups
    `:` `(` $a_type `,` $b_type `)` `->` $d_type
    (`accumulate` $accumulate^)? (`recipe` $recipe^)? (`config` $config^)?
    attr-dict
  }];
  let extraClassDeclaration = [{
    /// The kind of the kernel that computes this description, the kind of
    /// its `config`: the description's own kind, except for a `normal` GEMM
    /// with recipe [1, 1, 128], which the k-grouped kernel computes as one
    /// group of K (k_grouped_contiguous).
    GemmKind getKernelKind();
    /// A's and B's majorness by the layout (nt: both K-major; nn: B
    /// MN-major; tn: both MN-major; tt: A MN-major).
    std::pair<Majorness, Majorness> getOperandMajorness();
    /// Whether a kernel of `config` computes this description: its kind is
    /// getKernelKind() and its operand fields (dtype, major_a, major_b,
    /// d_f32, accumulate) are the description's.
    bool isComputedBy(ConfigAttr config);
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Kernel IR: structure
//===----------------------------------------------------------------------===//

def DGemm_KernelOp : DGemm_Op<"kernel", [IsolatedFromAbove, Symbol,
                                         SingleBlock, NoTerminator]> {
  let summary = "A persistent GPU kernel built from a description";
  let description = [{
    The entry block's arguments follow the launch ABI (docs/KernelABI.md):
    five tensor-map parameters (A and B templates, sfa, sfb, d), the a, b, d,
    c, ks and workspace pointers, then M, N, the group count and the raster
    band (m-blocks per band of the tile schedule; 0 or 1: row order), then
    the sfb pointer and K (the m-grouped kernel's 128x128 B scales, read
    from global memory, and its K shared by all groups; the k-grouped
    kernel takes neither). In the m-grouped kernel `ks` is the grouped
    layout (the expert of each row) and M is M_sum.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, DGemm_ConfigAttr:$config);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `config` $config attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    enum Arg { TmapA, TmapB, TmapSFA, TmapSFB, TmapD, PtrA, PtrB, PtrD, PtrC, PtrKs,
               PtrWorkspace, DimM, DimN, NumGroups, RasterBand, PtrSFB, DimK,
               NumArgs };
    /// Whether argument `i` is a pointer (else an i32).
    static bool isPointerArg(unsigned i) { return i < DimM || i == PtrSFB; }
    ::mlir::Value getArg(Arg arg) { return getBody().front().getArgument(arg); }
  }];
}

def DGemm_WarpSpecializeOp : DGemm_Op<"warp_specialize", [NoTerminator,
    HasParent<"KernelOp">]> {
  let summary = "Splits the CTA into a producer warpgroup and math warpgroups";
  let description = [{
    The `producer` region runs on one elected thread of warpgroup 0 (the TMA
    issuer); the `math` region on every thread of warpgroups 1..N; the
    optional `workers` region on `worker_threads` threads of warpgroup 0 from
    thread 32 on (the warps the producer leaves idle), in kernels that park
    their tiles. Each warpgroup first moves its register budget with
    `setmaxnreg`. The barrier arrival counts are derived by dgemm-place-sync
    from the roles that arrive.
  }];
  let arguments = (ins I32Attr:$producer_regs, I32Attr:$math_regs,
                   OptionalAttr<I32Attr>:$full_arrivals,
                   OptionalAttr<I32Attr>:$empty_arrivals,
                   OptionalAttr<I32Attr>:$worker_threads,
                   OptionalAttr<I32Attr>:$park_full_arrivals,
                   OptionalAttr<I32Attr>:$park_empty_arrivals);
  let regions = (region SizedRegion<1>:$producer, SizedRegion<1>:$math,
                 MaxSizedRegion<1>:$workers);
  // `producer(regs = N) {...} math(regs = N) {...} (workers {...})?
  // attr-dict`, parsed by hand: see WarpSpecializeOp::parse.
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Threads that run `role` (one of this op's regions).
    int64_t getRoleThreads(::mlir::Region &role);
  }];
}

def DGemm_StageOp : DGemm_Op<"stage", [Pure]> {
  let summary = "Maps a pipeline iteration to its stage and phase parity";
  let arguments = (ins I32:$iteration, I32Attr:$stages);
  let results = (outs I32:$stage, I32:$phase);
  let assemblyFormat = "$iteration `of` $stages attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Kernel IR: operations with resource effects (no synchronization)
//===----------------------------------------------------------------------===//

def DGemm_DescUpdateOp : DGemm_Op<"desc.update",
    [DeclareOpInterfaceMethods<DGemm_ResourceAccessOpInterface>]> {
  let summary = "Rewrites a tensor-map slot for one group's A or B";
  let description = [{
    Copies the operand's template tensor map into descriptor slot `slot` of
    this CTA's workspace and replaces its global address (base + rows *
    k_offset), inner dimension and row stride (k_size) with `tensormap.replace`.
    A generic-proxy write of the slot; the first load to use it is pipeline
    iteration `before_iteration`.
  }];
  let arguments = (ins DGemm_TmaOperandAttr:$operand, I32:$slot, I32:$group,
                   I64:$k_offset, I32:$k_size, I32:$before_iteration);
  let assemblyFormat = [{
    `` $operand `slot` `(` $slot `)` `group` `(` $group `)` `k_offset` `(` $k_offset `)`
    `k_size` `(` $k_size `)` `before_iteration` `(` $before_iteration `)` attr-dict
  }];
  let hasVerifier = 1;
}

def DGemm_TmaLoadOp : DGemm_Op<"tma.load",
    [DeclareOpInterfaceMethods<DGemm_ResourceAccessOpInterface>]> {
  let summary = "Asynchronous tensor copy of one operand tile into a stage";
  let description = [{
    `cp.async.bulk.tensor` of the operand's box at (x, y) into stage `stage`.
    A and B go through descriptor slot `slot` (an async read of the slot); sfa
    and sfb through their kernel-parameter tensor maps.

    `multicast` (B only, in a kernel whose config has `cluster_m = 2`): the
    box is this CTA's half of the B tile (its rank's rows), written to the
    same stage of both CTAs of the cluster. Each CTA's stage then receives the
    whole tile, half from each CTA, so the declared write is the whole tile.
  }];
  let arguments = (ins DGemm_TmaOperandAttr:$operand, I32:$stage, I32:$x,
                   I32:$y, Optional<I32>:$slot, UnitAttr:$multicast);
  let assemblyFormat = [{
    `` $operand `stage` `(` $stage `)` `at` `(` $x `,` $y `)` (`slot` `(` $slot^ `)`)? (`multicast` $multicast^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{ int64_t getTxBytes(); }];
}

def DGemm_MmaOp : DGemm_Op<"mma",
    [DeclareOpInterfaceMethods<DGemm_ResourceAccessOpInterface>]> {
  let summary = "One K block's product on the tensor cores";
  let description = [{
    Four `wgmma.mma_async` reading A and B of stage `stage` (128B swizzle),
    as one WGMMA commit group: `m64nNk32` e4m3 x e4m3 -> f32 over a 128-deep
    FP8 block, or `m64nNk16` bf16 x bf16 -> f32 over a 64-deep BF16 block
    (the kernel's config says which). The stage reads and the accumulator
    write complete asynchronously.

    Without `chain`, the product goes into a fresh fragment (the first WGMMA
    has scale-d = 0): the FP8 kernels promote every block's product. With
    `chain(%prev)`, the WGMMAs accumulate onto `%prev` in place, the BF16
    kernels' FP32 accumulation over all of K: an asynchronous
    read-modify-write of `%prev`'s registers, whose result is the op's
    `acc`. `%prev` may still be in flight from the previous dgemm.mma (PTX
    orders accumulator accesses of consecutive WGMMAs of one shape), but it
    is overwritten: nothing may use it afterwards (docs/Synchronization.md).

    The product covers tile columns [`col_offset`, `col_offset` + N), N being
    twice the accumulator's length (the tile's full width when the kernel
    does not split it). A tile computed as several column slices lets the
    promotion of one slice run while the tensor cores compute the next.
  }];
  let arguments = (ins I32:$stage,
                   Optional<VectorOfRankAndType<[1], [F32]>>:$chain,
                   DefaultValuedAttr<I64Attr, "0">:$col_offset);
  let results = (outs VectorOfRankAndType<[1], [F32]>:$acc);
  let assemblyFormat = [{
    `stage` `(` $stage `)` (`chain` `(` $chain^ `:` type($chain) `)`)?
    (`cols` `(` $col_offset^ `)`)? attr-dict `:` type($acc)
  }];
  let hasVerifier = 1;
}

def DGemm_LoadScalesOp : DGemm_Op<"load_scales",
    [DeclareOpInterfaceMethods<DGemm_ResourceAccessOpInterface>]> {
  let summary = "Reads the executing thread's sfa and sfb values of a stage";
  let description = [{
    Ordinary shared-memory loads of the scales the thread's accumulator
    fragment needs for tile columns [`col_offset`, `col_offset` + N): its two
    rows of sfa, then its N / 4 columns of sfb (two per 8-column group), N
    being 4 * (length - 2). A result of length 2 holds the sfa values only
    (the 1D2D recipe, whose B scales come from dgemm.load_block_scale); it
    reads no sfb.
  }];
  let arguments = (ins I32:$stage, DefaultValuedAttr<I64Attr, "0">:$col_offset);
  let results = (outs VectorOfRankAndType<[1], [F32]>:$scales);
  let assemblyFormat = [{
    `stage` `(` $stage `)` (`cols` `(` $col_offset^ `)`)? attr-dict `:` type($scales)
  }];
  let hasVerifier = 1;
}

def DGemm_PromoteOp : DGemm_Op<"promote",
    [DeclareOpInterfaceMethods<DGemm_ResourceAccessOpInterface>,
     AttrSizedOperandSegments,
     AllTypesMatch<["sum", "acc", "result"]>]> {
  let summary = "Scales a block product and adds it to the FP32 sum";
  let description = [{
    result = sum + acc * sfa[row] * sfb[col]. The scales come either from
    dgemm.load_scales (`scales`, registers, of the same columns), or are
    read here from stage `stage` by ordinary shared-memory loads, one pair at
    a time, when holding them all would not fit the register budget, or
    both: `scales` holds the sfa values and the sfb pairs of the first
    columns, and the rest are read from `stage`.
    `col_offset` is the first tile column of `acc` (see dgemm.mma), which
    selects the sfb columns.

    With `block_scale` (the 1D2D recipe: one B scale per 128x128 block,
    from dgemm.load_block_scale) every column takes that scale instead of
    its sfb value, and `scales` holds only the two sfa values.
  }];
  let arguments = (ins VectorOfRankAndType<[1], [F32]>:$sum,
                   VectorOfRankAndType<[1], [F32]>:$acc,
                   Optional<VectorOfRankAndType<[1], [F32]>>:$scales,
                   Optional<I32>:$stage,
                   Optional<F32>:$block_scale,
                   DefaultValuedAttr<I64Attr, "0">:$col_offset);
  let results = (outs VectorOfRankAndType<[1], [F32]>:$result);
  let assemblyFormat = [{
    $acc `into` $sum (`scales` `(` $scales^ `:` type($scales) `)`)?
    (`stage` `(` $stage^ `)`)? (`block_scale` `(` $block_scale^ `)`)?
    (`cols` `(` $col_offset^ `)`)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def DGemm_LoadBlockScaleOp : DGemm_Op<"load_block_scale", [Pure]> {
  let summary = "Reads the 128x128 B scale of a tile's K block from global memory";
  let description = [{
    The 1D2D recipe's B scale of group `group`, the 128-column block holding
    tile `n_block`'s columns (block_n divides 128) and K block `k_block`:
    `sfb[(group * ceil(N / 128) + n_block * block_n / 128) * ceil(K / 128) +
    k_block]`, FP32 at the kernel's sfb pointer, by a non-coherent global
    load. sfb is an input no kernel writes, so the read has no hazard and
    declares no resource.
  }];
  let arguments = (ins I32:$group, I32:$n_block, I32:$k_block);
  let results = (outs F32:$scale);
  let assemblyFormat = [{
    `group` `(` $group `)` `n_block` `(` $n_block `)` `k_block` `(` $k_block `)` attr-dict
  }];
  let hasVerifier = 1;
}

def DGemm_StoreRowsOp : DGemm_Op<"store_rows",
    [DeclareOpInterfaceMethods<DGemm_ResourceAccessOpInterface>,
     AttrSizedOperandSegments]> {
  let summary = "Writes a tile's sums to d, the rows of its group only";
  let description = [{
    The epilogue of the 1D2D kernels: every math thread converts its FP32
    sums (as dgemm.epilogue's `sums`) to BF16 and stores them to d, a
    row-major BF16 matrix of N columns, at columns n_block * block_n + c
    below N and, for the tile rows r = m_block * block_m + i, as the kernel's
    row mapping says:

    - without `limit` (m_grouped_contiguous): d row r, for the rows below
      M (the kernel's M, M_sum) whose grouped-layout entry is `group`
      (padding rows, -1, are not written); a tile whose `group` is negative
      (all padding) writes nothing;
    - with `limit` (m_grouped_masked, normal, m_grouped_contiguous_psum): d
      row `group` * M + r, for the rows r below `limit`, which must be in
      [0, M] (the kernel builder clamps masked_m[g] or psum[g] into it):
      group g's rows are the g-th block of M rows (M_max for masked; normal
      has group 0 and limit M; psum has group 0, the one block of M_sum
      rows, and limit the tile's expert's end).

    In a BF16 kernel with `d_f32` the sums are stored as FP32 instead, and
    with `accumulate` added to d's values first (each thread loads the d
    elements it then stores; the k-grouped BF16 kernel uses the limit form
    with `group` g and limit M, d being G blocks of M rows).

    Plain global stores of the tile's own rows: no other CTA writes them and
    no op of the kernel reads them. The op declares generic reads of its
    sums, which in a kernel without promotion are WGMMA accumulators.
  }];
  let arguments = (ins Variadic<VectorOfRankAndType<[1], [F32]>>:$sums,
                   I32:$group, I32:$m_block, I32:$n_block,
                   Optional<I32>:$limit);
  let assemblyFormat = [{
    $sums `group` `(` $group `)` `tile` `(` $m_block `,` $n_block `)`
    (`limit` `(` $limit^ `)`)? attr-dict `:` type($sums)
  }];
  let hasVerifier = 1;
}

def DGemm_TurnOp : DGemm_Op<"turn",
    [DeclareOpInterfaceMethods<DGemm_ResourceAccessOpInterface>]> {
  let summary = "Makes the two math warpgroups take turns on the tensor cores";
  let description = [{
    With two math warpgroups working on the same stage, both would issue
    their WGMMAs at once, wait for them together and then promote together,
    leaving the tensor cores idle during every promotion. Taking turns, one
    warpgroup's WGMMAs run while the other promotes:

    - `start` (math role entry): warpgroup 1 hands the first turn to
      warpgroup 0;
    - `wait` (before a block's WGMMAs): waits for this warpgroup's turn;
    - `pass` (after them): once `accs` are complete, hands the turn to the
      other warpgroup. It reads `accs` (as the promotion does), so
      dgemm-place-sync completes their WGMMAs first;
    - `finish` (math role exit): warpgroup 0 takes the last turn warpgroup 1
      handed over, so every named-barrier phase completes.

    Lowered to named barriers (`bar.sync` / `bar.arrive`, 256 threads, one
    barrier per warpgroup). Both warpgroups run the same blocks, so waits and
    passes pair up. It orders issue only and protects no resource: the
    hazards stay with the barriers and waits dgemm-place-sync derives.
  }];
  let arguments = (ins DGemm_TurnActionAttr:$action,
                   Variadic<VectorOfRankAndType<[1], [F32]>>:$accs);
  let assemblyFormat = [{
    `` $action (`(` $accs^ `:` type($accs) `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def DGemm_EpilogueOp : DGemm_Op<"epilogue",
    [DeclareOpInterfaceMethods<DGemm_ResourceAccessOpInterface>]> {
  let summary = "Writes d[group] = c[group] + sum for one output tile";
  let description = [{
    `sums` are the tile's FP32 sums as consecutive column slices, left to
    right (one operand when the tile is not split); together they cover the
    tile's block_n columns. The lowering reads the tile's number of 128-deep
    K blocks from the block loop the sums come from. It declares generic
    reads of its sums, which in a kernel without promotion are WGMMA
    accumulators.
  }];
  let arguments = (ins Variadic<VectorOfRankAndType<[1], [F32]>>:$sums,
                   I32:$group, I32:$m_block, I32:$n_block);
  let assemblyFormat = [{
    $sums `group` `(` $group `)` `tile` `(` $m_block `,` $n_block `)` attr-dict `:` type($sums)
  }];
  let hasVerifier = 1;
}

def DGemm_ParkStoreOp : DGemm_Op<"park.store",
    [DeclareOpInterfaceMethods<DGemm_ResourceAccessOpInterface>]> {
  let summary = "Writes one output tile's FP32 sums into a park slot";
  let description = [{
    The math role's epilogue in a kernel that parks its tiles (`park = 1`):
    every math thread writes its sums (as dgemm.epilogue's `sums`) into the
    park, a row-major FP32 tile in shared memory after the pipeline, and the
    first math thread records the tile's coordinates (`group`, `m_block`,
    `n_block`) beside it. A generic-proxy write of park slot `slot` (produced
    by dgemm.stage with one stage: the park is a ring of one slot, whose
    phase alternates from tile to tile). dgemm.park.reduce in the `workers`
    role adds the tile to d.
  }];
  let arguments = (ins Variadic<VectorOfRankAndType<[1], [F32]>>:$sums,
                   I32:$slot, I32:$group, I32:$m_block, I32:$n_block);
  let assemblyFormat = [{
    $sums `slot` `(` $slot `)` `group` `(` $group `)` `tile` `(` $m_block `,` $n_block `)` attr-dict `:` type($sums)
  }];
  let hasVerifier = 1;
}

def DGemm_ParkReduceOp : DGemm_Op<"park.reduce",
    [DeclareOpInterfaceMethods<DGemm_ResourceAccessOpInterface>]> {
  let summary = "Adds the tile in a park slot to d";
  let description = [{
    The workers' half of the parked epilogue: reads the parked tile's
    coordinates and sums from park slot `slot` (generic-proxy reads) and,
    if the tile's group has K blocks, adds the sums to d with 16-byte
    `red.global.add.v4.f32`, clipped to M x N. Each worker thread takes one
    16-byte column unit of a set of rows.
  }];
  let arguments = (ins I32:$slot);
  let assemblyFormat = "`slot` `(` $slot `)` attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Kernel IR: synchronization (placed by dgemm-place-sync)
//===----------------------------------------------------------------------===//

def DGemm_WaitOp : DGemm_Op<"wait"> {
  let summary = "Waits for a phase of a stage's or park slot's full or empty mbarrier";
  let description = [{
    `full`: the stage's TMA loads for `phase` have landed. `empty`: every math
    thread released the stage's previous contents (parity `phase ^ 1`, so the
    first pass over a fresh barrier does not block). `park_full` and
    `park_empty` are the same pair for a park slot (`stage` is the slot):
    the math role filled it, and the workers emptied its previous contents
    (parity `phase ^ 1`).
  }];
  let arguments = (ins DGemm_BarrierKindAttr:$barrier, I32:$stage, I32:$phase);
  let assemblyFormat = "`` $barrier `(` $stage `)` `phase` `(` $phase `)` attr-dict";
}

def DGemm_ArriveOp : DGemm_Op<"arrive"> {
  let summary = "Arrives on a stage's full (with expected bytes) or empty "
                "mbarrier, or on a park slot's";
  let arguments = (ins DGemm_BarrierKindAttr:$barrier, I32:$stage,
                   OptionalAttr<I64Attr>:$tx_bytes);
  let assemblyFormat = "`` $barrier `(` $stage `)` (`tx` $tx_bytes^)? attr-dict";
}

def DGemm_MmaWaitOp : DGemm_Op<"mma.wait"> {
  let summary = "Waits until the executing warpgroup's WGMMAs completed";
  let description = [{
    `wgmma.wait_group pending`: every dgemm.mma of the thread but the last
    `pending` ones has completed (each dgemm.mma is one commit group).
  }];
  let arguments = (ins DefaultValuedAttr<I32Attr, "0">:$pending);
  let assemblyFormat = "(`pending` `(` $pending^ `)`)? attr-dict";
}

def DGemm_ProxyFenceOp : DGemm_Op<"proxy.fence"> {
  let summary = "Orders the thread's generic shared-memory accesses before "
                "later async-proxy accesses";
  let description = [{
    `fence.proxy.async.shared::cta`. Placed before a stage release that
    follows generic-proxy reads of the stage (`ld.shared` of the scales):
    the producer's next TMA write to the stage is an async-proxy access, and
    the mbarrier release/acquire alone does not order a generic read before
    it. Without the fence, ptxas lets the release overtake `ld.shared`s
    still in flight, and the TMA can overwrite the scales before they are
    read.
  }];
  let assemblyFormat = "attr-dict";
}

def DGemm_DescDrainOp : DGemm_Op<"desc.drain"> {
  let summary = "Waits until no TMA load can still read a descriptor slot";
  let description = [{
    Every load that used the slot's previous contents completed: the producer
    waits on the full barriers of those pipeline iterations before
    `before_iteration` that may still be in flight.
  }];
  let arguments = (ins DGemm_TmaOperandAttr:$operand, I32:$slot,
                   I32:$before_iteration);
  let assemblyFormat = [{
    `` $operand `slot` `(` $slot `)` `before_iteration` `(` $before_iteration `)` attr-dict
  }];
}

def DGemm_DescPublishOp : DGemm_Op<"desc.publish"> {
  let summary = "Publishes a rewritten descriptor slot to the tensormap proxy";
  let description = [{
    `fence.proxy.tensormap::generic.release.gpu` then
    `fence.proxy.tensormap::generic.acquire.gpu` on the slot's 128 bytes.
  }];
  let arguments = (ins DGemm_TmaOperandAttr:$operand, I32:$slot);
  let assemblyFormat = "`` $operand `slot` `(` $slot `)` attr-dict";
}

#endif // DGEMM_OPS

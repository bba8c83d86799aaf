//===- DGemmOps.cpp - dgemm operations ------------------------------------===//

#include "dgemm/Dialect/DGemm/IR/DGemm.h"
#include "dgemm/Heuristics/Bf16Config.h"

#include <limits>

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::dgemm;

//===----------------------------------------------------------------------===//
// custom<Dim>: an integer, or `?` for a size that varies per call.
//===----------------------------------------------------------------------===//

static ParseResult parseDim(OpAsmParser &parser, IntegerAttr &attr) {
  int64_t value = ShapedType::kDynamic;
  if (failed(parser.parseOptionalQuestion()) && parser.parseInteger(value))
    return failure();
  attr = parser.getBuilder().getI64IntegerAttr(value);
  return success();
}

static void printDim(OpAsmPrinter &printer, Operation *, IntegerAttr attr) {
  if (ShapedType::isDynamic(attr.getInt()))
    printer << "?";
  else
    printer << attr.getInt();
}

#define GET_OP_CLASSES
#include "dgemm/Dialect/DGemm/IR/DGemmOps.cpp.inc"

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

static bool isFp8(Type t) { return isa<Float8E4M3FNType>(t); }
static LogicalResult verifyBuiltKernel(GemmOp gemm, bool fp8, bool is1D1D);
static int64_t byteWidth(Type t) { return t.getIntOrFloatBitWidth() / 8; }

LogicalResult StageOp::verify() {
  // The lowering divides by it.
  int64_t stages = getStagesAttr().getInt();
  if (stages < 1)
    return emitOpError("needs at least one stage, got ") << stages;
  return success();
}

LogicalResult GemmOp::verify() {
  Type a = getAType(), b = getBType(), d = getDType();
  int64_t m = getM(), n = getN(), k = getK();
  auto dynamic = [](int64_t v) { return ShapedType::isDynamic(v); };

  // Read signed: the getter is unsigned and would let -1 through. The
  // heuristics and the runtime count groups and extents in 32 bits.
  constexpr int64_t kMaxExtent = std::numeric_limits<int32_t>::max();
  int64_t groups = getNumGroupsAttr().getInt();
  if (groups < 1 || groups > kMaxExtent)
    return emitOpError("'groups' must be in [1, 2^31 - 1], got ") << groups;
  if (getKind() == GemmKind::normal && getNumGroups() != 1)
    return emitOpError("'groups' must be 1 for kind 'normal', got ")
           << getNumGroups();
  for (auto [name, v] : {std::pair<StringRef, int64_t>{"m", m}, {"n", n},
                         {"k", k}})
    if (!dynamic(v) && (v < 1 || v > kMaxExtent))
      return emitOpError("'")
             << name << "' must be in [1, 2^31 - 1] or '?', got " << v;

  for (auto [name, t] : {std::pair<StringRef, Type>{"A", a}, {"B", b}})
    if (!isFp8(t) && !t.isBF16())
      return emitOpError("element type of ")
             << name << " must be f8E4M3FN or bf16, got " << t;
  if (a != b)
    return emitOpError("A and B element types must match, got ")
           << a << " and " << b;
  if (!d.isF32() && !d.isBF16())
    return emitOpError("element type of D must be f32 or bf16, got ") << d;
  if (getAccumulate() && !d.isF32())
    return emitOpError("'accumulate' needs an f32 D (C is accumulated in "
                       "FP32), got ")
           << d;

  bool fp8 = isFp8(a);
  std::optional<ArrayRef<int64_t>> recipe = getRecipe();
  if (fp8 && !recipe)
    return emitOpError("FP8 operands need a scaling 'recipe': [1, 1, 128] "
                       "(1D1D) or [1, 128, 128] (1D2D)");
  if (!fp8 && recipe)
    return emitOpError("'recipe' applies to FP8 operands only; BF16 takes none");
  bool is1D1D = false;
  if (recipe) {
    ArrayRef<int64_t> r = *recipe;
    is1D1D = r == ArrayRef<int64_t>{1, 1, 128};
    bool is1D2D = r == ArrayRef<int64_t>{1, 128, 128};
    if (!is1D1D && !is1D2D)
      return emitOpError("'recipe' must be [1, 1, 128] or [1, 128, 128]");
    if (is1D1D && !d.isF32())
      return emitOpError("recipe [1, 1, 128] produces an f32 D, got ") << d;
  }
  if (fp8 && getLayout() != MajorLayout::nt)
    return emitOpError("FP8 WGMMA reads both operands K-major: 'layout' must "
                       "be nt, got ")
           << stringifyMajorLayout(getLayout());

  if (getKind() == GemmKind::k_grouped_contiguous) {
    // BF16 operands get their kernel's rules last, from verifyBuiltKernel.
    if (fp8 && !is1D1D)
      return emitOpError("k_grouped_contiguous is the FP8 weight-gradient "
                         "GEMM: it needs f8E4M3FN operands and recipe "
                         "[1, 1, 128]");
    if (!dynamic(k))
      return emitOpError("'k' must be '?' for k_grouped_contiguous (every "
                         "group has its own K)");
    // The scale tensors are M x (sum K / 128) and N x (sum K / 128) FP32 with
    // M (N) contiguous: TMA needs their row strides to be 16-byte multiples.
    for (auto [name, v] : {std::pair<StringRef, int64_t>{"m", m}, {"n", n}})
      if (fp8 && !dynamic(v) && v % 4 != 0)
        return emitOpError("'")
               << name << "' must be a multiple of 4 (16-byte TMA stride of "
               << "the FP32 scale rows), got " << v;
  }
  if (!dynamic(k)) {
    if (fp8 && k % 128 != 0)
      return emitOpError("'k' must be a multiple of 128 (FP8 scales cover "
                         "128-deep K blocks), got ")
             << k;
    auto [majorA, majorB] = getOperandMajorness();
    if ((majorA == Majorness::k || majorB == Majorness::k) &&
        k * byteWidth(a) % 16 != 0)
      return emitOpError("'k' must give 16-byte TMA row strides for K-major "
                         "operands, got ")
             << k;
  }
  if (!dynamic(n) && n * byteWidth(d) % 16 != 0)
    return emitOpError("'n' must give 16-byte row strides for D, got ") << n;

  if (ConfigAttr config = getConfigAttr()) {
    if (config.getKind() != getKernelKind())
      return emitOpError("config 'kind' must be the kind of the kernel that "
                         "computes the description, ")
             << stringifyGemmKind(getKernelKind()) << ", got "
             << stringifyGemmKind(config.getKind());
    if (fp8 && config.getBlockK() != 128)
      return emitOpError("config 'block_k' must be 128 for FP8 recipes, got ")
             << config.getBlockK();
    // The operand fields must say what the description does.
    if (!isComputedBy(config)) {
      auto [majorA, majorB] = getOperandMajorness();
      bool bf16 = !fp8;
      return emitOpError("config's dtype, major_a, major_b, d_f32 and "
                         "accumulate must be the description's (")
             << (bf16 ? "bf16" : "fp8") << ", " << stringifyMajorness(majorA)
             << ", " << stringifyMajorness(majorB) << ", "
             << int(bf16 && d.isF32()) << ", " << int(bf16 && getAccumulate())
             << ")";
    }
  }
  // Last, so that a description gets its own errors first.
  return verifyBuiltKernel(*this, fp8, is1D1D);
}

GemmKind GemmOp::getKernelKind() {
  std::optional<ArrayRef<int64_t>> recipe = getRecipe();
  if (getKind() == GemmKind::normal && recipe &&
      *recipe == ArrayRef<int64_t>{1, 1, 128})
    return GemmKind::k_grouped_contiguous;
  return getKind();
}

/// DeepGEMM's name of the BF16 function a description stands for.
static std::string bf16FunctionName(GemmOp gemm) {
  std::string layout = stringifyMajorLayout(gemm.getLayout()).str();
  switch (gemm.getKind()) {
  case GemmKind::normal:
    return "bf16_gemm_" + layout;
  case GemmKind::m_grouped_contiguous:
  case GemmKind::m_grouped_contiguous_psum:
    return "m_grouped_bf16_gemm_" + layout + "_contiguous";
  case GemmKind::m_grouped_masked:
    return "m_grouped_bf16_gemm_" + layout + "_masked";
  case GemmKind::k_grouped_contiguous:
    return "k_grouped_bf16_gemm_" + layout + "_contiguous";
  }
  llvm_unreachable("unknown kind");
}

/// A's and B's majorness in DeepGEMM's layout naming: the first letter is
/// A's (n: K-major, t: MN-major), the second B's (t: K-major, n: MN-major).
static std::pair<Majorness, Majorness> majornessOf(MajorLayout layout) {
  switch (layout) {
  case MajorLayout::nt:
    return {Majorness::k, Majorness::k};
  case MajorLayout::nn:
    return {Majorness::k, Majorness::mn};
  case MajorLayout::tn:
    return {Majorness::mn, Majorness::mn};
  case MajorLayout::tt:
    return {Majorness::mn, Majorness::k};
  }
  llvm_unreachable("unknown layout");
}

std::pair<Majorness, Majorness> GemmOp::getOperandMajorness() {
  return majornessOf(getLayout());
}

bool GemmOp::isComputedBy(ConfigAttr config) {
  bool bf16 = getAType().isBF16();
  auto [majorA, majorB] = getOperandMajorness();
  if (!bf16)
    majorA = majorB = Majorness::k; // FP8 is nt; the verifier says so
  return config.getKind() == getKernelKind() && config.isBf16() == bf16 &&
         config.getMajorA() == majorA && config.getMajorB() == majorB &&
         config.getDF32() == int64_t(bf16 && getDType().isF32()) &&
         config.getAccumulate() == int64_t(bf16 && getAccumulate());
}

::dgemm::heuristics::Bf16Problem mlir::dgemm::bf16ProblemOf(GemmOp gemm) {
  namespace heur = ::dgemm::heuristics;
  auto [majorA, majorB] = gemm.getOperandMajorness();
  heur::Bf16Problem p;
  p.kind = static_cast<heur::Kind>(gemm.getKind());
  p.majorA = static_cast<heur::Major>(majorA);
  p.majorB = static_cast<heur::Major>(majorB);
  p.dF32 = gemm.getDType().isF32();
  p.accumulate = bool(gemm.getAccumulate());
  p.numGroups = gemm.getNumGroups();
  int64_t unknownM = 4096;
  if (gemm.getKind() == GemmKind::m_grouped_masked)
    unknownM = 256;
  else if (gemm.getKind() == GemmKind::m_grouped_contiguous ||
           gemm.getKind() == GemmKind::m_grouped_contiguous_psum)
    unknownM = 8 * 4096;
  auto known = [](int64_t v, int64_t otherwise) {
    return ShapedType::isDynamic(v) ? otherwise : v;
  };
  p.m = known(gemm.getM(), unknownM);
  p.n = known(gemm.getN(), 4096);
  p.k = known(gemm.getK(), 7168);
  return p;
}

/// The BF16 kernel's rules per kind (the heuristics' checkBf16Problem, on
/// the description): the layouts, D types and accumulation each of
/// DeepGEMM's BF16 functions has.
static LogicalResult verifyBf16Kernel(GemmOp gemm) {
  namespace heur = ::dgemm::heuristics;
  auto [majorA, majorB] = gemm.getOperandMajorness();
  std::string why = heur::checkBf16Problem(
      {static_cast<heur::Kind>(gemm.getKind()),
       static_cast<heur::Major>(majorA), static_cast<heur::Major>(majorB),
       gemm.getDType().isF32(), bool(gemm.getAccumulate()), 1, 1, 1, 1});
  if (!why.empty())
    return gemm.emitOpError("no BF16 kernel computes ")
           << bf16FunctionName(gemm) << " with a " << gemm.getDType() << " D"
           << (gemm.getAccumulate() ? " and 'accumulate'" : "") << ": " << why;
  // An MN-major operand's rows are its M (N) elements: 16-byte TMA strides.
  for (auto [name, major, v] :
       {std::tuple<StringRef, Majorness, int64_t>{"m", majorA, gemm.getM()},
        {"n", majorB, gemm.getN()}})
    if (major == Majorness::mn && !ShapedType::isDynamic(v) && v % 8 != 0)
      return gemm.emitOpError("'")
             << name << "' must be a multiple of 8 with an MN-major "
             << (name == "m" ? "A" : "B")
             << " (16-byte TMA strides of its BF16 rows), got " << v;
  // The m-grouped nn kernel reads B as [G * K, N]: a K block past a group's
  // K would read the next group's rows.
  int64_t k = gemm.getK();
  if (gemm.getKind() != GemmKind::normal && majorB == Majorness::mn &&
      gemm.getKind() != GemmKind::k_grouped_contiguous &&
      !ShapedType::isDynamic(k) && k % heur::kBf16BlockK != 0)
    return gemm.emitOpError("'k' must be a multiple of 64 for ")
           << bf16FunctionName(gemm)
           << " (B's groups are consecutive K rows of one tensor map), got "
           << k;
  return success();
}

/// The rules of the kernel that computes `gemm`'s kind: a description no
/// kernel implements is refused, naming what is missing.
static LogicalResult verifyBuiltKernel(GemmOp gemm, bool fp8, bool is1D1D) {
  Type d = gemm.getDType();
  GemmKind kind = gemm.getKind();
  if (!fp8)
    return verifyBf16Kernel(gemm);
  switch (kind) {
  case GemmKind::k_grouped_contiguous:
    return success(); // checked above, with its 1D1D rule
  case GemmKind::m_grouped_contiguous:
  case GemmKind::m_grouped_contiguous_psum:
  case GemmKind::m_grouped_masked:
    if (is1D1D || !d.isBF16() || gemm.getAccumulate())
      return gemm.emitOpError()
             << stringifyGemmKind(kind)
             << " is the FP8 MoE forward / data gradient GEMM: it needs "
                "recipe [1, 128, 128], a bf16 D and no 'accumulate' (the "
                "only FP8 m-grouped kernels built)";
    return success();
  case GemmKind::normal:
    if (is1D1D) {
      // The k-grouped kernel with one group: its rule on the FP32 scale
      // rows (16-byte TMA strides) applies.
      for (auto [name, v] : {std::pair<StringRef, int64_t>{"m", gemm.getM()},
                             {"n", gemm.getN()}})
        if (!ShapedType::isDynamic(v) && v % 4 != 0)
          return gemm.emitOpError("'")
                 << name << "' must be a multiple of 4 for a normal 1D1D "
                 << "GEMM (the k-grouped kernel computes it: 16-byte TMA "
                 << "stride of the FP32 scale rows), got " << v;
      return success();
    }
    if (!d.isBF16() || gemm.getAccumulate())
      return gemm.emitOpError("a normal GEMM with recipe [1, 128, 128] needs "
                              "a bf16 D and no 'accumulate' (DeepGEMM's "
                              "1D2D rule: c only with an f32 D)");
    return success();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

LogicalResult KernelOp::verify() {
  Block &entry = getBody().front();
  if (entry.getNumArguments() != NumArgs)
    return emitOpError("expected ")
           << static_cast<int>(NumArgs) << " arguments (docs/KernelABI.md), got "
           << entry.getNumArguments();
  for (unsigned i = 0; i < NumArgs; ++i) {
    Type t = entry.getArgument(i).getType();
    bool want = isPointerArg(i) ? isa<LLVM::LLVMPointerType>(t) : t.isInteger(32);
    if (!want)
      return emitOpError("argument #") << i << " has the wrong type " << t;
  }
  return success();
}

static ConfigAttr getKernelConfig(Operation *op) {
  auto kernel = op->getParentOfType<KernelOp>();
  return kernel ? kernel.getConfig() : ConfigAttr();
}

//===----------------------------------------------------------------------===//
// Resource effects
//===----------------------------------------------------------------------===//

static ResourceKind stageOf(TmaOperand operand) {
  switch (operand) {
  case TmaOperand::a:
    return ResourceKind::StageA;
  case TmaOperand::b:
    return ResourceKind::StageB;
  case TmaOperand::sfa:
    return ResourceKind::StageSFA;
  case TmaOperand::sfb:
    return ResourceKind::StageSFB;
  }
  llvm_unreachable("unknown operand");
}

static ResourceKind slotOf(TmaOperand operand) {
  return operand == TmaOperand::a ? ResourceKind::DescSlotA
                                  : ResourceKind::DescSlotB;
}

LogicalResult DescUpdateOp::verify() {
  if (getOperand() != TmaOperand::a && getOperand() != TmaOperand::b)
    return emitOpError("only the A and B tensor maps have descriptor slots");
  return success();
}

void DescUpdateOp::getResourceAccesses(
    SmallVectorImpl<ResourceAccess> &accesses) {
  accesses.push_back({slotOf(getOperand()), getSlot(), AccessKind::Write,
                      Proxy::Generic});
}

LogicalResult TmaLoadOp::verify() {
  bool perGroup = getOperand() == TmaOperand::a || getOperand() == TmaOperand::b;
  // The k-grouped kernel rewrites A's and B's maps per group; the m-grouped
  // kernel loads through the kernel-parameter maps.
  ConfigAttr kernelConfig = getKernelConfig(*this);
  bool rewritten = !kernelConfig ||
                   (kernelConfig.getKind() == GemmKind::k_grouped_contiguous &&
                    !kernelConfig.isBf16());
  if (perGroup && rewritten && !getSlot())
    return emitOpError("loads of A and B go through a descriptor 'slot'");
  if (perGroup && !rewritten && getSlot())
    return emitOpError("loads of A and B use the kernel-parameter tensor maps "
                       "in a kernel of kind ")
           << stringifyGemmKind(kernelConfig.getKind())
           << " and take no 'slot'";
  if (getOperand() == TmaOperand::sfb && !rewritten)
    return emitOpError("a kernel of kind ")
           << stringifyGemmKind(kernelConfig.getKind())
           << " reads its 128x128 B scales with dgemm.load_block_scale, not "
              "through the stages";
  if (!perGroup && getSlot())
    return emitOpError("scale loads use the kernel-parameter tensor map and "
                       "take no 'slot'");
  if (getMulticast()) {
    if (getOperand() != TmaOperand::b)
      return emitOpError("only B is multicast (along a cluster_m = 2 "
                         "cluster)");
    ConfigAttr config = getKernelConfig(*this);
    if (config && config.getClusterM() != 2)
      return emitOpError("'multicast' needs a kernel config with cluster_m = "
                         "2, got cluster_m = ")
             << config.getClusterM();
  }
  return success();
}

int64_t TmaLoadOp::getTxBytes() {
  ConfigAttr config = getKernelConfig(*this);
  if (!config)
    return 0;
  switch (getOperand()) {
  case TmaOperand::a:
    return config.getBlockM() * config.getRowBytes();
  case TmaOperand::b:
    return config.getBlockN() * config.getRowBytes();
  case TmaOperand::sfa:
    return config.getBlockM() * 4;
  case TmaOperand::sfb:
    return config.getBlockN() * 4;
  }
  llvm_unreachable("unknown operand");
}

void TmaLoadOp::getResourceAccesses(SmallVectorImpl<ResourceAccess> &accesses) {
  accesses.push_back({stageOf(getOperand()), getStage(), AccessKind::Write,
                      Proxy::Async, getTxBytes()});
  if (getSlot())
    accesses.push_back({slotOf(getOperand()), getSlot(), AccessKind::Read,
                        Proxy::Async});
}

/// A column slice [offset, offset + width) of a block_n-wide tile that one
/// WGMMA can compute (N a multiple of 8, at most 256) and whose B rows start
/// on a 128B-swizzle atom (8 rows).
static LogicalResult verifySlice(Operation *op, int64_t offset, int64_t width) {
  if (offset < 0 || offset % 8 != 0)
    return op->emitOpError("'col_offset' must be a non-negative multiple of "
                           "8 (a 128B-swizzle atom of B rows), got ")
           << offset;
  if (width < 8 || width > 256 || width % 8 != 0)
    return op->emitOpError("slice width (twice the accumulator length) must "
                           "be a multiple of 8 in [8, 256], got ")
           << width;
  if (ConfigAttr config = getKernelConfig(op))
    if (offset + width > config.getBlockN())
      return op->emitOpError("columns [")
             << offset << ", " << offset + width
             << ") exceed the tile's block_n = " << config.getBlockN();
  return success();
}

LogicalResult MmaOp::verify() {
  // One WGMMA shape along the chain: PTX orders the accumulator accesses of
  // consecutive WGMMAs only when their shapes match.
  if (Value chain = getChain(); chain && chain.getType() != getAcc().getType())
    return emitOpError("'chain' must have the accumulator's type ")
           << getAcc().getType() << ", got " << chain.getType();
  return verifySlice(*this, getColOffset(),
                     2 * cast<VectorType>(getAcc().getType()).getNumElements());
}

void MmaOp::getResourceAccesses(SmallVectorImpl<ResourceAccess> &accesses) {
  accesses.push_back(
      {ResourceKind::StageA, getStage(), AccessKind::Read, Proxy::Async});
  accesses.push_back(
      {ResourceKind::StageB, getStage(), AccessKind::Read, Proxy::Async});
  // The chained accumulator: the tensor cores read the previous fragment
  // and overwrite its registers (an asynchronous read-modify-write).
  if (Value chain = getChain()) {
    accesses.push_back(
        {ResourceKind::Accumulator, chain, AccessKind::Read, Proxy::Async});
    accesses.push_back(
        {ResourceKind::Accumulator, chain, AccessKind::Write, Proxy::Async});
  }
  accesses.push_back(
      {ResourceKind::Accumulator, getAcc(), AccessKind::Write, Proxy::Async});
}

void LoadScalesOp::getResourceAccesses(
    SmallVectorImpl<ResourceAccess> &accesses) {
  accesses.push_back(
      {ResourceKind::StageSFA, getStage(), AccessKind::Read, Proxy::Generic});
  if (cast<VectorType>(getScales().getType()).getNumElements() > 2)
    accesses.push_back(
        {ResourceKind::StageSFB, getStage(), AccessKind::Read, Proxy::Generic});
}

static LogicalResult verifyTileSums(Operation *op, ValueRange sums);

/// Whether `op`'s kernel takes 128x128 B scales from global memory (the
/// m-grouped 1D2D kernel) rather than sfb slices from the stages.
static bool hasBlockScales(Operation *op) {
  ConfigAttr config = getKernelConfig(op);
  return config && config.getKind() != GemmKind::k_grouped_contiguous &&
         !config.isBf16();
}

LogicalResult LoadBlockScaleOp::verify() {
  if (ConfigAttr config = getKernelConfig(*this))
    if (!hasBlockScales(*this))
      return emitOpError("needs a kernel with 128x128 B scales (kind "
                         "m_grouped_contiguous, m_grouped_contiguous_psum, "
                         "m_grouped_masked or normal), "
                         "the kernel's kind is ")
             << stringifyGemmKind(config.getKind());
  return success();
}

LogicalResult StoreRowsOp::verify() {
  if (ConfigAttr config = getKernelConfig(*this)) {
    GemmKind kind = config.getKind();
    if (kind == GemmKind::k_grouped_contiguous && !config.isBf16())
      return emitOpError("needs a 1D2D or BF16 kernel (the FP8 k-grouped "
                         "kernel stores through dgemm.epilogue), the kernel's "
                         "kind is ")
             << stringifyGemmKind(kind);
    // The row mapping is the kind's: the grouped layout names each row's
    // group, the other kinds bound a group's block of rows.
    bool layoutRows = kind == GemmKind::m_grouped_contiguous;
    if (layoutRows && getLimit())
      return emitOpError("takes no 'limit' in a kernel of kind "
                         "m_grouped_contiguous (the grouped layout says which "
                         "rows are written)");
    if (!layoutRows && !getLimit())
      return emitOpError("needs a row 'limit' in a kernel of kind ")
             << stringifyGemmKind(kind)
             << " (the rows of the group's block that are written)";
  }
  return verifyTileSums(*this, getSums());
}

LogicalResult PromoteOp::verify() {
  if (!getScales() && !getStage())
    return emitOpError("takes its scales from 'scales', from a 'stage', or "
                       "the first columns' from 'scales' and the rest from "
                       "a 'stage'; it has neither");
  int64_t width = 2 * cast<VectorType>(getAcc().getType()).getNumElements();
  if (failed(verifySlice(*this, getColOffset(), width)))
    return failure();
  if (getBlockScale()) {
    // The 1D2D recipe: sfa from `scales` (2 values) or the stage.
    Value scales = getScales();
    if (scales && cast<VectorType>(scales.getType()).getNumElements() != 2)
      return emitOpError("with a 'block_scale', 'scales' must hold the 2 sfa "
                         "values only, got ")
             << cast<VectorType>(scales.getType()).getNumElements();
    if (scales && getStage())
      return emitOpError("with a 'block_scale', sfa comes from 'scales' or "
                         "from a 'stage', not both");
    return success();
  }
  if (hasBlockScales(*this))
    return emitOpError("needs a 'block_scale' in a kernel with 128x128 B "
                       "scales (kind m_grouped_contiguous, "
                       "m_grouped_contiguous_psum, m_grouped_masked "
                       "or normal)");
  if (Value scales = getScales()) {
    // Two sfa rows, then one sfb pair per 8-column group of the slice (or,
    // with a stage for the rest, of its first columns).
    int64_t len = cast<VectorType>(scales.getType()).getNumElements();
    if (!getStage() && len != 2 + width / 4)
      return emitOpError("'scales' must hold 2 sfa and ")
             << width / 4 << " sfb values for a " << width
             << "-column slice, got " << len << " values";
    if (getStage() && (len < 4 || len >= 2 + width / 4 || (len - 2) % 2))
      return emitOpError("with a 'stage' for the other columns, 'scales' "
                         "must hold 2 sfa values and the sfb pairs of fewer "
                         "than all ")
             << width / 8 << " 8-column groups, got " << len << " values";
    auto load = scales.getDefiningOp<LoadScalesOp>();
    if (load && load.getColOffset() != getColOffset())
      return emitOpError("'scales' were loaded for columns from ")
             << load.getColOffset() << ", the slice starts at column "
             << getColOffset();
  }
  return success();
}

LogicalResult LoadScalesOp::verify() {
  int64_t len = cast<VectorType>(getScales().getType()).getNumElements();
  if (hasBlockScales(*this)) {
    if (len != 2)
      return emitOpError("in a kernel with 128x128 B scales the result must "
                         "hold the 2 sfa values only, got ")
             << len << " values";
    return success();
  }
  if (len < 4 || (len - 2) % 2 != 0)
    return emitOpError("result must hold 2 sfa values and a whole number of "
                       "sfb pairs, got ")
           << len << " values";
  return verifySlice(*this, getColOffset(), 4 * (len - 2));
}

LogicalResult TurnOp::verify() {
  if (getAction() != TurnAction::pass && !getAccs().empty())
    return emitOpError("only 'pass' takes accumulators");
  if (ConfigAttr config = getKernelConfig(*this))
    if (config.getMathWarpgroups() < 2)
      return emitOpError("needs at least two math warpgroups to take turns, "
                         "the kernel has math_warpgroups = ")
             << config.getMathWarpgroups();
  return success();
}

void TurnOp::getResourceAccesses(SmallVectorImpl<ResourceAccess> &accesses) {
  for (Value acc : getAccs())
    accesses.push_back(
        {ResourceKind::Accumulator, acc, AccessKind::Read, Proxy::Generic});
}

/// A tile's FP32 sums (dgemm.epilogue, dgemm.park.store): consecutive column
/// slices of whole 8-column fragment groups covering the tile's block_n.
static LogicalResult verifyTileSums(Operation *op, ValueRange sums) {
  if (sums.empty())
    return op->emitOpError("needs at least one sum");
  int64_t cols = 0;
  for (Value sum : sums) {
    int64_t len = cast<VectorType>(sum.getType()).getNumElements();
    if (len % 4 != 0)
      return op->emitOpError("each sum must hold a multiple of 4 values (8 "
                             "columns of the fragment), got ")
             << len;
    cols += 2 * len;
  }
  if (ConfigAttr config = getKernelConfig(op))
    if (cols != config.getBlockN())
      return op->emitOpError("sums cover ")
             << cols << " columns, the tile has block_n = "
             << config.getBlockN();
  return success();
}

LogicalResult EpilogueOp::verify() {
  return verifyTileSums(*this, getSums());
}

/// An epilogue reads its sums through the generic proxy; in a kernel
/// without promotion they are the WGMMA accumulators themselves.
static void readSums(ValueRange sums,
                     SmallVectorImpl<ResourceAccess> &accesses) {
  for (Value sum : sums)
    accesses.push_back(
        {ResourceKind::Accumulator, sum, AccessKind::Read, Proxy::Generic});
}

void EpilogueOp::getResourceAccesses(
    SmallVectorImpl<ResourceAccess> &accesses) {
  readSums(getSums(), accesses);
}

void StoreRowsOp::getResourceAccesses(
    SmallVectorImpl<ResourceAccess> &accesses) {
  readSums(getSums(), accesses);
}

void PromoteOp::getResourceAccesses(SmallVectorImpl<ResourceAccess> &accesses) {
  accesses.push_back(
      {ResourceKind::Accumulator, getAcc(), AccessKind::Read, Proxy::Generic});
  if (Value stage = getStage()) {
    accesses.push_back(
        {ResourceKind::StageSFA, stage, AccessKind::Read, Proxy::Generic});
    if (!getBlockScale())
      accesses.push_back(
          {ResourceKind::StageSFB, stage, AccessKind::Read, Proxy::Generic});
  }
}

//===----------------------------------------------------------------------===//
// Parked tiles
//===----------------------------------------------------------------------===//

// The format assemblyFormat would generate, except on failure: a use in one
// role that the parser resolved to a (misplaced) definition of the same name
// in a later role points into that role, and the generated parser frees the
// later region first, leaving the use dangling (a heap corruption the fuzzer
// found: test/Dialect/DGemm/fuzz-regressions/). Every region drops its
// references before any is freed.
ParseResult WarpSpecializeOp::parse(OpAsmParser &parser,
                                    OperationState &result) {
  std::unique_ptr<Region> producer = std::make_unique<Region>(),
                          math = std::make_unique<Region>(),
                          workers = std::make_unique<Region>();
  auto dropReferences = llvm::make_scope_exit([&] {
    for (Region *region : {producer.get(), math.get(), workers.get()})
      if (region)
        region->dropAllReferences();
  });
  Type i32 = parser.getBuilder().getIntegerType(32);
  auto parseRole = [&](StringRef name, IntegerAttr &regs,
                       Region &region) -> ParseResult {
    return failure(parser.parseKeyword(name) || parser.parseLParen() ||
                   parser.parseKeyword("regs") || parser.parseEqual() ||
                   parser.parseCustomAttributeWithFallback(regs, i32) ||
                   parser.parseRParen() || parser.parseRegion(region));
  };
  IntegerAttr producerRegs, mathRegs;
  if (parseRole("producer", producerRegs, *producer) ||
      parseRole("math", mathRegs, *math))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("workers")) &&
      parser.parseRegion(*workers))
    return failure();
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  auto &props = result.getOrAddProperties<Properties>();
  props.producer_regs = producerRegs;
  props.math_regs = mathRegs;
  if (failed(verifyInherentAttrs(result.name, result.attributes, [&]() {
        return parser.emitError(loc) << "'" << result.name.getStringRef()
                                     << "' op ";
      })))
    return failure();
  result.addRegion(std::move(producer));
  result.addRegion(std::move(math));
  result.addRegion(std::move(workers));
  return success();
}

void WarpSpecializeOp::print(OpAsmPrinter &p) {
  p << " producer(regs = ";
  p.printAttributeWithoutType(getProducerRegsAttr());
  p << ") ";
  p.printRegion(getProducer());
  p << " math(regs = ";
  p.printAttributeWithoutType(getMathRegsAttr());
  p << ") ";
  p.printRegion(getMath());
  if (!getWorkers().empty()) {
    p << " workers ";
    p.printRegion(getWorkers());
  }
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {getProducerRegsAttrName(), getMathRegsAttrName()});
}

int64_t WarpSpecializeOp::getRoleThreads(Region &role) {
  if (&role == &getProducer())
    return 1;
  if (&role == &getMath()) {
    ConfigAttr config = getKernelConfig(*this);
    return config ? 128 * config.getMathWarpgroups() : 0;
  }
  return getWorkerThreads() ? int64_t(*getWorkerThreads()) : 0;
}

LogicalResult WarpSpecializeOp::verify() {
  if (getWorkers().empty())
    return success();
  // The workers are threads 32 .. 32 + worker_threads - 1 of warpgroup 0.
  if (!getWorkerThreads() || *getWorkerThreads() < 1 ||
      *getWorkerThreads() > 96)
    return emitOpError("a 'workers' region needs 'worker_threads' in [1, 96] "
                       "(threads 32 to 127 of the producer warpgroup)");
  return success();
}

/// The region of the enclosing dgemm.warp_specialize that `op` runs in.
static Region *roleOf(Operation *op, WarpSpecializeOp &ws) {
  Region *region = op->getParentRegion();
  while (region && !isa<WarpSpecializeOp>(region->getParentOp()))
    region = region->getParentOp()->getParentRegion();
  if (region)
    ws = cast<WarpSpecializeOp>(region->getParentOp());
  return region;
}

/// The checks dgemm.park.store and dgemm.park.reduce share: a kernel that
/// parks its tiles, the role (`math` or `workers`), a slot from a one-stage
/// dgemm.stage.
static LogicalResult verifyParkAccess(Operation *op, Value slot,
                                      bool inWorkers) {
  ConfigAttr config = getKernelConfig(op);
  if (config && !config.isParked())
    return op->emitOpError("needs a kernel whose config has epilogue = parked");
  WarpSpecializeOp ws;
  if (Region *role = roleOf(op, ws)) {
    Region &want = inWorkers ? ws.getWorkers() : ws.getMath();
    if (role != &want)
      return op->emitOpError("must be in the '")
             << (inWorkers ? "workers" : "math")
             << "' region of dgemm.warp_specialize";
  }
  auto stage = slot.getDefiningOp<StageOp>();
  if (!stage || stage.getStages() != 1)
    return op->emitOpError("slot must come from a dgemm.stage of 1 stage "
                           "(the park holds one tile)");
  return success();
}

LogicalResult ParkStoreOp::verify() {
  if (failed(verifyTileSums(*this, getSums())))
    return failure();
  return verifyParkAccess(*this, getSlot(), /*inWorkers=*/false);
}

void ParkStoreOp::getResourceAccesses(
    SmallVectorImpl<ResourceAccess> &accesses) {
  accesses.push_back(
      {ResourceKind::Park, getSlot(), AccessKind::Write, Proxy::Generic});
}

LogicalResult ParkReduceOp::verify() {
  return verifyParkAccess(*this, getSlot(), /*inWorkers=*/true);
}

void ParkReduceOp::getResourceAccesses(
    SmallVectorImpl<ResourceAccess> &accesses) {
  accesses.push_back(
      {ResourceKind::Park, getSlot(), AccessKind::Read, Proxy::Generic});
}

//===- DGemmOps.cpp - dgemm operations ------------------------------------===//

#include "dgemm/Dialect/DGemm/IR/DGemm.h"

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
// StageOp (the description, GemmOp, is in GemmOp.cpp)
//===----------------------------------------------------------------------===//

LogicalResult StageOp::verify() {
  // The lowering divides by it.
  int64_t stages = getStagesAttr().getInt();
  if (stages < 1)
    return emitOpError("needs at least one stage, got ") << stages;
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

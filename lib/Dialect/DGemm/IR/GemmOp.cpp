//===- GemmOp.cpp - The description: dgemm.gemm -----------------------------===//
//
// The verifier of a GEMM description, the rules of the kernel that computes
// each kind (FP8 and BF16), and the bridges from a description to the
// heuristics' problems and to the configs that compute it. The kernel-IR ops
// are in DGemmOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Dialect/DGemm/IR/DGemm.h"
#include "dgemm/Heuristics/Bf16Config.h"

#include "mlir/IR/BuiltinTypes.h"

#include <limits>

using namespace mlir;
using namespace mlir::dgemm;

static bool isFp8(Type t) { return isa<Float8E4M3FNType>(t); }
static LogicalResult verifyBuiltKernel(GemmOp gemm, bool fp8, bool is1D1D);
static int64_t byteWidth(Type t) { return t.getIntOrFloatBitWidth() / 8; }

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


//===- PTXEmitter.cpp - LLVM dialect to PTX through NVPTX -----------------===//

#include "dgemm/Target/PTX/PTXEmitter.h"

#include "dgemm/Dialect/DGemm/IR/DGemm.h"
#include "dgemm/Dialect/DGemm/Transforms/Passes.h"
#include "dgemm/Heuristics/Bf16Config.h"
#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Heuristics/MGroupedConfig.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace mlir;
using namespace mlir::dgemm;
namespace heur = ::dgemm::heuristics;

/// The index.txt layout version (docs/KernelABI.md); the runtime reads this
/// one only.
static constexpr int kBundleIndexFormat = 2;

static void initNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

LogicalResult mlir::dgemm::emitPTX(ModuleOp module, llvm::raw_ostream &os,
                                   const PTXOptions &options) {
  initNVPTX();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "dgemm");
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");

  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError("NVPTX target unavailable: ") << error;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, options.chip, options.features, llvm::TargetOptions(),
      std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  // Mid-level optimization: SROA turns the producer's bookkeeping cells into
  // registers and the per-register accumulator code into plain FMAs.
  if (options.optLevel > 0) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(machine.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm =
        pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(*llvmModule, mam);
  }

  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream ptxStream(ptx);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, ptxStream, nullptr,
                                   llvm::CodeGenFileType::AssemblyFile))
    return module.emitError("NVPTX cannot emit assembly");
  codegen.run(*llvmModule);
  os << ptx;
  return success();
}

LogicalResult mlir::dgemm::compileToPTX(ModuleOp module, llvm::raw_ostream &os,
                                        const DGemmPipelineOptions &pipeline,
                                        const PTXOptions &options) {
  PassManager pm(module.getContext());
  buildDGemmToLLVMPipeline(pm, pipeline);
  if (failed(pm.run(module)))
    return failure();
  return emitPTX(module, os, options);
}

/// The pipeline options that override a selected configuration.
static heur::ConfigOverrides
pipelineOverrides(const DGemmPipelineOptions &pipeline) {
  heur::ConfigOverrides o;
  if (pipeline.descSlots > 0)
    o.descSlots = pipeline.descSlots;
  if (pipeline.clusterM > 0)
    o.clusterM = pipeline.clusterM;
  if (pipeline.quadB >= 0)
    o.quadB = pipeline.quadB;
  o.unsafe = heur::parseUnsafe(pipeline.unsafe.empty()
                                   ? std::string("none")
                                   : std::string(pipeline.unsafe))
                 .value_or(0);
  return o;
}

uint64_t mlir::dgemm::fnv1a64(StringRef data) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char ch : data.bytes()) {
    hash ^= ch;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

#ifndef DGEMM_GIT_COMMIT
#define DGEMM_GIT_COMMIT "unknown"
#endif
#ifndef DGEMM_PTXAS_PATH
#define DGEMM_PTXAS_PATH ""
#endif

/// The ptxas to run, or "" for none (with the reason in `why`).
static std::string findPtxas(StringRef requested, std::string &why) {
  if (requested == "none") {
    why = "--ptxas=none";
    return "";
  }
  if (!requested.empty()) {
    if (llvm::sys::fs::can_execute(requested))
      return requested.str();
    why = ("--ptxas='" + requested + "' is not an executable").str();
    return "";
  }
  StringRef configured = DGEMM_PTXAS_PATH;
  if (!configured.empty() && llvm::sys::fs::can_execute(configured))
    return configured.str();
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  why =
      "no ptxas at the configured path '" + configured.str() + "' nor on PATH";
  return "";
}

/// The CUDA release of a ptxas ("13.0" from "... release 13.0, V13.0.88"),
/// or "unknown".
static std::string ptxasRelease(StringRef ptxas) {
  llvm::SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("dgemm-ptxas-version", "log", log))
    return "unknown";
  std::optional<StringRef> redirects[] = {std::nullopt, log.str(), log.str()};
  SmallVector<StringRef> args = {ptxas, "--version"};
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects);
  std::string out;
  if (auto buffer = llvm::MemoryBuffer::getFile(log))
    out = (*buffer)->getBuffer().str();
  llvm::sys::fs::remove(log);
  size_t at = out.find("release ");
  if (rc != 0 || at == std::string::npos)
    return "unknown";
  StringRef rest = StringRef(out).drop_front(at + 8);
  return rest.take_while([](char c) { return llvm::isDigit(c) || c == '.'; })
      .str();
}

/// The ".version X.Y" of a PTX text, or "".
static std::string ptxIsaVersion(StringRef ptx) {
  size_t at = ptx.find("\n.version ");
  if (at == StringRef::npos)
    return "";
  StringRef rest = ptx.drop_front(at + 10);
  return rest.take_until([](char c) { return c == '\n' || c == ' '; })
      .trim()
      .str();
}

/// The configurations of `module`'s descriptions as dgemm-select-config
/// chooses them under `pipeline`, then, with `allCandidates`, every other
/// one the heuristics can choose (with the pipeline's overrides applied as
/// the runtime applies them), each once; `gemms` gets the descriptions.
static FailureOr<SmallVector<ConfigAttr>>
collectConfigs(ModuleOp module, bool allCandidates,
               const DGemmPipelineOptions &pipeline,
               SmallVectorImpl<GemmOp> &gemms) {
  MLIRContext *ctx = module.getContext();
  // One description per configuration: the chosen ones, or all candidates.
  module.walk([&](GemmOp op) { gemms.push_back(op); });
  if (gemms.empty())
    return module.emitError("no dgemm.gemm to build a bundle from");
  {
    PassManager pm(ctx);
    DGemmSelectConfigOptions select;
#define DGEMM_PIPELINE_OPTION(TYPE, FIELD, FLAG, DEFAULT, HELP)                \
  select.FIELD = pipeline.FIELD;
#include "dgemm/Pipelines/PipelineOptions.def"
    pm.addPass(createDGemmSelectConfig(select));
    if (failed(pm.run(module)))
      return failure();
  }
  SmallVector<ConfigAttr> configs;
  llvm::StringSet<> seen;
  auto add = [&](ConfigAttr c) {
    if (seen.insert(c.getEntryName()).second)
      configs.push_back(c);
  };
  for (GemmOp g : gemms)
    add(*g.getConfig());
  if (allCandidates) {
    heur::Target target;
    target.numSMs = pipeline.numSMs;
    target.maxSmemPerBlock = pipeline.smemBytes;
    heur::ConfigOverrides overrides = pipelineOverrides(pipeline);
    // The candidates of every kind the module describes.
    std::vector<heur::KernelConfig> candidates;
    // (A normal 1D1D description is computed by the k-grouped kernel.)
    // (BF16 descriptions have candidates of their own, below.)
    auto describes = [&](GemmKind kind) {
      return llvm::any_of(gemms, [&](GemmOp g) {
        return g.getKernelKind() == kind && !g.getAType().isBF16();
      });
    };
    if (describes(GemmKind::k_grouped_contiguous))
      candidates = heur::candidateKGroupedConfigs(target);
    for (GemmKind kind :
         {GemmKind::m_grouped_contiguous, GemmKind::m_grouped_contiguous_psum,
          GemmKind::m_grouped_masked, GemmKind::normal})
      if (describes(kind))
        for (const heur::KernelConfig &c : heur::candidateMGroupedConfigs(
                 target, static_cast<heur::Kind>(kind)))
          candidates.push_back(c);
    // A BF16 description: the candidates of its kind, layout and D.
    for (GemmOp g : gemms)
      if (g.getAType().isBF16())
        for (const heur::KernelConfig &c :
             heur::candidateBf16Configs(bf16ProblemOf(g), target))
          candidates.push_back(c);
    for (heur::KernelConfig c : candidates) {
      // The overrides as the runtime applies them to what it selects; a
      // candidate they turn into another one is dropped as a duplicate.
      std::string error = heur::applyOverrides(c, overrides, target, nullptr);
      if (!error.empty())
        return module.emitError("bundle candidate ")
               << c.entryName() << ": " << error;
      add(toConfigAttr(ctx, c));
    }
  }
  return configs;
}

LogicalResult mlir::dgemm::writeBundle(ModuleOp module, StringRef dir,
                                       const BundleOptions &bundle,
                                       const DGemmPipelineOptions &pipeline,
                                       const PTXOptions &options) {
  SmallVector<GemmOp> gemms;
  FailureOr<SmallVector<ConfigAttr>> collected =
      collectConfigs(module, bundle.allCandidates, pipeline, gemms);
  if (failed(collected))
    return failure();
  SmallVector<ConfigAttr> &configs = *collected;
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return module.emitError("cannot create bundle directory '")
           << dir << "': " << ec.message();
  // The index is written last: a bundle whose writing stops half-way has
  // none, which the runtime refuses, instead of an index that lists files
  // of an earlier bundle.
  llvm::SmallString<256> indexPath(dir);
  llvm::sys::path::append(indexPath, "index.txt");
  if (std::error_code ec = llvm::sys::fs::remove(indexPath))
    return module.emitError("cannot remove '")
           << indexPath << "': " << ec.message();

  std::string why;
  std::string ptxas = findPtxas(bundle.ptxas, why);
  // A cubin loads only where the driver is at least the ptxas's CUDA major
  // version; the index records it for the runtime's check.
  std::string ptxasVersion = ptxas.empty() ? "none" : ptxasRelease(ptxas);
  if (ptxas.empty())
    llvm::errs() << "warning: " << why << ": the bundle in '" << dir
                 << "' holds PTX only (the runtime JIT-compiles each kernel "
                    "on first use)\n";

  auto pathOf = [&](StringRef entry, StringRef ext) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, entry + ext);
    return path;
  };
  auto hex = [](uint64_t v) { return llvm::utohexstr(v, true, 16); };
  std::string kernels, isa;
  for (ConfigAttr config : configs) {
    OwningOpRef<ModuleOp> single = ModuleOp::create(module.getLoc());
    OpBuilder b(single->getBodyRegion());
    // A description the configuration's kernel computes (every candidate is
    // of a description's kind, and a BF16 one of its operands and D).
    GemmOp source =
        *llvm::find_if(gemms, [&](GemmOp g) { return g.isComputedBy(config); });
    auto clone = cast<GemmOp>(b.clone(*source));
    clone.setConfigAttr(config);
    std::string ptx;
    llvm::raw_string_ostream ptxStream(ptx);
    if (failed(compileToPTX(*single, ptxStream, pipeline, options)))
      return failure();
    std::string entry = config.getEntryName();
    auto write = [&](StringRef ext, StringRef text) -> LogicalResult {
      llvm::SmallString<256> path = pathOf(entry, ext);
      std::error_code ec;
      llvm::raw_fd_ostream out(path, ec);
      if (!ec) {
        out << text;
        out.close();
        ec = out.error();
      }
      if (ec)
        return module.emitError("cannot write '")
               << path << "': " << ec.message();
      return success();
    };
    std::string meta = toHeuristicsConfig(config).toMeta();
    if (failed(write(".ptx", ptx)) || failed(write(".meta", meta)))
      return failure();
    if (isa.empty())
      isa = ptxIsaVersion(ptx);

    std::string cubinHash = "none";
    llvm::SmallString<256> cubinPath = pathOf(entry, ".cubin");
    llvm::sys::fs::remove(cubinPath);
    if (!ptxas.empty()) {
      llvm::SmallString<256> ptxPath = pathOf(entry, ".ptx");
      llvm::SmallString<128> log;
      if (std::error_code ec =
              llvm::sys::fs::createTemporaryFile("dgemm-ptxas", "log", log))
        return module.emitError("cannot create a temporary file: ")
               << ec.message();
      std::string arch = "-arch=" + options.chip;
      SmallVector<StringRef> args = {ptxas, arch, "-o", cubinPath, ptxPath};
      std::optional<StringRef> redirects[] = {std::nullopt, log.str(),
                                              log.str()};
      std::string execError;
      int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                         0, 0, &execError);
      std::string output;
      if (auto buffer = llvm::MemoryBuffer::getFile(log))
        output = (*buffer)->getBuffer().str();
      llvm::sys::fs::remove(log);
      if (rc != 0)
        return module.emitError("ptxas failed on '")
               << ptxPath << "' (exit " << rc << (execError.empty() ? "" : ", ")
               << execError << "): " << output;
      auto cubin =
          llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
      if (!cubin)
        return module.emitError("ptxas wrote no '") << cubinPath << "'";
      cubinHash = hex(fnv1a64((*cubin)->getBuffer()));
    }
    kernels += "kernel=" + entry + " meta=" + hex(fnv1a64(meta)) +
               " ptx=" + hex(fnv1a64(ptx)) + " cubin=" + cubinHash + "\n";
  }

  std::string index;
  llvm::raw_string_ostream os(index);
  os << "# dgemm kernel bundle index (docs/KernelABI.md), written last by "
        "dgemm-translate\n"
     << "format=" << kBundleIndexFormat << "\n"
     << "git_commit=" << DGEMM_GIT_COMMIT << "\n"
     << "heuristics_version=" << heur::kHeuristicsVersion << "\n"
     << "kernel_abi=" << heur::kKernelAbiVersion << "\n"
     << "target=" << options.chip << "\n"
     << "ptx_isa=" << (isa.empty() ? "unknown" : isa) << "\n"
     << "ptxas=" << ptxasVersion << "\n"
     << "checksum=fnv1a64\n"
     << kernels;
  std::error_code ec;
  llvm::raw_fd_ostream out(indexPath, ec);
  if (!ec) {
    out << index;
    out.close();
    ec = out.error();
  }
  if (ec)
    return module.emitError("cannot write '")
           << indexPath << "': " << ec.message();
  return success();
}

namespace {
llvm::cl::opt<std::string> bundleDir(
    "bundle-dir",
    llvm::cl::desc("With --dgemm-to-ptx: also write a kernel bundle "
                   "(docs/KernelABI.md) to this directory"),
    llvm::cl::init(""));
llvm::cl::opt<bool> bundleAllCandidates(
    "bundle-all-candidates",
    llvm::cl::desc("With --bundle-dir: include every configuration the "
                   "heuristics can choose (the default; kept for scripts)"),
    llvm::cl::init(true));
llvm::cl::opt<bool> bundleSingleKernel(
    "bundle-single-kernel",
    llvm::cl::desc("With --bundle-dir: only the configurations the input's "
                   "descriptions select"),
    llvm::cl::init(false));
llvm::cl::opt<std::string> ptxasPath(
    "ptxas",
    llvm::cl::desc("With --bundle-dir: the ptxas that assembles each kernel "
                   "into a .cubin (default: the configured one, then PATH; "
                   "'none': PTX only)"),
    llvm::cl::init(""));
// The pipeline's options as flags of their own (PipelineOptions.def), so
// that `dgemm-translate --desc-slots=1` needs no --pipeline-options.
#define DGEMM_PIPELINE_OPTION(TYPE, FIELD, FLAG, DEFAULT, HELP)                \
  llvm::cl::opt<TYPE> translate_##FIELD(FLAG, llvm::cl::desc(HELP),            \
                                        llvm::cl::init(DEFAULT));
#include "dgemm/Pipelines/PipelineOptions.def"
llvm::cl::opt<std::string> pipelineOptions(
    "pipeline-options",
    llvm::cl::desc("Options of the dgemm-to-llvm pipeline, as dgemm-opt "
                   "takes them (for example 'desc-slots=1 quad-b=0'); "
                   "overrides the flags of the same names"),
    llvm::cl::init(""));
} // namespace

/// The pipeline's options from their flags and --pipeline-options.
static LogicalResult readPipelineOptions(ModuleOp module,
                                         DGemmPipelineOptions &pipeline) {
#define DGEMM_PIPELINE_OPTION(TYPE, FIELD, FLAG, DEFAULT, HELP)                \
  pipeline.FIELD = translate_##FIELD;
#include "dgemm/Pipelines/PipelineOptions.def"
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (failed(pipeline.parseFromString(pipelineOptions, errorStream)))
    return mlir::emitError(module.getLoc(), "invalid --pipeline-options '")
           << pipelineOptions << "': " << error;
  return success();
}

static void registerDialects(DialectRegistry &registry) {
  registry.insert<DGemmDialect, arith::ArithDialect, scf::SCFDialect,
                  LLVM::LLVMDialect, NVVM::NVVMDialect, cf::ControlFlowDialect,
                  vector::VectorDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void mlir::dgemm::registerPTXTranslation() {
  TranslateFromMLIRRegistration reg(
      "dgemm-to-ptx", "Compile dgemm descriptions to sm_90a PTX",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        DGemmPipelineOptions pipeline;
        if (failed(readPipelineOptions(module, pipeline)))
          return failure();
        if (!bundleDir.empty()) {
          OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
          BundleOptions bundle;
          bundle.allCandidates = !bundleSingleKernel;
          bundle.ptxas = ptxasPath;
          if (failed(writeBundle(*copy, bundleDir, bundle, pipeline)))
            return failure();
        }
        return compileToPTX(module, os, pipeline);
      },
      registerDialects);
  // The synchronized kernel IR of every candidate, for the verifier's
  // mutation suite (test/Mutation): what dgemm-verify-sync sees in the
  // pipeline, one kernel per split.
  TranslateFromMLIRRegistration synced(
      "dgemm-synced-candidates",
      "Print the kernel IR of every configuration the heuristics can choose "
      "(with the pipeline's overrides) after dgemm-place-sync, one module "
      "per '// -----' split",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        DGemmPipelineOptions pipeline;
        if (failed(readPipelineOptions(module, pipeline)))
          return failure();
        SmallVector<GemmOp> gemms;
        FailureOr<SmallVector<ConfigAttr>> configs =
            collectConfigs(module, /*allCandidates=*/true, pipeline, gemms);
        if (failed(configs))
          return failure();
        bool first = true;
        for (ConfigAttr config : *configs) {
          OwningOpRef<ModuleOp> single = ModuleOp::create(module.getLoc());
          OpBuilder b(single->getBodyRegion());
          GemmOp source = *llvm::find_if(
              gemms, [&](GemmOp g) { return g.isComputedBy(config); });
          auto clone = cast<GemmOp>(b.clone(*source));
          clone.setConfigAttr(config);
          PassManager pm(module.getContext());
          pm.addPass(createDGemmLowerToKernel());
          pm.addPass(createDGemmPlaceSync());
          if (failed(pm.run(*single)))
            return failure();
          if (!first)
            os << "// -----\n";
          first = false;
          single->print(os);
          os << "\n";
        }
        return success();
      },
      registerDialects);
}


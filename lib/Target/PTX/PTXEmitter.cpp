//===- PTXEmitter.cpp - LLVM dialect to PTX through NVPTX -----------------===//

#include "dgemm/Target/PTX/PTXEmitter.h"

#include "dgemm/Dialect/DGemm/IR/DGemm.h"
#include "dgemm/Dialect/DGemm/Transforms/Passes.h"
#include "dgemm/Heuristics/KernelConfig.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace mlir;
using namespace mlir::dgemm;
namespace heur = ::dgemm::heuristics;

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

LogicalResult mlir::dgemm::writeBundle(ModuleOp module, StringRef dir,
                                       bool allCandidates,
                                       const DGemmPipelineOptions &pipeline,
                                       const PTXOptions &options) {
  MLIRContext *ctx = module.getContext();
  // One description per configuration: the chosen ones, or all candidates.
  SmallVector<GemmOp> gemms;
  module.walk([&](GemmOp op) { gemms.push_back(op); });
  if (gemms.empty())
    return module.emitError("no dgemm.gemm to build a bundle from");
  {
    PassManager pm(ctx);
    DGemmSelectConfigOptions select;
    select.numSMs = pipeline.numSMs;
    select.smemBytes = pipeline.smemBytes;
    select.descSlots = pipeline.descSlots;
    select.clusterM = pipeline.clusterM;
    select.quadB = pipeline.quadB;
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
    for (heur::KernelConfig c : heur::candidateKGroupedConfigs(target)) {
      if (pipeline.descSlots > 0)
        c.descSlots = pipeline.descSlots;
      if (pipeline.clusterM > 0)
        c.clusterM = pipeline.clusterM;
      // quad-b=0 keeps every kernel's B in order, 1 quad-orders every one
      // that can be; a kernel the overrides above leave unable to keep quad
      // order falls back to its natural twin (duplicates are dropped).
      if (pipeline.quadB >= 0)
        c.quadB = pipeline.quadB;
      if (c.quadB && !heur::checkConfig(c, target).empty())
        c.quadB = 0;
      // A parked kernel the overrides leave unable to park (a cluster) is
      // its in-place twin's business.
      if (c.park && !heur::checkConfig(c, target).empty())
        continue;
      add(toConfigAttr(ctx, c));
    }
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return module.emitError("cannot create bundle directory '")
           << dir << "': " << ec.message();

  std::string index;
  for (ConfigAttr config : configs) {
    OwningOpRef<ModuleOp> single = ModuleOp::create(module.getLoc());
    OpBuilder b(single->getBodyRegion());
    auto clone = cast<GemmOp>(b.clone(*gemms.front()));
    clone.setConfigAttr(config);
    std::string ptx;
    llvm::raw_string_ostream ptxStream(ptx);
    if (failed(compileToPTX(*single, ptxStream, pipeline, options)))
      return failure();
    std::string entry = config.getEntryName();
    auto write = [&](StringRef ext, StringRef text) -> LogicalResult {
      llvm::SmallString<256> path(dir);
      llvm::sys::path::append(path, entry + ext);
      std::error_code ec;
      llvm::raw_fd_ostream out(path, ec);
      if (ec)
        return module.emitError("cannot write '") << path << "': "
                                                  << ec.message();
      out << text;
      return success();
    };
    std::string meta = toHeuristicsConfig(config).toMeta();
    if (failed(write(".ptx", ptx)) || failed(write(".meta", meta)))
      return failure();
    index += entry + "\n";
  }
  llvm::SmallString<256> indexPath(dir);
  llvm::sys::path::append(indexPath, "index.txt");
  std::error_code ec;
  llvm::raw_fd_ostream out(indexPath, ec);
  if (ec)
    return module.emitError("cannot write '") << indexPath << "'";
  out << index;
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
                   "heuristics can choose"),
    llvm::cl::init(false));
llvm::cl::opt<bool> unsafeSkipDrain(
    "unsafe-skip-descriptor-drain",
    llvm::cl::desc("TEST ONLY: generate kernels without the descriptor "
                   "drain (DeepGEMM 2.6.1's race)"),
    llvm::cl::init(false));
llvm::cl::opt<bool> unsafeSkipProxyFence(
    "unsafe-skip-proxy-fence",
    llvm::cl::desc("TEST ONLY: generate kernels without the proxy fence "
                   "before stage releases that follow ld.shared"),
    llvm::cl::init(false));
llvm::cl::opt<int> translateClusterM(
    "cluster-m",
    llvm::cl::desc("CTAs per cluster along M sharing the B tile by TMA "
                   "multicast (0: the heuristic's choice)"),
    llvm::cl::init(0));
llvm::cl::opt<int> translateQuadB(
    "quad-b",
    llvm::cl::desc("Quad-ordered B (quad_b): -1 the heuristic's choice, 0 "
                   "never, 1 wherever the kernel allows it"),
    llvm::cl::init(-1));
llvm::cl::opt<int> translateDescSlots(
    "desc-slots",
    llvm::cl::desc("Descriptor slots per operand (0: the heuristic's choice)"),
    llvm::cl::init(0));
llvm::cl::opt<bool> translateReleasePerThread(
    "release-per-thread",
    llvm::cl::desc("Every math thread arrives on empty barriers"),
    llvm::cl::init(false));
llvm::cl::opt<bool> translatePerChunkEpilogue(
    "per-chunk-epilogue",
    llvm::cl::desc("Per-chunk guarded epilogue (slower; for comparison)"),
    llvm::cl::init(false));
llvm::cl::opt<int> translateScaleRegisterBudget(
    "scale-register-budget", llvm::cl::desc("See dgemm-lower-to-kernel"),
    llvm::cl::init(202));
llvm::cl::opt<std::string> pipelineOptions(
    "pipeline-options",
    llvm::cl::desc("Any option of the dgemm-to-llvm pipeline, as dgemm-opt "
                   "takes them (for example 'mma-slices=2 "
                   "alternate-warpgroups=false'); overrides the flags above"),
    llvm::cl::init(""));
llvm::cl::opt<int> translateNumSMs("num-sms",
                                   llvm::cl::desc("Target SM count"),
                                   llvm::cl::init(132));
} // namespace

void mlir::dgemm::registerPTXTranslation() {
  TranslateFromMLIRRegistration reg(
      "dgemm-to-ptx", "Compile dgemm descriptions to sm_90a PTX",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        DGemmPipelineOptions pipeline;
        pipeline.numSMs = translateNumSMs;
        pipeline.skipDescriptorDrain = unsafeSkipDrain;
        pipeline.skipProxyFence = unsafeSkipProxyFence;
        pipeline.descSlots = translateDescSlots;
        pipeline.clusterM = translateClusterM;
        pipeline.quadB = translateQuadB;
        pipeline.releasePerThread = translateReleasePerThread;
        pipeline.scaleRegisterBudget = translateScaleRegisterBudget;
        pipeline.perChunkEpilogue = translatePerChunkEpilogue;
        std::string error;
        llvm::raw_string_ostream errorStream(error);
        if (failed(pipeline.parseFromString(pipelineOptions, errorStream)))
          return mlir::emitError(module.getLoc(), "invalid --pipeline-options '")
                 << pipelineOptions << "': " << error;
        if (!bundleDir.empty()) {
          OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
          if (failed(writeBundle(*copy, bundleDir, bundleAllCandidates,
                                 pipeline)))
            return failure();
        }
        return compileToPTX(module, os, pipeline);
      },
      [](DialectRegistry &registry) {
        registry.insert<DGemmDialect, arith::ArithDialect, scf::SCFDialect,
                        LLVM::LLVMDialect, NVVM::NVVMDialect,
                        cf::ControlFlowDialect, vector::VectorDialect>();
        registerBuiltinDialectTranslation(registry);
        registerLLVMDialectTranslation(registry);
        registerNVVMDialectTranslation(registry);
      });
}

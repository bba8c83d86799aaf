//===- dgemm-opt.cpp - mlir-opt with the dgemm dialect and passes ---------===//

#include "dgemm/Dialect/DGemm/IR/DGemm.h"
#include "dgemm/Dialect/DGemm/Transforms/Passes.h"
#include "dgemm/Pipelines/Pipelines.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::dgemm::registerDGemmPasses();
  mlir::dgemm::registerDGemmPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::dgemm::DGemmDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dgemm optimizer driver\n", registry));
}

//===- dgemm-translate.cpp - dgemm descriptions to PTX --------------------===//

#include "dgemm/Target/PTX/PTXEmitter.h"
#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::registerAllTranslations();
  mlir::dgemm::registerPTXTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "dgemm translation driver"));
}

//===- DGemmInterfaces.td - Resource-effect interface ------*- tablegen -*-===//
//
// Kernel-level operations declare which pipeline resources they touch. The
// synchronization passes (dgemm-place-sync, dgemm-verify-sync) work only from
// these declarations, never from op names.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_INTERFACES
#define DGEMM_INTERFACES

include "mlir/IR/OpBase.td"

def DGemm_ResourceAccessOpInterface : OpInterface<"ResourceAccessOpInterface"> {
  let cppNamespace = "::mlir::dgemm";
  let description = [{
    An operation that reads or writes kernel resources (shared-memory stage
    buffers, tensor-map descriptor slots, WGMMA accumulators), through the
    generic proxy or asynchronously through the async/tensormap proxies.
  }];
  let methods = [
    InterfaceMethod<"Appends the resource accesses this operation performs.",
      "void", "getResourceAccesses",
      (ins "::llvm::SmallVectorImpl<::mlir::dgemm::ResourceAccess> &":$accesses)>
  ];
}

#endif // DGEMM_INTERFACES

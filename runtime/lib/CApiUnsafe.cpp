//===- CApiUnsafe.cpp - C ABI: the unsafe-kernel opt-in -------------------===//

#include "dgemm/Runtime/dgemm_runtime.h"

#include "dgemm/Runtime/Overrides.h"

int dgemm_set_allow_unsafe_kernels(int32_t allow) {
  // Nothing here throws today; the guard keeps it so for any later change.
  try {
    if (allow != 0 && allow != 1)
      return DGEMM_ERROR_INVALID_ARGUMENT;
    dgemm::runtime::setAllowUnsafeKernels(allow == 1);
    return DGEMM_OK;
  } catch (...) {
    return DGEMM_ERROR_INTERNAL;
  }
}

/* Uses the installed runtime's C ABI where no GPU is needed: the version, the
 * workspace-size query, an argument check, and the check of the installed
 * kernel bundle (the index and every file's checksum: dgemm-translate wrote
 * them, the runtime reads them). Exit 0 only if every answer is the
 * expected one. */
#include "dgemm/Runtime/dgemm_runtime.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  int failures = 0;
  const char *version = dgemm_runtime_version();
  printf("runtime: %s\n", version);
  if (strstr(version, "kernel ABI") == NULL) {
    printf("FAIL: unexpected version string\n");
    ++failures;
  }

  /* 132 SMs without a GPU: 132 CTAs x 2 slots x 2 maps x 128 bytes at most. */
  int32_t ks[3] = {128, 0, 256};
  uint64_t bytes = dgemm_k_grouped_workspace_bytes(256, 512, 3, ks);
  printf("workspace bytes: %llu\n", (unsigned long long)bytes);
  if (bytes == 0 || bytes % 256 != 0 || bytes > 132 * 2 * 256) {
    printf("FAIL: workspace size\n");
    ++failures;
  }

  char err[512];
  int rc = dgemm_check_arguments(NULL, NULL, NULL, NULL, NULL, NULL, 256, 512,
                                 3, ks, NULL, NULL, 0, err, sizeof(err));
  printf("check_arguments(NULL a): %d %s\n", rc, err);
  if (rc != DGEMM_ERROR_INVALID_ARGUMENT || strstr(err, "'a'") == NULL) {
    printf("FAIL: a NULL a must be named\n");
    ++failures;
  }

  char resolved[1024];
  int32_t kernels = 0, cubins = 0;
  rc = dgemm_check_kernel_bundle(DGEMM_KERNEL_DIR_INSTALLED, resolved,
                                 sizeof(resolved), &kernels, &cubins, err,
                                 sizeof(err));
  printf("bundle %s: rc %d, %d kernels, %d cubins %s\n", resolved, rc, kernels,
         cubins, rc ? err : "");
  if (rc != DGEMM_OK || kernels < 1) {
    printf("FAIL: the installed bundle does not check\n");
    ++failures;
  }
  return failures ? 1 : 0;
}

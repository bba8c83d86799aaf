// The installed C++ API, through the static library: the same workspace
// query and the argument check, with the Status type.
#include "dgemm/Runtime/KGroupedGemm.h"

#include <cstdio>

int main() {
  int ks[2] = {128, 384};
  size_t bytes = dgemm::runtime::kGroupedWorkspaceBytes(128, 128, 2, ks);
  dgemm::runtime::KGroupedArgs args;
  dgemm::runtime::Status s = dgemm::runtime::checkKGroupedArguments(args);
  std::printf("workspace bytes: %zu; empty args: %d %s\n", bytes, int(s.code()),
              s.message().c_str());
  bool ok = bytes > 0 && s.code() == dgemm::runtime::ErrorCode::InvalidArgument;
  std::printf(ok ? "ok\n" : "FAIL\n");
  return ok ? 0 : 1;
}

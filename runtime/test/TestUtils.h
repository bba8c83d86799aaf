//===- TestUtils.h - Helpers shared by the runtime's tests ------*- C++ -*-===//

#ifndef DGEMM_RUNTIME_TEST_TESTUTILS_H
#define DGEMM_RUNTIME_TEST_TESTUTILS_H

#include "dgemm/Runtime/Overrides.h"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include <ftw.h>
#include <unistd.h>

namespace dgemm {
namespace test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") +
                          "/dgemm-runtime-test-XXXXXX";
    if (char *made = mkdtemp(pattern.data()))
      path_ = made;
  }
  ~TempDir() {
    if (!path_.empty())
      nftw(
          path_.c_str(),
          [](const char *p, const struct stat *, int, struct FTW *) {
            return ::remove(p);
          },
          16, FTW_DEPTH | FTW_PHYS);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  bool ok() const { return !path_.empty(); }

  /// Writes `contents` to path()/name and returns the full path.
  std::string write(const std::string &name,
                    const std::string &contents) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file, std::ios::binary) << contents;
    return file;
  }

private:
  std::string path_;
};

/// Sets (or with std::nullopt unsets) an environment variable for a scope.
/// The runtime reads its DGEMM_* overrides once: they are parsed again on
/// entry and exit.
class ScopedEnv {
public:
  ScopedEnv(const char *name, std::optional<std::string> value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
    dgemm::runtime::reloadEnvOverridesForTesting();
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_.c_str(), old_->c_str(), 1);
    else
      unsetenv(name_.c_str());
    dgemm::runtime::reloadEnvOverridesForTesting();
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  std::string name_;
  std::optional<std::string> old_;
};

} // namespace test
} // namespace dgemm

#endif // DGEMM_RUNTIME_TEST_TESTUTILS_H

//===- BundleText.h - Parsing helpers of bundle text files -*- C++ -*-===//
//
// Shared by the .meta parser (KernelMeta.cpp) and the bundle index
// (KernelBundle.cpp). Private to the runtime's sources.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_LIB_BUNDLETEXT_H
#define DGEMM_RUNTIME_LIB_BUNDLETEXT_H

#include "dgemm/Runtime/Status.h"

#include <cctype>
#include <string>

namespace dgemm::runtime::bundle_text {

/// `s` without leading and trailing blanks.
inline std::string trim(const std::string &s) {
  size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos)
    return "";
  size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

/// A BadKernelBundle error about `fileName`.
inline Status bad(const std::string &fileName, const std::string &what) {
  return Status::error(ErrorCode::BadKernelBundle, fileName + ": " + what);
}

/// Whether `s` is a PTX identifier.
inline bool isIdentifier(const std::string &s) {
  if (s.empty())
    return false;
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' ||
          ch == '$'))
      return false;
  return !std::isdigit(static_cast<unsigned char>(s[0]));
}

} // namespace dgemm::runtime::bundle_text

#endif // DGEMM_RUNTIME_LIB_BUNDLETEXT_H

//===- Status.h - Error reporting of the dgemm runtime ----------*- C++ -*-===//
//
// The runtime reports every failure as a value, never by exception or abort,
// because its callers include ctypes (Python) and code built without
// exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_STATUS_H
#define DGEMM_RUNTIME_STATUS_H

#include <string>
#include <utility>

namespace dgemm {
namespace runtime {

/// Failure classes; the numeric values are the C ABI's return codes
/// (dgemm_runtime.h) and must not change.
enum class ErrorCode : int {
  Ok = 0,
  /// An argument broke a documented rule; nothing touched the driver.
  InvalidArgument = 1,
  /// libcuda.so.1 could not be loaded, or cuInit found no usable device.
  NoDriver = 2,
  /// The kernel bundle has no file for the selected kernel.
  KernelNotFound = 3,
  /// The kernel bundle exists but a file in it is malformed or inconsistent.
  BadKernelBundle = 4,
  /// A driver call failed.
  CudaError = 5,
  /// The device cannot run the kernels (not compute capability 9.0).
  UnsupportedDevice = 6,
  /// An unexpected failure inside the runtime (an exception caught at the C
  /// ABI, e.g. out of host memory); DGEMM_ERROR_INTERNAL.
  Internal = 7,
};

class [[nodiscard]] Status {
public:
  Status() = default;

  static Status success() { return Status(); }
  static Status error(ErrorCode code, std::string message) {
    Status s;
    s.code_ = code;
    s.message_ = std::move(message);
    return s;
  }

  bool ok() const { return code_ == ErrorCode::Ok; }
  ErrorCode code() const { return code_; }
  /// Empty on success.
  const std::string &message() const { return message_; }

private:
  ErrorCode code_ = ErrorCode::Ok;
  std::string message_;
};

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_STATUS_H

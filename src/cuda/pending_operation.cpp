#include "cuda/pending_operation.hpp"

#include "base/names.hpp"
#include "cuda/cuda_check.hpp"

namespace versa::detail {

std::string describe(const OperationLabel& label) {
  std::string text = label.operation;
  if (label.task_name != nullptr) {
    text += " '";
    text += label.task_name;
    text += '\'';
  } else {
    text += " of ";
    text += format_bytes(label.bytes);
  }
  return text;
}

std::string describe_failure(const OperationLabel& label, const std::string& device,
                             cudaError_t status, const char* call) {
  std::string text = describe(label) + " on " + device + " failed: ";
  if (call != nullptr) {
    text += call;
    text += ": ";
  }
  return text + cudaGetErrorString(status);
}

}  // namespace versa::detail

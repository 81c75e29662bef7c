#include "formats/common/status.h"

namespace restack {

const char* errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kMalformedInput:
      return "malformed_input";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kTooLarge:
      return "too_large";
    case ErrorCode::kIo:
      return "io_error";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string Error::describe() const {
  return std::string(errorCodeName(code_)) + ": " + message_;
}

Error Error::withContext(const std::string& context) const {
  return Error(code_, context + ": " + message_);
}

}  // namespace restack

#include "common/status.h"

namespace ebb {

const char* errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "OK";
    case ErrorCode::kInvalidArgument:
      return "E_INVALID";
    case ErrorCode::kParse:
      return "E_PARSE";
    case ErrorCode::kNotFatTree:
      return "E_NOT_FAT_TREE";
    case ErrorCode::kNotFound:
      return "E_NOT_FOUND";
    case ErrorCode::kIo:
      return "E_IO";
    case ErrorCode::kTimeout:
      return "E_TIMEOUT";
    case ErrorCode::kUnavailable:
      return "E_UNAVAILABLE";
    case ErrorCode::kInternal:
      return "E_INTERNAL";
  }
  return "E_UNKNOWN";
}

std::string Status::toString() const {
  if (isOk()) return "OK";
  return std::string(errorCodeName(code_)) + ": " + message_;
}

Error::Error(Status status) : std::runtime_error(status.toString()), status_(std::move(status)) {}

}  // namespace ebb

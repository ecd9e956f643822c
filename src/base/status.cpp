#include "base/status.h"

namespace tri {

const char* code_name(Code c) {
  switch (c) {
    case Code::Ok: return "TRI_OK";
    case Code::InvalidArgument: return "TRI_ERROR_INVALID_ARGUMENT";
    case Code::Parse: return "TRI_ERROR_PARSE";
    case Code::Verify: return "TRI_ERROR_VERIFY";
    case Code::CorruptBinary: return "TRI_ERROR_CORRUPT_BINARY";
    case Code::UnsupportedVersion: return "TRI_ERROR_UNSUPPORTED_VERSION";
    case Code::NotFound: return "TRI_ERROR_NOT_FOUND";
    case Code::LimitExceeded: return "TRI_ERROR_LIMIT_EXCEEDED";
    case Code::OutOfMemory: return "TRI_ERROR_OUT_OF_MEMORY";
    case Code::Specialize: return "TRI_ERROR_SPECIALIZE";
    case Code::LaunchArgs: return "TRI_ERROR_LAUNCH_ARGS";
    case Code::Unsupported: return "TRI_ERROR_UNSUPPORTED";
    case Code::Compile: return "TRI_ERROR_COMPILE";
    case Code::Runtime: return "TRI_ERROR_RUNTIME";
    case Code::Io: return "TRI_ERROR_IO";
    case Code::Internal: return "TRI_ERROR_INTERNAL";
    case Code::Cancelled: return "TRI_ERROR_CANCELLED";
    case Code::Untrusted: return "TRI_ERROR_UNTRUSTED";
  }
  return "TRI_ERROR_UNKNOWN";
}

std::string format_diag(const std::string& source, Loc loc, const std::string& what) {
  std::string out = source.empty() ? std::string("<input>") : source;
  if (loc.known()) {
    out += ':';
    out += std::to_string(loc.line);
    out += ':';
    out += std::to_string(loc.col);
  }
  out += ": error: ";
  out += what;
  return out;
}

}  // namespace tri

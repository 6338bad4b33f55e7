#include "oci/result.h"

namespace imgtool {

int ExitCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidInput:
      return 2;
    case ErrorKind::kNotFound:
      return 3;
    case ErrorKind::kIntegrity:
      return 4;
    case ErrorKind::kDenied:
      return 5;
    case ErrorKind::kTransport:
      return 6;
    case ErrorKind::kInternal:
      return 70;  // EX_SOFTWARE; 1 is "images differ" for diff
  }
  return 70;
}

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidInput:
      return "invalid input";
    case ErrorKind::kNotFound:
      return "not found";
    case ErrorKind::kIntegrity:
      return "integrity failure";
    case ErrorKind::kDenied:
      return "denied";
    case ErrorKind::kTransport:
      return "transport";
    case ErrorKind::kInternal:
      return "internal";
  }
  return "internal";
}

}  // namespace imgtool

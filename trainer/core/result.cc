#include "core/result.h"

namespace trainer {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidInput: return "invalid input";
    case ErrorKind::kNotFound: return "not found";
    case ErrorKind::kIntegrity: return "integrity";
    case ErrorKind::kTransport: return "transport";
    case ErrorKind::kInternal: return "internal";
  }
  return "internal";
}

// Exit codes (trainer/README.md): 2 usage/input, 3 not found, 4 integrity, 5 transport,
// 1 internal.
int ExitCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidInput: return 2;
    case ErrorKind::kNotFound: return 3;
    case ErrorKind::kIntegrity: return 4;
    case ErrorKind::kTransport: return 5;
    case ErrorKind::kInternal: return 1;
  }
  return 1;
}

}  // namespace trainer

#include "cli/output.h"

#include "remote/transfer.h"

#include <cstdio>
#include <iostream>

namespace imgtool::cli {

int Fail(const Error& e) {
  std::cerr << "imgtool: error: " << e.message << "\n";
  return ExitCodeFor(e.kind);
}

void PrintJson(const oci::Json& j) { std::cout << j.dump(2) << "\n"; }

std::string HumanBytes(uint64_t n) {
  char buf[32];
  if (n >= 1000000000ull) {
    snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(n) / 1e9);
  } else if (n >= 1000000ull) {
    snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(n) / 1e6);
  } else if (n >= 1000ull) {
    snprintf(buf, sizeof buf, "%.1f kB", static_cast<double>(n) / 1e3);
  } else {
    snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  }
  return buf;
}

Result<layout::OpenedImage> OpenRef(const std::string& text, const remote::RegistryOptions& remote_opts) {
  auto ref = layout::ParseReference(text);
  if (!ref.ok()) return ref.error();
  if (ref->transport == layout::Transport::kDocker) return remote::OpenRemoteImage(*ref, remote_opts);
  return layout::OpenImage(*ref);
}

}  // namespace imgtool::cli

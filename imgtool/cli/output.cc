#include "cli/output.h"

#include "remote/transfer.h"

#include <iostream>

namespace imgtool::cli {

int Fail(const Error& e) {
  std::cerr << "imgtool: error: " << e.message << "\n";
  return ExitCodeFor(e.kind);
}

void PrintJson(const oci::Json& j) { std::cout << j.dump(2) << "\n"; }

Result<layout::OpenedImage> OpenRef(const std::string& text, const remote::RegistryOptions& remote_opts) {
  auto ref = layout::ParseReference(text);
  if (!ref.ok()) return ref.error();
  if (ref->transport == layout::Transport::kDocker) return remote::OpenRemoteImage(*ref, remote_opts);
  return layout::OpenImage(*ref);
}

}  // namespace imgtool::cli

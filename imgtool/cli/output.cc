#include "cli/output.h"

#include "remote/transfer.h"

#include <iostream>

namespace imgtool::cli {

Result<layout::OpenedImage> OpenRef(const std::string& text, const remote::RegistryOptions& remote_opts) {
  auto ref = ref::ParseReference(text);
  if (!ref.ok()) return ref.error();
  if (ref->transport == ref::Transport::kDocker) return remote::OpenRemoteImage(*ref, remote_opts);
  return layout::OpenImage(*ref);
}

}  // namespace imgtool::cli

#include "rootfs/user_arg.h"

#include "rootfs/account_readers.h"

namespace imgtool::rootfs {

UserArg ParseUserArg(std::string_view arg) {
  using Error = internal::GoInt::Error;
  const internal::GoInt n = internal::GoAtoi(arg);
  UserArg out;
  if (n.error == Error::kSyntax) return out;  // a name, to both
  out.kind = UserArg::Kind::kRefused;
  if (n.error == Error::kRange) {
    out.why = "a number too large for an int: runc and Docker refuse it, containerd looks it up as a name";
    return out;
  }
  out.id = static_cast<uint32_t>(n.value);
  if (n.value < 0 || n.value > kMaxRuntimeId) {
    out.why = std::to_string(n.value) + " is outside 0.." + std::to_string(kMaxRuntimeId) +
              ": runc and Docker refuse it, containerd keeps its low 32 bits and runs it as " + std::to_string(out.id) +
              (out.id == 0 ? " (root)" : "");
    return out;
  }
  out.kind = UserArg::Kind::kId;
  return out;
}

}  // namespace imgtool::rootfs

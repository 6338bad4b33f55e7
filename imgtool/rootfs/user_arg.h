// The user (or group) part of an image config's User, or of a Dockerfile's USER, as the
// runtimes read it: moby/sys/user's GetExecUser (runc, Docker, Podman) and containerd's
// oci.WithUser both try strconv.Atoi first, so "+10001", "0010001" and "-0" are numbers;
// GetExecUser then refuses anything outside 0..2^31-1, while containerd keeps the low 32
// bits (uint32(v)): "4294967296" runs as root there. An overflowing number is an error to
// GetExecUser and a name to containerd. Where they part, the argument is refused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace imgtool::rootfs {

// moby/sys/user's maxID: the largest id GetExecUser accepts ("for 32-bit systems").
inline constexpr uint32_t kMaxRuntimeId = 0x7fffffff;

struct UserArg {
  enum class Kind {
    kName,     // looked up in /etc/passwd (/etc/group)
    kId,       // used as it is: `id`
    kRefused,  // runtimes read it differently: `why`
  };
  Kind kind = Kind::kName;
  uint32_t id = 0;  // kId: the id; kRefused: what containerd would run as, where it runs it
  std::string why;
};

UserArg ParseUserArg(std::string_view arg);

}  // namespace imgtool::rootfs

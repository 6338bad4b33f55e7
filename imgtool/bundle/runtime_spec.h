// The config.json of a runtime bundle (runtime-spec 1.0), from an image config the way
// umoci's unpack writes it: process.args = Entrypoint + Cmd, env, cwd = WorkingDir,
// user = the image's User resolved against the image's own /etc/passwd and /etc/group
// (as runc's GetExecUser reads them; every reader must agree, rootfs/users.h), root
// "rootfs" read-write, runc's default mounts, masked and read-only paths, and the
// labels as annotations.
//
// For a training job, unlike umoci's and runc's defaults: no network namespace (the
// host's network, so NCCL and Gloo reach their peers), no hostname (the host's: launchers
// name ranks by it), /dev/shm without a size cap (NCCL and data loaders use it), and no
// rlimits: the process keeps the job step's (Slurm propagates the submitting shell's;
// umoci's RLIMIT_NOFILE 1024 starves data loaders, and raising one above the host's hard
// limit makes runc fail: "error setting rlimits").
// Bytes are canonical JSON (sorted keys): the same image gives the same file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "oci/canonical_json.h"
#include "oci/result.h"

namespace imgtool::bundle {

struct ProcessUser {
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// Reads an account file of the image ("/etc/passwd"): nullopt when there is none.
using AccountReader = std::function<Result<std::optional<std::string>>(const std::string& path)>;

// `user` ("", "app", "10001", "app:staff", "10001:10001") as runc resolves it: a name must
// be in the file; a number is used as it is (its passwd entry, when there is one, gives
// the gid); the group part overrides the gid. kInvalidInput for what runtimes read
// differently or cannot resolve.
Result<ProcessUser> ResolveUser(const std::string& user, const AccountReader& read);

// config.json's bytes. `image_config`: the parsed image config; `annotations_extra`
// (the image digest) are added to the labels.
Result<std::string> RuntimeSpec(const oci::Json& image_config, const ProcessUser& user,
                                const std::map<std::string, std::string>& annotations_extra);

}  // namespace imgtool::bundle

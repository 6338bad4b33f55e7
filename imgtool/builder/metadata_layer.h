// The layer imgtool adds on top of the spec's layers: /etc/passwd and /etc/group with
// the spec's non-root user (so the name resolves inside the container), that user's
// home folder, and /etc/imgtool/stack.json with the stack pins the fleet preflight
// compares on every worker (stack.h), and /var/lib/dpkg/status when the image has debs.
#pragma once

#include <string>
#include <vector>

#include "archive/layer.h"
#include "builder/packages.h"
#include "builder/spec.h"
#include "oci/result.h"

namespace imgtool::build {

// passwd/group: the base image's files (empty for scratch: root's entry only) with the
// user (group) appended by rootfs::WithUser (WithGroup, rootfs/users.h): read as glibc,
// musl and runc/containerd read them, the name must not already resolve to other ids nor
// the id belong to another name, and the readers must agree; else an error naming the line.
Result<std::string> PasswdWithUser(const std::string& base_passwd, const UserSpec& user);
Result<std::string> GroupWithUser(const std::string& base_group, const UserSpec& user);

// `packages`: every package of the spec (stack pins are checked against them, see
// stack.h); `dpkg_status`: /var/lib/dpkg/status, written when not empty.
Result<std::vector<archive::Entry>> MetadataEntries(const Spec& spec, const std::string& base_passwd,
                                                    const std::string& base_group,
                                                    const std::vector<PackageRecord>& packages = {},
                                                    const std::string& dpkg_status = "");

}  // namespace imgtool::build

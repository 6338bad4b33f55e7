#include "builder/metadata_layer.h"

#include "builder/plan.h"
#include "builder/stack.h"
#include "oci/canonical_json.h"
#include "rootfs/users.h"

namespace imgtool::build {

namespace {

archive::Entry File(const std::string& path, std::string content) {
  archive::Entry e;
  e.path = path;
  e.type = archive::EntryType::kFile;
  e.mode = 0644;
  e.size = content.size();
  e.content = std::move(content);
  return e;
}

}  // namespace

// A base without the file (scratch, or none in its layers) gets root's entry first.
Result<std::string> PasswdWithUser(const std::string& base_passwd, const UserSpec& u) {
  std::string base = base_passwd.empty() ? "root:x:0:0:root:/root:/sbin/nologin\n" : base_passwd;
  auto out = rootfs::WithUser(base, {u.name, u.uid, u.gid, u.home, u.shell});
  if (!out.ok()) return out.error().Context("adding the spec's user ($.user) to the base image");
  return out;
}

Result<std::string> GroupWithUser(const std::string& base_group, const UserSpec& u) {
  std::string base = base_group.empty() ? "root:x:0:\n" : base_group;
  auto out = rootfs::WithGroup(base, {u.group, u.gid});
  if (!out.ok()) return out.error().Context("adding the spec's group ($.user.group) to the base image");
  return out;
}

Result<std::vector<archive::Entry>> MetadataEntries(const Spec& spec, const std::string& base_passwd,
                                                    const std::string& base_group,
                                                    const std::vector<PackageRecord>& packages,
                                                    const std::string& dpkg_status) {
  auto passwd = PasswdWithUser(base_passwd, spec.user);
  if (!passwd.ok()) return passwd.error();
  auto group = GroupWithUser(base_group, spec.user);
  if (!group.ok()) return group.error();
  auto stack = StackJson(spec, packages);
  if (!stack.ok()) return stack.error();
  std::vector<archive::Entry> entries = {File("etc/passwd", *passwd), File("etc/group", *group),
                                         File("etc/imgtool/stack.json", *stack)};
  if (!dpkg_status.empty()) entries.push_back(File("var/lib/dpkg/status", dpkg_status));
  archive::Entry home;
  home.path = spec.user.home.substr(1);
  home.type = archive::EntryType::kDir;
  home.mode = 0755;
  home.uid = spec.user.uid;
  home.gid = spec.user.gid;
  entries.push_back(home);
  return Normalize(std::move(entries), nullptr);
}

}  // namespace imgtool::build

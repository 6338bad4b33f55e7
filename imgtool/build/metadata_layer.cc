#include "build/metadata_layer.h"

#include <sstream>

#include "build/plan.h"
#include "build/stack.h"
#include "oci/canonical_json.h"

namespace imgtool::build {

namespace {

std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string f;
  while (std::getline(ss, f, ':')) out.push_back(f);
  return out;
}

// Appends `line` unless an entry with the same name and id exists; a clash is an error.
Result<std::string> AppendEntry(const std::string& base, const std::string& name, uint32_t id,
                                const std::string& line, const std::string& file, bool with_root) {
  std::string out = base;
  if (out.empty() && with_root) out = file == "/etc/passwd" ? "root:x:0:0:root:/root:/sbin/nologin\n" : "root:x:0:\n";
  std::stringstream ss(out);
  std::string l;
  while (std::getline(ss, l)) {
    auto f = Fields(l);
    if (f.size() < 3) continue;
    bool same_name = f[0] == name;
    bool same_id = f[2] == std::to_string(id);
    if (same_name && same_id) return out;
    if (same_name || same_id) {
      return MakeError(ErrorKind::kInvalidInput, file + " of the base image already has '" + l +
                                                     "', which clashes with " + name + " (" + std::to_string(id) + ")");
    }
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out + line + "\n";
}

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

Result<std::string> PasswdWithUser(const std::string& base_passwd, const UserSpec& u) {
  std::string line = u.name + ":x:" + std::to_string(u.uid) + ":" + std::to_string(u.gid) + "::" + u.home + ":" + u.shell;
  return AppendEntry(base_passwd, u.name, u.uid, line, "/etc/passwd", true);
}

Result<std::string> GroupWithUser(const std::string& base_group, const UserSpec& u) {
  std::string line = u.group + ":x:" + std::to_string(u.gid) + ":";
  return AppendEntry(base_group, u.group, u.gid, line, "/etc/group", true);
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

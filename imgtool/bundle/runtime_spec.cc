#include "bundle/runtime_spec.h"

#include "oci/image_config.h"
#include "rootfs/user_arg.h"
#include "rootfs/users.h"

namespace imgtool::bundle {

namespace {

using oci::Json;

Result<std::optional<rootfs::AccountFile>> ReadAccounts(rootfs::AccountKind kind, const std::string& path,
                                                        const AccountReader& read) {
  auto text = read(path);
  if (!text.ok()) return text.error();
  if (!*text) return std::optional<rootfs::AccountFile>();
  auto file = rootfs::AccountFile::Parse(kind, **text);
  if (!file.ok()) return file.error();
  return std::optional<rootfs::AccountFile>(std::move(*file));
}

Error Refused(const std::string& user, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, "config User \"" + user + "\": " + why);
}

// The id of one part of User: a number as it is, a name from the file.
Result<std::optional<rootfs::Account>> Lookup(const std::string& user, const std::string& part,
                                              rootfs::AccountKind kind, const AccountReader& read, uint32_t* id) {
  rootfs::UserArg arg = rootfs::ParseUserArg(part);
  if (arg.kind == rootfs::UserArg::Kind::kRefused) return Refused(user, arg.why);
  const std::string path = kind == rootfs::AccountKind::kUser ? "/etc/passwd" : "/etc/group";
  auto file = ReadAccounts(kind, path, read);
  if (!file.ok()) return file.error();
  if (arg.kind == rootfs::UserArg::Kind::kId) {
    *id = arg.id;
    if (!*file) return std::optional<rootfs::Account>();
    return (*file)->FindId(arg.id);
  }
  if (!*file) return Refused(user, "the image has no " + path + " to look \"" + part + "\" up in");
  auto found = (*file)->FindName(part);
  if (!found.ok()) return found.error();
  if (!*found) return Refused(user, "no \"" + part + "\" in " + path);
  *id = (*found)->id;
  return found;
}

Json Mount(const std::string& dest, const std::string& type, const std::string& source,
           std::vector<std::string> options) {
  return Json{{"destination", dest}, {"type", type}, {"source", source}, {"options", std::move(options)}};
}

Json Mounts() {
  return Json::array({
      Mount("/proc", "proc", "proc", {}),
      Mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}),
      Mount("/dev/pts", "devpts", "devpts", {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}),
      Mount("/dev/shm", "tmpfs", "shm", {"nosuid", "noexec", "nodev", "mode=1777"}),
      Mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
      Mount("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}),
      Mount("/sys/fs/cgroup", "cgroup", "cgroup", {"nosuid", "noexec", "nodev", "relatime", "ro"}),
      // The host's network is kept (no network namespace), so its names are too: the
      // peers a launcher names (Slurm's node list, a headless service) resolve inside as
      // outside, as with `docker run --network host`. Read-only.
      Mount("/etc/hosts", "bind", "/etc/hosts", {"rbind", "ro"}),
      Mount("/etc/resolv.conf", "bind", "/etc/resolv.conf", {"rbind", "ro"}),
  });
}

Json Linux() {
  Json namespaces = Json::array();
  for (const char* ns : {"pid", "ipc", "uts", "mount"}) namespaces.push_back({{"type", ns}});
  return Json{
      {"namespaces", namespaces},
      {"resources", {{"devices", Json::array({{{"allow", false}, {"access", "rwm"}}})}}},
      {"maskedPaths",
       {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
        "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"}},
      {"readonlyPaths", {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}},
  };
}

Json Process(const Json& config, const ProcessUser& user) {
  std::vector<std::string> args = oci::ConfigStringList(config, "Entrypoint");
  for (auto& c : oci::ConfigStringList(config, "Cmd")) args.push_back(c);
  std::string cwd = config.contains("config") ? oci::ConfigField(config["config"], "WorkingDir") : "";
  if (cwd.empty() || cwd.front() != '/') cwd = "/" + cwd;
  const std::vector<std::string> caps = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
  return Json{
      {"terminal", false},  // Slurm's oci.conf runs runc without a terminal
      {"user", {{"uid", user.uid}, {"gid", user.gid}}},
      {"args", args},
      {"env", oci::ConfigStringList(config, "Env")},
      {"cwd", cwd},
      {"capabilities", {{"bounding", caps}, {"effective", caps}, {"permitted", caps}}},
      {"noNewPrivileges", true},
  };
}

}  // namespace

Result<ProcessUser> ResolveUser(const std::string& user, const AccountReader& read) {
  ProcessUser out;
  if (user.empty()) return out;
  const size_t colon = user.find(':');
  const std::string name = user.substr(0, colon);
  auto account = Lookup(user, name, rootfs::AccountKind::kUser, read, &out.uid);
  if (!account.ok()) return account.error();
  if (*account) out.gid = (*account)->gid;
  if (colon == std::string::npos) return out;
  auto group = Lookup(user, user.substr(colon + 1), rootfs::AccountKind::kGroup, read, &out.gid);
  if (!group.ok()) return group.error();
  return out;
}

Result<std::string> RuntimeSpec(const Json& image_config, const ProcessUser& user,
                                const std::map<std::string, std::string>& annotations_extra) {
  Json annotations = Json::object();
  for (const auto& [k, v] : oci::ConfigLabels(image_config)) annotations[k] = v;
  const oci::Platform p = oci::ConfigPlatform(image_config);
  if (!p.os.empty()) annotations["org.opencontainers.image.os"] = p.os;
  if (!p.architecture.empty()) annotations["org.opencontainers.image.architecture"] = p.architecture;
  const std::string created = oci::ConfigField(image_config, "created");
  if (!created.empty()) annotations["org.opencontainers.image.created"] = created;
  for (const auto& [k, v] : annotations_extra) annotations[k] = v;
  Json spec = {
      {"ociVersion", "1.0.2"},
      {"process", Process(image_config, user)},
      {"root", {{"path", "rootfs"}, {"readonly", false}}},
      {"mounts", Mounts()},
      {"linux", Linux()},
      {"annotations", annotations},
  };
  return oci::CanonicalJson(spec);
}

}  // namespace imgtool::bundle

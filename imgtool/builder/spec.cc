#include "builder/spec.h"

#include <climits>
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

#include "builder/base_spec.h"
#include "builder/fetch.h"
#include "builder/spec_platforms.h"
#include "fs/atomic_file.h"
#include "oci/canonical_json.h"
#include "oci/quote.h"
#include "ref/url.h"
#include "rootfs/users.h"

namespace imgtool::build {

namespace {

using oci::Json;

Error Bad(const std::string& where, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, where + ": " + why);
}

// "$.env.PATH", or "$.env."A B"" for a key that is not a plain name (quoted, escaped).
std::string Member(const std::string& where, const std::string& key) {
  bool plain =
      !key.empty() &&
      key.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == std::string::npos;
  return where + "." + (plain ? key : oci::Quoted(key));
}

// Refuses keys outside `allowed`, naming the first unknown one.
Status OnlyKeys(const Json& j, const std::string& where, const std::set<std::string>& allowed) {
  if (!j.is_object()) return Bad(where, "want an object");
  for (const auto& [k, v] : j.items()) {
    if (!allowed.count(k)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Bad(Member(where, k), "unknown key (allowed: " + list + ")");
    }
  }
  return Status::Ok();
}

Result<std::string> GetString(const Json& j, const std::string& key, const std::string& where, bool required) {
  if (!j.contains(key)) {
    if (required) return Bad(where + "." + key, "required");
    return std::string();
  }
  if (!j[key].is_string()) return Bad(where + "." + key, "want a string");
  return j[key].get<std::string>();
}

Result<uint32_t> GetId(const Json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key)) return Bad(where + "." + key, "required");
  const Json& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 0x7fffffff) {
    return Bad(where + "." + key, "want a non-negative integer id");
  }
  return static_cast<uint32_t>(v.get<int64_t>());
}

Result<std::map<std::string, std::string>> GetStringMap(const Json& j, const std::string& where) {
  if (!j.is_object()) return Bad(where, "want an object of strings");
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : j.items()) {
    if (!v.is_string()) return Bad(Member(where, k), "want a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

Result<std::vector<std::string>> GetStringList(const Json& j, const std::string& where) {
  if (!j.is_array()) return Bad(where, "want an array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) return Bad(where + "[" + std::to_string(i) + "]", "want a string");
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

// "0755" -> 0755. A string, because JSON has no octal numbers.
Result<uint32_t> GetMode(const Json& j, const std::string& key, const std::string& where) {
  if (!j[key].is_string()) return Bad(where + "." + key, "want an octal string such as \"0644\"");
  std::string s = j[key].get<std::string>();
  if (s.empty() || s.size() > 5 || s.find_first_not_of("01234567") != std::string::npos) {
    return Bad(where + "." + key, oci::Quoted(s, '\'') + " is not an octal mode such as \"0644\"");
  }
  uint32_t mode = static_cast<uint32_t>(std::strtoul(s.c_str(), nullptr, 8));
  if (mode > 07777) return Bad(where + "." + key, oci::Quoted(s, '\'') + " has bits beyond 07777");
  return mode;
}

// "1000:1000" -> uid, gid. Numeric only: names would depend on the build machine.
Status GetOwner(const Json& j, const std::string& where, FileSpec& f) {
  if (!j["owner"].is_string()) return Bad(where + ".owner", "want \"UID:GID\"");
  std::string s = j["owner"].get<std::string>();
  auto colon = s.find(':');
  auto digits = [](const std::string& x) {
    return !x.empty() && x.size() < 10 && x.find_first_not_of("0123456789") == std::string::npos;
  };
  if (colon == std::string::npos || !digits(s.substr(0, colon)) || !digits(s.substr(colon + 1))) {
    return Bad(where + ".owner", oci::Quoted(s, '\'') + " is not numeric \"UID:GID\"");
  }
  f.uid = static_cast<uint32_t>(std::stoul(s.substr(0, colon)));
  f.gid = static_cast<uint32_t>(std::stoul(s.substr(colon + 1)));
  return Status::Ok();
}

// An entry's optional "platforms" filter (spec_platforms.h).
Status GetPlatformFilter(const Json& j, const std::string& where, std::vector<oci::Platform>& out) {
  if (!j.contains("platforms")) return Status::Ok();
  auto list = ParsePlatformList(j["platforms"], where + ".platforms");
  if (!list.ok()) return list.error();
  out = *list;
  return Status::Ok();
}

// No string of a spec may hold a NUL byte, key or value: every one ends up as a path, a
// name, an environment entry, an argument or a label, and the C strings these become would
// be cut at the NUL (a dest "/x\0y" written as "/x"). Refused here, naming the JSON path,
// before any field is read; so nothing is staged, fetched or written. Walked with an
// explicit stack: a spec's nesting is the JSON reader's to bound, not this stack's.
Status RefuseNulBytes(const Json& spec) {
  const auto holds_nul = [](const std::string& s) { return s.find('\0') != std::string::npos; };
  const auto refuse = [](const std::string& where, const std::string& what) {
    return Bad(where, what + " holds a NUL byte, which no path, name or environment entry can carry");
  };
  std::vector<std::pair<const Json*, std::string>> todo = {{&spec, "$"}};
  while (!todo.empty()) {
    auto [j, where] = todo.back();
    todo.pop_back();
    if (j->is_string() && holds_nul(j->get_ref<const std::string&>())) {
      return refuse(where, oci::Quoted(j->get_ref<const std::string&>()));
    }
    if (j->is_array()) {
      for (size_t i = 0; i < j->size(); ++i) todo.emplace_back(&(*j)[i], where + "[" + std::to_string(i) + "]");
    }
    if (!j->is_object()) continue;
    for (auto it = j->begin(); it != j->end(); ++it) {
      if (holds_nul(it.key())) return refuse(where, "the key " + oci::Quoted(it.key()));
      todo.emplace_back(&it.value(), Member(where, it.key()));
    }
  }
  return Status::Ok();
}

bool HasDotDot(const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0 && end - start == 2) return true;
    start = end + 1;
  }
  return false;
}

std::string Absolute(const std::string& base, const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  return base + "/" + p;
}

Result<FileSpec> ParseFile(const Json& j, const std::string& where) {
  IMGTOOL_TRY(OnlyKeys(j, where, {"src", "dest", "mode", "dir_mode", "owner", "allow_setuid", "platforms"}));
  FileSpec f;
  f.where = where;
  IMGTOOL_TRY(GetPlatformFilter(j, where, f.platforms));
  auto src = GetString(j, "src", where, true);
  if (!src.ok()) return src.error();
  auto dest = GetString(j, "dest", where, true);
  if (!dest.ok()) return dest.error();
  f.src = *src;
  f.dest = *dest;
  if (f.src.empty()) return Bad(where + ".src", "must not be empty");
  if (f.src[0] == '/') return Bad(where + ".src", oci::Quoted(f.src, '\'') + " must be relative to the layer root");
  if (HasDotDot(f.src)) return Bad(where + ".src", oci::Quoted(f.src, '\'') + " escapes the layer root with '..'");
  if (f.dest.empty() || f.dest[0] != '/')
    return Bad(where + ".dest", oci::Quoted(f.dest, '\'') + " must be an absolute path in the image");
  if (HasDotDot(f.dest)) return Bad(where + ".dest", oci::Quoted(f.dest, '\'') + " must not contain '..'");
  if (j.contains("mode")) {
    auto m = GetMode(j, "mode", where);
    if (!m.ok()) return m.error();
    f.mode = *m;
  }
  if (j.contains("dir_mode")) {
    auto m = GetMode(j, "dir_mode", where);
    if (!m.ok()) return m.error();
    f.dir_mode = *m;
  }
  if (j.contains("owner")) IMGTOOL_TRY(GetOwner(j, where, f));
  if (j.contains("allow_setuid")) {
    if (!j["allow_setuid"].is_boolean()) return Bad(where + ".allow_setuid", "want true or false");
    f.allow_setuid = j["allow_setuid"].get<bool>();
  }
  for (auto m : {f.mode, f.dir_mode}) {
    if (m && (*m & 06000) && !f.allow_setuid) {
      return Bad(where, "mode sets setuid/setgid bits; add \"allow_setuid\": true if that is intended");
    }
  }
  return f;
}

// "sha256:<hex>" or bare "<hex>".
Result<oci::Digest> GetSha256(const Json& j, const std::string& key, const std::string& where, bool required) {
  auto s = GetString(j, key, where, required);
  if (!s.ok()) return s.error();
  std::string text = s->rfind("sha256:", 0) == 0 ? *s : "sha256:" + *s;
  auto d = oci::Digest::Parse(text);
  if (!d.ok()) return Bad(where + "." + key, oci::Quoted(*s, '\'') + " is not a sha256 digest (64 hex digits)");
  return *d;
}

Result<std::string> GetPrefix(const Json& j, const std::string& where) {
  auto p = GetString(j, "prefix", where, true);
  if (!p.ok()) return p.error();
  if (p->empty() || (*p)[0] != '/')
    return Bad(where + ".prefix", oci::Quoted(*p, '\'') + " must be an absolute path in the image");
  if (HasDotDot(*p)) return Bad(where + ".prefix", oci::Quoted(*p, '\'') + " must not contain '..'");
  std::string rel = *p;
  while (!rel.empty() && rel.front() == '/') rel.erase(rel.begin());
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  return rel;
}

// name, version: required, non-empty.
Status GetNameVersion(const Json& j, const std::string& where, PackageSpec& p) {
  for (const char* key : {"name", "version"}) {
    auto v = GetString(j, key, where, true);
    if (!v.ok()) return v.error();
    if (v->empty()) return Bad(where + "." + key, "must not be empty");
    (std::string(key) == "name" ? p.name : p.version) = *v;
  }
  return Status::Ok();
}

Result<PackageSpec> ParsePackage(const Json& j, PackageKind kind, const std::string& dir, const std::string& where) {
  PackageSpec p;
  p.kind = kind;
  p.where = where;
  if (kind == PackageKind::kInstalledWheel) {
    IMGTOOL_TRY(OnlyKeys(
        j, where, {"dist_info", "root", "strip_prefix", "name", "version", "prefix", "record_sha256", "platforms"}));
    auto dist = GetString(j, "dist_info", where, true);
    if (!dist.ok()) return dist.error();
    auto root = GetString(j, "root", where, true);
    if (!root.ok()) return root.error();
    auto strip = GetString(j, "strip_prefix", where, false);
    if (!strip.ok()) return strip.error();
    if (dist->empty()) return Bad(where + ".dist_info", "must not be empty");
    if (root->empty()) return Bad(where + ".root", "must not be empty");
    p.given = *dist;
    p.dist_info = Absolute(dir, *dist);
    p.site_root = Absolute(dir, *root);
    p.strip_prefix = *strip;
    if (j.contains("record_sha256")) {
      auto d = GetSha256(j, "record_sha256", where, true);
      if (!d.ok()) return d.error();
      p.record_sha256 = *d;
    }
  } else {
    std::set<std::string> keys = {"src", "sha256", "name", "version", "platforms"};
    keys.insert(kind == PackageKind::kDeb ? "allow_setuid" : "prefix");
    IMGTOOL_TRY(OnlyKeys(j, where, keys));
    auto src = GetString(j, "src", where, true);
    if (!src.ok()) return src.error();
    if (src->empty()) return Bad(where + ".src", "must not be empty");
    p.given = ref::WithoutUserinfo(*src);
    if (IsPackageUrl(*src)) {
      p.url = *src;
    } else {
      p.src = Absolute(dir, *src);
    }
    if (!j.contains("sha256")) return Bad(where + ".sha256", "required: a package is pinned by the sha256 of its file");
    auto d = GetSha256(j, "sha256", where, true);
    if (!d.ok()) return d.error();
    p.sha256 = *d;
    if (j.contains("allow_setuid")) {
      if (!j["allow_setuid"].is_boolean()) return Bad(where + ".allow_setuid", "want true or false");
      p.allow_setuid = j["allow_setuid"].get<bool>();
    }
  }
  IMGTOOL_TRY(GetNameVersion(j, where, p));
  IMGTOOL_TRY(GetPlatformFilter(j, where, p.platforms));
  if (kind != PackageKind::kDeb) {
    auto prefix = GetPrefix(j, where);
    if (!prefix.ok()) return prefix.error();
    p.prefix = *prefix;
  }
  return p;
}

Status ParsePackages(const Json& layer, const std::string& dir, const std::string& where, LayerSpec& out) {
  const std::pair<const char*, PackageKind> kinds[] = {
      {"debs", PackageKind::kDeb}, {"wheels", PackageKind::kWheel}, {"installed_wheels", PackageKind::kInstalledWheel}};
  for (const auto& [key, kind] : kinds) {
    if (!layer.contains(key)) continue;
    std::string w = where + "." + key;
    if (!layer[key].is_array()) return Bad(w, "want an array");
    for (size_t k = 0; k < layer[key].size(); ++k) {
      auto p = ParsePackage(layer[key][k], kind, dir, w + "[" + std::to_string(k) + "]");
      if (!p.ok()) return p.error();
      out.packages.push_back(*p);
    }
  }
  return Status::Ok();
}

Status ParseUser(const Json& j, Spec& spec) {
  const std::string where = "$.user";
  IMGTOOL_TRY(OnlyKeys(j, where, {"name", "uid", "gid", "group", "home", "shell"}));
  auto name = GetString(j, "name", where, true);
  if (!name.ok()) return name.error();
  auto uid = GetId(j, "uid", where);
  if (!uid.ok()) return uid.error();
  auto gid = GetId(j, "gid", where);
  if (!gid.ok()) return gid.error();
  if (*uid == 0) return Bad(where + ".uid", "0 is root; imgtool images always run as a non-root user");
  if (*gid == 0) return Bad(where + ".gid", "0 is the root group; choose a non-root group");
  // The names and fields go into /etc/passwd and /etc/group: rootfs/users.h says what
  // every reader of those files reads alike.
  if (Status st = rootfs::CheckAccountName(*name, "user name"); !st.ok())
    return Bad(where + ".name", st.error().message);
  spec.user.name = *name;
  spec.user.uid = *uid;
  spec.user.gid = *gid;
  auto group = GetString(j, "group", where, false);
  if (!group.ok()) return group.error();
  spec.user.group = group->empty() ? *name : *group;
  if (Status st = rootfs::CheckAccountName(spec.user.group, "group name"); !st.ok()) {
    return Bad(where + ".group", st.error().message);
  }
  auto home = GetString(j, "home", where, false);
  if (!home.ok()) return home.error();
  spec.user.home = home->empty() ? "/home/" + *name : *home;
  if (spec.user.home[0] != '/' || HasDotDot(spec.user.home))
    return Bad(where + ".home", "want an absolute path without '..'");
  if (Status st = rootfs::CheckAccountField(spec.user.home); !st.ok()) return Bad(where + ".home", st.error().message);
  if (j.contains("shell")) {
    auto shell = GetString(j, "shell", where, true);
    if (!shell.ok()) return shell.error();
    if (Status st = rootfs::CheckAccountField(*shell); !st.ok()) return Bad(where + ".shell", st.error().message);
    spec.user.shell = *shell;
  }
  return Status::Ok();
}

Status ParseLayers(const Json& j, const std::string& dir, Spec& spec) {
  if (!j.is_array()) return Bad("$.layers", "want an array");
  std::set<std::string> names;
  for (size_t i = 0; i < j.size(); ++i) {
    std::string where = "$.layers[" + std::to_string(i) + "]";
    IMGTOOL_TRY(OnlyKeys(j[i], where, {"name", "root", "files", "debs", "wheels", "installed_wheels", "platforms"}));
    LayerSpec layer;
    layer.where = where;
    IMGTOOL_TRY(GetPlatformFilter(j[i], where, layer.platforms));
    auto name = GetString(j[i], "name", where, false);
    if (!name.ok()) return name.error();
    layer.name = name->empty() ? "layer" + std::to_string(i) : *name;
    if (!names.insert(layer.name).second)
      return Bad(where + ".name", oci::Quoted(layer.name, '\'') + " is used by another layer");
    auto root = GetString(j[i], "root", where, false);
    if (!root.ok()) return root.error();
    layer.root = root->empty() ? dir : Absolute(dir, *root);
    IMGTOOL_TRY(ParsePackages(j[i], dir, where, layer));
    bool has_files = j[i].contains("files");
    if (has_files && !j[i]["files"].is_array()) return Bad(where + ".files", "want an array of {src, dest}");
    if ((!has_files || j[i]["files"].empty()) && layer.packages.empty()) {
      return Bad(where + ".files", "want a non-empty array of {src, dest} (or debs, wheels, installed_wheels)");
    }
    for (size_t k = 0; has_files && k < j[i]["files"].size(); ++k) {
      auto f = ParseFile(j[i]["files"][k], where + ".files[" + std::to_string(k) + "]");
      if (!f.ok()) return f.error();
      layer.files.push_back(*f);
    }
    spec.layers.push_back(layer);
  }
  return Status::Ok();
}

Status ParseStack(const Json& j, Spec& spec) {
  static const std::set<std::string> kComponents = {"cuda", "cudnn", "nccl", "cublas", "driver"};
  IMGTOOL_TRY(OnlyKeys(j, "$.stack", kComponents));
  auto m = GetStringMap(j, "$.stack");
  if (!m.ok()) return m.error();
  for (const auto& [k, v] : *m) {
    if (v.empty() || v.find_first_not_of("0123456789.") != std::string::npos) {
      return Bad(Member("$.stack", k), oci::Quoted(v, '\'') + " is not a version such as \"13.0.96\"");
    }
  }
  spec.stack = *m;
  return Status::Ok();
}

}  // namespace

const char* PackageKindName(PackageKind k) {
  switch (k) {
    case PackageKind::kDeb:
      return "deb";
    case PackageKind::kWheel:
      return "wheel";
    case PackageKind::kInstalledWheel:
      return "installed-wheel";
  }
  return "deb";
}

std::string StackLabel(const std::string& component) { return "org.imgtool.stack." + component; }

Result<Spec> LoadSpec(const std::string& path) {
  auto raw = fs::ReadSmallFile(path, 4 << 20);
  if (!raw.ok()) return raw.error().Context("spec");
  char resolved[PATH_MAX];
  if (::realpath(fs::DirName(path).c_str(), resolved) == nullptr) {
    return MakeError(ErrorKind::kNotFound, "spec " + path + ": cannot resolve its folder");
  }
  return ParseSpec(*raw, resolved, path);
}

Result<Spec> ParseSpec(std::string_view raw, const std::string& dir, const std::string& name) {
  auto parsed = oci::ParseJson(raw, name);
  if (!parsed.ok()) return parsed.error();
  const Json& j = *parsed;
  Spec spec;
  spec.dir = dir;
  spec.digest = oci::Digest::Of(raw);
  auto ctx = [&](const Error& e) { return e.Context(name); };
  if (auto s = RefuseNulBytes(j); !s.ok()) return ctx(s.error());
  Status st = OnlyKeys(j, "$",
                       {"base", "platform", "platforms", "user", "compression", "layers", "env", "workdir",
                        "entrypoint", "cmd", "labels", "stack"});
  if (!st.ok()) return ctx(st.error());
  if (!j.contains("base")) return ctx(Bad("$.base", "required (\"scratch\" or an image pinned by digest)"));
  auto base = ParseBaseSpec(j["base"], dir);
  if (!base.ok()) return ctx(base.error());
  spec.base = std::move(*base);
  if (!j.contains("user")) return ctx(Bad("$.user", "required: images run as a non-root user {name, uid, gid}"));
  if (auto s = ParseUser(j["user"], spec); !s.ok()) return ctx(s.error());
  if (j.contains("platform")) {
    if (auto s = OnlyKeys(j["platform"], "$.platform", {"os", "architecture", "variant"}); !s.ok())
      return ctx(s.error());
    auto p = GetStringMap(j["platform"], "$.platform");
    if (!p.ok()) return ctx(p.error());
    if (p->count("os")) spec.platform.os = (*p)["os"];
    if (p->count("architecture")) spec.platform.architecture = (*p)["architecture"];
    if (p->count("variant")) spec.platform.variant = (*p)["variant"];
  }
  if (j.contains("platforms")) {
    if (j.contains("platform")) return ctx(Bad("$.platforms", "name the platforms here or in $.platform, not both"));
    auto list = ParsePlatformList(j["platforms"], "$.platforms");
    if (!list.ok()) return ctx(list.error());
    spec.platforms = *list;
  }
  if (j.contains("compression")) {
    if (!j["compression"].is_string()) return ctx(Bad("$.compression", "want \"gzip\", \"zstd\" or \"none\""));
    auto c = archive::CompressionFromName(j["compression"].get<std::string>());
    if (!c.ok()) return ctx(c.error().Context("$.compression"));
    spec.compression = *c;
  }
  if (!j.contains("layers")) return ctx(Bad("$.layers", "required"));
  if (auto s = ParseLayers(j["layers"], dir, spec); !s.ok()) return ctx(s.error());
  if (auto s = CheckPlatformFilters(spec); !s.ok()) return ctx(s.error());
  if (j.contains("env")) {
    auto env = GetStringMap(j["env"], "$.env");
    if (!env.ok()) return ctx(env.error());
    for (const auto& [k, v] : *env) {
      if (k.empty() || k.find('=') != std::string::npos)
        return ctx(Bad(Member("$.env", k), "not a valid variable name"));
    }
    spec.env = *env;
  }
  if (j.contains("workdir")) {
    auto w = GetString(j, "workdir", "$", true);
    if (!w.ok()) return ctx(w.error());
    if (w->empty() || (*w)[0] != '/') return ctx(Bad("$.workdir", "want an absolute path"));
    spec.workdir = *w;
  }
  for (const char* key : {"entrypoint", "cmd"}) {
    if (!j.contains(key)) continue;
    auto list = GetStringList(j[key], std::string("$.") + key);
    if (!list.ok()) return ctx(list.error());
    (std::string(key) == "entrypoint" ? spec.entrypoint : spec.cmd) = *list;
  }
  if (j.contains("labels")) {
    auto labels = GetStringMap(j["labels"], "$.labels");
    if (!labels.ok()) return ctx(labels.error());
    spec.labels = *labels;
  }
  if (j.contains("stack")) {
    if (auto s = ParseStack(j["stack"], spec); !s.ok()) return ctx(s.error());
  }
  return spec;
}

}  // namespace imgtool::build

// Probe: puts the pieces together (image and OS facts here, the CUDA stack in
// probe_cuda, which files to hash in probe_libraries, the hashing in probe_hash).
#include "fleet/probe.h"

#include <fcntl.h>
#include <gnu/libc-version.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string_view>

#include "fleet/probe_cuda.h"
#include "fleet/probe_hash.h"
#include "fleet/probe_libraries.h"
#include "oci/digest.h"

extern char** environ;

namespace imgtool::fleet {

namespace {

using Clock = std::chrono::steady_clock;

double MillisSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// "sha256:<hex>" of the file, "absent" when there is none; anything else is the
// caller's to fix (a folder, a file we may not read).
Result<std::string> StackJsonDigest(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ENOENT) return std::string("absent");
  if (fd < 0) return MakeError(ErrorKind::kInvalidInput, "reading " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return MakeError(ErrorKind::kInvalidInput, "reading " + path + ": not a regular file");
  }
  oci::Sha256 h;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return MakeError(ErrorKind::kInvalidInput, "reading " + path + ": " + std::strerror(e));
    }
    if (n == 0) break;
    h.Update(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return h.Finish().str();
}

std::string Unquote(std::string v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
  return v;
}

// PRETTY_NAME, else "ID VERSION_ID", from os-release(5).
std::string OsRelease() {
  for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
    std::ifstream in(path);
    if (!in) continue;
    std::map<std::string, std::string> kv;
    for (std::string line; std::getline(in, line);) {
      auto eq = line.find('=');
      if (eq != std::string::npos && line[0] != '#') kv[line.substr(0, eq)] = Unquote(line.substr(eq + 1));
    }
    if (!kv["PRETTY_NAME"].empty()) return kv["PRETTY_NAME"];
    std::string id = kv["ID"] + (kv["VERSION_ID"].empty() ? "" : " " + kv["VERSION_ID"]);
    if (!id.empty()) return id;
  }
  return "absent";
}

void AddSystem(Fingerprint& fp) {
  fp.fields["os.release"] = OsRelease();
  struct utsname u {};
  fp.fields["os.kernel"] = ::uname(&u) == 0 ? u.release : "unknown";
  fp.fields["os.glibc"] = ::gnu_get_libc_version();
  char host[256] = {};
  fp.node["hostname"] = ::gethostname(host, sizeof(host) - 1) == 0 ? host : "unknown";
}

void AddEnvironment(const std::vector<std::string>& given, Fingerprint& fp) {
  std::vector<std::string> env = given;
  if (env.empty()) {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  }
  std::set<std::string> seen;  // the first definition wins, as for getenv
  for (const auto& kv : env) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string name = kv.substr(0, eq);
    if (!seen.insert(name).second) continue;
    EnvRole role = EnvVarRole(name);
    if (role == EnvRole::kField) fp.fields["env." + name] = kv.substr(eq + 1);
    if (role == EnvRole::kNode) fp.node["env." + name] = kv.substr(eq + 1);
  }
}

// lib.<name> for each library file; two files with one name (only possible when one
// was loaded by path) join their values in load order, as the gpu fields do.
void AddLibraries(const ProbeOptions& options, Fingerprint& fp, ProbeTimings& t) {
  std::vector<LoadedLibrary> libs = MappedCudaLibraries();
  const char* ld_path = std::getenv("LD_LIBRARY_PATH");  // what the loader read at start
  for (auto& sub : CudnnSubLibraries(libs, ld_path ? ld_path : "")) libs.push_back(std::move(sub));
  std::vector<std::string> paths;
  for (const auto& l : libs) paths.push_back(l.real_path);
  HashCache cache = HashCache::Load(options.hash_cache_dir);
  std::vector<FileHash> hashes = HashFiles(paths, cache);
  for (size_t i = 0; i < libs.size(); ++i) {
    std::string field = LibFieldName(libs[i]);
    std::string value = hashes[i].error.empty() ? hashes[i].digest.str() : "unreadable";
    if (!hashes[i].error.empty()) fp.node["error." + field] = hashes[i].error;
    auto [it, added] = fp.fields.emplace(field, value);
    if (!added) it->second += "," + value;
    auto [nit, nadded] = fp.node.emplace(field, libs[i].real_path);
    if (!nadded) nit->second += "," + libs[i].real_path;
    if (hashes[i].error.empty()) (hashes[i].cached ? t.libraries_cached : t.libraries_hashed)++;
  }
  t.notes.insert(t.notes.end(), cache.notes().begin(), cache.notes().end());
  if (auto st = cache.Save(); !st.ok()) t.notes.push_back("not saving the hash cache: " + st.error().message);
}

bool StartsWith(const std::string& s, std::string_view prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// Length of the valid UTF-8 sequence at s[i], or 0 (overlong forms, surrogates and code
// points past U+10FFFF are invalid, as RFC 3629 says).
size_t Utf8SequenceAt(const std::string& s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  }
  unsigned char c1 = b(i + 1);
  if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90)) {
    return 0;
  }
  return n;
}

// Environment values, host names and paths are bytes; fingerprints are JSON strings.
std::string EscapeInvalidUtf8(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (size_t n = Utf8SequenceAt(s, i)) {
      out.append(s, i, n);
      i += n;
    } else {
      static const char* kHex = "0123456789abcdef";
      auto c = static_cast<unsigned char>(s[i++]);
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 0xf]};
    }
  }
  return out;
}

// Within fingerprint.h's bounds, so FingerprintFromJson accepts what the probe wrote: a
// value too long to show becomes its digest (still compared exactly), a name too long
// is left out with a note.
std::map<std::string, std::string> Bounded(const std::map<std::string, std::string>& in, const char* half,
                                           std::vector<std::string>& notes) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : in) {
    std::string key = EscapeInvalidUtf8(k), value = EscapeInvalidUtf8(v);
    if (key.size() > kMaxFieldNameBytes || out.size() == kMaxFingerprintEntries) {
      notes.push_back(std::string("left out of ") + half + ": " + key.substr(0, 64) + "...");
      continue;
    }
    if (value.size() > kMaxFieldValueBytes) {
      value = oci::Digest::Of(v).str() + " (" + std::to_string(v.size()) + " bytes)";
    }
    out.emplace(std::move(key), std::move(value));
  }
  return out;
}

}  // namespace

EnvRole EnvVarRole(const std::string& name) {
  static const std::set<std::string> kNode = {
      "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS",
      "NCCL_DEBUG_FILE",      "LD_LIBRARY_PATH",        "CUDA_HOME",  "CUDA_PATH"};
  static const std::set<std::string> kField = {"NVIDIA_TF32_OVERRIDE",  "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
                                               "TF_DETERMINISTIC_OPS",  "TF_CUDNN_DETERMINISTIC",
                                               "TF_ENABLE_ONEDNN_OPTS", "LD_PRELOAD"};
  if (kNode.count(name)) return EnvRole::kNode;
  if (kField.count(name)) return EnvRole::kField;
  for (std::string_view p : {"NCCL_", "CUDA_", "CUBLAS_", "CUBLASLT_", "CUDNN_"}) {
    if (name.size() > p.size() && StartsWith(name, p)) return EnvRole::kField;
  }
  return EnvRole::kNone;
}

bool RecordedEnvVar(const std::string& name) { return EnvVarRole(name) != EnvRole::kNone; }

namespace {

// A digest the caller names (a container cannot see its own): "unknown" when not given.
Status AddDigest(const std::string& value, const std::string& field, const std::string& what, Fingerprint& fp) {
  if (value.empty()) {
    fp.fields[field] = "unknown";
    return Status::Ok();
  }
  auto d = oci::Digest::Parse(value);
  if (!d.ok()) return d.error().Context(what);
  fp.fields[field] = d->str();
  return Status::Ok();
}

// The platform this binary was built for, as OCI names it: under qemu-user an arm64
// probe reports arm64, which is what the image runs as.
std::string ThisPlatform() {
#if defined(__x86_64__)
  return "linux/amd64";
#elif defined(__aarch64__)
  return "linux/arm64";
#else
  return "linux/unknown";
#endif
}

}  // namespace

std::string DefaultHashCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/imgtool/probe";  // relative: ignored (XDG spec)
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/imgtool/probe";
  return "";
}

Result<Fingerprint> Probe(const ProbeOptions& options, ProbeTimings* timings) {
  auto start = Clock::now();
  ProbeTimings t;
  Fingerprint fp;
  IMGTOOL_TRY(AddDigest(options.image_digest, "image.digest", "image digest", fp));
  IMGTOOL_TRY(AddDigest(options.image_index, "image.index", "image index", fp));
  fp.fields[kPlatformField] = ThisPlatform();
  auto stack = StackJsonDigest(options.stack_json_path);
  if (!stack.ok()) return stack.error();
  fp.fields["image.stack_json"] = *stack;
  AddSystem(fp);
  AddEnvironment(options.environment, fp);

  auto load = Clock::now();
  StackReport cuda = ProbeCudaStack();
  fp.fields.insert(cuda.fields.begin(), cuda.fields.end());
  fp.node.insert(cuda.node.begin(), cuda.node.end());
  t.load_ms = MillisSince(load);

  auto hash = Clock::now();
  AddLibraries(options, fp, t);
  t.hash_ms = MillisSince(hash);
  fp.fields = Bounded(fp.fields, "fields", t.notes);
  fp.node = Bounded(fp.node, "node", t.notes);
  t.total_ms = MillisSince(start);
  if (timings != nullptr) *timings = std::move(t);
  return fp;
}

}  // namespace imgtool::fleet

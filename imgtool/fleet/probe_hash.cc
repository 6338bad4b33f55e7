#include "fleet/probe_hash.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <thread>

#include "fs/atomic_file.h"
#include "fs/cpus.h"
#include "fs/own_file.h"
#include "oci/canonical_json.h"

namespace imgtool::fleet {

namespace {

constexpr int kSchemaVersion = 1;
constexpr uint64_t kMaxCacheBytes = 16u << 20;

Error ErrnoError(const std::string& what, int e) {
  return MakeError(e == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInternal, what + ": " + std::strerror(e));
}

int64_t Nanos(const struct timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

FileKey KeyOf(const std::string& path, const struct stat& st) {
  return {path,
          static_cast<uint64_t>(st.st_dev),
          static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size),
          Nanos(st.st_mtim),
          Nanos(st.st_ctim)};
}

// The cache file's entries, or why it cannot be trusted.
Result<std::vector<FileKey>> ParseEntries(const std::string& text, std::vector<oci::Digest>* digests) {
  auto j = oci::ParseJson(text, "hash cache");
  if (!j.ok()) return j.error();
  if (!j->is_object() || !j->contains("schemaVersion") || (*j)["schemaVersion"] != kSchemaVersion ||
      !j->contains("entries") || !(*j)["entries"].is_array()) {
    return MakeError(ErrorKind::kIntegrity, "want {\"schemaVersion\":1,\"entries\":[...]}");
  }
  std::vector<FileKey> keys;
  const auto& entries = (*j)["entries"];
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    std::string where = "$.entries[" + std::to_string(i) + "]";
    auto bad = [&](const char* what) { return MakeError(ErrorKind::kIntegrity, where + ": " + what); };
    if (!e.is_object()) return bad("not an object");
    for (const char* n : {"dev", "ino", "size"}) {
      if (!e.contains(n) || !e[n].is_number_unsigned()) return bad("dev, ino and size must be unsigned integers");
    }
    for (const char* n : {"mtimeNs", "ctimeNs"}) {
      if (!e.contains(n) || !e[n].is_number_integer()) return bad("mtimeNs and ctimeNs must be integers");
    }
    if (!e.contains("path") || !e["path"].is_string() || !e.contains("sha256") || !e["sha256"].is_string()) {
      return bad("path and sha256 must be strings");
    }
    auto d = oci::Digest::Parse(e["sha256"].get<std::string>());
    if (!d.ok()) return d.error().Context(where + ".sha256");
    keys.push_back({e["path"].get<std::string>(), e["dev"].get<uint64_t>(), e["ino"].get<uint64_t>(),
                    e["size"].get<uint64_t>(), e["mtimeNs"].get<int64_t>(), e["ctimeNs"].get<int64_t>()});
    digests->push_back(*d);
  }
  return keys;
}

struct Hashed {
  oci::Digest digest;
  FileKey key;          // after the read
  bool stable = false;  // the same key before and after the read
  std::string error;
};

Hashed HashOne(const std::string& path, std::vector<char>& buf) {
  Hashed out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.error = "opening " + path + ": " + std::strerror(errno);
    return out;
  }
  struct stat before {};
  struct stat after {};
  if (::fstat(fd, &before) != 0) before = {};
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  oci::Sha256 h;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.error = "reading " + path + ": " + std::strerror(errno);
      ::close(fd);
      return out;
    }
    if (n == 0) break;
    h.Update(buf.data(), static_cast<size_t>(n));
  }
  bool have_after = ::fstat(fd, &after) == 0;
  ::close(fd);
  out.digest = h.Finish();
  out.key = KeyOf(path, after);
  out.stable = have_after && KeyOf(path, before) == out.key;
  return out;
}

}  // namespace

Result<FileKey> StatFileKey(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ErrnoError("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return MakeError(ErrorKind::kInvalidInput, path + ": not a regular file");
  return KeyOf(path, st);
}

HashCache HashCache::Load(const std::string& dir) {
  HashCache c;
  if (dir.empty()) return c;
  c.dir_ = dir;
  c.file_ = dir + "/hashes.json";
  // Only a file of ours that nobody else can write decides what is not re-hashed.
  auto text = fs::ReadOwnFile(c.file_, kMaxCacheBytes);
  if (!text.ok()) {
    if (text.error().kind != ErrorKind::kNotFound) c.notes_.push_back("ignoring hash cache " + text.error().message);
    return c;
  }
  std::vector<oci::Digest> digests;
  auto keys = ParseEntries(*text, &digests);
  if (!keys.ok()) {
    c.notes_.push_back("ignoring hash cache " + c.file_ + " (re-hashing): " + keys.error().message);
    return c;
  }
  for (size_t i = 0; i < keys->size(); ++i) c.entries_[(*keys)[i].path] = Entry{(*keys)[i], digests[i], false};
  return c;
}

std::optional<oci::Digest> HashCache::Find(const FileKey& key) {
  auto it = entries_.find(key.path);
  if (it == entries_.end() || !(it->second.key == key)) return std::nullopt;
  it->second.used = true;
  return it->second.digest;
}

bool HashCache::Put(const FileKey& key, const oci::Digest& digest) {
  if (!enabled()) return false;
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  if (Nanos(now) - std::max(key.mtime_ns, key.ctime_ns) < racy_window.count()) return false;
  entries_[key.path] = Entry{key, digest, true};
  dirty_ = true;
  return true;
}

Status HashCache::Save() {
  if (!enabled() || !dirty_) return Status::Ok();
  if (entries_.size() > kMaxEntries) std::erase_if(entries_, [](const auto& kv) { return !kv.second.used; });
  oci::Json entries = oci::Json::array();
  for (const auto& [path, e] : entries_) {
    entries.push_back({{"path", path},
                       {"dev", e.key.dev},
                       {"ino", e.key.ino},
                       {"size", e.key.size},
                       {"mtimeNs", e.key.mtime_ns},
                       {"ctimeNs", e.key.ctime_ns},
                       {"sha256", e.digest.str()}});
  }
  oci::Json doc = {{"schemaVersion", kSchemaVersion}, {"entries", entries}};
  IMGTOOL_TRY(fs::MakeOwnDir(dir_));
  IMGTOOL_TRY(fs::WriteOwnFile(file_, doc.dump() + "\n"));
  dirty_ = false;
  return Status::Ok();
}

std::vector<FileHash> HashFiles(const std::vector<std::string>& paths, HashCache& cache) {
  std::vector<FileHash> out(paths.size());
  std::vector<std::pair<uint64_t, size_t>> todo;  // (size, index): largest first
  for (size_t i = 0; i < paths.size(); ++i) {
    out[i].path = paths[i];
    auto key = StatFileKey(paths[i]);
    if (!key.ok()) {
      out[i].error = key.error().message;
      continue;
    }
    if (auto d = cache.Find(*key)) {
      out[i].digest = *d;
      out[i].cached = true;
      continue;
    }
    todo.emplace_back(key->size, i);
  }
  std::sort(todo.begin(), todo.end(), std::greater<>());
  std::vector<Hashed> hashed(paths.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    std::vector<char> buf(1u << 20);
    for (size_t t; (t = next.fetch_add(1)) < todo.size();) hashed[todo[t].second] = HashOne(paths[todo[t].second], buf);
  };
  size_t threads = std::min(todo.size(), static_cast<size_t>(fs::UsableCpus()));
  std::vector<std::thread> pool;
  for (size_t i = 1; i < threads; ++i) pool.emplace_back(work);
  if (!todo.empty()) work();
  for (auto& t : pool) t.join();
  for (const auto& [size, i] : todo) {
    if (!hashed[i].error.empty()) {
      out[i].error = hashed[i].error;
      continue;
    }
    out[i].digest = hashed[i].digest;
    if (hashed[i].stable) cache.Put(hashed[i].key, hashed[i].digest);
  }
  return out;
}

}  // namespace imgtool::fleet

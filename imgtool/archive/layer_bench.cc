// layer_bench: packs one directory into one layer blob with WriteLayer and prints
// key=value lines for bench/layer_build. A benchmark driver, not a user tool (that is
// `imgtool build`): it walks the tree the simple way a build plan would (sorted by
// path in byte order, parents first, symlinks kept, hardlinks detected by inode).
//
//   layer_bench [--compression gzip|zstd|none] [--prefix DIR] [--mtime N] [--verify] SRC OUT
//   layer_bench --digest BLOB      DigestLayerBlob alone (what verify costs)
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "archive/layer.h"
#include "oci/main_guard.h"

namespace {

using imgtool::archive::Entry;
using imgtool::archive::EntryType;

struct Found {
  std::string path;  // in-image
  std::string host;
  struct stat st;
};

bool Walk(const std::string& host, const std::string& rel, std::vector<Found>& out) {
  DIR* d = ::opendir(host.c_str());
  if (d == nullptr) {
    std::fprintf(stderr, "layer_bench: %s: %s\n", host.c_str(), std::strerror(errno));
    return false;
  }
  std::vector<std::string> names;
  while (struct dirent* de = ::readdir(d)) {
    if (std::strcmp(de->d_name, ".") != 0 && std::strcmp(de->d_name, "..") != 0) names.emplace_back(de->d_name);
  }
  ::closedir(d);
  for (const std::string& name : names) {
    Found f;
    f.host = host + "/" + name;
    f.path = rel.empty() ? name : rel + "/" + name;
    if (::lstat(f.host.c_str(), &f.st) != 0) continue;  // vanished: not our problem here
    out.push_back(f);
    if (S_ISDIR(f.st.st_mode) && !Walk(f.host, f.path, out)) return false;
  }
  return true;
}

std::vector<Entry> ToEntries(std::vector<Found>& found) {
  // Byte order of the whole path, not per directory: "a-b" sorts before "a/b".
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.path < b.path; });
  std::map<std::pair<dev_t, ino_t>, std::string> first_link;
  std::vector<Entry> entries;
  for (const Found& f : found) {
    Entry e;
    e.path = f.path;
    e.mode = f.st.st_mode & 07777;
    e.uid = f.st.st_uid;
    e.gid = f.st.st_gid;
    if (S_ISDIR(f.st.st_mode)) {
      e.type = EntryType::kDir;
    } else if (S_ISLNK(f.st.st_mode)) {
      e.type = EntryType::kSymlink;
      std::string target(static_cast<size_t>(f.st.st_size) + 1, '\0');
      ssize_t n = ::readlink(f.host.c_str(), target.data(), target.size());
      if (n <= 0) continue;
      target.resize(static_cast<size_t>(n));
      e.link_target = target;
    } else if (S_ISREG(f.st.st_mode)) {
      auto key = std::make_pair(f.st.st_dev, f.st.st_ino);
      auto it = f.st.st_nlink > 1 ? first_link.find(key) : first_link.end();
      if (it != first_link.end()) {
        e.type = EntryType::kHardlink;
        e.link_target = it->second;
      } else {
        if (f.st.st_nlink > 1) first_link[key] = f.path;
        e.type = EntryType::kFile;
        e.size = static_cast<uint64_t>(f.st.st_size);
        e.source = f.host;
      }
    } else {
      continue;  // devices, sockets, FIFOs
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

int Usage() {
  std::fprintf(stderr,
               "usage: layer_bench [--compression gzip|zstd|none] [--prefix DIR] [--mtime N] "
               "[--threads N] [--verify] SRC OUT\n       layer_bench --digest BLOB\n");
  return 2;
}

int DigestOnly(const std::string& blob) {
  auto start = std::chrono::steady_clock::now();
  auto d = imgtool::archive::DigestLayerBlob(blob);
  if (!d.ok()) return std::fprintf(stderr, "layer_bench: %s\n", d.error().message.c_str()), 1;
  std::printf("digest=%s\n", d->digest.str().c_str());
  std::printf("diff_id=%s\n", d->diff_id.str().c_str());
  std::printf("size=%llu\n", static_cast<unsigned long long>(d->size));
  std::printf("uncompressed_size=%llu\n", static_cast<unsigned long long>(d->uncompressed_size));
  std::printf("seconds=%.3f\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace

static int Main(int argc, char** argv) {
  std::string compression = "gzip", prefix, src, out;
  int64_t mtime = 0;
  bool verify = false;
  int threads = 0;  // the CPUs available
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--compression" && i + 1 < argc) {
      compression = argv[++i];
    } else if (a == "--prefix" && i + 1 < argc) {
      prefix = argv[++i];
    } else if (a == "--mtime" && i + 1 < argc) {
      mtime = std::stoll(argv[++i]);
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::stoi(argv[++i]);
    } else if (a == "--verify") {
      verify = true;
    } else if (a == "--digest" && i + 1 < argc) {
      return DigestOnly(argv[++i]);
    } else if (src.empty()) {
      src = a;
    } else if (out.empty()) {
      out = a;
    } else {
      return Usage();
    }
  }
  if (src.empty() || out.empty()) return Usage();
  auto c = imgtool::archive::CompressionFromName(compression);
  if (!c.ok()) return std::fprintf(stderr, "layer_bench: %s\n", c.error().message.c_str()), 2;

  auto start = std::chrono::steady_clock::now();
  std::vector<Found> found;
  // The prefix's own folders come first, like a build plan's parents.
  std::string rel;
  for (size_t pos = 0; !prefix.empty() && pos != std::string::npos;) {
    size_t slash = prefix.find('/', pos);
    rel = prefix.substr(0, slash);
    Found f{rel, src, {}};
    ::stat(src.c_str(), &f.st);
    found.push_back(f);
    pos = slash == std::string::npos ? slash : slash + 1;
  }
  if (!Walk(src, rel, found)) return 1;
  std::vector<Entry> entries = ToEntries(found);

  imgtool::fs::AtomicFile file;
  imgtool::archive::LayerOptions options;
  options.compression = *c;
  options.mtime = mtime;
  options.threads = threads;
  auto st = file.Open(out);
  if (!st.ok()) return std::fprintf(stderr, "layer_bench: %s\n", st.error().message.c_str()), 1;
  auto layer = imgtool::archive::WriteLayer(entries, options, file);
  if (!layer.ok()) return std::fprintf(stderr, "layer_bench: %s\n", layer.error().message.c_str()), 1;
  auto written = std::chrono::steady_clock::now();
  st = file.Commit();
  if (!st.ok()) return std::fprintf(stderr, "layer_bench: %s\n", st.error().message.c_str()), 1;
  auto end = std::chrono::steady_clock::now();

  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  std::printf("entries=%zu\n", entries.size());
  std::printf("digest=%s\n", layer->digest.str().c_str());
  std::printf("diff_id=%s\n", layer->diff_id.str().c_str());
  std::printf("size=%llu\n", static_cast<unsigned long long>(layer->size));
  std::printf("uncompressed_size=%llu\n", static_cast<unsigned long long>(layer->uncompressed_size));
  std::printf("write_seconds=%.3f\n", std::chrono::duration<double>(written - start).count());
  std::printf("commit_seconds=%.3f\n", std::chrono::duration<double>(end - written).count());
  std::printf("peak_rss_mb=%.1f\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
  if (verify) {
    auto d = imgtool::archive::DigestLayerBlob(out);
    bool ok = d.ok() && d->digest == layer->digest && d->diff_id == layer->diff_id && d->size == layer->size &&
              d->uncompressed_size == layer->uncompressed_size;
    std::printf("verify=%s\n", ok ? "ok" : (d.ok() ? "mismatch" : d.error().message.c_str()));
    if (!ok) return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  return imgtool::RunGuarded("layer_bench", [&] { return Main(argc, argv); });
}

// Helpers for the archive tests: a scratch folder that cleans up after itself, entry
// builders, and a one-call "write this layer to this path".
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "archive/layer.h"

namespace imgtool::archive::testing {

class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = "/tmp/imgtool-archive-test-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

  // Writes `bytes` to <dir>/<name> (creating folders) and returns the full path.
  std::string Put(const std::string& name, const std::string& bytes) const {
    std::string full = *this / name;
    std::filesystem::create_directories(std::filesystem::path(full).parent_path());
    std::ofstream(full, std::ios::binary) << bytes;
    return full;
  }

 private:
  std::string path_;
};

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Deterministic filler: incompressible-looking bytes from a small LCG.
inline std::string NoiseBytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint64_t x = seed * 2654435761u + 1;
  for (char& c : s) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    c = static_cast<char>(x >> 56);
  }
  return s;
}

inline Entry Dir(const std::string& path, uint32_t mode = 0755) {
  Entry e;
  e.path = path;
  e.type = EntryType::kDir;
  e.mode = mode;
  return e;
}

inline Entry Inline(const std::string& path, const std::string& content, uint32_t mode = 0644) {
  Entry e;
  e.path = path;
  e.content = content;
  e.size = content.size();
  e.mode = mode;
  return e;
}

inline Entry FromFile(const std::string& path, const std::string& source) {
  Entry e;
  e.path = path;
  e.source = source;
  e.size = std::filesystem::file_size(source);
  return e;
}

inline Entry Symlink(const std::string& path, const std::string& target) {
  Entry e;
  e.path = path;
  e.type = EntryType::kSymlink;
  e.mode = 0777;
  e.link_target = target;
  return e;
}

inline Entry Hardlink(const std::string& path, const std::string& target) {
  Entry e;
  e.path = path;
  e.type = EntryType::kHardlink;
  e.link_target = target;
  return e;
}

// Writes a layer to `blob` (committed) and returns what WriteLayer returned.
inline Result<WrittenLayer> WriteBlob(const std::string& blob, const std::vector<Entry>& entries, Compression c,
                                      int64_t mtime = 1700000000) {
  fs::AtomicFile out;
  IMGTOOL_TRY(out.Open(blob));
  LayerOptions options;
  options.compression = c;
  options.mtime = mtime;
  auto layer = WriteLayer(entries, options, out);
  if (!layer.ok()) return layer.error();
  IMGTOOL_TRY(out.Commit());
  return layer;
}

}  // namespace imgtool::archive::testing

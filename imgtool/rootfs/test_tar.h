// Tar layers with any entry names, for the rootfs tests: archive::WriteLayer refuses
// "etc//passwd", unsorted entries and whiteouts, which are exactly what these tests need.
// GNU tar headers (a long name or target gets a ././@LongLink record), as GNU tar writes.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "oci/image.h"
#include "oci/media_types.h"
#include "oci/memory_store.h"
#include "rootfs/image_fs.h"

namespace imgtool::rootfs::testing {

struct TarEntry {
  std::string name;
  char type = '0';  // '0' file, '1' hardlink, '2' symlink, '3' character device, '5' folder
  std::string content;
  std::string link;
  uint32_t mode = 0644;
};

inline TarEntry File(std::string name, std::string content, uint32_t mode = 0644) {
  return {std::move(name), '0', std::move(content), "", mode};
}
inline TarEntry Dir(std::string name, uint32_t mode = 0755) { return {std::move(name), '5', "", "", mode}; }
inline TarEntry Symlink(std::string name, std::string target) {
  return {std::move(name), '2', "", std::move(target), 0777};
}
inline TarEntry Hardlink(std::string name, std::string target, uint32_t mode = 0644) {
  return {std::move(name), '1', "", std::move(target), mode};
}
inline TarEntry Device(std::string name) { return {std::move(name), '3', "", "", 0600}; }
inline TarEntry Whiteout(std::string name) { return File(std::move(name), ""); }

namespace detail {

// `value` in octal, zero-padded to width - 1 digits and a NUL.
inline void Octal(char* field, size_t width, uint64_t value) {
  for (size_t i = width - 1; i-- > 0; value >>= 3) field[i] = static_cast<char>('0' + (value & 7));
  field[width - 1] = '\0';
}

inline std::string Padded(const std::string& data) { return data + std::string((512 - data.size() % 512) % 512, '\0'); }

inline std::string Header(const std::string& name, char type, uint64_t size, const std::string& link, uint32_t mode) {
  char h[512] = {};
  std::copy_n(name.data(), std::min<size_t>(name.size(), 100), h);  // tar: no NUL at 100
  Octal(h + 100, 8, mode);
  Octal(h + 108, 8, 0);
  Octal(h + 116, 8, 0);
  Octal(h + 124, 12, size);
  Octal(h + 136, 12, 1700000000);
  std::memset(h + 148, ' ', 8);
  h[156] = type;
  std::copy_n(link.data(), std::min<size_t>(link.size(), 100), h + 157);
  std::memcpy(h + 257, "ustar  ", 8);  // GNU magic and version
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  Octal(h + 148, 7, sum);  // six digits and a NUL; the eighth byte stays a space
  return std::string(h, sizeof h);
}

// A ././@LongLink record carrying a name or link that does not fit 100 bytes.
inline std::string LongLink(char type, const std::string& value) {
  return Header("././@LongLink", type, value.size() + 1, "", 0644) + Padded(value + '\0');
}

}  // namespace detail

inline std::string Tar(const std::vector<TarEntry>& entries) {
  std::string out;
  for (const auto& e : entries) {
    if (e.name.size() > 100) out += detail::LongLink('L', e.name);
    if (e.link.size() > 100) out += detail::LongLink('K', e.link);
    out += detail::Header(e.name, e.type, e.content.size(), e.link, e.mode) + detail::Padded(e.content);
  }
  return out + std::string(1024, '\0');
}

// A plain-tar layer of `entries` in `store`.
inline std::shared_ptr<const oci::Layer> AddLayer(const std::shared_ptr<oci::MemoryStore>& store,
                                                  const std::vector<TarEntry>& entries) {
  return std::make_shared<oci::Blob>(store, store->Add(Tar(entries), oci::kMediaTypeLayerTar));
}

// Layers added bottom first, then built into a view.
class Layers {
 public:
  Layers& Add(const std::vector<TarEntry>& entries) {
    layers_.push_back(AddLayer(store_, entries));
    return *this;
  }
  Result<ImageFs> Build(const Limits& limits = {}) const { return ImageFs::Build(layers_, limits); }
  std::string digest(size_t i) const { return layers_.at(i)->digest().str(); }
  const std::shared_ptr<oci::MemoryStore>& store() const { return store_; }

 private:
  std::shared_ptr<oci::MemoryStore> store_ = std::make_shared<oci::MemoryStore>();
  std::vector<std::shared_ptr<const oci::Layer>> layers_;
};

// The content a runtime reads, or "error: " and why.
inline std::string ReadOrWhy(const Result<ImageFs>& fs, const std::string& path) {
  if (!fs.ok()) return "build error: " + fs.error().message;
  auto content = fs->ReadFile(path, 1 << 20);
  return content.ok() ? *content : "error: " + content.error().message;
}

}  // namespace imgtool::rootfs::testing

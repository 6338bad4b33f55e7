// Helpers for the tarball tests: tars written member by member with libarchive (in the
// tar dialect asked for, so offsets behind pax and GNU long-name headers get tested), and
// a docker save tarball made from layers WriteLayer wrote.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include <string>
#include <vector>

#include "archive/archive_test_util.h"
#include "archive/layer.h"
#include "oci/canonical_json.h"
#include "oci/image_config.h"

namespace imgtool::tarball::testing {

using archive::testing::ScratchDir;

struct TarEntry {
  std::string name;
  std::string content;
  unsigned type = AE_IFREG;
  std::string link;  // AE_IFLNK: the symlink's target; with type AE_IFREG and link set: a hardlink
};

inline TarEntry File(std::string name, std::string content) {
  return {std::move(name), std::move(content), AE_IFREG, ""};
}
inline TarEntry Other(std::string name, unsigned type) { return {std::move(name), "", type, ""}; }
inline TarEntry Link(std::string name, std::string target) {
  return {std::move(name), "", AE_IFLNK, std::move(target)};
}

// `format`: ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FORMAT_TAR_GNUTAR, ...
inline std::string WriteTar(const std::string& path, const std::vector<TarEntry>& entries,
                            int format = ARCHIVE_FORMAT_TAR_PAX_RESTRICTED) {
  struct archive* a = archive_write_new();
  archive_write_set_format(a, format);
  archive_write_open_filename(a, path.c_str());
  for (const auto& t : entries) {
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, t.name.c_str());
    archive_entry_set_filetype(e, t.type);
    archive_entry_set_perm(e, 0644);
    if (t.type == AE_IFLNK) archive_entry_set_symlink(e, t.link.c_str());
    if (t.type == AE_IFREG && !t.link.empty()) archive_entry_set_hardlink(e, t.link.c_str());
    archive_entry_set_size(e, t.type == AE_IFREG ? static_cast<la_int64_t>(t.content.size()) : 0);
    archive_write_header(a, e);
    if (t.type == AE_IFREG && !t.content.empty()) archive_write_data(a, t.content.data(), t.content.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return path;
}

struct Layer {
  std::string bytes;  // as stored in the tarball
  oci::Digest diff_id;
};

// A one-file layer "f" holding `text`, compressed as asked.
inline Layer MakeLayer(const ScratchDir& dir, const std::string& text, archive::Compression c) {
  std::string path = dir / ("layer-" + std::to_string(static_cast<int>(c)) + "-" + std::to_string(text.size()));
  auto written = archive::testing::WriteBlob(path, {archive::testing::Inline("f", text)}, c);
  return {archive::testing::ReadAll(path), written->diff_id};
}

inline std::string ConfigFor(const std::vector<oci::Digest>& diff_ids) {
  oci::Json cfg = oci::NewImageConfig("linux", "amd64");
  for (const auto& d : diff_ids) oci::AppendLayerToConfig(cfg, d, {"1970-01-01T00:00:00Z", "t", false});
  return *oci::CanonicalJson(cfg);
}

}  // namespace imgtool::tarball::testing

#include "archive/known_diff_ids.h"

#include <sstream>

#include "fs/own_file.h"

namespace imgtool::archive {

namespace {

constexpr uint64_t kMaxEntryBytes = 512;

// "blob sha256:<hex>\ndiff_id sha256:<hex>\nsize N\n": the blob is named inside too.
std::string Format(const oci::Digest& blob, const KnownDiffId& k) {
  return "blob " + blob.str() + "\ndiff_id " + k.diff_id.str() + "\nsize " + std::to_string(k.uncompressed_size) + "\n";
}

std::optional<KnownDiffId> Parse(const std::string& text, const oci::Digest& blob) {
  std::istringstream in(text);
  std::string k1, v1, k2, v2, k3, extra;
  uint64_t size = 0;
  if (!(in >> k1 >> v1 >> k2 >> v2 >> k3 >> size) || (in >> extra)) return std::nullopt;
  if (k1 != "blob" || k2 != "diff_id" || k3 != "size" || v1 != blob.str()) return std::nullopt;
  auto d = oci::Digest::Parse(v2);
  if (!d.ok()) return std::nullopt;
  if (Format(blob, {*d, size}) != text) return std::nullopt;  // exactly what Record writes
  return KnownDiffId{*d, size};
}

}  // namespace

KnownDiffIds KnownDiffIds::In(const std::string& cache_dir) {
  KnownDiffIds k;
  if (!cache_dir.empty()) k.dir_ = cache_dir + "/diff-ids";
  return k;
}

std::optional<KnownDiffId> KnownDiffIds::Find(const oci::Digest& blob) const {
  if (!enabled() || !fs::CheckOwnDir(dir_).ok()) return std::nullopt;
  auto text = fs::ReadOwnFile(dir_ + "/" + blob.hex(), kMaxEntryBytes);
  if (!text.ok()) return std::nullopt;
  return Parse(*text, blob);
}

void KnownDiffIds::Record(const oci::Digest& blob, const KnownDiffId& known) const {
  if (!enabled() || !fs::MakeOwnDir(dir_).ok()) return;  // a folder Find would refuse: write nothing
  (void)fs::WriteOwnFile(dir_ + "/" + blob.hex(), Format(blob, known));
}

}  // namespace imgtool::archive

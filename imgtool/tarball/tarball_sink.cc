#include "tarball/tarball_sink.h"

#include <archive.h>
#include <archive_entry.h>

#include "archive/archive_library.h"
#include "archive/inflate_reader.h"
#include "fs/safe_open.h"
#include "oci/canonical_json.h"
#include "oci/image_config.h"
#include "oci/media_types.h"
#include "oci/quote.h"
#include "tarball/manifest_json.h"

namespace imgtool::tarball {

namespace {

std::string Q(std::string_view s) { return oci::Quoted(s, '\''); }

struct WriteFree {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

la_ssize_t ToAtomic(struct archive*, void* client, const void* buf, size_t n) {
  return static_cast<fs::AtomicFile*>(client)->Write(buf, n).ok() ? static_cast<la_ssize_t>(n) : -1;
}

// A member of the output: bytes in memory, or a staged layer file of ours.
struct Member {
  std::string bytes;
  std::string staged;  // when not empty: read from this file instead
};

// The deterministic tar: members in name order, each as every one of ours is (mtime 0,
// owner 0:0, mode 0644), through an AtomicFile renamed over `path` on success.
class TarOut {
 public:
  Status Open(const std::string& path) {
    IMGTOOL_TRY(out_.Open(path));
    IMGTOOL_TRY(libarchive::Load());
    a_.reset(archive_write_new());
    archive_write_set_format_pax_restricted(a_.get());
    archive_write_set_bytes_in_last_block(a_.get(), 1);
    if (archive_write_open2(a_.get(), &out_, nullptr, ToAtomic, nullptr, nullptr) != ARCHIVE_OK) return Fail(path);
    return Status::Ok();
  }
  Status Add(const std::string& name, const Member& m) {
    std::unique_ptr<fs::FdReader> file;
    uint64_t size = m.bytes.size();
    if (!m.staged.empty()) {
      auto fd = fs::OpenRegularNoFollow(m.staged, &size);
      if (!fd.ok()) return fd.error();
      file = std::make_unique<fs::FdReader>(std::move(*fd));
    }
    std::unique_ptr<archive_entry, EntryFree> e(archive_entry_new());
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_mtime(e.get(), 0, 0);
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(size));
    if (archive_write_header(a_.get(), e.get()) != ARCHIVE_OK) return Fail(name);
    if (!file) return Data(m.bytes.data(), m.bytes.size(), name);
    std::vector<char> buf(1 << 20);
    for (uint64_t done = 0; done < size;) {
      auto got = file->Read(buf.data(), buf.size());
      if (!got.ok()) return got.error();
      if (*got == 0) return MakeError(ErrorKind::kIntegrity, m.staged + ": changed while archived");
      IMGTOOL_TRY(Data(buf.data(), *got, name));
      done += *got;
    }
    return Status::Ok();
  }
  Status Commit(const std::string& path) {
    if (archive_write_close(a_.get()) != ARCHIVE_OK) return Fail(path);
    return out_.Commit();
  }

 private:
  Status Data(const void* p, size_t n, const std::string& name) {
    if (n > 0 && archive_write_data(a_.get(), p, n) != static_cast<la_ssize_t>(n)) return Fail(name);
    return Status::Ok();
  }
  Error Fail(const std::string& what) const {
    const char* msg = archive_error_string(a_.get());
    return MakeError(ErrorKind::kInternal, "writing " + what + ": " + (msg ? msg : "libarchive error"));
  }
  fs::AtomicFile out_;
  std::unique_ptr<struct archive, WriteFree> a_;
};

// "docker.io/library/app:v1" -> {"docker.io/library/app", "v1"}: the tag follows the last ':'.
std::pair<std::string, std::string> SplitRepoTag(const std::string& repo_tag) {
  auto colon = repo_tag.rfind(':');
  return {repo_tag.substr(0, colon), repo_tag.substr(colon + 1)};
}

Error NotAnImage(const std::string& name, const std::string& what) {
  return MakeError(ErrorKind::kInvalidInput,
                   name + ": " + what + " cannot go into a docker-archive, which holds images only (docker load)");
}

}  // namespace

Result<std::unique_ptr<TarballSink>> TarballSink::Open(const std::string& path, const std::string& name,
                                                       const std::string& repo_tag) {
  auto staging = fs::TempDir::Create("imgtool-docker-archive-out-");
  if (!staging.ok()) return staging.error();
  return std::unique_ptr<TarballSink>(new TarballSink(path, name, repo_tag, std::move(*staging)));
}

Result<oci::PutOutcome> TarballSink::PutBlob(const oci::Blob& blob, const std::function<void(uint64_t)>& progress) {
  if (oci::IsLayerMediaType(blob.media_type())) return StageLayer(blob, progress);
  // The config (a manifest names nothing else that is not a layer): kept until Commit.
  auto r = blob.Open();
  if (!r.ok()) return r.error();
  auto bytes = oci::ReadAll(**r, oci::kMaxConfigBytes, "blob " + blob.digest().Short());
  if (!bytes.ok()) return bytes.error();
  if (progress) progress(bytes->size());
  std::lock_guard<std::mutex> lock(mu_);
  documents_[blob.digest()] = std::move(*bytes);
  return oci::PutOutcome{"written", static_cast<uint64_t>(blob.size()), 0};
}

// The layer inflated into staging/<diff_id hex> as it streams (its compressed bytes
// checked by Blob::Open), and kept only when what came out is its diff_id.
Result<oci::PutOutcome> TarballSink::StageLayer(const oci::Blob& blob, const std::function<void(uint64_t)>& progress) {
  const std::string what = "layer " + blob.digest().str();
  if (blob.diff_id().empty()) return NotAnImage(name_, what + " (no diff_id: an artifact's file)");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (layers_.count(blob.diff_id())) return oci::PutOutcome{"exists", 0, 0};
  }
  auto raw = blob.Open();
  if (!raw.ok()) return raw.error();
  auto in = archive::InflateReader(std::move(*raw), what);
  if (!in.ok()) return in.error();
  fs::AtomicFile out;
  IMGTOOL_TRY(out.Open(Staged(blob.diff_id()), 0600));
  oci::Sha256 hash;
  std::vector<char> buf(1 << 20);
  for (;;) {
    auto got = in->reader->Read(buf.data(), buf.size());
    if (!got.ok()) return got.error();
    if (*got == 0) break;
    hash.Update(buf.data(), *got);
    IMGTOOL_TRY(out.Write(buf.data(), *got));
    if (progress) progress(hash.bytes());
  }
  uint64_t size = hash.bytes();
  oci::Digest inflated = hash.Finish();
  if (inflated != blob.diff_id()) {
    return MakeError(ErrorKind::kIntegrity, what + " inflates to " + inflated.str() + ", not its diff_id " +
                                                blob.diff_id().str() + "; nothing written to " + name_);
  }
  IMGTOOL_TRY(out.Commit());
  std::lock_guard<std::mutex> lock(mu_);
  layers_[blob.diff_id()] = size;
  return oci::PutOutcome{"written", size, 0};
}

Status TarballSink::PutManifest(const oci::Descriptor& d, const std::string& bytes,
                                const std::optional<std::string>& tag) {
  if (!tag || oci::IsIndexMediaType(d.media_type)) {
    return MakeError(ErrorKind::kInvalidInput,
                     name_ + ": a docker-archive holds single images, not an index: choose one with --platform");
  }
  if (*tag != repo_tag_) return NotAnImage(name_, Q(*tag) + " (a signature, attestation or other artifact)");
  auto m = oci::ParseManifest(bytes, "manifest " + d.digest.Short());
  if (!m.ok()) return m.error();
  const std::string& config_type = m->config.media_type;
  if (!m->artifact_type.empty() ||
      (config_type != oci::kMediaTypeConfig && config_type != oci::kMediaTypeDockerConfig)) {
    return NotAnImage(name_, "artifact " + d.digest.Short() + " (config " + Q(config_type) + ")");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (image_) return MakeError(ErrorKind::kInvalidInput, name_ + ": imgtool writes one image per docker-archive");
  auto config = documents_.find(m->config.digest);
  if (config == documents_.end()) return MakeError(ErrorKind::kInternal, name_ + ": the config was not written first");
  auto json = oci::ParseJson(config->second, "config " + m->config.digest.Short());
  if (!json.ok()) return json.error();
  auto diff_ids = oci::ConfigDiffIds(*json);
  if (!diff_ids.ok()) return diff_ids.error().Context("config " + m->config.digest.Short());
  if (diff_ids->size() != m->layers.size()) {
    return MakeError(ErrorKind::kInvalidInput, "manifest " + d.digest.Short() + ": " +
                                                   std::to_string(m->layers.size()) + " layers, its config " +
                                                   std::to_string(diff_ids->size()) + " diff_ids");
  }
  for (const auto& id : *diff_ids) {
    if (!layers_.count(id)) return MakeError(ErrorKind::kInternal, name_ + ": layer " + id.str() + " was not staged");
  }
  image_ = Image{m->config.digest, std::move(*diff_ids)};
  return Status::Ok();
}

Status TarballSink::Commit() {
  if (!image_) return MakeError(ErrorKind::kInternal, name_ + ": no image was written");
  std::map<std::string, Member> members;  // sorted by name: the tar's order
  SavedImage item{image_->config.hex() + ".json", {}, {}};
  members[item.config].bytes = documents_.at(image_->config);
  for (const auto& id : image_->diff_ids) {
    item.layers.push_back(id.hex() + ".tar");
    members[item.layers.back()].staged = Staged(id);
  }
  if (!repo_tag_.empty()) item.repo_tags.push_back(repo_tag_);
  auto manifest = ManifestJsonBytes({item});
  if (!manifest.ok()) return manifest.error();
  members["manifest.json"].bytes = std::move(*manifest);
  if (!repo_tag_.empty() && !image_->diff_ids.empty()) {
    auto [repo, tag] = SplitRepoTag(repo_tag_);
    auto repositories = RepositoriesBytes({{repo, tag, image_->diff_ids.back().hex()}});
    if (!repositories.ok()) return repositories.error();
    members["repositories"].bytes = std::move(*repositories);
  }
  TarOut out;
  IMGTOOL_TRY(out.Open(path_));
  for (const auto& [member_name, member] : members) IMGTOOL_TRY(out.Add(member_name, member));
  return out.Commit(name_);
}

}  // namespace imgtool::tarball

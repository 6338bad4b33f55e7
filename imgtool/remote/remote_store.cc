#include "remote/remote_store.h"

#include "fs/atomic_file.h"
#include "fs/safe_open.h"
#include "remote/blob_reader.h"

namespace imgtool::remote {

RemoteStore::RemoteStore(std::shared_ptr<Registry> reg, std::string repo)
    : reg_(std::move(reg)), repo_(std::move(repo)) {}

std::string RemoteStore::name() const { return "docker://" + reg_->host() + "/" + repo_; }

Result<std::unique_ptr<oci::Reader>> RemoteStore::OpenBlob(const oci::Descriptor& d) const {
  return std::unique_ptr<oci::Reader>(std::make_unique<RegistryBlobReader>(reg_, repo_, d));
}

Result<std::string> RemoteStore::ReadManifest(const oci::Descriptor& d) const {
  auto m = reg_->GetManifest(repo_, d.digest.str());
  if (!m.ok()) return m.error();
  return std::move(m->bytes);
}

RemoteRepository::RemoteRepository(std::shared_ptr<Registry> reg, std::string repo)
    : reg_(reg), repo_(repo), store_(std::make_shared<RemoteStore>(std::move(reg), std::move(repo))) {}

Result<oci::Descriptor> RemoteRepository::Resolve(const std::string& tag_or_digest) const {
  auto m = reg_->GetManifest(repo_, tag_or_digest);
  if (!m.ok()) return m.error();
  return oci::Descriptor{m->media_type, m->digest, static_cast<int64_t>(m->bytes.size()), {}, std::nullopt, {}};
}

Result<oci::Node> RemoteRepository::Open(const std::string& tag_or_digest) const {
  auto m = reg_->GetManifest(repo_, tag_or_digest);
  if (!m.ok()) return m.error();
  oci::Descriptor top{m->media_type, m->digest, static_cast<int64_t>(m->bytes.size()), {}, std::nullopt, {}};
  return oci::OpenNode(store_, top, std::move(m->bytes));
}

Result<std::vector<oci::Descriptor>> RemoteRepository::Referrers(const oci::Digest& subject,
                                                                 const std::string& artifact_type) const {
  auto index = reg_->Referrers(repo_, subject, artifact_type);
  if (!index.ok()) return index.error();
  if (!index->has_value()) return oci::Repository::Referrers(subject, artifact_type);
  // Registries may ignore the artifactType filter (it is optional): filtered here again.
  return oci::ReferrersOfType(**index, artifact_type, name() + ": referrers of " + subject.Short());
}

RegistrySink::RegistrySink(std::shared_ptr<Registry> reg, std::string repo, UploadOptions upload)
    : reg_(std::move(reg)), repo_(std::move(repo)), upload_(std::move(upload)) {}

std::string RegistrySink::name() const { return "docker://" + reg_->host() + "/" + repo_; }

Result<oci::PutOutcome> RegistrySink::PutBlob(const oci::Blob& blob, const std::function<void(uint64_t)>& progress) {
  const oci::Descriptor& d = blob.descriptor();
  auto has = reg_->HeadBlob(repo_, d.digest, true);
  if (!has.ok()) return has.error();
  if (*has) return oci::PutOutcome{"exists", 0, 0};
  auto* src = dynamic_cast<const RemoteStore*>(blob.store().get());
  if (src && src->registry()->host() == reg_->host() && src->repository() != repo_) {
    auto mounted = reg_->MountBlob(repo_, src->repository(), d.digest);
    if (!mounted.ok()) return mounted.error();
    if (*mounted) return oci::PutOutcome{"mounted", 0, 0};
  }
  return Upload(blob, progress);
}

// Uploads need to send a range again after a reset, so a source that is only a stream
// (another registry) is staged: small blobs in memory, large ones in a temporary file,
// checked on the way in either way.
Result<oci::PutOutcome> RegistrySink::Upload(const oci::Blob& blob, const std::function<void(uint64_t)>& progress) {
  const oci::Descriptor& d = blob.descriptor();
  auto reader = blob.Open();
  if (!reader.ok()) return reader.error();
  std::unique_ptr<oci::Reader> body = std::move(*reader);
  fs::TempDir staging;
  if (!body->CanReadAt() && static_cast<uint64_t>(d.size) <= upload_.monolithic_max) {
    auto bytes = oci::ReadAll(*body, upload_.monolithic_max, "blob " + d.digest.str());
    if (!bytes.ok()) return bytes.error();
    body = std::make_unique<oci::StringReader>(std::move(*bytes));
  } else if (!body->CanReadAt()) {
    auto t = fs::TempDir::Create("imgtool-blob-");
    if (!t.ok()) return t.error();
    staging = std::move(*t);
    fs::AtomicFile f;
    IMGTOOL_TRY(f.Open(staging.path() + "/blob"));
    std::vector<char> buf(1 << 20);
    for (;;) {
      auto got = body->Read(buf.data(), buf.size());
      if (!got.ok()) return got.error();
      if (*got == 0) break;
      IMGTOOL_TRY(f.Write(buf.data(), *got));
    }
    IMGTOOL_TRY(f.Commit());
    auto fd = fs::OpenRegularBeneath(staging.path(), "blob");
    if (!fd.ok()) return fd.error();
    body = std::make_unique<fs::FdReader>(std::move(*fd));
  }
  auto up = UploadBlob(*reg_, repo_, d, *body, upload_, progress);
  if (!up.ok()) return up.error();
  return oci::PutOutcome{up->resumed ? "resumed" : "uploaded", up->bytes_sent, up->resumed_from};
}

Status RegistrySink::PutManifest(const oci::Descriptor& d, const std::string& bytes,
                                 const std::optional<std::string>& tag) {
  std::string where = tag && !tag->empty() ? *tag : d.digest.str();
  return reg_->PutManifest(repo_, where, RawManifest{bytes, d.media_type, d.digest});
}

}  // namespace imgtool::remote

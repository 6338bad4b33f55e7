#include "transport/open.h"

#include "fs/atomic_file.h"
#include "layout/layout_repository.h"
#include "layout/oci_archive.h"
#include "oci/image_config.h"
#include "remote/remote_store.h"
#include "tarball/tarball_repository.h"
#include "tarball/tarball_sink.h"

namespace imgtool::transport {

namespace {

// A layout has no repository name: signatures name the folder (`--identity` overrides).
std::string FolderName(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return fs::BaseName(path);
}

// The reference without its tag or digest: "oci:out/golden", "docker://HOST/REPO",
// "docker-archive:save.tar" (a docker-archive's NAME:TAG is its tag).
std::string RepositoryName(const ref::Reference& r) {
  ref::Reference bare = r;
  bare.tag.clear();
  bare.digest.clear();
  if (r.transport == ref::Transport::kDockerArchive) {
    bare.host.clear();
    bare.repository.clear();
    bare.source_index = -1;
  }
  return bare.str();
}

}  // namespace

Result<std::shared_ptr<const oci::Repository>> OpenRepository(const ref::Reference& r,
                                                              const remote::RegistryOptions& registry) {
  switch (r.transport) {
    case ref::Transport::kOciLayout:
      return std::shared_ptr<const oci::Repository>(
          std::make_shared<layout::LayoutRepository>(r.path, RepositoryName(r), FolderName(r.path)));
    case ref::Transport::kOciArchive: {
      auto repo = layout::OpenArchiveRepository(r.path, RepositoryName(r), FolderName(r.path));
      if (!repo.ok()) return repo.error().Context(r.str());
      return std::shared_ptr<const oci::Repository>(*repo);
    }
    case ref::Transport::kDocker: {
      auto reg = remote::Registry::Connect(r.host, registry);
      if (!reg.ok()) return reg.error().Context(r.str());
      return std::shared_ptr<const oci::Repository>(std::make_shared<remote::RemoteRepository>(*reg, r.repository));
    }
    case ref::Transport::kDockerArchive: {
      auto repo = tarball::OpenTarballRepository(r.path, RepositoryName(r), FolderName(r.path));
      if (!repo.ok()) return repo.error();
      return std::shared_ptr<const oci::Repository>(*repo);
    }
  }
  return MakeError(ErrorKind::kInternal, r.str() + ": unknown transport");
}

std::string NameIn(const ref::Reference& r) {
  if (r.transport == ref::Transport::kDockerArchive) {  // "@N", "HOST/REPO:TAG", or "" for the only image
    if (r.source_index >= 0) return "@" + std::to_string(r.source_index);
    return r.repository.empty() ? "" : r.host + "/" + r.repository + ":" + r.tag;
  }
  if (!r.digest.empty()) return r.digest;
  if (r.tag.empty() && r.transport == ref::Transport::kDocker) return "latest";
  return r.tag;
}

std::string TagAt(const ref::Reference& dst) { return dst.digest.empty() ? NameIn(dst) : ""; }

std::string TagOrLatest(const ref::Reference& dst) {
  if (dst.transport == ref::Transport::kDockerArchive) return NameIn(dst);
  return dst.tag.empty() ? "latest" : dst.tag;
}

bool ImagesOnly(const ref::Reference& dst) {
  return dst.transport == ref::Transport::kOciArchive || dst.transport == ref::Transport::kDockerArchive;
}

std::string BesidePath(const ref::Reference& dst) {
  if (dst.transport != ref::Transport::kDocker) return dst.path;
  return fs::BaseName(dst.repository);
}

Result<Opened> Open(const ref::Reference& r, const remote::RegistryOptions& registry) {
  auto repo = OpenRepository(r, registry);
  if (!repo.ok()) return repo.error();
  auto node = (*repo)->Open(NameIn(r));
  if (!node.ok()) return node.error().Context(r.str());
  return Opened{std::move(*node), *repo};
}

Result<Opened> Open(const std::string& text, const remote::RegistryOptions& registry) {
  auto r = ref::ParseReference(text);
  if (!r.ok()) return r.error();
  return Open(*r, registry);
}

Result<oci::Node> SelectPlatform(const oci::Node& node, const std::optional<oci::Platform>& platform) {
  if (!platform) return node;
  if (!node.is_index()) {
    if (node.image->is_artifact()) return node;
    const auto& config = node.image->config();
    if (!config.ok()) return config.error();
    oci::Platform have = oci::ConfigPlatform(*config);
    if (oci::PlatformMatches(*platform, have)) return node;
    return MakeError(ErrorKind::kNotFound, "image " + node.descriptor.digest.Short() + " is for " +
                                               oci::PlatformString(have) + ", not " + oci::PlatformString(*platform));
  }
  auto child = node.index->ChildFor(*platform);
  if (!child.ok()) return child.error();
  auto opened = node.index->Child(*child);
  if (!opened.ok()) return opened.error();
  return SelectPlatform(*opened, platform);  // an index of indexes
}

Result<std::unique_ptr<oci::Sink>> OpenSink(const ref::Reference& r, const SinkOptions& options) {
  switch (r.transport) {
    case ref::Transport::kOciLayout: {
      auto sink = layout::LayoutSink::Open(r.path, RepositoryName(r));
      if (!sink.ok()) return sink.error();
      return std::unique_ptr<oci::Sink>(std::move(*sink));
    }
    case ref::Transport::kOciArchive: {
      auto sink = layout::ArchiveSink::Open(r.path, RepositoryName(r));
      if (!sink.ok()) return sink.error();
      return std::unique_ptr<oci::Sink>(std::move(*sink));
    }
    case ref::Transport::kDocker: {
      auto reg = remote::Registry::Connect(r.host, options.registry);
      if (!reg.ok()) return reg.error().Context(r.str());
      return std::unique_ptr<oci::Sink>(std::make_unique<remote::RegistrySink>(*reg, r.repository, options.upload));
    }
    case ref::Transport::kDockerArchive: {
      if (r.source_index >= 0) {
        return MakeError(ErrorKind::kInvalidInput,
                         r.str() + ": @N picks an image to read; write to " + RepositoryName(r) + "[:NAME:TAG]");
      }
      auto sink = tarball::TarballSink::Open(r.path, RepositoryName(r), NameIn(r));
      if (!sink.ok()) return sink.error();
      return std::unique_ptr<oci::Sink>(std::move(*sink));
    }
  }
  return MakeError(ErrorKind::kInternal, r.str() + ": unknown transport");
}

}  // namespace imgtool::transport

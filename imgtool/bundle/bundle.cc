#include "bundle/bundle.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "bundle/disk_writer.h"
#include "bundle/runtime_spec.h"
#include "fs/atomic_file.h"
#include "oci/image_config.h"
#include "rootfs/applier.h"
#include "rootfs/names.h"
#include "rootfs/users.h"

namespace imgtool::bundle {

namespace {

Error Errno(const std::string& what) { return MakeError(ErrorKind::kInternal, what + ": " + std::strerror(errno)); }

Status Cancelled(const UnpackOptions& o) {
  if (o.cancel != nullptr && o.cancel->load()) return MakeError(ErrorKind::kInternal, "interrupted");
  return Status::Ok();
}

// A missing blob is damage, not "no such file" (rootfs's convention).
Error LayerError(Error e) {
  if (e.kind == ErrorKind::kNotFound) e.kind = ErrorKind::kIntegrity;
  return e;
}

// One layer streamed onto the disk: each header through the Applier (every refusal
// ImageFs makes) and then to the writer, content read as it streams.
Status UnpackLayer(const oci::Layer& layer, uint32_t index, rootfs::Applier& applier, DiskWriter& writer,
                   const UnpackOptions& options) {
  applier.BeginLayer(index);
  Status st =
      archive::ExtractLayer(layer, [&](const archive::TarHeader& h, const archive::ReadContent& read) -> Status {
        IMGTOOL_TRY(Cancelled(options));
        auto placed = applier.Apply(h);
        if (!placed.ok()) return Status(placed.error());
        Status written = writer.Write(
            *placed, h,
            [&](const archive::ContentBlock& block) -> Status {
              return read([&](uint64_t offset, const void* data, size_t size) -> Status {
                IMGTOOL_TRY(Cancelled(options));
                return block(offset, data, size);
              });
            },
            applier);
        if (written.ok()) return written;
        return Status(written.error().Context("layer " + layer.digest().str() + ": entry " +
                                              rootfs::internal::QuoteName(h.name)));
      });
  if (!st.ok()) return LayerError(st.error());
  applier.EndLayer();
  return Status::Ok();
}

// The image's own account file, through both views (they must agree): nullopt when absent.
AccountReader ReadFromImage(const rootfs::ImageFs& fs) {
  return [&fs](const std::string& path) -> Result<std::optional<std::string>> {
    auto text = fs.ReadFile(path, rootfs::kMaxAccountFile);
    if (text.ok()) return std::optional<std::string>(std::move(*text));
    if (text.error().kind == ErrorKind::kNotFound) return std::optional<std::string>();
    return text.error();
  };
}

void Count(const rootfs::ImageFs& fs, UnpackReport& r) {
  fs.Walk(rootfs::Unpacker::kMerged, [&](const rootfs::FileInfo&) { ++r.files; });
}

// DIR must be absent, or (force) a bundle: a folder, not a symlink, with a config.json.
Result<bool> CheckTarget(const std::string& dir, bool force) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    return Errno(dir);
  }
  if (!force) return MakeError(ErrorKind::kInvalidInput, dir + ": exists (--force replaces a bundle)");
  struct stat cfg {};
  if (!S_ISDIR(st.st_mode) || ::lstat((dir + "/config.json").c_str(), &cfg) != 0 || !S_ISREG(cfg.st_mode)) {
    return MakeError(ErrorKind::kInvalidInput, dir + ": not a bundle (a folder with a config.json); not replaced");
  }
  return true;
}

Status WriteConfig(int bundle_fd, const std::string& bytes) {
  fs::UniqueFd f(::openat(bundle_fd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!f) return Errno("config.json");
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(f.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("writing config.json");
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Everything into `tmp` (a fresh folder): rootfs, then config.json, then synced.
Status Fill(const oci::Image& image, const std::string& tmp, const UnpackOptions& options, UnpackReport& report) {
  fs::UniqueFd bundle_fd(::open(tmp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!bundle_fd) return Errno(tmp);
  if (::mkdirat(bundle_fd.get(), "rootfs", 0755) != 0) return Errno("making rootfs");
  if (::fchmodat(bundle_fd.get(), "rootfs", 0755, 0) != 0) return Errno("chmod rootfs");  // whatever the umask
  fs::UniqueFd rootfs_fd(::openat(bundle_fd.get(), "rootfs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!rootfs_fd) return Errno("opening rootfs");
  std::optional<rootfs::ImageFs> fs;
  auto unpacked = UnpackRootfs(image, rootfs_fd.get(), options, &fs);
  if (!unpacked.ok()) return unpacked.error();
  report = std::move(*unpacked);
  const auto& config = image.config();
  if (!config.ok()) return config.error();
  auto user = ResolveUser(oci::ConfigUser(*config), ReadFromImage(*fs));
  if (!user.ok()) return user.error();
  auto spec = RuntimeSpec(*config, *user, {{"org.opencontainers.image.ref.digest", image.digest().str()}});
  if (!spec.ok()) return spec.error();
  report.config_json = *spec;
  IMGTOOL_TRY(WriteConfig(bundle_fd.get(), *spec));
  if (::syncfs(bundle_fd.get()) != 0) return Errno("syncing " + tmp);
  return Status::Ok();
}

// tmp -> dir: a new name, or (replace) swapped with the old bundle, then that removed.
Status Publish(const std::string& tmp, const std::string& dir, bool replace) {
  if (!replace) {
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_NOREPLACE) != 0) return Errno(dir);
  } else {
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) return Errno(dir);
    fs::UniqueFd parent(::open(fs::DirName(tmp).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!parent) return Errno(fs::DirName(tmp));
    IMGTOOL_TRY(RemoveAt(parent.get(), fs::BaseName(tmp)));  // the old bundle, now under tmp's name
  }
  return fs::FsyncDir(fs::DirName(dir));
}

}  // namespace

Result<rootfs::ImageFs> UnpackLayers(const std::vector<std::shared_ptr<const oci::Layer>>& layers, int rootfs_fd,
                                     const UnpackOptions& options, WriterStats* stats) {
  rootfs::Applier applier(layers, options.limits);
  fs::UniqueFd root(::dup(rootfs_fd));
  if (!root) return Errno("dup");
  DiskWriter writer(std::move(root), WriterOptions{options.chown});
  for (uint32_t i = 0; i < layers.size(); ++i) IMGTOOL_TRY(UnpackLayer(*layers[i], i, applier, writer, options));
  IMGTOOL_TRY(Cancelled(options));
  IMGTOOL_TRY(writer.Finish());
  *stats = writer.stats();
  return std::move(applier).Finish();
}

Result<UnpackReport> UnpackRootfs(const oci::Image& image, int rootfs_fd, const UnpackOptions& options,
                                  std::optional<rootfs::ImageFs>* fs) {
  WriterStats stats;
  auto built = UnpackLayers(image.layers(), rootfs_fd, options, &stats);
  if (!built.ok()) return built.error();
  UnpackReport r;
  r.image = image.digest();
  r.config = image.manifest().config.digest;
  r.layers = image.layers().size();
  r.bytes = stats.bytes;
  r.xattrs_skipped = stats.xattrs_skipped;
  fs->emplace(std::move(*built));
  Count(**fs, r);
  return r;
}

Result<UnpackReport> WriteBundle(const oci::Image& image, const std::string& dir_arg, const UnpackOptions& options) {
  std::string dir = dir_arg;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  auto exists = CheckTarget(dir, options.force);
  if (!exists.ok()) return exists.error();
  std::string tmp = dir + ".tmp-XXXXXX";
  if (::mkdtemp(tmp.data()) == nullptr) return Errno("making " + tmp);
  UnpackReport report;
  Status st = Fill(image, tmp, options, report);
  if (st.ok()) st = Publish(tmp, dir, *exists);
  if (!st.ok()) {
    fs::UniqueFd parent(::open(fs::DirName(tmp).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (parent) (void)RemoveAt(parent.get(), fs::BaseName(tmp));
    return st.error().Context(dir);
  }
  report.bundle = dir;
  report.rootfs = dir + "/rootfs";
  return report;
}

}  // namespace imgtool::bundle

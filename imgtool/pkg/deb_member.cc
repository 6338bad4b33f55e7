// MemberTar: a .deb's control.tar.* and data.tar.* are read straight out of the ar
// stream by a second libarchive reader whose input callback pulls the member's bytes.
// Each member name admits exactly one compression, so a "data.tar.gz" that is really
// bzip2 or plain tar is refused instead of silently accepted.
#include <archive.h>

#include "pkg/deb_internal.h"

#include "archive/archive_library.h"

namespace imgtool::pkg::internal {

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

la_ssize_t MemberTar::Read(struct archive* /*self*/, void* ctx, const void** buf) {
  auto* m = static_cast<MemberTar*>(ctx);
  la_ssize_t n = archive_read_data(m->outer_, m->buf_.data(), m->buf_.size());
  *buf = m->buf_.data();
  return n < 0 ? -1 : n;  // the outer archive keeps the reason; ErrorText() reports it
}

Result<std::unique_ptr<MemberTar>> MemberTar::Open(struct archive* outer, const std::string& member) {
  std::unique_ptr<MemberTar> m(new MemberTar());
  m->outer_ = outer;
  m->member_ = member;
  m->buf_.resize(1 << 16);
  IMGTOOL_TRY(libarchive::Load());
  m->inner_.reset(archive_read_new());
  if (!m->inner_) return MakeError(ErrorKind::kInternal, member + ": archive_read_new failed");
  struct archive* a = m->inner_.get();
  if (EndsWith(member, ".tar.gz")) {
    archive_read_support_filter_gzip(a);
    m->expected_filter_ = ARCHIVE_FILTER_GZIP;
  } else if (EndsWith(member, ".tar.xz")) {
    archive_read_support_filter_xz(a);
    m->expected_filter_ = ARCHIVE_FILTER_XZ;
  } else if (EndsWith(member, ".tar.zst")) {
    archive_read_support_filter_zstd(a);
    m->expected_filter_ = ARCHIVE_FILTER_ZSTD;
  } else if (EndsWith(member, ".tar")) {
    m->expected_filter_ = ARCHIVE_FILTER_NONE;
  } else {
    return MakeError(ErrorKind::kInvalidInput,
                     member + ": unsupported compression (want .tar, .tar.gz, .tar.xz, .tar.zst)");
  }
  archive_read_support_format_tar(a);
  if (archive_read_open(a, m.get(), nullptr, &MemberTar::Read, nullptr) != ARCHIVE_OK) {
    return MakeError(ErrorKind::kInvalidInput, member + ": " + m->ErrorText());
  }
  return m;
}

Status MemberTar::CheckFilter() const {
  int got = archive_filter_code(inner_.get(), 0);
  if (got != expected_filter_) {
    return MakeError(ErrorKind::kInvalidInput, member_ + ": compression does not match the name (found " +
                                                   std::string(archive_filter_name(inner_.get(), 0)) + ")");
  }
  return Status::Ok();
}

std::string MemberTar::ErrorText() const {
  // A failure inside the ar stream surfaces in the inner reader as a generic read error;
  // the outer reader holds the real cause.
  const char* inner_err = archive_error_string(inner_.get());
  const char* outer_err = archive_error_string(outer_);
  std::string text = inner_err != nullptr ? inner_err : "unknown libarchive error";
  if (outer_err != nullptr) text += std::string(" (") + outer_err + ")";
  return text;
}

}  // namespace imgtool::pkg::internal

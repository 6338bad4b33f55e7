// Pieces UnpackDeb is built from: reading one ar member of a .deb as a tar archive of its
// own (streamed, never written to disk), and unpacking data.tar through a StagingTree.
//
// Internal to imgtool/pkg: not part of package.h.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "oci/result.h"
#include "pkg/handles.h"
#include "pkg/package.h"
#include "pkg/safe_extract.h"

namespace imgtool::pkg::internal {

// A tar archive read from the current member of an outer (ar) archive. The outer archive
// must stay on that member while this is read.
class MemberTar {
 public:
  // `member` is the ar member name ("data.tar.xz"); its suffix picks the one compression
  // accepted (.gz, .xz, .zst, or none for ".tar"); anything else is kInvalidInput.
  static Result<std::unique_ptr<MemberTar>> Open(struct archive* outer, const std::string& member);

  struct archive* get() const {
    return inner_.get();
  }
  // Checks that the compression found is the one the name promised (call after the first
  // header was read: libarchive only knows it then).
  Status CheckFilter() const;
  // libarchive's last error for this archive, for messages.
  std::string ErrorText() const;

 private:
  MemberTar() = default;
  static la_ssize_t Read(struct archive* self, void* ctx, const void** buf);

  struct archive* outer_ = nullptr;
  std::string member_;
  int expected_filter_ = 0;  // ARCHIVE_FILTER_*
  std::vector<char> buf_;
  ReadArchivePtr inner_;
};

// Unpacks every entry of `data` (an opened data.tar) into `tree`, appending to
// deb->paths and deb->files (not yet sorted). `declared_bytes` is Installed-Size in bytes
// (0: not declared, only the absolute caps apply). Errors name the entry, not the package.
Status UnpackDataTar(MemberTar& data, StagingTree& tree, const UnpackLimits& limits, uint64_t declared_bytes,
                     bool allow_setuid, DebPackage* deb);

// The control stanza (as shipped) and its parsed fields against Debian policy's grammar:
// one stanza of "Field: value" lines without duplicates; Package, Version, Architecture
// and Multi-Arch (when present) well-formed. kInvalidInput "control: <Field> \"<value>\":
// <why>" or "control: line N: <why>".
Status CheckControl(const std::string& control, const std::map<std::string, std::string>& fields);

}  // namespace imgtool::pkg::internal

// Small owners shared by the layer writer and reader: libarchive handles, file
// descriptors, and a per-thread "C" locale.
//
// The locale matters for reproducibility: libarchive picks a tar header's path encoding
// from the calling thread's locale (a non-ASCII name is written as UTF-8 under a UTF-8
// locale, as raw bytes with hdrcharset=BINARY under "C"). Pinning "C" for the duration of
// a call makes the bytes the same whatever the host program did with setlocale().
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>
#include <unistd.h>

#include <memory>

#include "fs/safe_open.h"

namespace imgtool::archive::internal {

struct ArchiveWriteFree {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct ArchiveReadFree {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
struct ArchiveEntryFree {
  void operator()(struct archive_entry* e) const { archive_entry_free(e); }
};
using WriteArchivePtr = std::unique_ptr<struct archive, ArchiveWriteFree>;
using ReadArchivePtr = std::unique_ptr<struct archive, ArchiveReadFree>;
using ArchiveEntryPtr = std::unique_ptr<struct archive_entry, ArchiveEntryFree>;

using UniqueFd = fs::UniqueFd;

// Switches the calling thread (only) to the "C" locale until destroyed.
class ScopedCLocale {
 public:
  ScopedCLocale() : c_(newlocale(LC_ALL_MASK, "C", nullptr)) {
    if (c_ != nullptr) previous_ = uselocale(c_);
  }
  ~ScopedCLocale() {
    if (c_ == nullptr) return;
    uselocale(previous_);
    freelocale(c_);
  }
  ScopedCLocale(const ScopedCLocale&) = delete;
  ScopedCLocale& operator=(const ScopedCLocale&) = delete;

 private:
  locale_t c_;
  locale_t previous_ = nullptr;
};

}  // namespace imgtool::archive::internal

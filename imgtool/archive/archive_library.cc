// The libarchive functions imgtool calls, each a trampoline to the same function of
// libarchive.so.13, resolved on its first call (archive_library.h). A function used
// anywhere in imgtool and missing here fails the link (libarchive itself is not
// linked), and each definition is checked by the compiler against <archive.h>'s
// declaration, so the list stays complete and exact.
#include "archive/archive_library.h"

#include <archive.h>
#include <archive_entry.h>

#include <cstdarg>
#include <cstdio>
#include <string>

#include "fs/shared_library.h"

static_assert(ARCHIVE_VERSION_NUMBER >= 3000000 && ARCHIVE_VERSION_NUMBER < 4000000,
              "libarchive 3.x, whose soname is libarchive.so.13");

namespace imgtool::libarchive {
namespace {

fs::SharedLibrary& Libarchive() {
  static fs::SharedLibrary lib("libarchive.so.13");
  return lib;
}

}  // namespace

Status Load() { return Libarchive().Load(); }

template <typename F>
F LibarchiveFn(const char* name) {
  return fs::Resolve<F>(Libarchive(), name);
}

}  // namespace imgtool::libarchive

// NAME(PARAMS) { return NAME's real definition ARGS; } (`return` of a void call is fine).
#define IMGTOOL_FORWARD(ret, name, params, args)                                        \
  ret name params {                                                                     \
    static const auto real = imgtool::libarchive::LibarchiveFn<decltype(&name)>(#name); \
    return real args;                                                                   \
  }

extern "C" {

IMGTOOL_FORWARD(struct archive_entry*, archive_entry_clear, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(void, archive_entry_copy_hardlink, (struct archive_entry * p0, const char* p1), (p0, p1))
IMGTOOL_FORWARD(void, archive_entry_copy_pathname, (struct archive_entry * p0, const char* p1), (p0, p1))
IMGTOOL_FORWARD(void, archive_entry_copy_symlink, (struct archive_entry * p0, const char* p1), (p0, p1))
IMGTOOL_FORWARD(mode_t, archive_entry_filetype, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(void, archive_entry_free, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(la_int64_t, archive_entry_gid, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(const char*, archive_entry_hardlink, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(mode_t, archive_entry_mode, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(time_t, archive_entry_mtime, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(long, archive_entry_mtime_nsec, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(struct archive_entry*, archive_entry_new, (), ())
IMGTOOL_FORWARD(const char*, archive_entry_pathname, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(mode_t, archive_entry_perm, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(void, archive_entry_set_filetype, (struct archive_entry * p0, unsigned int p1), (p0, p1))
IMGTOOL_FORWARD(void, archive_entry_set_gid, (struct archive_entry * p0, la_int64_t p1), (p0, p1))
IMGTOOL_FORWARD(void, archive_entry_set_hardlink, (struct archive_entry * p0, const char* p1), (p0, p1))
IMGTOOL_FORWARD(void, archive_entry_set_mtime, (struct archive_entry * p0, time_t p1, long p2), (p0, p1, p2))
IMGTOOL_FORWARD(void, archive_entry_set_pathname, (struct archive_entry * p0, const char* p1), (p0, p1))
IMGTOOL_FORWARD(void, archive_entry_set_perm, (struct archive_entry * p0, mode_t p1), (p0, p1))
IMGTOOL_FORWARD(void, archive_entry_set_size, (struct archive_entry * p0, la_int64_t p1), (p0, p1))
IMGTOOL_FORWARD(void, archive_entry_set_symlink, (struct archive_entry * p0, const char* p1), (p0, p1))
IMGTOOL_FORWARD(void, archive_entry_set_uid, (struct archive_entry * p0, la_int64_t p1), (p0, p1))
IMGTOOL_FORWARD(la_int64_t, archive_entry_size, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(int, archive_entry_size_is_set, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(int, archive_entry_sparse_count, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(const char*, archive_entry_symlink, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(la_int64_t, archive_entry_uid, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(int, archive_entry_xattr_next,
                (struct archive_entry * p0, const char** p1, const void** p2, size_t* p3), (p0, p1, p2, p3))
IMGTOOL_FORWARD(int, archive_entry_xattr_reset, (struct archive_entry * p), (p))
IMGTOOL_FORWARD(const char*, archive_error_string, (struct archive * p), (p))
IMGTOOL_FORWARD(la_int64_t, archive_filter_bytes, (struct archive * p0, int p1), (p0, p1))
IMGTOOL_FORWARD(int, archive_filter_code, (struct archive * p0, int p1), (p0, p1))
IMGTOOL_FORWARD(const char*, archive_filter_name, (struct archive * p0, int p1), (p0, p1))
IMGTOOL_FORWARD(la_ssize_t, archive_read_data, (struct archive * p0, void* p1, size_t p2), (p0, p1, p2))
IMGTOOL_FORWARD(int, archive_read_data_block, (struct archive * p0, const void** p1, size_t* p2, la_int64_t* p3),
                (p0, p1, p2, p3))
IMGTOOL_FORWARD(int, archive_read_free, (struct archive * p), (p))
IMGTOOL_FORWARD(struct archive*, archive_read_new, (), ())
IMGTOOL_FORWARD(int, archive_read_next_header, (struct archive * p0, struct archive_entry** p1), (p0, p1))
IMGTOOL_FORWARD(int, archive_read_open,
                (struct archive * p0, void* p1, archive_open_callback* p2, archive_read_callback* p3,
                 archive_close_callback* p4),
                (p0, p1, p2, p3, p4))
IMGTOOL_FORWARD(int, archive_read_open1, (struct archive * p), (p))
IMGTOOL_FORWARD(int, archive_read_open_fd, (struct archive * p0, int p1, size_t p2), (p0, p1, p2))
IMGTOOL_FORWARD(int, archive_read_set_callback_data, (struct archive * p0, void* p1), (p0, p1))
IMGTOOL_FORWARD(int, archive_read_set_read_callback, (struct archive * p0, archive_read_callback* p1), (p0, p1))
IMGTOOL_FORWARD(int, archive_read_set_seek_callback, (struct archive * p0, archive_seek_callback* p1), (p0, p1))
IMGTOOL_FORWARD(int, archive_read_set_skip_callback, (struct archive * p0, archive_skip_callback* p1), (p0, p1))
IMGTOOL_FORWARD(int, archive_read_support_filter_all, (struct archive * p), (p))
IMGTOOL_FORWARD(int, archive_read_support_filter_gzip, (struct archive * p), (p))
IMGTOOL_FORWARD(int, archive_read_support_filter_xz, (struct archive * p), (p))
IMGTOOL_FORWARD(int, archive_read_support_filter_zstd, (struct archive * p), (p))
IMGTOOL_FORWARD(int, archive_read_support_format_ar, (struct archive * p), (p))
IMGTOOL_FORWARD(int, archive_read_support_format_tar, (struct archive * p), (p))
IMGTOOL_FORWARD(int, archive_read_support_format_zip_seekable, (struct archive * p), (p))
IMGTOOL_FORWARD(int, archive_write_add_filter_none, (struct archive * p), (p))
IMGTOOL_FORWARD(int, archive_write_close, (struct archive * p), (p))
IMGTOOL_FORWARD(la_ssize_t, archive_write_data, (struct archive * p0, const void* p1, size_t p2), (p0, p1, p2))
IMGTOOL_FORWARD(int, archive_write_free, (struct archive * p), (p))
IMGTOOL_FORWARD(int, archive_write_header, (struct archive * p0, struct archive_entry* p1), (p0, p1))
IMGTOOL_FORWARD(struct archive*, archive_write_new, (), ())
IMGTOOL_FORWARD(int, archive_write_open2,
                (struct archive * p0, void* p1, archive_open_callback* p2, archive_write_callback* p3,
                 archive_close_callback* p4, archive_free_callback* p5),
                (p0, p1, p2, p3, p4, p5))
IMGTOOL_FORWARD(int, archive_write_open_filename, (struct archive * p0, const char* p1), (p0, p1))
IMGTOOL_FORWARD(int, archive_write_set_bytes_in_last_block, (struct archive * p0, int p1), (p0, p1))
IMGTOOL_FORWARD(int, archive_write_set_bytes_per_block, (struct archive * p0, int p1), (p0, p1))
IMGTOOL_FORWARD(int, archive_write_set_format, (struct archive * p0, int p1), (p0, p1))
IMGTOOL_FORWARD(int, archive_write_set_format_pax_restricted, (struct archive * p), (p))

// printf-like: formatted here, handed on as "%s".
void archive_set_error(struct archive* a, int error, const char* format, ...) {
  static const auto real = imgtool::libarchive::LibarchiveFn<decltype(&archive_set_error)>("archive_set_error");
  va_list ap;
  va_start(ap, format);
  va_list again;
  va_copy(again, ap);
  int n = std::vsnprintf(nullptr, 0, format, ap);
  std::string message(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(message.data(), message.size() + 1, format, again);
  va_end(again);
  va_end(ap);
  real(a, error, "%s", message.c_str());
}

}  // extern "C"

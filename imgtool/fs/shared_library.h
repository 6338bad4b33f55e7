// A shared library loaded on first use, by soname, for the C libraries that only some
// verbs call (libcurl: registries and package URLs; libarchive: tar, .deb, wheels,
// archives). Linked as NEEDED, each would be mapped and relocated, with its own
// dependencies (libcurl's are 25 more, libarchive's 10), by every imgtool process before
// main: 3-4 ms of a `digest` that needs none of them. dlopen by soname searches as the
// loader would for a NEEDED entry (LD_LIBRARY_PATH, the ld.so cache, the default paths).
//
// The library's callers keep calling the library's own functions: a file beside them
// (remote/curl_library.cc, archive/archive_library.cc) defines each function they use
// as a trampoline that resolves the real one here on its first call. The entry points
// that create the library's first handle call Load() and return its error; a trampoline
// reached without one throws LibraryLoadError (an internal error: a caller forgot Load).
// A path instead of a soname loads that file: imgtool's admission server module
// (admission/server_module.h).
#pragma once

#include <mutex>
#include <stdexcept>
#include <string>

#include "oci/result.h"

namespace imgtool::fs {

class LibraryLoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SharedLibrary {
 public:
  explicit SharedLibrary(const char* soname) : soname_(soname) {}
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // Loads it once (thread-safe; kept loaded for the process's life). The error, kind
  // internal: "cannot load libcurl.so.4: <the loader's reason>".
  Status Load();
  // The address of `name` in it, loading it first; throws LibraryLoadError when the
  // library or the symbol is missing.
  void* Symbol(const char* name);
  const char* soname() const { return soname_; }

 private:
  const char* soname_;
  std::once_flag once_;
  void* handle_ = nullptr;
  std::string error_;
};

// The typed address of `name`: `Resolve<decltype(&curl_easy_init)>(lib, "curl_easy_init")`.
template <typename F>
F Resolve(SharedLibrary& lib, const char* name) {
  return reinterpret_cast<F>(lib.Symbol(name));
}

}  // namespace imgtool::fs

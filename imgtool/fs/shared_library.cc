#include "fs/shared_library.h"

#include <dlfcn.h>

namespace imgtool::fs {

Status SharedLibrary::Load() {
  std::call_once(once_, [this] {
    // RTLD_LAZY: its functions are bound when first called, as a NEEDED library's are;
    // RTLD_LOCAL: its symbols are reached only through Symbol(), never by other objects.
    handle_ = dlopen(soname_, RTLD_LAZY | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* why = dlerror();
      error_ = std::string("cannot load ") + soname_ + ": " + (why ? why : "unknown error");
    }
  });
  if (handle_ == nullptr) return MakeError(ErrorKind::kInternal, error_);
  return Status::Ok();
}

void* SharedLibrary::Symbol(const char* name) {
  Status loaded = Load();
  if (!loaded.ok()) throw LibraryLoadError(loaded.error().message);
  void* address = dlsym(handle_, name);
  if (address == nullptr) throw LibraryLoadError(std::string(soname_) + ": no symbol " + name);
  return address;
}

}  // namespace imgtool::fs

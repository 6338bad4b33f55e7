// The libcurl functions imgtool calls, each a trampoline to the same function of
// libcurl.so.4, resolved on its first call (curl_library.h). A function used anywhere in
// imgtool and missing here fails the link (libcurl itself is not linked), so the list
// stays complete. The type checks of <curl/typecheck-gcc.h> are macros named as the
// functions defined here: off in this file only.
#define CURL_DISABLE_TYPECHECK
#include "remote/curl_library.h"

#include <curl/curl.h>

#include <cstdarg>

#include "fs/shared_library.h"

namespace imgtool::remote {
namespace {

fs::SharedLibrary& Curl() {
  static fs::SharedLibrary lib("libcurl.so.4");  // the soname of libcurl 7.16 to 8.x
  return lib;
}

template <typename F>
F Fn(const char* name) {
  return fs::Resolve<F>(Curl(), name);
}

}  // namespace

Status LoadCurl() { return Curl().Load(); }

}  // namespace imgtool::remote

using imgtool::remote::Fn;

extern "C" {

CURLcode curl_global_init(long flags) {
  static auto f = Fn<decltype(&curl_global_init)>("curl_global_init");
  return f(flags);
}

CURL* curl_easy_init() {
  static auto f = Fn<decltype(&curl_easy_init)>("curl_easy_init");
  return f();
}

void curl_easy_cleanup(CURL* c) {
  static auto f = Fn<decltype(&curl_easy_cleanup)>("curl_easy_cleanup");
  f(c);
}

void curl_easy_reset(CURL* c) {
  static auto f = Fn<decltype(&curl_easy_reset)>("curl_easy_reset");
  f(c);
}

CURLcode curl_easy_perform(CURL* c) {
  static auto f = Fn<decltype(&curl_easy_perform)>("curl_easy_perform");
  return f(c);
}

const char* curl_easy_strerror(CURLcode code) {
  static auto f = Fn<decltype(&curl_easy_strerror)>("curl_easy_strerror");
  return f(code);
}

curl_slist* curl_slist_append(curl_slist* list, const char* text) {
  static auto f = Fn<decltype(&curl_slist_append)>("curl_slist_append");
  return f(list, text);
}

void curl_slist_free_all(curl_slist* list) {
  static auto f = Fn<decltype(&curl_slist_free_all)>("curl_slist_free_all");
  f(list);
}

// One argument after the option, of the type the option's number range says, as libcurl
// itself reads it (lib/setopt.c): long, a data or function pointer, curl_off_t, or a
// struct curl_blob pointer. Passed on as that type.
CURLcode curl_easy_setopt(CURL* c, CURLoption option, ...) {
  static auto f = Fn<decltype(&curl_easy_setopt)>("curl_easy_setopt");
  va_list ap;
  va_start(ap, option);
  CURLcode rc;
  if (option < CURLOPTTYPE_OBJECTPOINT) {
    rc = f(c, option, va_arg(ap, long));
  } else if (option >= CURLOPTTYPE_OFF_T && option < CURLOPTTYPE_BLOB) {
    rc = f(c, option, va_arg(ap, curl_off_t));
  } else {
    rc = f(c, option, va_arg(ap, void*));  // object, function (same size on POSIX) and blob
  }
  va_end(ap);
  return rc;
}

// Every CURLINFO_* takes a pointer to where the answer goes.
CURLcode curl_easy_getinfo(CURL* c, CURLINFO info, ...) {
  static auto f = Fn<decltype(&curl_easy_getinfo)>("curl_easy_getinfo");
  va_list ap;
  va_start(ap, info);
  void* out = va_arg(ap, void*);
  va_end(ap);
  return f(c, info, out);
}

}  // extern "C"

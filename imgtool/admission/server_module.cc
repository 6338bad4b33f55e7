// ParseListen and Serve (server.h) as imgtool itself holds them: Serve loads the module
// that holds the HTTPS server (server_module.h) and calls it.
#include <unistd.h>

#include <climits>
#include <string>

#include "admission/server_module.h"
#include "fs/safe_open.h"
#include "fs/shared_library.h"

namespace imgtool::admission {

namespace {

constexpr const char* kModule = "imgtool-admission-server.so";

// ../libexec/imgtool/ from the binary's folder (installed), else its own folder (a build).
std::string ModulePath() {
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string(".");
  dir = dir.substr(0, dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
  std::string installed = dir + "/../libexec/imgtool/" + kModule;
  if (::access(installed.c_str(), F_OK) == 0) return installed;
  return dir + "/" + kModule;
}

}  // namespace

Status ParseListen(const std::string& text, ServerOptions& out) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos) return MakeError(ErrorKind::kInvalidInput, "--listen '" + text + "': want HOST:PORT");
  std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535) {
    return MakeError(ErrorKind::kInvalidInput, "--listen '" + text + "': port '" + port + "' is not a number");
  }
  out.host = host.empty() ? "0.0.0.0" : host;
  out.port = std::stoi(port);
  return Status::Ok();
}

Status Serve(const ServerOptions& o, const Handler& handler, const std::function<void()>& on_listening) {
  // httplib hands the paths to OpenSSL, whose open would wait forever on a FIFO.
  for (const std::string* path : {&o.tls_cert, &o.tls_key}) {
    auto fd = fs::OpenRegular(*path);
    if (!fd.ok()) return fd.error();
  }
  static const std::string path = ModulePath();
  static fs::SharedLibrary module(path.c_str());
  IMGTOOL_TRY(module.Load());
  auto serve = fs::Resolve<ImgtoolAdmissionServe>(module, "imgtool_admission_serve");
  Status out;
  serve(&o, &handler, &on_listening, &out);
  return out;
}

}  // namespace imgtool::admission

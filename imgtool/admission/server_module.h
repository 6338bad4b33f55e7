// `Serve` (server.h) runs in a module of its own, imgtool-admission-server.so, that imgtool
// loads only for `admission serve`: the HTTPS server is the one user of cpp-httplib, which
// with brotli (libbrotlienc, libbrotlidec, libbrotlicommon) cost every imgtool process
// ~0.9 ms of loading before main. server_module.cc finds the module (libexec/imgtool/
// beside the installed bin/, else beside the binary: the build tree) and calls its one
// entry, imgtool_admission_serve; the module links cpp-httplib, and finds the one imgtool
// function it calls back (CertificateStore::Install) among the few imgtool exports
// (server_module.list, imgtool's --dynamic-list).
#pragma once

#include <functional>

#include "admission/server.h"
#include "oci/result.h"

extern "C" {
using ImgtoolAdmissionServe = void (*)(const imgtool::admission::ServerOptions*, const imgtool::admission::Handler*,
                                       const std::function<void()>*, imgtool::Status*);
}

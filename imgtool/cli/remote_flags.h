// Flags every verb that can reach a registry shares (skopeo's names: --creds,
// --authfile, --cert-dir, --tls-verify), and the progress display of transfers.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "oci/result.h"
#include "remote/registry.h"
#include "transport/write.h"

namespace imgtool::cli {

struct RemoteFlags {
  std::string creds;  // USER:PASS
  std::string authfile;
  std::string cert_dir;
  bool tls_verify = true;
  bool debug = false;
};

// Adds --creds, --authfile, --cert-dir, --tls-verify, --debug; `prefix` ("src-",
// "dest-") names one side of a copy. Without a prefix also the --help footer on timeouts.
void AddRemoteFlags(CLI::App* cmd, RemoteFlags& f, const std::string& prefix = "");
// The $IMGTOOL_*_TIMEOUT variables and their defaults (remote::NetTimeouts), for --help.
std::string TimeoutsHelp();
remote::RegistryOptions ToRegistryOptions(const RemoteFlags& f);

// Per-blob progress: bars redrawn in place on a terminal (bytes, rate, ETA), one
// line per finished blob otherwise, nothing with --quiet. Thread-safe.
class TransferProgress {
 public:
  TransferProgress(bool quiet, const std::string& verb);
  void OnBlob(const transport::BlobEvent& e);

 private:
  struct Bar {
    int64_t size = 0;
    uint64_t done = 0;
    std::string media_type;
    std::chrono::steady_clock::time_point start;
  };
  void Redraw(bool force);
  std::string Line(const std::string& digest, const Bar& b) const;

  bool quiet_;
  bool tty_;
  std::string verb_;
  std::mutex mu_;
  std::map<std::string, Bar> active_;
  size_t drawn_ = 0;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace imgtool::cli

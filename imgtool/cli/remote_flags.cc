#include "cli/remote_flags.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "cli/output.h"

namespace imgtool::cli {

void AddRemoteFlags(CLI::App* cmd, RemoteFlags& f, const std::string& prefix) {
  cmd->add_option("--" + prefix + "creds", f.creds, "USER:PASSWORD for the registry (never printed)");
  cmd->add_option("--" + prefix + "authfile", f.authfile,
                  "Auth file: auths, credHelpers, credsStore (default: $REGISTRY_AUTH_FILE, ~/.docker/config.json)");
  cmd->add_option("--" + prefix + "cert-dir", f.cert_dir,
                  "Folder with ca.crt (and client.cert/client.key) for the registry's TLS");
  cmd->add_option("--" + prefix + "tls-verify", f.tls_verify,
                  "Check the registry's certificate (false also allows plain HTTP)")
      ->default_str("true");
  if (prefix.empty()) {
    cmd->add_flag("--debug", f.debug, "Print every request to stderr (secrets removed)");
    cmd->footer(TimeoutsHelp());
  }
}

std::string TimeoutsHelp() {
  const remote::NetTimeouts d;
  return "Network timeouts, whole seconds from the environment (every connection has them):\n"
         "  $IMGTOOL_CONNECT_TIMEOUT  connecting, TLS handshake included (default " +
         std::to_string(d.connect_s) +
         ")\n"
         "  $IMGTOOL_STALL_TIMEOUT    less than " +
         std::to_string(remote::kLowSpeedBytesPerSec) + " bytes/s for this long ends a transfer (default " +
         std::to_string(d.stall_s) +
         ")\n"
         "  $IMGTOOL_REQUEST_TIMEOUT  a whole small request: /v2/, token, manifest, HEAD (default " +
         std::to_string(d.request_s) + ")";
}

remote::RegistryOptions ToRegistryOptions(const RemoteFlags& f) {
  remote::RegistryOptions o;
  o.auth.creds = f.creds;
  o.auth.authfile = f.authfile;
  o.cert_dir = f.cert_dir;
  o.tls_verify = f.tls_verify;
  if (f.debug) {
    static std::mutex mu;
    o.debug = [](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      PrintLine("debug: ", line);
    };
  }
  return o;
}

TransferProgress::TransferProgress(bool quiet, const std::string& verb)
    : quiet_(quiet), tty_(::isatty(STDERR_FILENO) == 1), verb_(verb) {}

std::string TransferProgress::Line(const std::string& digest, const Bar& b) const {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - b.start).count();
  double rate = secs > 0 ? static_cast<double>(b.done) / secs : 0;
  int width = 24;
  int filled = b.size > 0 ? static_cast<int>(width * static_cast<double>(b.done) / static_cast<double>(b.size)) : 0;
  std::string bar = "[" + std::string(static_cast<size_t>(std::min(filled, width)), '=') +
                    std::string(static_cast<size_t>(width - std::min(filled, width)), ' ') + "]";
  char eta[32] = "";
  if (rate > 0 && b.size > 0) {
    snprintf(eta, sizeof eta, "ETA %.0fs", (static_cast<double>(b.size) - static_cast<double>(b.done)) / rate);
  }
  return digest.substr(0, 19) + " " + bar + " " + HumanBytes(b.done) + " / " +
         HumanBytes(static_cast<uint64_t>(b.size)) + "  " + HumanBytes(static_cast<uint64_t>(rate)) + "/s  " + eta;
}

void TransferProgress::Redraw(bool force) {
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  // Move up over the bars drawn last time and draw the current set.
  if (drawn_ > 0) std::cerr << "\x1b[" << drawn_ << "A\x1b[J";
  for (const auto& [d, b] : active_) std::cerr << Line(d, b) << "\n";
  drawn_ = active_.size();
  std::cerr.flush();
}

void TransferProgress::OnBlob(const transport::BlobEvent& e) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mu_);
  std::string d = e.digest.str();
  switch (e.kind) {
    case transport::BlobEvent::Kind::kStart:
      active_[d] = Bar{e.size, 0, e.media_type, std::chrono::steady_clock::now()};
      if (tty_) Redraw(true);
      break;
    case transport::BlobEvent::Kind::kProgress:
      active_[d].done = e.done;
      if (tty_) Redraw(false);
      break;
    case transport::BlobEvent::Kind::kDone: {
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - active_[d].start).count();
      active_.erase(d);
      // On a terminal the finished line replaces the bars, which are drawn again below it.
      if (tty_ && drawn_ > 0) std::cerr << "\x1b[" << drawn_ << "A\x1b[J";
      drawn_ = 0;
      char t[32];
      snprintf(t, sizeof t, "%.1f s", secs);
      std::cerr << verb_ << " blob " << d.substr(0, 19) << " " << HumanBytes(static_cast<uint64_t>(e.size)) << " "
                << e.action << " (" << t << ")\n";
      if (tty_) Redraw(true);
      break;
    }
  }
}

}  // namespace imgtool::cli

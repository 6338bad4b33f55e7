// The server's TLS certificate and key, swapped without a restart: the pair is loaded
// from PEM into memory, checked (the key must match the certificate) and held as an
// immutable shared object; OpenSSL's certificate callback (SSL_CTX_set_cert_cb) hands
// each new handshake the pair current at that moment. Connections already up keep the
// session they have. A broken new pair (unparsable, or a key that does not match, as
// while a cert and key are replaced one after the other) keeps the old one.
//
// Not here: the polling thread, logging or metrics (cmd_admission.cc).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "admission/file_watch.h"
#include "oci/result.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace imgtool::admission {

struct KeyPair;  // OpenSSL objects, freed with the last handshake that uses them

class CertificateStore {
 public:
  CertificateStore(std::string cert_path, std::string key_path);
  ~CertificateStore();
  // Loads the pair now (the first time: an error stops the server).
  Status Load();
  // Reloads when either file's bytes changed: true when a new pair was swapped in, false
  // when nothing changed, an error (the old pair stays) when the new one is broken. A file
  // that cannot be read is an error once, then no change until the error differs.
  Result<bool> ReloadChanged();
  // From now on every handshake on `ctx` presents the current pair. The store outlives ctx.
  void Install(SSL_CTX* ctx);
  // The current certificate's serial number, hex (for logs).
  std::string Serial() const;

  std::shared_ptr<const KeyPair> Current() const;

 private:
  Result<std::shared_ptr<const KeyPair>> Parse(const std::string& cert_pem, const std::string& key_pem) const;

  WatchedFile cert_, key_;
  std::string cert_pem_, key_pem_;  // the last bytes seen (one file may change alone)
  std::string unreadable_;          // the last stat/read error reported: said once
  mutable std::mutex mu_;
  std::shared_ptr<const KeyPair> current_;
};

}  // namespace imgtool::admission

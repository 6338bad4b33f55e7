// A client for one registry host speaking the OCI distribution API: ping and scheme
// choice, auth on 401, retries with backoff, and the small calls (manifests, tags,
// blob existence, mounts, downloads). Uploads live in upload.h.
//
// Thread-safe: each call borrows a libcurl handle from a pool, and the Authorizer is
// shared, so transfer threads use one Registry.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "oci/digest.h"
#include "oci/manifest.h"
#include "oci/result.h"
#include "remote/authorizer.h"
#include "remote/credentials.h"
#include "remote/http.h"

namespace imgtool::remote {

struct RegistryOptions {
  AuthOptions auth;
  bool tls_verify = true;  // false: no certificate checks, and plain HTTP allowed
  std::string cert_dir;    // ca.crt, client.cert, client.key; default /etc/containers/certs.d/HOST
  int max_attempts = 5;
  double backoff_seconds = 0.5;                   // first pause; doubles up to 8 s
  uint64_t limit_rate = 0;                        // bytes/s per upload request, 0 = unlimited
  std::optional<NetTimeouts> timeouts;            // unset: NetTimeoutsFromEnv()
  std::function<void(const std::string&)> debug;  // lines with secrets removed
};

// Manifests the client asks for (every form a registry may hold for an image).
extern const char* const kManifestAccept;

struct RawManifest {
  std::string bytes;       // exactly as served: its sha256 is the digest
  std::string media_type;  // from the body's mediaType, else Content-Type
  oci::Digest digest;
};

class Registry {
 public:
  // Pings https://API_HOST/v2/ (falling back to http:// only for localhost or with
  // tls_verify off) and returns a ready client. kInvalidInput for a malformed
  // $IMGTOOL_*_TIMEOUT when opts.timeouts is unset.
  static Result<std::shared_ptr<Registry>> Connect(const std::string& host, const RegistryOptions& opts);

  // The canonical name ("docker.io"): for messages, credentials and certs.d.
  const std::string& host() const { return host_; }
  // Where requests go: Docker Hub's API is not at its canonical name (ref::RegistryApiHost).
  const std::string& api_host() const { return api_host_; }
  std::string base_url() const { return scheme_ + "://" + api_host_; }
  const RegistryOptions& options() const { return opts_; }

  // One exchange with auth and retries. Returns any HTTP status; transport errors
  // and exhausted retries are errors (`net`, when given, says which). Requests with a
  // sink are not retried here. Credentials go only to the registry's own origin: a URL
  // elsewhere (an upload Location on storage, a Link) is asked without them, and its
  // 401 is reported, never answered (its challenge could name any token realm).
  Result<HttpResponse> Do(HttpRequest req, const std::vector<std::string>& scopes, const std::string& what,
                          NetError* net = nullptr);
  // Whether `url` is on this registry's origin (scheme, host, port): the only one that
  // gets its Authorization header.
  bool SameOrigin(const std::string& url) const;

  // Size of the blob when the repository has it.
  Result<std::optional<int64_t>> HeadBlob(const std::string& repo, const oci::Digest& d, bool push_scope);
  Result<RawManifest> GetManifest(const std::string& repo, const std::string& tag_or_digest);
  // The digest a tag points at (HEAD, falling back to GET and hashing).
  Result<oci::Digest> ResolveDigest(const std::string& repo, const std::string& tag);
  Status PutManifest(const std::string& repo, const std::string& tag_or_digest, const RawManifest& m);
  Result<std::vector<std::string>> ListTags(const std::string& repo);
  // The OCI 1.1 referrers API: the index of manifests about `subject` (asked filtered by
  // `artifact_type` when not empty; the caller filters again, a registry may not);
  // nullopt when the registry does not have the API (404).
  Result<std::optional<oci::Index>> Referrers(const std::string& repo, const oci::Digest& subject,
                                              const std::string& artifact_type);
  // Cross-repository mount: true when the registry linked the blob (201).
  Result<bool> MountBlob(const std::string& repo, const std::string& from_repo, const oci::Digest& d);
  // Pool of curl handles, one per concurrent call.
  std::unique_ptr<HttpClient> Acquire();
  void Release(std::unique_ptr<HttpClient> c);
  void SleepBackoff(int attempt, double retry_after) const;

 private:
  Registry(std::string host, RegistryOptions opts, std::optional<Credentials> creds);
  Status Ping();

  std::string host_;
  std::string api_host_;
  std::string scheme_ = "https";
  RegistryOptions opts_;
  NetTimeouts timeouts_;
  TlsOptions tls_;
  Authorizer auth_;
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<HttpClient>> pool_;
};

// host without port is localhost / 127.0.0.1 / ::1: plain HTTP allowed there.
bool IsLocalhost(const std::string& host);

}  // namespace imgtool::remote

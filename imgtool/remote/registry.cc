#include "remote/registry.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "fs/atomic_file.h"
#include "oci/list_limit.h"
#include "ref/docker_name.h"
#include "ref/url.h"
#include "remote/registry_error.h"
#include "remote/response.h"

namespace imgtool::remote {

const char* const kManifestAccept =
    "Accept: application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.v2+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json";

namespace {

constexpr size_t kMaxManifestBytes = 8 << 20;

// containers' certs.d: ca.crt (any *.crt), client.cert + client.key.
TlsOptions TlsFromCertDir(const std::string& dir, bool verify) {
  TlsOptions t;
  t.verify = verify;
  if (dir.empty()) return t;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return t;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    // libcurl opens what it is given and would wait on a FIFO: regular files only.
    struct stat st {};
    if (::stat((dir + "/" + e->d_name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  auto ends = [](const std::string& s, const std::string& suf) {
    return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
  };
  for (const auto& n : names) {
    if (n == "ca.crt" || (t.ca_file.empty() && ends(n, ".crt"))) t.ca_file = dir + "/" + n;
    if (ends(n, ".cert") && std::binary_search(names.begin(), names.end(), n.substr(0, n.size() - 5) + ".key")) {
      t.client_cert = dir + "/" + n;
      t.client_key = dir + "/" + n.substr(0, n.size() - 5) + ".key";
    }
  }
  return t;
}

}  // namespace

bool IsLocalhost(const std::string& host) {
  std::string h = host;
  if (!h.empty() && h[0] == '[') {
    h = h.substr(1, h.find(']') - 1);
  } else if (std::count(h.begin(), h.end(), ':') == 1) {
    h = h.substr(0, h.find(':'));
  }
  return h == "localhost" || h == "127.0.0.1" || h == "::1";
}

Registry::Registry(std::string host, RegistryOptions opts, std::optional<Credentials> creds)
    : host_(std::move(host)),
      api_host_(ref::RegistryApiHost(host_)),
      opts_(std::move(opts)),
      timeouts_(opts_.timeouts.value_or(NetTimeouts{})),
      auth_(std::move(creds)) {
  std::string dir = opts_.cert_dir;
  if (dir.empty()) {
    for (const char* base : {"/etc/containers/certs.d/", "/etc/docker/certs.d/"}) {
      if (fs::Exists(base + host_)) {
        dir = base + host_;
        break;
      }
    }
  }
  tls_ = TlsFromCertDir(dir, opts_.tls_verify);
}

Result<std::shared_ptr<Registry>> Registry::Connect(const std::string& host, const RegistryOptions& opts) {
  RegistryOptions resolved = opts;
  if (!resolved.timeouts) {
    auto t = NetTimeoutsFromEnv();
    if (!t.ok()) return t.error();
    resolved.timeouts = *t;
  }
  auto creds = LookupCredentials(host, opts.auth);
  if (!creds.ok()) return creds.error();
  if (opts.debug) opts.debug("credentials for " + host + ": " + (*creds ? (*creds)->source : "none (anonymous)"));
  std::shared_ptr<Registry> r(new Registry(host, resolved, *creds));
  IMGTOOL_TRY(r->Ping());
  return r;
}

std::unique_ptr<HttpClient> Registry::Acquire() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!pool_.empty()) {
      auto c = std::move(pool_.back());
      pool_.pop_back();
      return c;
    }
  }
  auto c = std::make_unique<HttpClient>();
  c->set_tls(tls_);
  c->set_timeouts(timeouts_);
  if (opts_.debug) c->set_debug(opts_.debug);
  return c;
}

void Registry::Release(std::unique_ptr<HttpClient> c) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  pool_.push_back(std::move(c));
}

void Registry::SleepBackoff(int attempt, double retry_after) const {
  double s = retry_after >= 0 ? std::min(retry_after, 30.0)
                              : std::min(8.0, opts_.backoff_seconds * std::pow(2.0, attempt - 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(s * 1000)));
}

Status Registry::Ping() {
  bool http_ok = !opts_.tls_verify || IsLocalhost(host_);
  HttpRequest req;
  req.url = "https://" + api_host_ + "/v2/";
  auto http = Acquire();
  NetError net;
  auto resp = http->Send(req, &net);
  if (!resp.ok() && net.tls_protocol && http_ok) {
    // The port speaks plain HTTP; skopeo allows that for localhost and --tls-verify=false.
    scheme_ = "http";
    req.url = "http://" + api_host_ + "/v2/";
    resp = http->Send(req, &net);
  }
  Release(std::move(http));
  // No exchange happened (libcurl could not be loaded): that error as it is, exit 70.
  if (!resp.ok() && net.curl_code == 0 && net.message.empty()) return resp.error().Context("registry " + host_);
  if (!resp.ok()) {
    std::string hint;
    if (net.tls_verify) hint = " (pass --cert-dir with the registry's ca.crt, or --tls-verify=false)";
    if (net.tls_protocol && !http_ok) hint = " (plain HTTP is used only for localhost or with --tls-verify=false)";
    std::string where = api_host_ == host_ ? host_ : host_ + " (" + api_host_ + ")";
    return MakeError(ErrorKind::kTransport, "registry " + where + ": " + net.message + hint);
  }
  if (resp->status != 200 && resp->status != 401) return ErrorFromResponse(*resp, "registry " + host_);
  return Status::Ok();
}

bool Registry::SameOrigin(const std::string& url) const {
  std::string origin = ref::OriginOf(url);
  return !origin.empty() && origin == ref::OriginOf(base_url());
}

Result<HttpResponse> Registry::Do(HttpRequest req, const std::vector<std::string>& scopes, const std::string& what,
                                  NetError* net_out) {
  const bool ours = SameOrigin(req.url);
  bool answered = !ours;
  if (opts_.limit_rate) req.max_send_bytes_per_sec = opts_.limit_rate;
  for (int attempt = 1;;) {
    HttpRequest r = req;
    std::string header = ours ? auth_.HeaderFor(scopes) : "";
    if (!header.empty()) r.headers.push_back(header);
    auto http = Acquire();
    NetError net;
    auto resp = http->Send(r, &net);
    if (!resp.ok()) {
      Release(std::move(http));
      if (net.retryable && !req.sink && attempt < opts_.max_attempts) {
        SleepBackoff(attempt++, -1);
        continue;
      }
      if (net_out) *net_out = net;
      return resp.error().Context(what);
    }
    if (resp->status == 401 && !answered) {
      answered = true;
      std::string before = auth_.HeaderFor(scopes);
      Status st = auth_.Answer(*http, *resp, scopes);
      Release(std::move(http));
      if (!st.ok()) return st.error().Context(what);
      // Nothing new to offer (anonymous, or the same Basic credentials): report the 401.
      if (auth_.HeaderFor(scopes).empty() || (auth_.HeaderFor(scopes) == before && before == header)) return resp;
      continue;
    }
    Release(std::move(http));
    if (IsTemporaryStatus(resp->status) && attempt < opts_.max_attempts) {
      SleepBackoff(attempt++, RetryAfterSeconds(*resp));
      continue;
    }
    return resp;
  }
}

Result<std::optional<int64_t>> Registry::HeadBlob(const std::string& repo, const oci::Digest& d, bool push_scope) {
  HttpRequest req;
  req.method = "HEAD";
  req.url = base_url() + "/v2/" + repo + "/blobs/" + d.str();
  std::string what = (push_scope ? "pushing blob " : "checking blob ") + d.str();
  auto resp = Do(req, {RepoScope(repo, push_scope)}, what);
  if (!resp.ok()) return resp.error();
  if (resp->status == 404) return std::optional<int64_t>();
  if (resp->status != 200) return ErrorFromResponse(*resp, what);
  return std::optional<int64_t>(ContentLength(resp->Header("content-length")));
}

Result<RawManifest> Registry::GetManifest(const std::string& repo, const std::string& ref) {
  HttpRequest req;
  req.url = base_url() + "/v2/" + repo + "/manifests/" + ref;
  req.headers.emplace_back(kManifestAccept);
  req.max_body = kMaxManifestBytes;
  std::string what = "manifest " + host_ + "/" + repo + ":" + ref;
  auto resp = Do(req, {RepoScope(repo, false)}, "fetching " + what);
  if (!resp.ok()) return resp.error();
  if (resp->status != 200) return ErrorFromResponse(*resp, "fetching " + what);
  RawManifest m;
  m.bytes = std::move(resp->body);
  m.digest = oci::Digest::Of(m.bytes);
  m.media_type = ManifestMediaType(m.bytes, resp->Header("content-type"));
  if (ref.rfind("sha256:", 0) == 0 && m.digest.str() != ref) {
    return MakeError(ErrorKind::kIntegrity, what + ": content hashes to " + m.digest.str());
  }
  return m;
}

Result<oci::Digest> Registry::ResolveDigest(const std::string& repo, const std::string& tag) {
  HttpRequest req;
  req.method = "HEAD";
  req.url = base_url() + "/v2/" + repo + "/manifests/" + tag;
  req.headers.emplace_back(kManifestAccept);
  std::string what = "resolving " + host_ + "/" + repo + ":" + tag;
  auto resp = Do(req, {RepoScope(repo, false)}, what);
  if (!resp.ok()) return resp.error();
  if (resp->status == 200) {
    auto d = oci::Digest::Parse(resp->Header("docker-content-digest"));
    if (d.ok()) return *d;
  } else if (resp->status != 405) {
    return ErrorFromResponse(*resp, what);
  }
  auto m = GetManifest(repo, tag);
  if (!m.ok()) return m.error();
  return m->digest;
}

Status Registry::PutManifest(const std::string& repo, const std::string& ref, const RawManifest& m) {
  HttpRequest req;
  req.method = "PUT";
  req.url = base_url() + "/v2/" + repo + "/manifests/" + ref;
  req.headers.push_back("Content-Type: " + m.media_type);
  req.body = m.bytes;
  req.has_body = true;
  std::string what = "pushing manifest " + m.digest.Short() + " to " + host_ + "/" + repo + ":" + ref;
  auto resp = Do(req, {RepoScope(repo, true)}, what);
  if (!resp.ok()) return resp.error();
  if (resp->status != 201 && resp->status != 200) return ErrorFromResponse(*resp, what);
  std::string got = resp->Header("docker-content-digest");
  if (!got.empty() && got != m.digest.str()) {
    return MakeError(ErrorKind::kIntegrity, what + ": registry stored it as " + got);
  }
  return Status::Ok();
}

Result<std::vector<std::string>> Registry::ListTags(const std::string& repo) {
  std::vector<std::string> tags;
  std::string url = base_url() + "/v2/" + repo + "/tags/list";
  for (size_t page = 0; !url.empty(); ++page) {
    // The registry's Link headers decide how many pages there are: capped, not cut short.
    IMGTOOL_TRY(oci::CheckListLength(page + 1, "listing tags of " + host_ + "/" + repo, "pages"));
    HttpRequest req;
    req.url = url;
    auto resp = Do(req, {RepoScope(repo, false)}, "listing tags of " + host_ + "/" + repo);
    if (!resp.ok()) return resp.error();
    if (resp->status != 200) return ErrorFromResponse(*resp, "listing tags of " + host_ + "/" + repo);
    for (auto& t : TagsFromBody(resp->body)) tags.push_back(std::move(t));
    url = NextPageUrl(resp->Header("link"), base_url());
  }
  std::sort(tags.begin(), tags.end());
  return tags;
}

Result<std::optional<oci::Index>> Registry::Referrers(const std::string& repo, const oci::Digest& subject,
                                                      const std::string& artifact_type) {
  HttpRequest req;
  req.url = base_url() + "/v2/" + repo + "/referrers/" + subject.str();
  if (!artifact_type.empty()) req.url += "?artifactType=" + UrlEncode(artifact_type);
  req.headers.emplace_back("Accept: application/vnd.oci.image.index.v1+json");
  req.max_body = kMaxManifestBytes;
  std::string what = "listing referrers of " + host_ + "/" + repo + "@" + subject.Short();
  auto resp = Do(req, {RepoScope(repo, false)}, what);
  if (!resp.ok()) return resp.error();
  if (resp->status == 404) return std::optional<oci::Index>();
  if (resp->status != 200) return ErrorFromResponse(*resp, what);
  auto index = oci::ParseIndex(resp->body, what);
  if (!index.ok()) return index.error();
  return std::optional<oci::Index>(std::move(*index));
}

Result<bool> Registry::MountBlob(const std::string& repo, const std::string& from_repo, const oci::Digest& d) {
  HttpRequest req;
  req.method = "POST";
  req.url = base_url() + "/v2/" + repo + "/blobs/uploads/?mount=" + d.str() + "&from=" + UrlEncode(from_repo);
  std::string what = "mounting blob " + d.Short() + " from " + from_repo;
  auto resp = Do(req, {RepoScope(repo, true), RepoScope(from_repo, false)}, what);
  if (!resp.ok()) return resp.error();
  if (resp->status == 201) return true;
  if (resp->status == 202) {
    // The registry started an ordinary upload instead; cancel it, the caller uploads.
    std::string loc = resp->Header("location");
    if (!loc.empty()) {
      HttpRequest del;
      del.method = "DELETE";
      del.url = loc.rfind("http", 0) == 0 ? loc : base_url() + loc;
      (void)Do(del, {RepoScope(repo, true)}, what);
    }
    return false;
  }
  return ErrorFromResponse(*resp, what);
}

}  // namespace imgtool::remote

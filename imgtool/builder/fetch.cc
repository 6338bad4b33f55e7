#include "builder/fetch.h"

#include <curl/curl.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "builder/layer_cache.h"
#include "fs/atomic_file.h"
#include "fs/hashed_file.h"
#include "fs/safe_open.h"
#include "oci/human_bytes.h"
#include "ref/url.h"
#include "remote/curl_library.h"
#include "remote/stall_watch.h"

namespace imgtool::build {

namespace {

using Clock = std::chrono::steady_clock;

struct Download {
  fs::AtomicFile file;
  oci::Sha256 hash;
  uint64_t max_bytes = 0;
  Status failure = Status::Ok();
  const FetchOptions* options = nullptr;
  std::string label;
  Clock::time_point last_report = Clock::now();
  CURL* curl = nullptr;
  long stall_s = 0;
  std::optional<remote::StallWatch> stall;  // from the first moment the connection is there
  bool stalled = false;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* d = static_cast<Download*>(user);
  size_t len = size * n;
  if (d->hash.bytes() + len > d->max_bytes) {
    d->failure = MakeError(ErrorKind::kIntegrity, d->label + ": more than " + HumanBytes(d->max_bytes) + "; refused");
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  d->hash.Update(data, len);
  Status s = d->file.Write(data, len);
  if (!s.ok()) {
    d->failure = s;
    return 0;
  }
  return len;
}

// The stall bound as the registry client keeps it (remote/stall_watch.h): `stall_s`
// after the last bytes, not curl's own low-speed window.
bool Stalled(Download& d, curl_off_t now) {
  if (!d.stall) {
    curl_off_t pretransfer = 0;
    curl_easy_getinfo(d.curl, CURLINFO_PRETRANSFER_TIME_T, &pretransfer);
    if (pretransfer == 0) return false;
    d.stall.emplace(std::chrono::seconds(d.stall_s), remote::kLowSpeedBytesPerSec);
  }
  return d.stalled = d.stall->Stalled(static_cast<uint64_t>(now), Clock::now());
}

int OnProgress(void* user, curl_off_t total, curl_off_t now, curl_off_t, curl_off_t) {
  auto* d = static_cast<Download*>(user);
  if (Stalled(*d, now)) return 1;  // CURLE_ABORTED_BY_CALLBACK
  if (!d->options->progress || Clock::now() - d->last_report < std::chrono::seconds(1)) return 0;
  d->last_report = Clock::now();
  std::string line = d->label + ": " + HumanBytes(static_cast<uint64_t>(now));
  if (total > 0) line += " of " + HumanBytes(static_cast<uint64_t>(total));
  d->options->progress(line);
  return 0;
}

Status Get(const std::string& url, const remote::NetTimeouts& t, Download& d) {
  IMGTOOL_TRY(remote::LoadCurl());
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  CURL* c = curl_easy_init();
  if (c == nullptr) return MakeError(ErrorKind::kInternal, "libcurl: cannot create a handle");
  char message[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, message);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);  // an HTTP error status is an error, not a body
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https,file");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");  // a server never redirects to file://
  curl_easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);              // the URL's credentials stay with its host
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, t.connect_s);
  d.curl = c;
  d.stall_s = t.stall_s;
  curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 512L * 1024);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "imgtool/" IMGTOOL_VERSION);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &d);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &d);
  CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  if (!d.failure.ok()) return d.failure;
  if (rc != CURLE_OK) {
    std::string why = message[0] ? message : curl_easy_strerror(rc);
    if (rc == CURLE_OPERATION_TIMEDOUT) why += " ($IMGTOOL_CONNECT_TIMEOUT)";
    if (d.stalled) {
      why = "stalled: less than " + std::to_string(remote::kLowSpeedBytesPerSec) + " bytes/s for " +
            std::to_string(t.stall_s) + " s ($IMGTOOL_STALL_TIMEOUT)";
    }
    ErrorKind kind = rc == CURLE_HTTP_RETURNED_ERROR && status == 404 ? ErrorKind::kNotFound : ErrorKind::kTransport;
    return MakeError(kind, d.label + ": " + why);
  }
  return Status::Ok();
}

}  // namespace

bool IsPackageUrl(const std::string& src) {
  for (const char* scheme : {"http://", "https://", "file://"}) {
    if (src.rfind(scheme, 0) == 0) return true;
  }
  return false;
}

Status FetchPackageUrls(Spec& spec, const FetchOptions& options) {
  for (auto& layer : spec.layers) {
    for (auto& p : layer.packages) {
      if (p.url.empty()) continue;
      auto f = FetchPinned(p.url, p.sha256, options);
      if (!f.ok()) return f.error().Context(p.where + ".src");
      p.src = f->path;
      p.fetched = f->file;
    }
  }
  return Status::Ok();
}

std::string DefaultDownloadDir() {
  std::string base = LayerCache::DefaultDir();
  return base.empty() ? "" : base + "/downloads";
}

Result<Fetched> FetchPinned(const std::string& url, const oci::Digest& sha256, const FetchOptions& options) {
  if (options.cache_dir.empty()) {
    return MakeError(ErrorKind::kInvalidInput, "fetching " + ref::WithoutUserinfo(url) +
                                                   ": no download folder (set IMGTOOL_CACHE or HOME, or --cache-dir)");
  }
  const std::string dir = options.cache_dir + "/sha256";
  Fetched out;
  out.path = dir + "/" + sha256.hex();
  if (fs::Exists(out.path)) {
    // Hashed again (a damaged cache must not linger), opened without following: a
    // symlink, FIFO or folder there is removed and fetched over. What is hashed is what
    // the caller reads (Fetched::file), never this name again.
    auto fd = fs::OpenRegularBeneath(options.cache_dir, "sha256/" + sha256.hex());
    auto hashed = fd.ok() ? fs::HashedFile::Hash(std::move(*fd), options.cache_dir, out.path)
                          : Result<std::shared_ptr<const fs::HashedFile>>(fd.error());
    if (hashed.ok() && (*hashed)->digest().digest == sha256) {
      out.size = (*hashed)->digest().size;
      out.cached = true;
      out.file = *hashed;
      return out;
    }
    // rename(2) cannot replace a folder: anything there that is not the package is junk.
    struct stat there {};
    if (::lstat(out.path.c_str(), &there) == 0 && S_ISDIR(there.st_mode)) {
      (void)fs::RemoveTree(out.path);
    } else {
      (void)std::remove(out.path.c_str());
    }
  }
  auto timeouts = options.timeouts ? Result<remote::NetTimeouts>(*options.timeouts) : remote::NetTimeoutsFromEnv();
  if (!timeouts.ok()) return timeouts.error();
  IMGTOOL_TRY(fs::MakeDirs(dir));
  Download d;
  d.options = &options;
  d.max_bytes = options.max_bytes;
  d.label = "fetching " + ref::WithoutUserinfo(url);
  IMGTOOL_TRY(d.file.Open(out.path));
  IMGTOOL_TRY(Get(url, *timeouts, d));
  const uint64_t size = d.hash.bytes();
  oci::Digest got = d.hash.Finish();
  if (got != sha256) {
    d.file.Abort();
    return MakeError(ErrorKind::kIntegrity, ref::WithoutUserinfo(url) + ": the spec pins " + sha256.str() +
                                                " but the download is " + got.str() + " (" + HumanBytes(size) +
                                                "); discarded");
  }
  out.size = size;
  // Handed on by its descriptor: the bytes just hashed, whatever the name holds later.
  auto back = d.file.ReadBack();
  if (!back.ok()) return back.error();
  IMGTOOL_TRY(d.file.Commit());
  auto written = fs::HashedFile::Written(std::move(*back), {got, size}, options.cache_dir, out.path);
  if (!written.ok()) return written.error();
  out.file = *written;
  if (options.progress) options.progress(d.label + ": " + HumanBytes(out.size) + ", " + sha256.Short());
  return out;
}

}  // namespace imgtool::build

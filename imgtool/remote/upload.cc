#include "remote/upload.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "fs/atomic_file.h"
#include "oci/canonical_json.h"
#include "remote/registry_error.h"

namespace imgtool::remote {

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string Absolute(const Registry& reg, const std::string& location) {
  if (location.rfind("http://", 0) == 0 || location.rfind("https://", 0) == 0) return location;
  return reg.base_url() + location;
}

std::string WithQuery(const std::string& url, const std::string& kv) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + kv;
}

// Starts a session: POST .../blobs/uploads/ -> 202 + Location.
Result<std::string> StartSession(Registry& reg, const std::string& repo, const std::string& what) {
  HttpRequest req;
  req.method = "POST";
  req.url = reg.base_url() + "/v2/" + repo + "/blobs/uploads/";
  auto resp = reg.Do(req, {RepoScope(repo, true)}, what);
  if (!resp.ok()) return resp.error();
  if (resp->status != 202) return ErrorFromResponse(*resp, what);
  std::string loc = resp->Header("location");
  if (loc.empty()) return MakeError(ErrorKind::kTransport, what + ": registry gave no upload location");
  return Absolute(reg, loc);
}

// Where a saved session stands: GET -> 204 with "Range: 0-N". nullopt when the
// registry no longer knows it or refuses it (it then starts over).
Result<std::optional<UploadSession>> QuerySession(Registry& reg, const std::string& repo, const UploadSession& s,
                                                  const std::string& what) {
  HttpRequest req;
  req.url = s.location;
  auto resp = reg.Do(req, {RepoScope(repo, true)}, what);
  if (!resp.ok()) return resp.error();
  if (resp->status == 401 || resp->status == 403) return ErrorFromResponse(*resp, what);
  if (resp->status != 204) return std::optional<UploadSession>();
  UploadSession now;
  now.location = resp->Header("location").empty() ? s.location : Absolute(reg, resp->Header("location"));
  std::string range = resp->Header("range");
  auto dash = range.find('-');
  now.offset = dash == std::string::npos ? 0 : std::strtoull(range.c_str() + dash + 1, nullptr, 10) + 1;
  if (range.empty() || range == "0-0") now.offset = 0;
  return std::optional<UploadSession>(now);
}

Status Finish(Registry& reg, const std::string& repo, const std::string& location, const oci::Digest& d,
              const std::string& what, HttpRequest req) {
  req.method = "PUT";
  req.url = WithQuery(location, "digest=" + d.str());
  req.headers.push_back("Content-Type: application/octet-stream");
  req.has_body = true;
  auto resp = reg.Do(req, {RepoScope(repo, true)}, what);
  if (!resp.ok()) return resp.error();
  if (resp->status != 201) return ErrorFromResponse(*resp, what);
  return Status::Ok();
}

}  // namespace

std::string DefaultUploadStateDir() {
  const char* cache = std::getenv("IMGTOOL_CACHE");
  if (cache && *cache) return std::string(cache) + "/uploads";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/tmp") + "/.cache/imgtool/uploads";
}

std::string UploadStatePath(const std::string& dir, const std::string& host, const std::string& repo,
                            const oci::Digest& d) {
  return dir + "/" + oci::Digest::Of(host + "\n" + repo + "\n" + d.str()).hex() + ".json";
}

Result<std::optional<UploadSession>> LoadUploadSession(const std::string& path) {
  if (!fs::Exists(path)) return std::optional<UploadSession>();
  auto raw = fs::ReadSmallFile(path, 1 << 16);
  if (!raw.ok()) return raw.error();
  oci::Json j = oci::Json::parse(*raw, nullptr, false);
  // A damaged state file only costs a fresh upload.
  if (!j.is_object() || !j.value("location", oci::Json()).is_string()) return std::optional<UploadSession>();
  return std::optional<UploadSession>(UploadSession{j["location"].get<std::string>(), j.value("offset", 0ull)});
}

Status SaveUploadSession(const std::string& path, const UploadSession& s) {
  IMGTOOL_TRY(fs::MakeDirs(fs::DirName(path)));
  oci::Json j = {{"location", s.location}, {"offset", s.offset}};
  // The location carries the registry's session token: keep it private.
  fs::AtomicFile f;
  IMGTOOL_TRY(f.Open(path));
  if (::chmod(f.temp_path().c_str(), 0600) != 0) return MakeError(ErrorKind::kInternal, "chmod " + f.temp_path());
  IMGTOOL_TRY(f.Write(j.dump()));
  return f.Commit();
}

Result<UploadOutcome> UploadBlob(Registry& reg, const std::string& repo, const oci::Descriptor& desc,
                                 const std::string& path, const UploadOptions& opts,
                                 const std::function<void(uint64_t done)>& progress) {
  const std::string what = "pushing blob " + desc.digest.str();
  const uint64_t size = static_cast<uint64_t>(desc.size);
  UploadOutcome out;
  Fd file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) return MakeError(ErrorKind::kNotFound, what + ": cannot open " + path);

  if (size <= opts.monolithic_max) {
    auto loc = StartSession(reg, repo, what);
    if (!loc.ok()) return loc.error();
    HttpRequest body;
    body.body_fd = file.fd;
    body.body_length = size;
    body.on_sent = [&](uint64_t n) {
      if (progress) progress(n);
    };
    IMGTOOL_TRY(Finish(reg, repo, *loc, desc.digest, what, body));
    out.bytes_sent = size;
    return out;
  }

  std::string state_path = opts.state_dir.empty() ? "" : UploadStatePath(opts.state_dir, reg.host(), repo, desc.digest);
  std::optional<UploadSession> session;
  if (!state_path.empty()) {
    auto saved = LoadUploadSession(state_path);
    if (!saved.ok()) return saved.error();
    if (*saved) {
      auto now = QuerySession(reg, repo, **saved, what);
      if (!now.ok()) return now.error();
      if (*now && (*now)->offset <= size) {
        session = **now;
        out.resumed = true;
        out.resumed_from = session->offset;
      } else {
        out.restarted = true;
      }
    }
  }
  for (int restarts = 0;; ++restarts) {
    if (!session) {
      auto loc = StartSession(reg, repo, what);
      if (!loc.ok()) return loc.error();
      session = UploadSession{*loc, 0};
      if (!state_path.empty()) IMGTOOL_TRY(SaveUploadSession(state_path, *session));
    }
    Status failed;
    while (session->offset < size) {
      uint64_t len = std::min<uint64_t>(opts.chunk_size, size - session->offset);
      uint64_t base = session->offset;
      HttpRequest req;
      req.method = "PATCH";
      req.url = session->location;
      req.headers.push_back("Content-Type: application/octet-stream");
      req.headers.push_back("Content-Range: " + std::to_string(base) + "-" + std::to_string(base + len - 1));
      req.has_body = true;
      req.body_fd = file.fd;
      req.body_offset = base;
      req.body_length = len;
      req.on_sent = [&](uint64_t n) {
        if (progress) progress(base + n);
      };
      auto resp = reg.Do(req, {RepoScope(repo, true)}, what);
      if (!resp.ok() || resp->status != 202) {
        failed = resp.ok() ? ErrorFromResponse(*resp, what) : resp.error();
        break;
      }
      out.bytes_sent += len;
      session->location =
          resp->Header("location").empty() ? session->location : Absolute(reg, resp->Header("location"));
      session->offset = base + len;
      if (!state_path.empty()) IMGTOOL_TRY(SaveUploadSession(state_path, *session));
    }
    if (failed.ok()) {
      IMGTOOL_TRY(Finish(reg, repo, session->location, desc.digest, what, HttpRequest()));
      if (!state_path.empty()) ::unlink(state_path.c_str());
      return out;
    }
    // A chunk that broke half-way leaves the registry at an offset its session token
    // no longer matches; ask where it stands, else start the blob over.
    if (failed.error().kind == ErrorKind::kDenied || restarts >= 2) return failed.error();
    auto now = QuerySession(reg, repo, *session, what);
    if (now.ok() && *now && (*now)->offset <= size) {
      session = **now;
    } else {
      session.reset();
      out.restarted = true;
    }
  }
}

}  // namespace imgtool::remote

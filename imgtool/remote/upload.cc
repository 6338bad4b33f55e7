#include "remote/upload.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "fs/atomic_file.h"
#include "oci/canonical_json.h"
#include "remote/registry_error.h"
#include "remote/response.h"

namespace imgtool::remote {

namespace {

// Hashes the body's bytes in order as the upload reads them (ranges sent again after a
// reset are hashed once), so the final PUT can wait until they are known to match.
class HashingBody : public oci::Reader {
 public:
  explicit HashingBody(oci::Reader& inner) : inner_(inner) {}
  Result<size_t> Read(void*, size_t) override { return MakeError(ErrorKind::kInternal, "sequential read"); }
  bool CanReadAt() const override { return true; }
  Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n) override {
    auto got = inner_.ReadAt(offset, buf, n);
    if (!got.ok()) return got;
    if (offset <= hashed_ && offset + *got > hashed_) {
      uint64_t skip = hashed_ - offset;
      hash_.Update(static_cast<const char*>(buf) + skip, *got - skip);
      hashed_ = offset + *got;
    }
    return got;
  }
  // Hashes [hashed, upto) from the source without sending it (the registry has it).
  Status CatchUp(uint64_t upto) {
    std::vector<char> buf(1 << 20);
    while (hashed_ < upto) {
      auto got = ReadAt(hashed_, buf.data(), static_cast<size_t>(std::min<uint64_t>(buf.size(), upto - hashed_)));
      if (!got.ok()) return got.error();
      if (*got == 0) break;
    }
    return Status::Ok();
  }
  // Ok when exactly [0, size) was hashed, nothing lies beyond it, and it hashes to `d`.
  Status Check(const oci::Descriptor& d, const std::string& what) {
    IMGTOOL_TRY(CatchUp(static_cast<uint64_t>(d.size)));
    char extra;
    auto beyond = inner_.ReadAt(static_cast<uint64_t>(d.size), &extra, 1);
    if (!beyond.ok()) return beyond.error();
    if (hashed_ != static_cast<uint64_t>(d.size) || *beyond != 0) {
      return MakeError(ErrorKind::kIntegrity, what + ": the source holds " + (*beyond ? "more" : "fewer") +
                                                  " than the " + std::to_string(d.size) +
                                                  " bytes its descriptor names; not committed");
    }
    oci::Digest got = hash_.Finish();
    if (got != d.digest) {
      return MakeError(ErrorKind::kIntegrity, what + ": content hashes to " + got.str() + "; not committed");
    }
    return Status::Ok();
  }

 private:
  oci::Reader& inner_;
  oci::Sha256 hash_;
  uint64_t hashed_ = 0;
};

std::string Absolute(const Registry& reg, const std::string& location) {
  return AbsoluteLocation(reg.base_url(), location);
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
  now.offset = ResumeOffset(resp->Header("range"));
  return std::optional<UploadSession>(now);
}

Status Finish(Registry& reg, const std::string& repo, const std::string& location, const oci::Digest& d,
              const std::string& what, HttpRequest req) {
  req.method = "PUT";
  req.url = WithQuery(location, "digest=" + d.str());
  req.headers.emplace_back("Content-Type: application/octet-stream");
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
  oci::Json j = oci::ParseJsonOrDiscarded(*raw);
  // A damaged state file only costs a fresh upload.
  if (!j.is_object() || !j.value("location", oci::Json()).is_string()) return std::optional<UploadSession>();
  // value() would throw on an offset of another type: that is damage too.
  if (j.contains("offset") && !j["offset"].is_number_unsigned()) return std::optional<UploadSession>();
  return std::optional<UploadSession>(UploadSession{j["location"].get<std::string>(), j.value("offset", 0ull)});
}

Status SaveUploadSession(const std::string& path, const UploadSession& s) {
  IMGTOOL_TRY(fs::MakeDirs(fs::DirName(path)));
  oci::Json j = {{"location", s.location}, {"offset", s.offset}};
  // The location carries the registry's session token: keep it private.
  // Created 0600, not chmod'ed by name afterwards (that could be raced).
  fs::AtomicFile f;
  IMGTOOL_TRY(f.Open(path, 0600));
  IMGTOOL_TRY(f.Chmod(0600));
  IMGTOOL_TRY(f.Write(j.dump()));
  return f.Commit();
}

namespace {

// Blobs up to monolithic_max: checked first (cheap at that size), then POST + one PUT.
Result<UploadOutcome> UploadWhole(Registry& reg, const std::string& repo, const oci::Descriptor& desc,
                                  HashingBody& body, const std::string& what,
                                  const std::function<void(uint64_t done)>& progress) {
  IMGTOOL_TRY(body.Check(desc, what));
  auto loc = StartSession(reg, repo, what);
  if (!loc.ok()) return loc.error();
  HttpRequest req;
  req.body_reader = &body;
  req.body_length = static_cast<uint64_t>(desc.size);
  req.on_sent = [&](uint64_t n) {
    if (progress) progress(n);
  };
  IMGTOOL_TRY(Finish(reg, repo, *loc, desc.digest, what, req));
  UploadOutcome out;
  out.bytes_sent = static_cast<uint64_t>(desc.size);
  return out;
}

// A saved session of an earlier run, when the registry still knows it.
Result<std::optional<UploadSession>> Resumable(Registry& reg, const std::string& repo, const std::string& state_path,
                                               uint64_t size, const std::string& what, UploadOutcome& out) {
  if (state_path.empty()) return std::optional<UploadSession>();
  auto saved = LoadUploadSession(state_path);
  if (!saved.ok() || !*saved) return saved;
  auto now = QuerySession(reg, repo, **saved, what);
  if (!now.ok()) return now.error();
  if (*now && (*now)->offset <= size) {
    out.resumed = true;
    out.resumed_from = (*now)->offset;
    return *now;
  }
  out.restarted = true;
  return std::optional<UploadSession>();
}

// PATCHes from session.offset to the end; an error leaves session at the last good chunk.
// A transport failure is described in `net` (a stall: net->timed_out).
Status SendChunks(Registry& reg, const std::string& repo, const oci::Descriptor& desc, HashingBody& body,
                  const UploadOptions& opts, const std::string& state_path, UploadSession& session, UploadOutcome& out,
                  const std::string& what, const std::function<void(uint64_t done)>& progress, NetError* net) {
  const uint64_t size = static_cast<uint64_t>(desc.size);
  IMGTOOL_TRY(body.CatchUp(session.offset));
  while (session.offset < size) {
    uint64_t len = std::min<uint64_t>(opts.chunk_size, size - session.offset);
    uint64_t base = session.offset;
    HttpRequest req;
    req.method = "PATCH";
    req.url = session.location;
    req.headers.emplace_back("Content-Type: application/octet-stream");
    req.headers.push_back("Content-Range: " + std::to_string(base) + "-" + std::to_string(base + len - 1));
    req.has_body = true;
    req.body_reader = &body;
    req.body_offset = base;
    req.body_length = len;
    req.on_sent = [&](uint64_t n) {
      if (progress) progress(base + n);
    };
    auto resp = reg.Do(req, {RepoScope(repo, true)}, what, net);
    if (!resp.ok()) return resp.error();
    if (resp->status != 202) return ErrorFromResponse(*resp, what);
    out.bytes_sent += len;
    if (!resp->Header("location").empty()) session.location = Absolute(reg, resp->Header("location"));
    session.offset = base + len;
    if (!state_path.empty()) IMGTOOL_TRY(SaveUploadSession(state_path, session));
  }
  return Status::Ok();
}

}  // namespace

Result<UploadOutcome> UploadBlob(Registry& reg, const std::string& repo, const oci::Descriptor& desc,
                                 oci::Reader& source, const UploadOptions& opts,
                                 const std::function<void(uint64_t done)>& progress) {
  const std::string what = "pushing blob " + desc.digest.str();
  const uint64_t size = static_cast<uint64_t>(desc.size);
  HashingBody body(source);
  if (size <= opts.monolithic_max) return UploadWhole(reg, repo, desc, body, what, progress);

  UploadOutcome out;
  std::string state_path = opts.state_dir.empty() ? "" : UploadStatePath(opts.state_dir, reg.host(), repo, desc.digest);
  auto resumable = Resumable(reg, repo, state_path, size, what, out);
  if (!resumable.ok()) return resumable.error();
  std::optional<UploadSession> session = *resumable;
  for (int restarts = 0;; ++restarts) {
    if (!session) {
      auto loc = StartSession(reg, repo, what);
      if (!loc.ok()) return loc.error();
      session = UploadSession{*loc, 0};
      if (!state_path.empty()) IMGTOOL_TRY(SaveUploadSession(state_path, *session));
    }
    NetError net;
    Status failed = SendChunks(reg, repo, desc, body, opts, state_path, *session, out, what, progress, &net);
    if (failed.ok()) {
      IMGTOOL_TRY(body.Check(desc, what));
      IMGTOOL_TRY(Finish(reg, repo, session->location, desc.digest, what, HttpRequest()));
      if (!state_path.empty()) ::unlink(state_path.c_str());
      return out;
    }
    // A chunk that broke half-way leaves the registry at an offset its session token
    // no longer matches; ask where it stands, else start the blob over.
    // A stalled chunk ends the upload: asking the registry where it stands, and sending
    // again, would each start the stall bound over.
    if (failed.error().kind == ErrorKind::kDenied || failed.error().kind == ErrorKind::kIntegrity || net.timed_out ||
        restarts >= 2) {
      return failed.error();
    }
    auto now = QuerySession(reg, repo, *session, what);
    // A registry that cannot even say where the upload stands (stalled, gone) would not
    // take a fresh one either: report the first failure.
    if (!now.ok()) return failed.error();
    if (*now && (*now)->offset <= size) {
      session = **now;
    } else {
      session.reset();
      out.restarted = true;
    }
  }
}

}  // namespace imgtool::remote

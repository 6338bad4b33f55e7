// Registry::FetchBlob: downloads are hashed while they stream, so a blob that does not
// match its digest is refused before it is renamed into place (the caller only
// commits on success). A connection reset resumes with a Range request; a server that
// ignores Range is handled by skipping the bytes we already have.
#include <fcntl.h>
#include <unistd.h>

#include "remote/registry.h"
#include "remote/registry_error.h"

namespace imgtool::remote {

Status Registry::FetchBlob(const std::string& repo, const oci::Descriptor& desc, fs::AtomicFile& out,
                           const std::function<void(uint64_t done)>& progress) {
  const std::string what = "pulling blob " + desc.digest.str();
  oci::Sha256 hash;
  uint64_t done = 0;
  const uint64_t want = static_cast<uint64_t>(desc.size);
  Status write_error;
  bool oversize = false;
  // Start writeback of every 32 MiB as it lands, so the commit's fsync finds little
  // left to write and the disk works while the network does (Linux only: a hint).
  constexpr uint64_t kFlushEvery = 32ull << 20;
  uint64_t flushed = 0;
  int flush_fd = ::open(out.temp_path().c_str(), O_WRONLY | O_CLOEXEC);
  struct CloseFd {
    int fd;
    ~CloseFd() {
      if (fd >= 0) ::close(fd);
    }
  } close_flush{flush_fd};
  for (int attempt = 1;; ++attempt) {
    uint64_t skip = 0;  // bytes to drop when a server answers a Range request with 200
    HttpRequest req;
    req.url = base_url() + "/v2/" + repo + "/blobs/" + desc.digest.str();
    if (done > 0) req.headers.push_back("Range: bytes=" + std::to_string(done) + "-");
    // A 200 to a Range request restarts the body: skip what is already written.
    req.on_status = [&](long status) { skip = status == 200 ? done : 0; };
    req.sink = [&](const char* data, size_t n) -> bool {
      if (skip > 0) {
        size_t drop = static_cast<size_t>(std::min<uint64_t>(skip, n));
        skip -= drop;
        data += drop;
        n -= drop;
        if (n == 0) return true;
      }
      if (done + n > want) {
        oversize = true;
        return false;
      }
      hash.Update(data, n);
      Status st = out.Write(data, n);
      if (!st.ok()) {
        write_error = st;
        return false;
      }
      done += n;
      if (flush_fd >= 0 && done - flushed >= kFlushEvery) {
        ::sync_file_range(flush_fd, static_cast<off_t>(flushed), static_cast<off_t>(done - flushed),
                          SYNC_FILE_RANGE_WRITE);
        flushed = done;
      }
      if (progress) progress(done);
      return true;
    };
    auto resp = Do(req, {RepoScope(repo, false)}, what);
    if (!write_error.ok()) return write_error.error().Context(what);
    if (oversize) {
      return MakeError(ErrorKind::kIntegrity, what + ": registry sent more than the " + std::to_string(want) +
                                                  " bytes the descriptor names; refused");
    }
    if (resp.ok() && (resp->status == 200 || resp->status == 206)) {
      if (done == want) break;
      // Short body without a transport error: treat as a reset.
    } else if (resp.ok()) {
      return ErrorFromResponse(*resp, what);
    }
    if (attempt >= opts_.max_attempts) {
      return resp.ok() ? MakeError(ErrorKind::kTransport, what + ": connection closed after " + std::to_string(done) +
                                                              " of " + std::to_string(want) + " bytes")
                       : resp.error();
    }
    SleepBackoff(attempt, -1);
  }
  oci::Digest got = hash.Finish();
  if (got != desc.digest) {
    return MakeError(ErrorKind::kIntegrity, what + ": content hashes to " + got.str() + "; refused");
  }
  return Status::Ok();
}

}  // namespace imgtool::remote

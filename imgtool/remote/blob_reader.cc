#include "remote/blob_reader.h"

#include <algorithm>
#include <cstring>

#include "remote/registry_error.h"

namespace imgtool::remote {

namespace {

constexpr size_t kQueueBytes = 8 << 20;  // bytes in flight between the threads
constexpr size_t kChunkBytes = 1 << 20;  // curl hands over ~16 KiB at a time: gather them

}  // namespace

RegistryBlobReader::RegistryBlobReader(std::shared_ptr<Registry> reg, std::string repo, oci::Descriptor desc)
    : reg_(std::move(reg)), repo_(std::move(repo)), desc_(std::move(desc)) {}

RegistryBlobReader::~RegistryBlobReader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool RegistryBlobReader::Push(const char* data, size_t n) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return cancelled_ || queued_ < kQueueBytes; });
  if (cancelled_) return false;
  // Append to the last chunk while it has room (and the reader is not inside it).
  if (chunks_.empty() || chunks_.back().size() + n > kChunkBytes || (chunks_.size() == 1 && offset_ > 0)) {
    chunks_.emplace_back();
    chunks_.back().reserve(std::max(kChunkBytes, n));
  }
  chunks_.back().append(data, n);
  queued_ += n;
  cv_.notify_all();
  return true;
}

void RegistryBlobReader::Finish(std::optional<Error> error) {
  std::lock_guard<std::mutex> lock(mu_);
  done_ = true;
  error_ = std::move(error);
  cv_.notify_all();
}

Result<size_t> RegistryBlobReader::Read(void* buf, size_t n) {
  if (!started_) {
    started_ = true;
    thread_ = std::thread([this] { Run(); });
  }
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !chunks_.empty() || done_; });
  if (chunks_.empty()) {
    if (error_) return *error_;
    return size_t{0};
  }
  std::string& front = chunks_.front();
  size_t k = std::min(n, front.size() - offset_);
  std::memcpy(buf, front.data() + offset_, k);
  offset_ += k;
  queued_ -= k;
  if (offset_ == front.size()) {
    chunks_.pop_front();
    offset_ = 0;
  }
  cv_.notify_all();
  return k;
}

void RegistryBlobReader::Run() {
  const std::string what = "pulling blob " + desc_.digest.str();
  // One byte past the descriptor's size is enough for the checking reader to refuse it.
  const uint64_t limit = static_cast<uint64_t>(desc_.size) + 1;
  uint64_t done = 0;
  bool stopped = false;
  for (int attempt = 1;; ++attempt) {
    uint64_t skip = 0;  // bytes to drop when a server answers a Range request with 200
    HttpRequest req;
    req.url = reg_->base_url() + "/v2/" + repo_ + "/blobs/" + desc_.digest.str();
    if (done > 0) req.headers.push_back("Range: bytes=" + std::to_string(done) + "-");
    req.on_status = [&](long status) { skip = status == 200 ? done : 0; };
    req.sink = [&](const char* data, size_t n) -> bool {
      size_t drop = static_cast<size_t>(std::min<uint64_t>(skip, n));
      skip -= drop;
      data += drop;
      n -= drop;
      if (n == 0) return true;
      n = static_cast<size_t>(std::min<uint64_t>(n, limit - done));
      if (!Push(data, n)) return stopped = true, false;
      done += n;
      return done < limit || (stopped = true, false);
    };
    NetError net;
    auto resp = reg_->Do(req, {RepoScope(repo_, false)}, what, &net);
    if (stopped) return Finish(std::nullopt);
    // A stall ends the download, before the first byte or mid-blob: resuming it would
    // start the stall bound over, so a peer that stalls again would hold us twice as long
    // as $IMGTOOL_STALL_TIMEOUT says. A reset mid-blob is resumed with Range.
    if (!resp.ok() && net.timed_out) return Finish(resp.error());
    if (resp.ok() && (resp->status == 200 || resp->status == 206)) {
      // A short body without a transport error is treated as a reset below; a complete
      // one (or a short one the checking reader will name) ends here.
      if (done >= static_cast<uint64_t>(desc_.size)) return Finish(std::nullopt);
    } else if (resp.ok()) {
      return Finish(ErrorFromResponse(*resp, what));
    }
    if (attempt >= reg_->options().max_attempts) {
      if (!resp.ok()) return Finish(resp.error());
      return Finish(MakeError(ErrorKind::kTransport, what + ": connection closed after " + std::to_string(done) +
                                                         " of " + std::to_string(desc_.size) + " bytes"));
    }
    reg_->SleepBackoff(attempt, -1);
  }
}

}  // namespace imgtool::remote

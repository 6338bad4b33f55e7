// A registry blob as a stream (oci::Reader): a thread of its own runs the GET and hands
// the bytes over through a small bounded queue, so the reader pulls at its own pace and
// memory stays at a few MiB whatever the blob's size. A reset mid-way resumes with a
// Range request; a server that ignores Range is handled by skipping the bytes already
// delivered. The bytes are not checked here: Blob::Open wraps this in a CheckedReader.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "oci/manifest.h"
#include "oci/reader.h"
#include "remote/registry.h"

namespace imgtool::remote {

class RegistryBlobReader : public oci::Reader {
 public:
  RegistryBlobReader(std::shared_ptr<Registry> reg, std::string repo, oci::Descriptor desc);
  ~RegistryBlobReader() override;  // stops the transfer and waits for its thread
  Result<size_t> Read(void* buf, size_t n) override;

 private:
  void Run();                             // the transfer thread
  bool Push(const char* data, size_t n);  // false: the reader went away
  void Finish(std::optional<Error> error);

  std::shared_ptr<Registry> reg_;
  std::string repo_;
  oci::Descriptor desc_;
  std::thread thread_;
  bool started_ = false;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> chunks_;
  size_t queued_ = 0;  // bytes in chunks_
  size_t offset_ = 0;  // read position in chunks_.front()
  bool done_ = false;  // the thread has finished
  bool cancelled_ = false;
  std::optional<Error> error_;
};

}  // namespace imgtool::remote

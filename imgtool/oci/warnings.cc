#include "oci/warnings.h"

#include <mutex>
#include <utility>

namespace imgtool::oci {

namespace {

std::mutex& HandlerMutex() {
  static std::mutex mu;
  return mu;
}

WarningHandler& Handler() {
  static WarningHandler handler;
  return handler;
}

}  // namespace

WarningHandler SetWarningHandler(WarningHandler handler) {
  std::lock_guard<std::mutex> lock(HandlerMutex());
  return std::exchange(Handler(), std::move(handler));
}

void Warn(const std::string& message) {
  std::lock_guard<std::mutex> lock(HandlerMutex());  // one warning at a time, whole
  if (Handler()) Handler()(message);
}

}  // namespace imgtool::oci

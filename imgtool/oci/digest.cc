#include "oci/digest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "oci/hex.h"
#include "oci/quote.h"

namespace imgtool::oci {

namespace {
bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}
}  // namespace

Result<Digest> Digest::Parse(std::string_view text) {
  constexpr std::string_view kPrefix = "sha256:";
  if (text.substr(0, kPrefix.size()) != kPrefix) {
    return MakeError(ErrorKind::kInvalidInput, "digest " + Quoted(text, '\'') + ": only sha256 digests are supported");
  }
  std::string_view hex = text.substr(kPrefix.size());
  if (hex.size() != 64 || !IsLowerHex(hex)) {
    return MakeError(ErrorKind::kInvalidInput,
                     "digest " + Quoted(text, '\'') + ": want sha256: and 64 lowercase hex digits");
  }
  Digest d;
  d.hex_ = std::string(hex);
  return d;
}

Digest Digest::FromBytes(const std::array<uint8_t, 32>& raw) {
  Digest d;
  d.hex_ = HexEncode(std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()));
  return d;
}

Digest Digest::Of(std::string_view bytes) {
  Sha256 h;
  h.Update(bytes);
  return h.Finish();
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr); }

void Sha256::Update(const void* data, size_t len) {
  EVP_DigestUpdate(ctx_.get(), data, len);
  bytes_ += len;
}

Digest Sha256::Finish() {
  std::array<uint8_t, 32> raw{};
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx_.get(), raw.data(), &n);
  EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr);
  bytes_ = 0;
  return Digest::FromBytes(raw);
}

Result<FileDigest> DigestFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return MakeError(errno == ENOENT ? ErrorKind::kNotFound : ErrorKind::kInternal,
                     "opening " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return MakeError(ErrorKind::kInvalidInput, "reading " + path + ": not a regular file");
  }
  Sha256 h;
  std::vector<char> buf(1 << 20);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      return MakeError(ErrorKind::kInternal, "reading " + path + ": " + std::strerror(e));
    }
    if (n == 0) break;
    h.Update(buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  FileDigest out;
  out.size = h.bytes();
  out.digest = h.Finish();
  return out;
}

}  // namespace imgtool::oci

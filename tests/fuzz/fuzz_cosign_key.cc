// cosign key files (imgtool/sign_core/keys.h, encrypted_key.h): a public key PEM, and a
// private key PEM whose body is the password envelope (scrypt parameters, salt, nonce,
// secretbox). The scrypt cost is what the file asks for, so the harness caps it far
// below the real limit: a hostile N and r would otherwise make every input take
// seconds, and that limit has its own unit test. The seeds are sealed with the
// password below and cheap parameters.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "sign_core/encrypted_key.h"
#include "sign_core/keys.h"

namespace {

using namespace imgtool::sign;

constexpr char kPassword[] = "fuzz";

ScryptLimits FuzzLimits() {
  ScryptLimits l;
  l.max_n = 1024;
  l.max_r = 8;
  l.max_p = 2;
  return l;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  imgtool::fuzz::MaybeWriteSeeds([] {
    auto key = GenerateP256Key();
    if (!key.ok()) std::abort();
    ScryptParams cheap{16, 1, 1};
    auto priv = EncryptedPrivateKeyPem(*key, kPassword, cheap);
    auto pub = PublicKeyPem(*key);
    auto sealed = SealWithPassword("not a key", kPassword, cheap);
    if (!priv.ok() || !pub.ok() || !sealed.ok()) std::abort();
    return imgtool::fuzz::Seeds{{"cosign.key", *priv}, {"cosign.pub", *pub}, {"envelope.json", *sealed}};
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = imgtool::fuzz::Bytes(data, size);
  (void)ParsePublicKeyPem(text, "cosign.pub");
  (void)ParseEncryptedPrivateKeyPem(text, kPassword, "cosign.key", FuzzLimits());
  (void)OpenWithPassword(text, kPassword, "envelope", FuzzLimits());
  (void)IsDerEcdsaSignature(text);
  return 0;
}

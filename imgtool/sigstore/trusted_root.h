// The trusted root (application/vnd.dev.sigstore.trustedroot+json;version=0.1): whom a
// keyless verification trusts. Fulcio CAs and TSAs as certificate chains, Rekor
// transparency logs and CT logs as keys, each with the period it is trusted for.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "oci/result.h"
#include "sigstore/keys.h"
#include "sigstore/time.h"

namespace imgtool::sigstore {

// A Rekor or CT log.
struct LogKey {
  std::string log_id;  // raw bytes (logId.keyId, base64-decoded), usually sha256 of the key's DER
  Pkey key;
  std::string key_details;  // "PKIX_ECDSA_P256_SHA_256", "PKIX_ED25519", ...
  Validity valid_for;       // publicKey.validFor
  std::string base_url;     // "https://rekor.sigstore.dev": a checkpoint's origin names its host
};

// A Fulcio CA or a TSA.
struct CertAuthority {
  std::vector<Cert> chain;  // as in the file: the issuing certificate first, the root last
  Validity valid_for;
  std::string uri;
};

struct TrustedRoot {
  std::vector<LogKey> tlogs;
  std::vector<LogKey> ctlogs;
  std::vector<CertAuthority> certificate_authorities;
  std::vector<CertAuthority> timestamp_authorities;
};

// A trusted root larger than this is refused before it is parsed.
inline constexpr size_t kMaxTrustedRoot = 4 << 20;

// What a verification reads of a root: all of it (keyless), or for a key-based bundle
// (verify-blob --key) its transparency logs and timestamp authorities alone. kKeyBased
// leaves certificate_authorities and ctlogs empty: their entries (Fulcio chains, CT log
// keys) are checked to be lists but not decoded, which for the public-good root was
// ~0.4 ms of OpenSSL decoding in every verify-blob --key process (bench/startup).
enum class RootUse { kAll, kKeyBased };

Result<TrustedRoot> ParseTrustedRoot(std::string_view json, const std::string& what, RootUse use = RootUse::kAll);
// A trusted_root.json file (read as a user-named file: no FIFO, bounded); "" is the
// Sigstore public-good root built into imgtool (public_good_root.h).
Result<TrustedRoot> LoadTrustedRoot(const std::string& path, RootUse use = RootUse::kAll);
// Logs whose log_id is `log_id` (a log appears once per key period).
std::vector<const LogKey*> FindLogs(const std::vector<LogKey>& logs, std::string_view log_id);

}  // namespace imgtool::sigstore

// The Sigstore bundle (application/vnd.dev.sigstore.bundle+json;version=0.1 .. 0.3, and
// application/vnd.dev.sigstore.bundle.v0.3+json): what was signed (a message signature or
// a DSSE envelope), by whom (a certificate, a chain, or a public key hint), and the
// transparency log entries and RFC 3161 timestamps that say when.
// Parsing only: every field is decoded and bounded here, nothing is verified.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oci/result.h"
#include "sigstore/keys.h"
#include "sigstore/time.h"

namespace imgtool::sigstore {

struct InclusionProof {
  int64_t log_index = 0;  // the entry's index in this tree (Rekor v1: not the global logIndex)
  int64_t tree_size = 0;
  std::string root_hash;            // raw 32 bytes
  std::vector<std::string> hashes;  // raw 32 bytes each, leaf to root
  std::string checkpoint;           // the signed note (checkpoint.envelope), as text; empty when absent
};

struct TlogEntry {
  int64_t log_index = 0;
  std::string log_id;                   // raw bytes
  std::string kind;                     // kindVersion.kind: "hashedrekord", "dsse", "intoto"
  std::string kind_version;             // "0.0.1", "0.0.2"
  std::optional<Time> integrated_time;  // Rekor v1 only
  std::string signed_entry_timestamp;   // inclusionPromise (SET), raw DER; empty when absent
  std::optional<InclusionProof> inclusion_proof;
  std::string canonicalized_body;  // raw JSON bytes (base64-decoded)
};

struct MessageSignature {
  std::string digest_algorithm;  // "SHA2_256" (empty when the bundle gives no digest)
  std::string digest;            // raw bytes
  std::string signature;         // raw bytes
};

struct DsseSignature {
  std::string keyid;
  std::string sig;  // raw bytes
};
struct DsseEnvelope {
  std::string payload_type;
  std::string payload;  // raw bytes
  std::vector<DsseSignature> signatures;
};

struct Bundle {
  std::string media_type;
  int minor_version = 0;  // 1, 2 or 3
  // The signing certificate first (x509CertificateChain in v0.1/v0.2 may carry more).
  std::vector<Cert> certificates;
  bool has_public_key = false;  // verificationMaterial.publicKey
  std::string public_key_hint;
  std::vector<TlogEntry> tlog_entries;
  std::vector<std::string> rfc3161_timestamps;  // raw DER TimeStampResp/TimeStampToken
  std::optional<MessageSignature> message_signature;
  std::optional<DsseEnvelope> dsse_envelope;
};

// A bundle larger than this is refused before it is parsed.
inline constexpr size_t kMaxBundle = 8 << 20;
// More RFC 3161 timestamps than this and the bundle is refused before any is verified
// (sigstore-go's and sigstore-python's bound).
inline constexpr size_t kMaxTimestamps = 32;

Result<Bundle> ParseBundle(std::string_view json, const std::string& what);
// A DSSE envelope on its own (cosign's legacy .att layers), with the bundle's bounds.
Result<DsseEnvelope> ParseDsseEnvelope(std::string_view json, const std::string& what);

}  // namespace imgtool::sigstore

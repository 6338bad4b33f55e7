// Checkpoints: the signed tree heads of transparency logs, as C2SP specifies them
// (signed-note and tlog-checkpoint) and Rekor writes them.
//
//   <origin>\n<tree size, decimal>\n<root hash, base64>\n[<extension line>\n]*
//   \n
//   — <name> <base64(4-byte key hint || signature)>\n   (one or more lines)
//
// The signed text is everything up to and including the newline before the blank line.
// Lines from keys we do not know (witness cosignatures, other logs) are ignored; a line
// that claims to be from the log (its name and key hint) must verify, and one must exist.
//
// Which name and hint are the log's:
//   - Rekor v1 (origin "<host> - <tree id>", ECDSA keys): the hint is the first 4 bytes of
//     sha256(the key's DER SubjectPublicKeyInfo), the log ID; the name is not checked (the
//     log's signer name is its own setting, which the trusted root does not carry), as
//     sigstore-go and sigstore-python do.
//   - Rekor v2 and any other origin: the origin and the signature's name are both the host
//     of the log's base URL; the hint is as rekor-tiles makes it: for Ed25519
//     sha256(name || "\n" || 0x01 || raw key)[:4], for ECDSA the v1 hint, for RSA
//     sha256(name || "\n" || 0xff || "PKIX-RSA-PKCS#1v1.5" || DER key)[:4].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "oci/result.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {

// Bounds on what a checkpoint may hold; beyond them it is refused unread.
inline constexpr size_t kMaxCheckpointBytes = 64 << 10;
inline constexpr size_t kMaxNoteSignatures = 100;
inline constexpr size_t kMaxCheckpointExtensions = 100;

struct NoteSignature {
  std::string name;
  std::string key_hint;   // 4 bytes
  std::string signature;  // raw
};

struct SignedNote {
  std::string text;  // the signed bytes, ending in '\n'
  std::vector<NoteSignature> signatures;
};

struct Checkpoint {
  std::string origin;
  int64_t size = 0;
  std::string root_hash;  // raw 32 bytes
  std::vector<std::string> extensions;
};

Result<SignedNote> ParseSignedNote(std::string_view note);
// The note's text as a checkpoint.
Result<Checkpoint> ParseCheckpoint(std::string_view text);

// "https://log2025-1.rekor.sigstore.dev/" -> "log2025-1.rekor.sigstore.dev" (no port).
std::string UrlHost(std::string_view url);
// The key hint `key` signs notes under `name` with (the C2SP / rekor-tiles rule above).
std::string NoteKeyHint(std::string_view name, const Pkey& key);

// Parses the checkpoint and checks that `log` signed it (rules above); the checkpoint then.
Result<Checkpoint> VerifyCheckpoint(std::string_view note, const LogKey& log);

}  // namespace imgtool::sigstore

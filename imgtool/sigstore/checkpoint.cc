#include "sigstore/checkpoint.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "oci/base64.h"

namespace imgtool::sigstore {

namespace {

constexpr std::string_view kEmDash = "\xE2\x80\x94 ";  // "— ": a signature line's start
constexpr size_t kMaxSignatureLine = 4096;             // an RSA-8192 signature is 1 KiB
constexpr size_t kHashSize = 32;

Error Malformed(const std::string& why) { return MakeError(ErrorKind::kInvalidInput, "checkpoint: " + why); }
Error Refused(const std::string& why) { return MakeError(ErrorKind::kDenied, "checkpoint: " + why); }

// Splits "a\nb\n" into {"a", "b"}; `text` ends in '\n' (checked by the caller).
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  return lines;
}

// A signer name: not empty, no spaces, no '+' (signed-note's rule, ASCII spaces only).
bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (c == ' ' || c == '\t' || c == '+') return false;
  }
  return true;
}

Result<NoteSignature> ParseSignatureLine(std::string_view line) {
  if (line.size() > kMaxSignatureLine) return Malformed("signature line too long");
  if (line.substr(0, kEmDash.size()) != kEmDash) return Malformed("signature line does not start with '— '");
  line.remove_prefix(kEmDash.size());
  size_t space = line.find(' ');
  if (space == std::string_view::npos) return Malformed("signature line has no signature");
  NoteSignature sig;
  sig.name = std::string(line.substr(0, space));
  if (!ValidName(sig.name)) return Malformed("bad signer name '" + sig.name.substr(0, 64) + "'");
  auto bytes = oci::Base64Decode(line.substr(space + 1), "checkpoint signature");
  if (!bytes.ok()) return bytes.error();
  if (bytes->size() < 5) return Malformed("signature shorter than its key hint");
  sig.key_hint = bytes->substr(0, 4);
  sig.signature = bytes->substr(4);
  return sig;
}

// Control characters other than '\n' have no place in a note (signed-note forbids them).
bool PlainText(std::string_view note) {
  for (char c : note) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n') || u == 0x7f) return false;
  }
  return true;
}

// Decimal, no sign, no leading zero, fits int64.
Result<int64_t> ParseSize(std::string_view s) {
  if (s.empty() || s.size() > 18 || (s.size() > 1 && s[0] == '0')) return Malformed("bad tree size");
  int64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return Malformed("bad tree size");
    n = n * 10 + (c - '0');
  }
  return n;
}

// Rekor v1 writes "<host> - <decimal tree id>" as the origin (sigstore-go tells the two
// kinds of checkpoint apart the same way).
bool RekorV1Origin(std::string_view origin) {
  size_t dash = origin.rfind(" - ");
  if (dash == std::string_view::npos || dash + 3 == origin.size()) return false;
  for (char c : origin.substr(dash + 3)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

Result<SignedNote> ParseSignedNote(std::string_view note) {
  if (note.size() > kMaxCheckpointBytes) return Malformed("longer than 64 KiB");
  if (!PlainText(note)) return Malformed("control characters");
  // The signatures follow the last blank line; the signed text keeps its final newline.
  size_t split = note.rfind("\n\n");
  if (split == std::string_view::npos) return Malformed("no blank line before the signatures");
  SignedNote out;
  out.text = std::string(note.substr(0, split + 1));
  std::string_view sigs = note.substr(split + 2);
  if (sigs.empty()) return Malformed("no signature");
  if (sigs.back() != '\n') return Malformed("does not end with a newline");
  for (std::string_view line : Lines(sigs)) {
    if (out.signatures.size() == kMaxNoteSignatures) return Malformed("more than 100 signatures");
    auto sig = ParseSignatureLine(line);
    if (!sig.ok()) return sig.error();
    out.signatures.push_back(std::move(*sig));
  }
  return out;
}

Result<Checkpoint> ParseCheckpoint(std::string_view text) {
  if (text.empty() || text.back() != '\n') return Malformed("text does not end with a newline");
  std::vector<std::string_view> lines = Lines(text);
  if (lines.size() < 3) return Malformed("needs an origin, a tree size and a root hash");
  if (lines.size() > 3 + kMaxCheckpointExtensions) return Malformed("more than 100 extension lines");
  Checkpoint cp;
  cp.origin = std::string(lines[0]);
  if (cp.origin.empty()) return Malformed("empty origin");
  auto size = ParseSize(lines[1]);
  if (!size.ok()) return size.error();
  cp.size = *size;
  auto hash = oci::Base64Decode(lines[2], "checkpoint root hash");
  if (!hash.ok() || hash->size() != kHashSize) return Malformed("root hash is not 32 bytes of base64");
  cp.root_hash = std::move(*hash);
  for (size_t i = 3; i < lines.size(); ++i) {
    if (lines[i].empty()) return Malformed("empty extension line");
    cp.extensions.emplace_back(lines[i]);
  }
  return cp;
}

std::string UrlHost(std::string_view url) {
  size_t scheme = url.find("://");
  if (scheme != std::string_view::npos) url.remove_prefix(scheme + 3);
  url = url.substr(0, url.find_first_of("/?#"));
  size_t at = url.rfind('@');
  if (at != std::string_view::npos) url.remove_prefix(at + 1);
  if (!url.empty() && url[0] == '[') return std::string(url.substr(0, url.find(']') + 1));  // IPv6 literal
  return std::string(url.substr(0, url.find(':')));
}

std::string NoteKeyHint(std::string_view name, const Pkey& key) {
  std::string in = std::string(name) + "\n";
  if (EVP_PKEY_is_a(key.get(), "ED25519")) {
    unsigned char raw[32];
    size_t len = sizeof(raw);
    if (EVP_PKEY_get_raw_public_key(key.get(), raw, &len) != 1 || len != sizeof(raw)) return "";
    in += '\x01';
    in.append(reinterpret_cast<char*>(raw), len);
  } else if (EVP_PKEY_is_a(key.get(), "RSA")) {
    in += '\xff';
    in += "PKIX-RSA-PKCS#1v1.5";
    in += PublicKeyDer(key);
  } else {
    return KeyId(key).substr(0, 4);
  }
  return Sha256(in).substr(0, 4);
}

Result<Checkpoint> VerifyCheckpoint(std::string_view note, const LogKey& log) {
  auto signed_note = ParseSignedNote(note);
  if (!signed_note.ok()) return signed_note.error();
  auto cp = ParseCheckpoint(signed_note->text);
  if (!cp.ok()) return cp.error();
  const bool v1 = RekorV1Origin(cp->origin);
  const std::string host = UrlHost(log.base_url);
  if (!v1 && cp->origin != host)
    return Refused("origin '" + cp->origin.substr(0, 64) + "' is not the log's host '" + host + "'");
  const std::string hint = v1 ? KeyId(log.key).substr(0, 4) : NoteKeyHint(host, log.key);
  bool verified = false;
  for (const NoteSignature& sig : signed_note->signatures) {
    if (sig.key_hint != hint || (!v1 && sig.name != host)) continue;  // someone else's: ignored
    if (!VerifyMessage(log.key, signed_note->text, sig.signature))
      return Refused("the log's signature does not verify");
    verified = true;
  }
  if (!verified) return Refused("no signature from the log (" + host + ")");
  return cp;
}

}  // namespace imgtool::sigstore

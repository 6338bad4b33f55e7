#include "sigstore/trusted_root.h"

#include "sigstore/json_fields.h"

namespace imgtool::sigstore {

namespace {

constexpr size_t kMaxEntries = 256;  // logs or authorities of one kind
constexpr size_t kMaxChain = 8;
constexpr size_t kMaxDer = 64 << 10;

// validFor {start, end}: start is required (a missing bound is not "unbounded").
Result<Validity> ParseValidity(const Json& obj, const std::string& path) {
  auto valid = ObjectMember(obj, "validFor", path);
  if (!valid.ok()) return valid.error();
  auto start = TextMember(**valid, "start", path + ".validFor", true);
  if (!start.ok()) return start.error();
  Validity v;
  auto s = ParseRfc3339(*start, path + ".validFor.start");
  if (!s.ok()) return s.error();
  v.start = *s;
  auto end = TextMember(**valid, "end", path + ".validFor", false);
  if (!end.ok()) return end.error();
  if (!end->empty()) {
    auto e = ParseRfc3339(*end, path + ".validFor.end");
    if (!e.ok()) return e.error();
    v.end = *e;
  }
  return v;
}

Result<LogKey> ParseLog(const Json& entry, const std::string& path) {
  LogKey log;
  auto base = TextMember(entry, "baseUrl", path, false);
  if (!base.ok()) return base.error();
  log.base_url = *base;
  auto hash = TextMember(entry, "hashAlgorithm", path, false);
  if (!hash.ok()) return hash.error();
  if (!hash->empty() && *hash != "SHA2_256") {
    return MakeError(ErrorKind::kInvalidInput, path + ".hashAlgorithm: '" + *hash + "' (only SHA2_256 logs exist)");
  }
  auto key = ObjectMember(entry, "publicKey", path);
  if (!key.ok()) return key.error();
  auto raw = BytesMember(**key, "rawBytes", path + ".publicKey", kMaxDer);
  if (!raw.ok()) return raw.error();
  auto pkey = ParsePublicKeyDer(*raw, path + ".publicKey");
  if (!pkey.ok()) return pkey.error();
  log.key = *pkey;
  auto details = TextMember(**key, "keyDetails", path + ".publicKey", false);
  if (!details.ok()) return details.error();
  log.key_details = *details;
  auto valid = ParseValidity(**key, path + ".publicKey");
  if (!valid.ok()) return valid.error();
  log.valid_for = *valid;
  auto id = ObjectMember(entry, "logId", path);
  if (!id.ok()) return id.error();
  auto key_id = BytesMember(**id, "keyId", path + ".logId", 64);
  if (!key_id.ok()) return key_id.error();
  log.log_id = *key_id;
  return log;
}

Result<CertAuthority> ParseAuthority(const Json& entry, const std::string& path) {
  CertAuthority ca;
  auto uri = TextMember(entry, "uri", path, false);
  if (!uri.ok()) return uri.error();
  ca.uri = *uri;
  auto chain = ObjectMember(entry, "certChain", path);
  if (!chain.ok()) return chain.error();
  auto certs = ArrayMember(**chain, "certificates", path + ".certChain", kMaxChain);
  if (!certs.ok()) return certs.error();
  if ((*certs)->empty()) return MakeError(ErrorKind::kInvalidInput, path + ".certChain: no certificates");
  for (size_t i = 0; i < (*certs)->size(); ++i) {
    std::string at = path + ".certChain.certificates[" + std::to_string(i) + "]";
    auto der = BytesMember((**certs)[i], "rawBytes", at, kMaxDer);
    if (!der.ok()) return der.error();
    auto cert = ParseCertificateDer(*der, at);
    if (!cert.ok()) return cert.error();
    ca.chain.push_back(*cert);
  }
  auto valid = ParseValidity(entry, path);
  if (!valid.ok()) return valid.error();
  ca.valid_for = *valid;
  return ca;
}

template <typename T, typename Parse>
Status ParseList(const Json& root, std::string_view key, const std::string& what, Parse parse, std::vector<T>* out) {
  auto list = ArrayMember(root, key, what, kMaxEntries);
  if (!list.ok()) return list.error();
  for (size_t i = 0; i < (*list)->size(); ++i) {
    auto item = parse((**list)[i], what + "." + std::string(key) + "[" + std::to_string(i) + "]");
    if (!item.ok()) return item.error();
    out->push_back(std::move(*item));
  }
  return Status::Ok();
}

}  // namespace

Result<TrustedRoot> ParseTrustedRoot(std::string_view json, const std::string& what, RootUse use) {
  auto doc = ParseObjectDocument(json, kMaxTrustedRoot, what);
  if (!doc.ok()) return doc.error();
  auto media_type = TextMember(*doc, "mediaType", what, true);
  if (!media_type.ok()) return media_type.error();
  if (media_type->rfind("application/vnd.dev.sigstore.trustedroot", 0) != 0) {
    return MakeError(ErrorKind::kInvalidInput,
                     what + ": mediaType '" + *media_type + "' is not a Sigstore trusted root");
  }
  TrustedRoot root;
  IMGTOOL_TRY(ParseList(*doc, "tlogs", what, ParseLog, &root.tlogs));
  if (use == RootUse::kAll) {
    IMGTOOL_TRY(ParseList(*doc, "ctlogs", what, ParseLog, &root.ctlogs));
    IMGTOOL_TRY(ParseList(*doc, "certificateAuthorities", what, ParseAuthority, &root.certificate_authorities));
  } else {
    for (const char* unread : {"ctlogs", "certificateAuthorities"}) {
      auto list = ArrayMember(*doc, unread, what, kMaxEntries);
      if (!list.ok()) return list.error();
    }
  }
  IMGTOOL_TRY(ParseList(*doc, "timestampAuthorities", what, ParseAuthority, &root.timestamp_authorities));
  return root;
}

std::vector<const LogKey*> FindLogs(const std::vector<LogKey>& logs, std::string_view log_id) {
  std::vector<const LogKey*> found;
  for (const LogKey& log : logs) {
    if (log.log_id == log_id) found.push_back(&log);
  }
  return found;
}

}  // namespace imgtool::sigstore

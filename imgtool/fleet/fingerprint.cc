// Fingerprint serialization, --ignore patterns and the digest workers exchange. Pure:
// no I/O. What goes into a fingerprint is the probe's business (probe.cc).
#include "fleet/fingerprint.h"

#include <string_view>

#include "oci/digest.h"

namespace imgtool::fleet {

namespace {

Error Bad(const std::string& path, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, path + ": " + why);
}

// A field name as it appears in a path; a long one is cut so the message stays readable.
std::string PathKey(const std::string& key) {
  constexpr size_t kShown = 40;
  return key.size() <= kShown ? key : key.substr(0, kShown) + "...";
}

Result<std::map<std::string, std::string>> StringMap(const oci::Json& j, const std::string& path) {
  if (!j.is_object()) return Bad(path, "not an object");
  if (j.size() > kMaxFingerprintEntries) {
    return Bad(path,
               std::to_string(j.size()) + " entries, more than the limit of " + std::to_string(kMaxFingerprintEntries));
  }
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : j.items()) {
    if (key.empty()) return Bad(path, "empty field name");
    if (key.size() > kMaxFieldNameBytes) {
      return Bad(path + "." + PathKey(key), "field name longer than " + std::to_string(kMaxFieldNameBytes) + " bytes");
    }
    if (!value.is_string()) return Bad(path + "." + key, "not a string");
    const auto& s = value.get_ref<const std::string&>();
    if (s.size() > kMaxFieldValueBytes) {
      return Bad(path + "." + key, "value of " + std::to_string(s.size()) + " bytes, more than the limit of " +
                                       std::to_string(kMaxFieldValueBytes));
    }
    out.emplace(key, s);
  }
  return out;
}

// Injective and distinct from any JSON text (which never starts with a NUL byte).
std::string LengthPrefixed(const std::map<std::string, std::string>& fields) {
  std::string out(1, '\0');
  for (const auto& [k, v] : fields) {
    out += std::to_string(k.size()) + ":" + k + std::to_string(v.size()) + ":" + v;
  }
  return out;
}

}  // namespace

oci::Json ToJson(const Fingerprint& fp) { return {{"fields", oci::Json(fp.fields)}, {"node", oci::Json(fp.node)}}; }

Result<Fingerprint> FingerprintFromJson(const std::string& text) {
  if (text.size() > kMaxFingerprintBytes) {
    return Bad("fingerprint",
               std::to_string(text.size()) + " bytes, more than the limit of " + std::to_string(kMaxFingerprintBytes));
  }
  auto parsed = oci::ParseJson(text, "fingerprint");
  if (!parsed.ok()) return parsed.error();
  const oci::Json& j = *parsed;
  if (!j.is_object()) return Bad("$", "not an object");
  if (!j.contains("fields")) return Bad("$.fields", "missing");
  Fingerprint fp;
  auto fields = StringMap(j["fields"], "$.fields");
  if (!fields.ok()) return fields.error();
  fp.fields = std::move(*fields);
  if (j.contains("node")) {
    auto node = StringMap(j["node"], "$.node");
    if (!node.ok()) return node.error();
    fp.node = std::move(*node);
  }
  if (j.contains("digest")) {
    if (!j["digest"].is_string()) return Bad("$.digest", "not a string");
    const auto& claimed = j["digest"].get_ref<const std::string&>();
    std::string actual = FingerprintDigest(fp, {});
    if (claimed != actual) {
      return MakeError(ErrorKind::kIntegrity,
                       "$.digest: the file says " + claimed + " but its fields hash to " + actual + " (edited?)");
    }
  }
  return fp;
}

bool FieldIgnored(const std::string& field, const std::vector<std::string>& ignore) {
  for (const auto& pattern : ignore) {
    if (!pattern.empty() && pattern.back() == '*') {
      if (std::string_view(field).substr(0, pattern.size() - 1) ==
          std::string_view(pattern).substr(0, pattern.size() - 1)) {
        return true;
      }
    } else if (field == pattern) {
      return true;
    }
  }
  return false;
}

std::string FingerprintDigest(const Fingerprint& fp, const std::vector<std::string>& ignore) {
  std::map<std::string, std::string> compared;
  for (const auto& [k, v] : fp.fields) {
    if (!FieldIgnored(k, ignore)) compared.emplace(k, v);
  }
  auto canonical = oci::CanonicalJson(oci::Json(compared));
  return oci::Digest::Of(canonical.ok() ? *canonical : LengthPrefixed(compared)).str();
}

}  // namespace imgtool::fleet

#include "sigstore/json_fields.h"

#include "oci/base64.h"

namespace imgtool::sigstore {

Result<Json> ParseObjectDocument(std::string_view json, size_t max_bytes, const std::string& what) {
  if (json.size() > max_bytes) {
    return MakeError(ErrorKind::kInvalidInput, what + ": more than " + std::to_string(max_bytes) + " bytes");
  }
  auto doc = oci::ParseJson(json, what);
  if (!doc.ok()) return doc.error();
  if (!doc->is_object()) return MakeError(ErrorKind::kInvalidInput, what + ": not a JSON object");
  return std::move(*doc);
}

namespace {

Error Bad(const std::string& path, std::string_view key, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, path + "." + std::string(key) + ": " + why);
}

const Json* Find(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(std::string(key));
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// protobuf's JSON reader (Go's protojson, Python's) takes base64 with line breaks, in the
// URL-safe alphabet and without padding; the other tools' bundles are read the same way.
// Anything else outside the alphabet is still refused by the strict decoder.
std::string ProtobufBase64(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  for (char c : text) {
    if (c == '\n' || c == '\r') continue;
    out.push_back(c == '-' ? '+' : c == '_' ? '/' : c);
  }
  if (out.find('=') == std::string::npos) out.append((4 - out.size() % 4) % 4, '=');
  return out;
}

}  // namespace

Result<const Json*> ObjectMember(const Json& obj, std::string_view key, const std::string& path) {
  const Json* v = Find(obj, key);
  if (v == nullptr) return Bad(path, key, "missing");
  if (!v->is_object()) return Bad(path, key, "not an object");
  return v;
}

Result<const Json*> ArrayMember(const Json& obj, std::string_view key, const std::string& path, size_t max_items) {
  static const Json kEmpty = Json::array();
  const Json* v = Find(obj, key);
  if (v == nullptr) return &kEmpty;
  if (!v->is_array()) return Bad(path, key, "not an array");
  if (v->size() > max_items)
    return Bad(path, key, std::to_string(v->size()) + " items, more than " + std::to_string(max_items));
  return v;
}

Result<std::string> TextMember(const Json& obj, std::string_view key, const std::string& path, bool required) {
  const Json* v = Find(obj, key);
  if (v == nullptr || (v->is_string() && v->get_ref<const std::string&>().empty())) {
    if (required) return Bad(path, key, "missing");
    return std::string();
  }
  if (!v->is_string()) return Bad(path, key, "not a string");
  return v->get<std::string>();
}

Result<std::string> BytesMember(const Json& obj, std::string_view key, const std::string& path, size_t max_bytes) {
  auto text = TextMember(obj, key, path, true);
  if (!text.ok()) return text.error();
  if (text->size() > (max_bytes / 3 + 1) * 4)
    return Bad(path, key, "longer than " + std::to_string(max_bytes) + " bytes");
  auto bytes = oci::Base64Decode(ProtobufBase64(*text), path + "." + std::string(key));
  if (!bytes.ok()) return bytes.error();
  return std::move(*bytes);
}

Result<int64_t> Int64Member(const Json& obj, std::string_view key, const std::string& path) {
  const Json* v = Find(obj, key);
  if (v == nullptr) return Bad(path, key, "missing");
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() ? v->get<uint64_t>() > INT64_MAX : v->get<int64_t>() < 0) {
      return Bad(path, key, "out of range (must be 0 or more)");
    }
    return v->get<int64_t>();
  }
  if (!v->is_string()) return Bad(path, key, "not an integer");
  const std::string& s = v->get_ref<const std::string&>();
  if (s.empty() || s.size() > 18) return Bad(path, key, "'" + s.substr(0, 24) + "' is not an integer of 0 or more");
  int64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return Bad(path, key, "'" + s.substr(0, 24) + "' is not an integer of 0 or more");
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace imgtool::sigstore

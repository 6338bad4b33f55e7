// Reading the protobuf-JSON documents of Sigstore (trusted roots, bundles): a member of a
// given type or a clear error naming its path. Internal to this library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "oci/canonical_json.h"
#include "oci/result.h"

namespace imgtool::sigstore {

using oci::Json;

// The whole document: at most max_bytes, valid JSON, an object; errors name `what`.
Result<Json> ParseObjectDocument(std::string_view json, size_t max_bytes, const std::string& what);

// obj[key] when it is an object (an error naming `path` when it is missing or not one).
Result<const Json*> ObjectMember(const Json& obj, std::string_view key, const std::string& path);
// obj[key] when it is an array; an absent member is an empty array.
Result<const Json*> ArrayMember(const Json& obj, std::string_view key, const std::string& path, size_t max_items);
// obj[key] as a string; `required` makes an absent or empty one an error.
Result<std::string> TextMember(const Json& obj, std::string_view key, const std::string& path, bool required);
// obj[key], standard base64 (protobuf's bytes), decoded; at most max_bytes once decoded.
Result<std::string> BytesMember(const Json& obj, std::string_view key, const std::string& path, size_t max_bytes);
// obj[key] as protobuf's int64 (a decimal string; a JSON number is accepted too), >= 0.
Result<int64_t> Int64Member(const Json& obj, std::string_view key, const std::string& path);

}  // namespace imgtool::sigstore

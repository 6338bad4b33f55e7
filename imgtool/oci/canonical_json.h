// The one canonical JSON writer. Every document imgtool hashes or signs (manifest,
// index, config, build record) is serialized exactly once, by CanonicalJson, and
// the digest is sha256 of those bytes. Documents read from elsewhere are never
// re-serialized before hashing: raw bytes are the truth.
//
// The rule (a subset of RFC 8785 that our documents need):
//   - object keys sorted by their UTF-8 bytes, each key once;
//   - no whitespace outside strings;
//   - strings as UTF-8, escaping only '"', '\\' and control characters (\n, \t, ...,
//     \u00XX for the rest); invalid UTF-8 is an error;
//   - numbers are integers only (floats are refused: their text form is not portable).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "oci/result.h"

namespace imgtool::oci {

using Json = nlohmann::json;

Result<std::string> CanonicalJson(const Json& value);

// Parses JSON, refusing duplicate object keys (ambiguous documents are a known
// signature-bypass trick) and reporting the byte offset of a syntax error. `what` names
// the document in errors ("spec.json", "manifest sha256:ab12..").
Result<Json> ParseJson(std::string_view bytes, const std::string& what);

// obj[key] when `obj` is an object whose `key` holds a string, else "". For documents from
// outside (registries, token servers, auth files, signed statements): nlohmann's value()
// throws when the member has another type.
std::string StringMember(const Json& obj, std::string_view key);

}  // namespace imgtool::oci

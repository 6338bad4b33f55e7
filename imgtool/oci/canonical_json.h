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

// How deeply arrays and objects may nest in any JSON document imgtool reads. Real
// documents are shallow (OCI manifests and configs, Sigstore bundles, Kubernetes
// AdmissionReviews with managedFields: under 20 levels). nlohmann's parser and destructor
// do not recurse, but its dump, copy, ==, diff and patch do, and so does HasFloat here: at
// this depth the hungriest (Json::diff, which check::DiffImages uses) needs about 80 KiB
// of stack, about 1 MiB under ASan, of a thread's 8 MiB (measured; the unit test runs
// each at the cap on a 2 MiB stack). The cap is checked as each array or object opens,
// so a deeper document is refused before the level past the cap is built.
inline constexpr int kMaxJsonDepth = 128;

// Parses JSON, refusing duplicate object keys (ambiguous documents are a known
// signature-bypass trick), nesting past kMaxJsonDepth ("WHAT: nested deeper than 128
// levels") and reporting the byte offset of a syntax error. `what` names the document in
// errors ("spec.json", "manifest sha256:ab12..").
Result<Json> ParseJson(std::string_view bytes, const std::string& what);

// For readers that take text that is not JSON as "no answer" (a registry's error body, a
// token reply, a helper's answer whose text must never be quoted) and read duplicate keys
// as nlohmann does (the last one counts): a discarded value (is_discarded()) for
// malformed text, whose parse error would quote it. Nesting past kMaxJsonDepth is still
// the error above, naming `what`.
Result<Json> ParseJsonLenient(std::string_view bytes, const std::string& what);

// ParseJsonLenient where there is no error to return: a discarded value for anything it
// refuses, too deep included.
Json ParseJsonOrDiscarded(std::string_view bytes);

// obj[key] when `obj` is an object whose `key` holds a string, else "". For documents from
// outside (registries, token servers, auth files, signed statements): nlohmann's value()
// throws when the member has another type.
std::string StringMember(const Json& obj, std::string_view key);

}  // namespace imgtool::oci

// Where Go's regexp syntax and RE2's differ, and how Go reads bytes: the translation
// GoRegexp compiles through (go_regexp.h). Internal to the regexp library.
#pragma once

#include <string>
#include <string_view>

#include "oci/result.h"

namespace imgtool::regexp::internal {

// `pattern` (Go syntax) as an RE2 pattern with the same meaning. Named groups become plain
// groups: Go (1.22 on) accepts (?<name>...) and repeated names, RE2 2022 refuses both, and
// a name changes nothing a match depends on. kInvalidInput for what Go refuses and RE2
// would accept: \C (any byte), a malformed group name, "(?P<n>?" (RE2 would read the
// rewritten "(?" as a flag group), bytes that are not UTF-8. Everything else is RE2's to
// judge. An unterminated \Q is closed, so the result can be wrapped in a group.
Result<std::string> Re2FromGo(std::string_view pattern);

// Whether `text` is UTF-8 as Go decodes it (no overlong forms, no surrogates, nothing past
// U+10FFFF).
bool IsUtf8(std::string_view text);

// `text` with every byte that does not start a valid UTF-8 sequence replaced by U+FFFD:
// what Go's regexp matches against (utf8.DecodeRuneInString gives RuneError, width 1).
std::string AsGoReadsIt(std::string_view text);

}  // namespace imgtool::regexp::internal

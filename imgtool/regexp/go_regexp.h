// GoRegexp: a pattern in the syntax of Go's regexp package, compiled once and matched in
// time linear in the text (RE2: no backtracking, whatever the pattern). For patterns that
// people write (policy files, flags) and that are matched against text from outside
// (certificate identities), where std::regex backtracks for minutes on `(a+)+$` against a
// long subject. Go's syntax because cosign, sigstore-go and policy-controller compile
// identity patterns with Go's regexp.Compile: a pattern means here what it means there.
//
// Not here: anything that splits or parses text (a parser is a scanner, not a regexp).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "oci/result.h"

namespace re2 {
class RE2;
}

namespace imgtool::regexp {

class GoRegexp {
 public:
  // kInvalidInput "not a valid Go regexp (RE2 syntax): <why>" for what Go's regexp.Compile
  // refuses: RE2's errors (unbalanced parentheses, lookaround, backreferences, repeats
  // over 1000, bad escapes, invalid UTF-8), plus \C, which RE2 alone accepts. Named groups
  // are read as Go reads them: (?P<name>...) and (?<name>...), repeated names allowed.
  static Result<GoRegexp> Compile(std::string_view pattern);

  // Go's MatchString: whether the pattern matches anywhere in `text` (a search: anchors
  // are the pattern's own ^, $, \A, \z). Bytes that are not UTF-8 read as U+FFFD, one per
  // byte, as Go reads them.
  bool Search(std::string_view text) const;

  // The pattern as given.
  const std::string& pattern() const { return pattern_; }

 private:
  GoRegexp(std::string pattern, std::shared_ptr<const re2::RE2> re)
      : pattern_(std::move(pattern)), re_(std::move(re)) {}

  std::string pattern_;
  std::shared_ptr<const re2::RE2> re_;  // immutable and thread-safe: copies share it
};

}  // namespace imgtool::regexp

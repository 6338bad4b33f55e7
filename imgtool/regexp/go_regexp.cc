// GoRegexp (go_regexp.h): Go's syntax rewritten where RE2's differs (go_syntax.h), then RE2.
#include "regexp/go_regexp.h"

#include <re2/re2.h>

#include "regexp/go_syntax.h"

namespace imgtool::regexp {

namespace {

Error NotGo(const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, "not a valid Go regexp (RE2 syntax): " + why);
}

// RE2's message ("missing ): (ab") names a piece of the pattern it compiled; when that
// piece is not in the pattern the user wrote (a rewritten group name), the reason alone.
std::string Re2Reason(const re2::RE2& re, std::string_view written) {
  const std::string& message = re.error();
  const std::string& arg = re.error_arg();
  if (arg.empty() || written.find(arg) != std::string_view::npos) return message;
  const std::string suffix = ": " + arg;
  if (message.size() > suffix.size() && message.compare(message.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return message.substr(0, message.size() - suffix.size());
  }
  return message;
}

re2::RE2::Options Options() {
  re2::RE2::Options options;      // Perl-like syntax, UTF-8, leftmost-first: Go's defaults
  options.set_log_errors(false);  // library code never prints; the reason comes back
  return options;
}

}  // namespace

Result<GoRegexp> GoRegexp::Compile(std::string_view pattern) {
  auto re2_pattern = internal::Re2FromGo(pattern);
  if (!re2_pattern.ok()) return NotGo(re2_pattern.error().message);
  // Judged alone, so that errors are about the pattern as written ...
  const re2::RE2 alone(*re2_pattern, Options());
  if (!alone.ok()) return NotGo(Re2Reason(alone, pattern));
  // ... and searched for from the start over whole characters: RE2's own unanchored search
  // may start inside a multi-byte character, where \B holds; Go's starts only between
  // characters (and the text is valid UTF-8 by then, see Search).
  auto re = std::make_shared<const re2::RE2>("^(?s:.)*?(?:" + *re2_pattern + ")", Options());
  if (!re->ok()) return NotGo(re->error());
  return GoRegexp(std::string(pattern), std::move(re));
}

bool GoRegexp::Search(std::string_view text) const {
  if (internal::IsUtf8(text)) return re2::RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
  const std::string as_go_reads_it = internal::AsGoReadsIt(text);
  return re2::RE2::PartialMatch(as_go_reads_it, *re_);
}

}  // namespace imgtool::regexp

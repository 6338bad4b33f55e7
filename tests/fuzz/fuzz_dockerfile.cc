// Dockerfiles (imgtool/policy/dockerfile.h, lint.h): parser directives, continuations,
// heredocs, then every lint rule over what was parsed, with a build arg so ARG
// substitution runs both ways, and the word splitting and substitution helpers on
// each instruction.
//
// Long lines (issue 24: a 30,000-character directive or heredoc delimiter overflowed the
// stack) are reached two ways: seeds of up to 128 KiB (corpus/dockerfile/long-*, which
// also make libFuzzer's default -max_len 128 KiB), and a generator: an input that starts
// with a 0 byte is "\0 N TEXT", where each \x01 in TEXT stands for the character after it
// repeated N * 1024 times, and each \x02 for the two after it (so "\0\x64# syntax=\x01a"
// is a directive of 102,400 a's, "RUN <<\x01E" ... "\x01E" a heredoc with a delimiter as
// long, "\x02\\\n" a run of continuation lines); expansion stops at 1 MiB.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "policy/dockerfile.h"
#include "policy/lint.h"

namespace {

constexpr size_t kMaxExpanded = 1 << 20;

std::string Expanded(std::string_view input) {
  if (input.size() < 2 || input[0] != '\0') return std::string(input);
  const size_t run = static_cast<unsigned char>(input[1]) * size_t{1024};
  std::string out;
  for (size_t i = 2; i < input.size(); ++i) {
    const size_t width = input[i] == '\x01' ? 1 : input[i] == '\x02' ? 2 : 0;
    if (width > 0 && i + width < input.size() && out.size() + run * width <= kMaxExpanded) {
      for (size_t k = 0; k < run; ++k) out.append(input.substr(i + 1, width));
      i += width;
    } else {
      out += input[i];
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool;  // NOLINT(google-build-using-namespace): a harness
  auto df = policy::ParseDockerfile(Expanded(fuzz::Bytes(data, size)), "Dockerfile");
  if (!df.ok()) return 0;
  policy::LintOptions options;
  (void)policy::LintDockerfile(*df, options);
  options.build_args["BASE"] = "registry.test/base@sha256:" + std::string(64, 'a');
  (void)policy::LintDockerfile(*df, options);
  for (const auto& in : df->instructions) {
    (void)policy::SplitWords(in.args);
    (void)policy::ExpandArgs(in.args, options.build_args);
  }
  return 0;
}

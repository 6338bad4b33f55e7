// Dockerfiles (imgtool/policy/dockerfile.h, lint.h): parser directives, continuations,
// heredocs, then every lint rule over what was parsed, with a build arg so ARG
// substitution runs both ways, and the word splitting and substitution helpers on
// each instruction.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "policy/dockerfile.h"
#include "policy/lint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgtool;
  auto df = policy::ParseDockerfile(std::string(fuzz::Bytes(data, size)), "Dockerfile");
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

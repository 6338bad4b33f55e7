// Dockerfile lint: the supply-chain rules of a policy, checked on the recipe before any
// image exists. Each check is on unless the policy's "dockerfile" section turns it off:
//   fromDigest   every FROM names image@sha256:<64 hex> (after ARG substitution); FROM
//                scratch and FROM <earlier stage> are fine; so is COPY --from=<image>
//   noLatest     no image named with the tag "latest", or with no tag and no digest
//   nonRootUser  the final stage (following FROM <stage> back) ends with a numeric USER
//                that is not 0: "USER 10001:10001", not "USER app" or "USER root"
//   addChecksum  ADD of an http(s) URL carries --checksum=sha256:<64 hex>; of a git URL,
//                --checksum=<commit id>
#pragma once

#include <map>
#include <string>
#include <vector>

#include "policy/dockerfile.h"
#include "policy/policy.h"

namespace imgtool::policy {

struct Finding {
  int line = 0;
  std::string rule;
  std::string message;
};

struct LintOptions {
  DockerfileRules rules;
  std::map<std::string, std::string> build_args;  // --build-arg NAME=VALUE, over ARG defaults
};

std::vector<Finding> LintDockerfile(const Dockerfile& df, const LintOptions& options);

}  // namespace imgtool::policy

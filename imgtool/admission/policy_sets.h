// The webhook's policies: the default set (POST /validate) and named sets (POST
// /validate/<set>), each a policy file loaded into an immutable LoadedPolicy. A review
// takes the current one at its start (Get) and keeps it to the end, so a policy swapped
// meanwhile changes only the reviews that start after the swap. ReloadChanged re-reads the
// files that changed (file_watch.h) and swaps in each that parses; a broken one keeps the
// set's current policy and says why, so a bad edit of a ConfigMap never opens the gate.
//
// Not here: the polling thread, logging or metrics (cmd_admission.cc), HTTP (server.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "admission/file_watch.h"
#include "oci/result.h"
#include "policy/policy.h"

namespace imgtool::admission {

struct LoadedPolicy {
  policy::Policy policy;
  // Unique per load in this process: the facts cache keys by it, as facts (which
  // signatures verify, with which keys) depend on the policy they were gathered for.
  uint64_t generation = 0;
  std::string sha256;  // of the file's bytes, hex
};

// A policy set's name, as it appears in the path: 1-63 of [a-z0-9-], starting with a
// letter or digit (a Kubernetes label value a namespace can carry). The default set is "".
Status CheckSetName(const std::string& name);

// The generation for a new LoadedPolicy (process-wide counter).
uint64_t NextPolicyGeneration();

class PolicySets {
 public:
  // Bytes and path -> a policy; the default parses with policy::ParsePolicy (key paths
  // relative to the file's folder) and refuses a policy with no image rules.
  using Parser = std::function<Result<policy::Policy>(const std::string& bytes, const std::string& path)>;
  static Result<policy::Policy> ParseForWebhook(const std::string& bytes, const std::string& path);

  explicit PolicySets(Parser parse = ParseForWebhook) : parse_(std::move(parse)) {}

  // Loads `path` as set `name` now; an error (naming the file) when it does not parse.
  Status Add(const std::string& name, const std::string& path);
  // The set's current policy; nullptr for a set that does not exist.
  std::shared_ptr<const LoadedPolicy> Get(const std::string& name) const;
  std::vector<std::string> Names() const;  // "" first when there is a default set

  struct Reload {
    std::string name;
    std::string path;
    Status status;                            // ok: swapped in; an error: the old policy stays
    std::shared_ptr<const LoadedPolicy> now;  // the set's policy after this reload
  };
  // Every set whose file's bytes changed since last seen, re-parsed; nothing for the rest.
  // A file that cannot be read is reported once per distinct error, not at every poll.
  std::vector<Reload> ReloadChanged();

 private:
  struct Set {
    std::string path;
    std::unique_ptr<WatchedFile> file;  // touched only by Add and ReloadChanged (one thread)
    std::shared_ptr<const LoadedPolicy> current;
    std::string unreadable;  // the last stat/read error reported (a missing file: said once)
  };
  Result<std::shared_ptr<const LoadedPolicy>> Parse(const std::string& bytes, const std::string& path,
                                                    const std::string& sha256) const;

  Parser parse_;
  mutable std::mutex mu_;  // guards the map and each `current` (the swap)
  std::map<std::string, Set> sets_;
};

}  // namespace imgtool::admission

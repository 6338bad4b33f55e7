// What `imgtool sign` and `imgtool attest` share: their common flags, the store and key
// both start from, the manifests a --recursive walk reaches, and the one loop that signs
// or attests each of them and reports what was appended.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/output.h"
#include "cli/remote_flags.h"
#include "oci/result.h"
#include "sign/store.h"
#include "sign_core/keys.h"
#include "sign_core/verify.h"

namespace imgtool::cli {

// Flags sign and attest share (and attest's own, kept here so one struct carries a verb).
struct SignFlags {
  std::string ref;
  std::string key;
  std::string identity;
  std::vector<std::string> annotations;  // k=v
  std::string predicate;                 // attest
  std::string type = "spdxjson";         // attest
  std::string provenance;                // attest: a whole in-toto Statement v1 (SLSA provenance)
  bool unsigned_out = false;             // attest --provenance: print it for another signer
  std::string out;                       // where --unsigned writes it ("" or "-": stdout)
  RemoteFlags remote;
  bool json = false;
  bool recursive = false;  // an index: sign each of its entries too
};

// The store and key both verbs start from; fails before asking for a password when
// the image cannot be found.
struct Prepared {
  sign::SignatureStore store;
  sign::Pkey key;
  sign::TrustedKey self;  // our public half, for finding a signature we already made
  std::string identity;
};
Result<Prepared> Prepare(const SignFlags& f);

// One manifest to sign: the reference's own, or (--recursive) an entry of its index.
struct Target {
  sign::SignatureStore store;
  std::string platform;  // of the index entry; empty for the reference itself
};

// The reference's own manifest first, then with --recursive what it lists. `verb` names
// the action in the note printed for an index without --recursive.
Result<std::vector<Target>> Targets(const SignFlags& f, const sign::SignatureStore& top, const std::string& verb);

// Prepare -> each target -> `one` (a signature or an attestation about it; true when it
// appended one) -> report (text, or --json).
int SignEach(const SignFlags& f, const char* suffix, const std::string& verb,
             const std::function<Result<bool>(const Prepared&, const sign::SignatureStore&)>& one);

// The flags of both verbs on `cmd`: ref, --key, --identity, --recursive, registry flags, --json.
// `key_required`: sign needs a key; attest may print unsigned instead.
void AddSigningFlags(CLI::App* cmd, SignFlags& f, bool key_required);

void AddAttestCommand(CLI::App& app, Action& run);

}  // namespace imgtool::cli

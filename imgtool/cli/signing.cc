#include "cli/signing.h"

#include <cctype>
#include <iostream>
#include <set>

#include "fs/atomic_file.h"
#include "sign/password.h"

namespace imgtool::cli {

namespace {

Result<sign::Pkey> LoadSigningKey(const std::string& path) {
  auto pem = fs::ReadSmallFile(path, 64 << 10);
  if (!pem.ok()) return pem.error();
  auto password = sign::ReadPassword("Enter password for private key " + path + ": ", false);
  if (!password.ok()) return password.error();
  return sign::ParseEncryptedPrivateKeyPem(*pem, *password, path);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Every entry of `parent`'s index and of the indexes inside it, each once, in index
// order (cosign's --recursive): an index naming one image 20,000 times signs it once.
// Digests cannot form a cycle, so the walk ends.
Status AddEntries(const sign::SignatureStore& parent, std::vector<Target>& out, std::set<oci::Digest>& seen) {
  if (!parent.node().index) return Status::Ok();
  for (const auto& e : parent.node().index->children()) {
    if (!seen.insert(e.digest).second) continue;
    auto child = parent.For(e.digest);
    if (!child.ok()) return child.error().Context("--recursive: entry " + e.digest.Short());
    out.push_back({*child, e.platform ? oci::PlatformString(*e.platform) : "-"});
    IMGTOOL_TRY(AddEntries(*child, out, seen));
  }
  return Status::Ok();
}

struct Done {
  const Target* target;
  bool appended;
};

int Report(const SignFlags& f, const Prepared& p, const char* suffix, const std::vector<Done>& done,
           const std::string& verb) {
  if (f.json) {
    oci::Json out = {{"reference", f.ref},
                     {"digest", p.store.image().str()},
                     {"identity", p.identity},
                     {"tag", sign::ArtifactTag(p.store.image(), suffix)},
                     {"appended", done.front().appended}};
    if (f.recursive) {
      oci::Json entries = oci::Json::array();
      for (size_t i = 1; i < done.size(); ++i) {
        const auto& s = done[i].target->store;
        entries.push_back({{"digest", s.image().str()},
                           {"platform", done[i].target->platform},
                           {"tag", sign::ArtifactTag(s.image(), suffix)},
                           {"appended", done[i].appended}});
      }
      out["entries"] = entries;
    }
    PrintJson(out);
    return 0;
  }
  for (const auto& d : done) {
    std::string what = f.ref + (d.target->platform.empty() ? "" : " " + d.target->platform);
    std::cout << (d.appended ? verb + " " : "Already " + Lower(verb) + " by this key: ") << what << " "
              << d.target->store.image().str() << " -> " << sign::ArtifactTag(d.target->store.image(), suffix) << "\n";
  }
  return 0;
}

}  // namespace

Result<Prepared> Prepare(const SignFlags& f) {
  auto ref = ref::ParseReference(f.ref);
  if (!ref.ok()) return ref.error();
  auto store = sign::SignatureStore::Open(*ref, transport::SinkOptions{ToRegistryOptions(f.remote), {}});
  if (!store.ok()) return store.error();
  auto key = LoadSigningKey(f.key);
  if (!key.ok()) return key.error();
  std::string identity = f.identity.empty() ? store->identity() : f.identity;
  return Prepared{*store, *key, {f.key, *key}, identity};
}

// The reference's own manifest first, then with --recursive what it lists.
Result<std::vector<Target>> Targets(const SignFlags& f, const sign::SignatureStore& top, const std::string& verb) {
  std::vector<Target> out{{top, ""}};
  if (f.recursive) {
    std::set<oci::Digest> seen{top.image()};
    IMGTOOL_TRY(AddEntries(top, out, seen));
  } else if (top.node().index) {
    std::string done = Lower(verb);
    std::cerr << "note: " << f.ref << " is an index: only its own digest is " << done
              << " (with --recursive, each manifest it lists is " << done << " too)\n";
  }
  return out;
}

// Prepare -> each target -> `one` (a signature or an attestation about it) -> report.
int SignEach(const SignFlags& f, const char* suffix, const std::string& verb,
             const std::function<Result<bool>(const Prepared&, const sign::SignatureStore&)>& one) {
  auto p = Prepare(f);
  if (!p.ok()) return Fail(p.error());
  auto targets = Targets(f, p->store, verb);
  if (!targets.ok()) return Fail(targets.error().Context(f.ref));
  std::vector<Done> done;
  for (const auto& t : *targets) {
    auto appended = one(*p, t.store);
    if (!appended.ok()) return Fail(appended.error().Context(f.ref));
    done.push_back({&t, *appended});
  }
  return Report(f, *p, suffix, done, verb);
}

void AddSigningFlags(CLI::App* cmd, SignFlags& f, bool key_required) {
  cmd->add_option("ref", f.ref, "oci:DIR:TAG or docker://HOST/REPO[:TAG|@DIGEST]")->required();
  auto* key = cmd->add_option("--key", f.key, "cosign private key (ENCRYPTED SIGSTORE/COSIGN PRIVATE KEY PEM)");
  if (key_required) key->required();
  cmd->add_option("--identity", f.identity,
                  "docker-reference written in the payload (default: HOST/REPO for docker://, the layout "
                  "folder's name for oci:)");
  cmd->add_flag("--recursive", f.recursive,
                "For an index: also each manifest it lists (every platform's image), each by its own digest");
  AddRemoteFlags(cmd, f.remote);
  cmd->add_flag("--json", f.json, "Print a JSON object (with --recursive: \"entries\", one per manifest)");
}

}  // namespace imgtool::cli

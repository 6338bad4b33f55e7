// imgtool keygen / sign / attest: cosign-compatible keys, signatures and attestations.
// Each verb is one pipeline: key file -> payload about the image's digest -> signature
// -> a layer appended to the image at sha256-<hex>.sig (.att) in the same layout or
// registry repository (sign/store.h); with --recursive, the same for each manifest an
// index lists. Verification is `imgtool verify --key`.
#include <sys/stat.h>

#include <cctype>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli/output.h"
#include "cli/remote_flags.h"
#include "fs/atomic_file.h"
#include "sign/base64.h"
#include "sign/dsse.h"
#include "sign/keys.h"
#include "sign/password.h"
#include "sign/payload.h"
#include "sign/signature_image.h"
#include "sign/store.h"

namespace imgtool::cli {

namespace {

struct KeygenFlags {
  std::string prefix = "cosign";
};

Status WriteNew(const std::string& path, const std::string& contents, mode_t mode) {
  if (fs::Exists(path)) {
    return MakeError(ErrorKind::kInvalidInput, path + ": exists; remove it or choose another --output-key-prefix");
  }
  fs::AtomicFile f;
  // The private key is never readable by others, not even for the moment before rename:
  // created with its mode (a chmod after the create, by name, could be raced), then set
  // exactly, whatever the umask, through the descriptor.
  IMGTOOL_TRY(f.Open(path, mode));
  IMGTOOL_TRY(f.Chmod(mode));
  IMGTOOL_TRY(f.Write(contents));
  return f.Commit();
}

int RunKeygen(const KeygenFlags& f) {
  std::string priv_path = f.prefix + ".key", pub_path = f.prefix + ".pub";
  for (const auto& p : {priv_path, pub_path}) {
    if (fs::Exists(p))
      return Fail(MakeError(ErrorKind::kInvalidInput, p + ": exists; remove it or choose another --output-key-prefix"));
  }
  auto password = sign::ReadPassword("Enter password for private key: ", true);
  if (!password.ok()) return Fail(password.error());
  auto key = sign::GenerateP256Key();
  if (!key.ok()) return Fail(key.error());
  auto priv = sign::EncryptedPrivateKeyPem(*key, *password);
  if (!priv.ok()) return Fail(priv.error());
  auto pub = sign::PublicKeyPem(*key);
  if (!pub.ok()) return Fail(pub.error());
  if (auto st = WriteNew(priv_path, *priv, 0600); !st.ok()) return Fail(st.error());
  if (auto st = WriteNew(pub_path, *pub, 0644); !st.ok()) return Fail(st.error());
  std::cerr << "Private key written to " << priv_path << "\nPublic key written to " << pub_path << "\n";
  return 0;
}

// Flags sign and attest share.
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

Result<sign::Pkey> LoadSigningKey(const std::string& path) {
  auto pem = fs::ReadSmallFile(path, 64 << 10);
  if (!pem.ok()) return pem.error();
  auto password = sign::ReadPassword("Enter password for private key " + path + ": ", false);
  if (!password.ok()) return password.error();
  return sign::ParseEncryptedPrivateKeyPem(*pem, *password, path);
}

// The store and key both verbs start from; fails before asking for a password when
// the image cannot be found.
struct Prepared {
  sign::SignatureStore store;
  sign::Pkey key;
  sign::TrustedKey self;  // our public half, for finding a signature we already made
  std::string identity;
};
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

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One manifest to sign: the reference's own, or (--recursive) an entry of its index.
struct Target {
  sign::SignatureStore store;
  std::string platform;  // of the index entry; empty for the reference itself
};

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

Result<bool> SignOne(const Prepared& p, const sign::SignatureStore& store,
                     const std::map<std::string, std::string>& annotations) {
  auto payload = sign::SimpleSigningPayload(p.identity, store.image(), annotations);
  if (!payload.ok()) return payload.error();
  auto sig = sign::SignSha256(p.key, *payload);
  if (!sig.ok()) return sig.error();
  sign::SignatureLayer layer{{std::string(sign::kSimpleSigningMediaType),
                              oci::Digest::Of(*payload),
                              static_cast<int64_t>(payload->size()),
                              {{std::string(sign::kSignatureAnnotation), sign::Base64Encode(*sig)}},
                              std::nullopt},
                             *payload};
  // ECDSA signatures differ every time: "the same" is the same payload under our key.
  auto same = [&](const sign::SignatureLayer& l) {
    return l.payload == *payload && sign::VerifySignatures({l}, store.image(), {p.self}).ok;
  };
  return store.Append(sign::kSignatureSuffix, layer, same);
}

int RunSign(const SignFlags& f) {
  std::map<std::string, std::string> annotations;
  for (const auto& a : f.annotations) {
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Fail(MakeError(ErrorKind::kInvalidInput, "-a " + a + ": want KEY=VALUE"));
    }
    annotations[a.substr(0, eq)] = a.substr(eq + 1);
  }
  return SignEach(f, ".sig", "Signed",
                  [&](const Prepared& p, const sign::SignatureStore& store) { return SignOne(p, store, annotations); });
}

// A statement about `store`'s image, DSSE-signed and appended at its .att tag, unless
// this key already stored the same statement there.
Result<bool> AppendStatement(const Prepared& p, const sign::SignatureStore& store, const std::string& type,
                             const std::string& statement) {
  auto sig = sign::SignSha256(p.key, sign::Pae(sign::kInTotoPayloadType, statement));
  if (!sig.ok()) return sig.error();
  std::string envelope = sign::DsseEnvelope(sign::kInTotoPayloadType, statement, *sig);
  // cosign writes the signature annotation empty for attestations: it is in the envelope.
  sign::SignatureLayer layer{
      {std::string(sign::kDsseMediaType),
       oci::Digest::Of(envelope),
       static_cast<int64_t>(envelope.size()),
       {{std::string(sign::kSignatureAnnotation), ""}, {std::string(sign::kPredicateTypeAnnotation), type}},
       std::nullopt},
      envelope};
  auto same = [&](const sign::SignatureLayer& l) {
    auto inner = sign::EnvelopePayload(l.payload);
    return inner.ok() && *inner == statement && sign::VerifyAttestations({l}, store.image(), {p.self}).ok;
  };
  return store.Append(sign::kAttestationSuffix, layer, same);
}

Result<bool> AttestOne(const Prepared& p, const sign::SignatureStore& store, const std::string& type,
                       const std::string& predicate, const std::string& predicate_path) {
  auto statement = sign::InTotoStatement(p.identity, store.image(), type, predicate);
  if (!statement.ok()) return statement.error().Context(predicate_path);
  return AppendStatement(p, store, type, *statement);
}

// --provenance: a whole statement (imgtool build's OUTPUT.provenance.json), its bytes
// signed as they are, never re-wrapped. Its predicateType, for the .att annotation.
Result<std::string> ProvenanceType(const std::string& statement, const std::string& path) {
  auto j = oci::ParseJson(statement, path);
  if (!j.ok()) return j.error();
  std::string type = j->is_object() ? oci::StringMember(*j, "_type") : "";
  if (type != sign::kInTotoStatementV1Type) {
    return MakeError(ErrorKind::kInvalidInput,
                     path + ": _type is not " + std::string(sign::kInTotoStatementV1Type) + " (a whole statement, as "
                     "imgtool build writes OUTPUT.provenance.json; --predicate takes a bare predicate)");
  }
  std::string predicate_type = oci::StringMember(*j, "predicateType");
  if (predicate_type.empty()) return MakeError(ErrorKind::kInvalidInput, path + ": no predicateType");
  return predicate_type;
}

// The statement must be about this image: refused (exit 2) before anything is signed.
Status CheckAbout(const std::string& statement, const std::string& path, const sign::SignatureStore& store) {
  auto st = sign::CheckStatementClaims(statement, store.image(), "");
  if (st.ok()) return st;
  return MakeError(ErrorKind::kInvalidInput, path + ": " + st.error().message);
}

// --unsigned: every target checked, the statement written for another signer (cosign
// attest-blob, GitHub's attest action); nothing is stored.
int ProvenanceUnsigned(const SignFlags& f, const std::string& statement) {
  auto ref = ref::ParseReference(f.ref);
  if (!ref.ok()) return Fail(ref.error());
  auto store = sign::SignatureStore::Open(*ref, transport::SinkOptions{ToRegistryOptions(f.remote), {}});
  if (!store.ok()) return Fail(store.error());
  auto targets = Targets(f, *store, "Checked");
  if (!targets.ok()) return Fail(targets.error().Context(f.ref));
  for (const auto& t : *targets) {
    if (auto st = CheckAbout(statement, f.provenance, t.store); !st.ok()) return Fail(st.error().Context(f.ref));
  }
  if (f.out.empty() || f.out == "-") {
    std::cout << statement;
  } else if (auto st = fs::WriteFileAtomic(f.out, statement); !st.ok()) {
    return Fail(st.error());
  }
  std::cerr << "Checked: the statement names " << f.ref << " " << store->image().str()
            << "; not signed (--unsigned): sign it with another signer\n";
  return 0;
}

int RunAttestProvenance(const SignFlags& f) {
  auto statement = fs::ReadSmallFile(f.provenance, 16 << 20);
  if (!statement.ok()) return Fail(statement.error().Context("--provenance"));
  auto type = ProvenanceType(*statement, f.provenance);
  if (!type.ok()) return Fail(type.error());
  if (f.unsigned_out) return ProvenanceUnsigned(f, *statement);
  return SignEach(f, ".att", "Attested", [&](const Prepared& p, const sign::SignatureStore& store) -> Result<bool> {
    IMGTOOL_TRY(CheckAbout(*statement, f.provenance, store));
    return AppendStatement(p, store, *type, *statement);
  });
}

int RunAttest(const SignFlags& f) {
  if (f.predicate.empty() == f.provenance.empty()) {
    return Fail(MakeError(ErrorKind::kInvalidInput, "attest: give --predicate FILE or --provenance FILE"));
  }
  if (f.unsigned_out && f.provenance.empty()) {
    return Fail(MakeError(ErrorKind::kInvalidInput, "attest: --unsigned is for --provenance"));
  }
  if (f.key.empty() != f.unsigned_out) {
    return Fail(MakeError(ErrorKind::kInvalidInput, "attest: give --key to sign and store the attestation, or "
                                                    "--unsigned (with --provenance) to print the checked statement"));
  }
  if (!f.provenance.empty()) return RunAttestProvenance(f);
  auto type = sign::PredicateTypeFor(f.type);
  if (!type.ok()) return Fail(type.error());
  auto predicate = fs::ReadSmallFile(f.predicate);
  if (!predicate.ok()) return Fail(predicate.error().Context("--predicate"));
  return SignEach(f, ".att", "Attested", [&](const Prepared& p, const sign::SignatureStore& store) {
    return AttestOne(p, store, *type, *predicate, f.predicate);
  });
}

void AddSignLike(CLI::App& app, Action& run, bool attest) {
  auto f = std::make_shared<SignFlags>();
  CLI::App* cmd =
      attest ? app.add_subcommand(
                   "attest",
                   "Sign a predicate (e.g. the SBOM `imgtool build` writes) about an image, as `cosign attest`\n"
                   "does: an in-toto Statement v0.1 in a DSSE envelope, appended at tag sha256-<hex>.att.\n"
                   "Pipeline: predicate -> statement about the digest -> DSSE signature -> .att image.\n"
                   "An index is attested by its own digest; --recursive attests each of its entries too.\n\n"
                   "--provenance takes a whole in-toto Statement v1 instead (the SLSA provenance `imgtool build`\n"
                   "writes to OUTPUT.provenance.json): refused unless a subject names the image's digest, signed\n"
                   "as it is (never re-wrapped), or with --unsigned printed for another signer.\n\n"
                   "Examples:\n  COSIGN_PASSWORD=... imgtool attest --key cosign.key --predicate "
                   "out/golden.spdx.json --type spdxjson oci:out/golden:latest\n"
                   "  imgtool attest --key cosign.key --predicate sbom.spdx.json --recursive oci:out/multi:v1\n"
                   "  imgtool attest --key cosign.key --provenance out/golden.provenance.json oci:out/golden:latest\n"
                   "  imgtool attest --provenance out/golden.provenance.json --unsigned -o p.json oci:out/golden:latest")
             : app.add_subcommand(
                   "sign",
                   "Sign an image as `cosign sign --key` does: cosign's simple-signing payload naming the\n"
                   "image's digest, ECDSA P-256/SHA-256, appended as a layer of the image at tag\n"
                   "sha256-<hex>.sig beside it (same layout, or same registry repository). Signing again\n"
                   "with the same key and annotations changes nothing.\n"
                   "Pipeline: key -> payload (digest) -> signature -> .sig image.\n"
                   "An index is signed by its own digest (what `policy check` and the admission\n"
                   "webhook verify); --recursive signs each of its entries' digests too, as cosign.\n"
                   "The password comes from $COSIGN_PASSWORD, else a prompt.\n\n"
                   "Examples:\n  imgtool sign --key cosign.key oci:out/golden:latest\n"
                   "  imgtool sign --key cosign.key -a ci=1 docker://registry.example:5000/golden:v1\n"
                   "  imgtool sign --key cosign.key --recursive oci:out/multi:v1   # index + each platform");
  cmd->add_option("ref", f->ref, "oci:DIR:TAG or docker://HOST/REPO[:TAG|@DIGEST]")->required();
  auto* key = cmd->add_option("--key", f->key, "cosign private key (ENCRYPTED SIGSTORE/COSIGN PRIVATE KEY PEM)");
  if (!attest) key->required();
  cmd->add_option("--identity", f->identity,
                  "docker-reference written in the payload (default: HOST/REPO for docker://, the layout "
                  "folder's name for oci:)");
  if (attest) {
    cmd->add_option("--predicate", f->predicate, "JSON file to attest (an SPDX document for spdxjson)");
    cmd->add_option("--type", f->type, "spdxjson, custom, or a predicate type URI")->default_str("spdxjson");
    cmd->add_option("--provenance", f->provenance,
                    "A whole in-toto Statement v1 to attest as it is (OUTPUT.provenance.json of imgtool build)");
    cmd->add_flag("--unsigned", f->unsigned_out,
                  "With --provenance and no --key: check the statement names the image, print it (or -o FILE), "
                  "store nothing");
    cmd->add_option("-o,--output", f->out, "Where --unsigned writes the statement (default: stdout)");
  } else {
    cmd->add_option("-a,--annotation", f->annotations, "KEY=VALUE for the payload's optional section (repeatable)");
  }
  cmd->add_flag("--recursive", f->recursive,
                "For an index: also each manifest it lists (every platform's image), each by its own digest");
  AddRemoteFlags(cmd, f->remote);
  cmd->add_flag("--json", f->json, "Print a JSON object (with --recursive: \"entries\", one per manifest)");
  cmd->callback([f, &run, attest] { run = [f, attest] { return attest ? RunAttest(*f) : RunSign(*f); }; });
}

}  // namespace

void AddSignCommands(CLI::App& app, Action& run) {
  auto kf = std::make_shared<KeygenFlags>();
  CLI::App* keygen =
      app.add_subcommand("keygen",
                         "Write an ECDSA P-256 key pair in cosign's formats: PREFIX.pub (PEM PUBLIC KEY) and\n"
                         "PREFIX.key (ENCRYPTED SIGSTORE PRIVATE KEY: scrypt + nacl/secretbox, mode 0600).\n"
                         "The password comes from $COSIGN_PASSWORD, else a prompt (asked twice).\n\n"
                         "Example:\n  imgtool keygen --output-key-prefix ci   # ci.key, ci.pub");
  keygen->add_option("--output-key-prefix", kf->prefix, "Files PREFIX.key and PREFIX.pub")->default_str("cosign");
  keygen->callback([kf, &run] { run = [kf] { return RunKeygen(*kf); }; });
  AddSignLike(app, run, false);
  AddSignLike(app, run, true);
}

}  // namespace imgtool::cli

// imgtool attest: an in-toto statement about an image's digest in a DSSE envelope,
// appended at sha256-<hex>.att as cosign attest stores it. Either a bare predicate
// (--predicate, wrapped in a Statement v0.1 as cosign does) or a whole Statement v1
// (--provenance, imgtool build's SLSA provenance, signed as it is); --unsigned checks a
// statement against the image and prints it for another signer.
#include <iostream>
#include <memory>
#include <string>

#include "cli/signing.h"
#include "fs/atomic_file.h"
#include "sign/signature_image.h"
#include "sign_core/dsse.h"

namespace imgtool::cli {

namespace {

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
                     path + ": _type is not " + std::string(sign::kInTotoStatementV1Type) +
                         " (a whole statement, as "
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
    return Fail(MakeError(ErrorKind::kInvalidInput,
                          "attest: give --key to sign and store the attestation, or "
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

}  // namespace

void AddAttestCommand(CLI::App& app, Action& run) {
  auto f = std::make_shared<SignFlags>();
  CLI::App* cmd = app.add_subcommand(
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
      "  imgtool attest --provenance out/golden.provenance.json --unsigned -o p.json oci:out/golden:latest");
  AddSigningFlags(cmd, *f, false);
  cmd->add_option("--predicate", f->predicate, "JSON file to attest (an SPDX document for spdxjson)");
  cmd->add_option("--type", f->type, "spdxjson, custom, or a predicate type URI")->default_str("spdxjson");
  cmd->add_option("--provenance", f->provenance,
                  "A whole in-toto Statement v1 to attest as it is (OUTPUT.provenance.json of imgtool build)");
  cmd->add_flag("--unsigned", f->unsigned_out,
                "With --provenance and no --key: check the statement names the image, print it (or -o FILE), "
                "store nothing");
  cmd->add_option("-o,--output", f->out, "Where --unsigned writes the statement (default: stdout)");
  cmd->callback([f, &run] { run = [f] { return RunAttest(*f); }; });
}

}  // namespace imgtool::cli

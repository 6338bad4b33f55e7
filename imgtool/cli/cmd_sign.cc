// imgtool keygen / sign: cosign-compatible keys and signatures. sign is one pipeline:
// key file -> simple-signing payload about the image's digest -> signature -> a layer
// appended to the image at sha256-<hex>.sig in the same layout or registry repository
// (sign/store.h); with --recursive, the same for each manifest an index lists.
// Verification is `imgtool verify --key`; attestations are cmd_attest.cc.
#include <sys/stat.h>

#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/signing.h"
#include "fs/atomic_file.h"
#include "oci/base64.h"
#include "sign/password.h"
#include "sign/signature_image.h"
#include "sign_core/keys.h"
#include "sign_core/payload.h"

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

Result<bool> SignOne(const Prepared& p, const sign::SignatureStore& store,
                     const std::map<std::string, std::string>& annotations) {
  auto payload = sign::SimpleSigningPayload(p.identity, store.image(), annotations);
  if (!payload.ok()) return payload.error();
  auto sig = sign::SignSha256(p.key, *payload);
  if (!sig.ok()) return sig.error();
  sign::SignatureLayer layer{{std::string(sign::kSimpleSigningMediaType),
                              oci::Digest::Of(*payload),
                              static_cast<int64_t>(payload->size()),
                              {{std::string(sign::kSignatureAnnotation), oci::Base64Encode(*sig)}},
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

void AddSign(CLI::App& app, Action& run) {
  auto f = std::make_shared<SignFlags>();
  CLI::App* cmd =
      app.add_subcommand("sign",
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
  AddSigningFlags(cmd, *f, true);
  cmd->add_option("-a,--annotation", f->annotations, "KEY=VALUE for the payload's optional section (repeatable)");
  cmd->callback([f, &run] { run = [f] { return RunSign(*f); }; });
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
  AddSign(app, run);
  AddAttestCommand(app, run);
}

}  // namespace imgtool::cli

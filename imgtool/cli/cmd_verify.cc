// imgtool verify REF: check every blob's size and sha256, media types and diff_ids.
#include <iostream>

#include "check/verify.h"
#include "cli/output.h"
#include "cli/remote_flags.h"
#include "remote/transfer.h"

namespace imgtool::cli {

namespace {

struct VerifyFlags {
  std::string ref;
  bool json = false;
  RemoteFlags remote;
};

int RunVerify(const VerifyFlags& f) {
  auto ref = layout::ParseReference(f.ref);
  if (!ref.ok()) return Fail(ref.error());
  std::string dir = ref->path;
  std::string tag = ref->tag;
  std::optional<fs::TempDir> extracted;
  if (ref->transport == layout::Transport::kDocker) {
    // Pull into a temporary layout (every blob hashed on the way), then check it all.
    auto t = fs::TempDir::Create("imgtool-verify-");
    if (!t.ok()) return Fail(t.error());
    extracted = std::move(*t);
    layout::Reference local;
    local.path = extracted->path() + "/image";
    local.tag = "verify";
    remote::TransferOptions opts;
    opts.source = ToRegistryOptions(f.remote);
    auto copied = remote::Copy(*ref, local, opts);
    if (!copied.ok()) return Fail(copied.error());
    dir = local.path;
    tag = local.tag;
  } else if (ref->transport == layout::Transport::kOciArchive) {
    auto t = fs::TempDir::Create("imgtool-verify-");
    if (!t.ok()) return Fail(t.error());
    extracted = std::move(*t);
    if (auto st = layout::ExtractOciArchive(ref->path, extracted->path()); !st.ok()) return Fail(st.error());
    dir = extracted->path();
  }
  auto report = check::VerifyLayoutImage(dir, tag);
  if (!report.ok()) return Fail(report.error().Context(f.ref));
  if (f.json) {
    oci::Json problems = oci::Json::array();
    for (const auto& p : report->problems) problems.push_back({{"blob", p.blob}, {"problem", p.what}});
    PrintJson({{"reference", f.ref},
               {"digest", report->manifest.str()},
               {"ok", report->ok()},
               {"blobsChecked", report->blobs_checked},
               {"bytesChecked", report->bytes_checked},
               {"problems", problems}});
  } else {
    for (const auto& p : report->problems) std::cout << "FAILED " << p.blob << ": " << p.what << "\n";
    std::cout << (report->ok() ? "OK " : "FAILED ") << f.ref << " " << report->manifest.str() << ": "
              << report->blobs_checked << " blobs, " << HumanBytes(report->bytes_checked) << " checked, "
              << report->problems.size() << " problems\n";
  }
  return report->ok() ? 0 : ExitCodeFor(ErrorKind::kIntegrity);
}

}  // namespace

void AddVerifyCommand(CLI::App& app, Action& run) {
  auto f = std::make_shared<VerifyFlags>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Check an image end to end, trusting nothing: index -> manifest -> config ->\n"
      "layers; every blob's size and sha256, media types, and each layer's diff_id\n"
      "against its decompressed content. Every problem is named; exit 4 if any.");
  cmd->add_option("ref", f->ref, "oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker://HOST/REPO[:TAG|@DIGEST]")
      ->required();
  AddRemoteFlags(cmd, f->remote);
  cmd->add_flag("--json", f->json, "Print a JSON report");
  cmd->callback([f, &run] { run = [f] { return RunVerify(*f); }; });
}

}  // namespace imgtool::cli

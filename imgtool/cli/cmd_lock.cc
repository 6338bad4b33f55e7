// imgtool lock SPEC: pin every input of a build in imgtool.lock.json.
#include <iostream>

#include "builder/fetch.h"
#include "builder/lock.h"
#include "cli/output.h"
#include "cli/remote_flags.h"
#include "fs/atomic_file.h"

namespace imgtool::cli {

namespace {

struct LockFlags {
  std::string spec;
  std::string output;
  std::string download_dir;
  bool json = false;
  bool check = false;
  bool quiet = false;
  std::string platform;
  RemoteFlags remote;  // a docker:// base
};

int RunLock(const LockFlags& f) {
  build::FetchOptions fetch;
  fetch.cache_dir = f.download_dir.empty() ? build::DefaultDownloadDir() : f.download_dir;
  if (!f.quiet) fetch.progress = [](const std::string& line) { PrintLine("imgtool: ", line); };
  std::string out = f.output.empty() ? fs::DirName(f.spec) + "/" + build::LockFileName() : f.output;
  std::optional<oci::Platform> platform;
  if (!f.platform.empty()) {
    auto p = oci::ParsePlatform(f.platform);
    if (!p.ok()) return Fail(p.error().Context("--platform"));
    platform = *p;
  }
  auto lock = build::LockSpec(f.spec, fetch, ToRegistryOptions(f.remote), platform);
  if (!lock.ok()) return Fail(lock.error());
  if (f.check) {
    auto locked = build::ReadLock(out);
    if (!locked.ok()) return Fail(locked.error());
    if (platform) *locked = build::OnlyPlatform(*locked, *platform);
    if (auto s = build::CompareLock(*locked, *lock, out); !s.ok()) return Fail(s.error());
  } else if (auto s = fs::WriteFileAtomic(out, build::LockJson(*lock)); !s.ok()) {
    return Fail(s.error());
  }
  if (f.json) {
    auto doc = oci::ParseJson(build::LockJson(*lock), "lock");
    if (!doc.ok()) return Fail(doc.error());
    PrintJson({{"lockFile", out}, {"checked", f.check}, {"inputs", (*doc)["inputs"]}});
    return 0;
  }
  uint64_t bytes = 0;
  for (const auto& in : lock->inputs) bytes += in.size;
  std::cout << out << (f.check ? ": matches, " : ": ") << lock->inputs.size() << " inputs, " << HumanBytes(bytes)
            << "\n";
  return 0;
}

}  // namespace

void AddLockCommand(CLI::App& app, Action& run) {
  auto f = std::make_shared<LockFlags>();
  CLI::App* cmd =
      app.add_subcommand("lock",
                         "Pin every input of a build spec in a lock file.\n\n"
                         "Opens the base (a registry base from the download cache, fetched there once) and\n"
                         "resolves it to the spec's platform, fetches the spec's package URLs, checks each\n"
                         "package against its pins (sha256, name, version), hashes every file the layers take,\n"
                         "and writes SPEC_DIR/imgtool.lock.json: each input's kind, name, version, sha256, size\n"
                         "and source (the base's: its pinned digest and platform manifest); for a multi-platform\n"
                         "spec, each platform's inputs, named with their platform. Commit it beside the\n"
                         "spec; `imgtool build --locked` then refuses to build when any input differs.\n\n"
                         "Examples:\n  imgtool lock examples/golden/spec.json\n"
                         "  imgtool lock --check examples/golden/spec.json   # CI: is the lock current?");
  cmd->add_option("spec", f->spec, "Build spec (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", f->output, "Lock file to write (default: imgtool.lock.json beside the spec)");
  cmd->add_option("--download-dir", f->download_dir,
                  "Where package URLs and registry bases are fetched to (default: $IMGTOOL_CACHE/downloads or\n"
                  "~/.cache/imgtool/downloads)");
  AddRemoteFlags(cmd, f->remote);
  cmd->add_option("--platform", f->platform,
                  "Lock one platform's inputs of a multi-platform spec (OS/ARCH[/VARIANT]); default: every\n"
                  "platform, each input named with its platform");
  cmd->add_flag("--check", f->check, "Write nothing; fail (exit 4) naming each input that differs from the lock");
  cmd->add_flag("--json", f->json, "Print the inputs as JSON");
  cmd->add_flag("-q,--quiet", f->quiet, "No progress on stderr");
  cmd->callback([f, &run] { run = [f] { return RunLock(*f); }; });
}

}  // namespace imgtool::cli

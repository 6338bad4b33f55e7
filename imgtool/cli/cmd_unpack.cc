// imgtool unpack REF DIR: an image -> an OCI runtime bundle (DIR/config.json + DIR/rootfs)
// that runc runs and Slurm's `srun --container=DIR` hands to it.
// Pipeline: open -> [index: the image for --platform, default this machine's] -> layers
// streamed (each checked against its digest) through rootfs::Applier onto DIR.tmp-XXXXXX
// -> config.json -> rename to DIR.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iostream>

#include "bundle/bundle.h"
#include "cli/output.h"
#include "cli/remote_flags.h"

namespace imgtool::cli {

namespace {

struct UnpackFlags {
  std::string ref;
  std::string dir;
  std::string platform;
  bool force = false;
  bool json = false;
  RemoteFlags remote;
};

std::atomic<bool> g_unpack_cancel{false};

extern "C" void OnUnpackSignal(int) { g_unpack_cancel.store(true); }

// Ctrl-C, SIGTERM (Slurm's scancel), SIGHUP: the unpack stops at the next entry or block
// and removes DIR.tmp-XXXXXX; a second signal ends imgtool at once.
void CatchSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnUnpackSignal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

// This machine's platform, as OCI names it (an index's default choice).
oci::Platform UnpackHostPlatform() {
#if defined(__aarch64__)
  return {"linux", "arm64", ""};
#else
  return {"linux", "amd64", ""};
#endif
}

Result<oci::Node> OpenForUnpack(const UnpackFlags& f) {
  auto p = PlatformFlag(f.platform);
  if (!p.ok()) return p.error();
  auto opened = transport::Open(f.ref, ToRegistryOptions(f.remote));
  if (!opened.ok()) return opened.error();
  std::optional<oci::Platform> want = *p;
  if (!want && opened->node.is_index()) want = UnpackHostPlatform();
  auto node = transport::SelectPlatform(opened->node, want);
  if (!node.ok()) return node.error().Context(f.ref);
  if (node->is_index() || node->image->is_artifact()) {
    return MakeError(ErrorKind::kInvalidInput, f.ref + ": not an image (an index or an artifact): nothing to run");
  }
  return node;
}

int RunUnpack(const UnpackFlags& f) {
  auto node = OpenForUnpack(f);
  if (!node.ok()) return Fail(node.error());
  bundle::UnpackOptions o;
  o.chown = ::geteuid() == 0;
  o.force = f.force;
  o.cancel = &g_unpack_cancel;
  CatchSignals();
  auto r = bundle::WriteBundle(*node->image, f.dir, o);
  if (!r.ok()) return Fail(r.error());
  if (f.json) {
    PrintJson({{"bundle", r->bundle},
               {"rootfs", r->rootfs},
               {"image", r->image.str()},
               {"config", r->config.str()},
               {"layers", r->layers},
               {"files", r->files},
               {"bytes", r->bytes},
               {"owners", o.chown ? "chown" : "rootless"},
               {"xattrsSkipped", r->xattrs_skipped}});
    return 0;
  }
  std::cout << "Unpacked " << r->image.str() << " (" << r->layers << " layers, " << r->files << " files, "
            << HumanBytes(r->bytes) << ") into " << r->bundle << "\n";
  return 0;
}

}  // namespace

void AddUnpackCommand(CLI::App& app, Action& run) {
  auto f = std::make_shared<UnpackFlags>();
  CLI::App* cmd =
      app.add_subcommand("unpack",
                         "Turn an image into an OCI runtime bundle: DIR/rootfs (the layers applied in order, as\n"
                         "`umoci unpack` does) and DIR/config.json (what to run: Entrypoint + Cmd as the image's\n"
                         "User, resolved in the image's own /etc/passwd, with its Env and WorkingDir). runc, crun\n"
                         "and Slurm (`srun --container=DIR`, oci.conf running runc) run a bundle as it is.\n"
                         "Pipeline: open -> [index: --platform, default this machine's] -> layers (each checked\n"
                         "against its digest while it streams; every hostile entry `imgtool policy` refuses is\n"
                         "refused here: paths out of the root, writes through symlinks, device nodes) ->\n"
                         "DIR.tmp-XXXXXX -> config.json -> renamed to DIR. DIR must not exist; a failure or\n"
                         "Ctrl-C leaves none. As root, files get the layers' owners; otherwise they are yours\n"
                         "(as umoci --rootless). The container shares the host's network (NCCL/Gloo reach peers).\n\n"
                         "Examples:\n"
                         "  imgtool verify oci:out/golden:latest --key cosign.pub && \\\n"
                         "    imgtool unpack oci:out/golden:latest /shared/bundles/golden\n"
                         "  srun -N2 --container=/shared/bundles/golden trainer --epochs 1\n"
                         "  sudo runc run --bundle /shared/bundles/golden job1\n"
                         "  imgtool unpack --platform linux/arm64 docker://127.0.0.1:5000/golden:multi bundle --json");
  cmd->add_option("ref", f->ref,
                  "oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:NAME:TAG|:@N] or "
                  "docker://[HOST/]REPO[:TAG|@DIGEST]")
      ->required();
  cmd->add_option("dir", f->dir, "The bundle folder to create")->required();
  AddRemoteFlags(cmd, f->remote);
  cmd->add_option("--platform", f->platform, "For an index: the image for OS/ARCH[/VARIANT] (default: this machine's)");
  cmd->add_flag("--force", f->force, "Replace DIR if it is a bundle (a folder with a config.json), in one rename");
  cmd->add_flag("--json", f->json, "Print {bundle, rootfs, image, config, layers, files, bytes} as JSON");
  cmd->callback([f, &run] { run = [f] { return RunUnpack(*f); }; });
}

}  // namespace imgtool::cli

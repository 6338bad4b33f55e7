// imgtool copy / push / pull SRC DEST, imgtool resolve REF, imgtool tags REPO:
// the registry verbs. Each is one pipeline (source -> blobs -> manifests -> sink, then
// the image's signatures, attestations and SBOM) run by transport::Copy; this file
// parses flags, shows progress and prints the result.
#include <chrono>
#include <iostream>

#include "cli/output.h"
#include "cli/remote_flags.h"
#include "ref/reference.h"
#include "transport/copy.h"

namespace imgtool::cli {

namespace {

struct CopyFlags {
  std::string src, dest;
  RemoteFlags common, src_side, dest_side;
  int jobs = 3;
  uint64_t chunk_mib = 1024;
  uint64_t limit_rate = 0;
  bool quiet = false;
  bool json = false;
  bool no_artifacts = false;
  std::string platform;
};

remote::RegistryOptions Side(const RemoteFlags& common, const RemoteFlags& side) {
  RemoteFlags f = common;
  if (!side.creds.empty()) f.creds = side.creds;
  if (!side.authfile.empty()) f.authfile = side.authfile;
  if (!side.cert_dir.empty()) f.cert_dir = side.cert_dir;
  f.tls_verify = common.tls_verify && side.tls_verify;
  return ToRegistryOptions(f);
}

oci::Json ReportJson(const CopyFlags& f, const transport::CopyReport& r, double seconds) {
  oci::Json blobs = oci::Json::array();
  for (const auto& b : r.blobs) {
    blobs.push_back({{"digest", b.digest.str()},
                     {"mediaType", b.media_type},
                     {"size", b.size},
                     {"action", b.action},
                     {"bytesSent", b.bytes_sent},
                     {"resumedFrom", b.resumed_from}});
  }
  oci::Json manifests = oci::Json::array();
  for (const auto& m : r.manifests) manifests.push_back(m.str());
  return {{"source", f.src},        {"destination", f.dest},    {"digest", r.digest.str()}, {"mediaType", r.media_type},
          {"manifests", manifests}, {"artifacts", r.artifacts}, {"blobs", blobs},           {"bytesSent", r.bytes_sent},
          {"seconds", seconds}};
}

// `need`: "push" wants a local source and a docker:// destination, "pull" the reverse.
int RunCopy(const CopyFlags& f, const std::string& verb) {
  auto src = ref::ParseReference(f.src);
  if (!src.ok()) return Fail(src.error());
  auto dst = ref::ParseReference(f.dest);
  if (!dst.ok()) return Fail(dst.error());
  bool src_docker = ref::IsRegistry(*src);
  bool dst_docker = ref::IsRegistry(*dst);
  if (verb == "push" && (src_docker || !dst_docker)) {
    return Fail(
        MakeError(ErrorKind::kInvalidInput, "push: want a local SRC (oci:, oci-archive:) and a docker:// DEST"));
  }
  if (verb == "pull" && (!src_docker || dst_docker)) {
    return Fail(
        MakeError(ErrorKind::kInvalidInput, "pull: want a docker:// SRC and a local DEST (oci:, oci-archive:)"));
  }
  if (f.jobs < 1 || f.jobs > 16) return Fail(MakeError(ErrorKind::kInvalidInput, "--jobs: want 1..16"));
  if (f.chunk_mib < 1) return Fail(MakeError(ErrorKind::kInvalidInput, "--chunk-size: want at least 1 (MiB)"));
  transport::CopyOptions opts;
  opts.source = Side(f.common, f.src_side);
  opts.destination.registry = Side(f.common, f.dest_side);
  opts.destination.registry.limit_rate = f.limit_rate;
  opts.write.jobs = f.jobs;
  opts.artifacts = !f.no_artifacts;
  auto platform = PlatformFlag(f.platform);
  if (!platform.ok()) return Fail(platform.error());
  opts.platform = *platform;
  auto& upload = opts.destination.upload;
  upload.chunk_size = f.chunk_mib << 20;
  upload.monolithic_max = std::min<uint64_t>(upload.monolithic_max, upload.chunk_size);
  upload.state_dir = remote::DefaultUploadStateDir();
  auto progress = std::make_shared<TransferProgress>(f.quiet || f.json, verb == "pull" ? "pulled" : "copied");
  opts.write.on_blob = [progress](const transport::BlobEvent& e) { progress->OnBlob(e); };
  auto t0 = std::chrono::steady_clock::now();
  auto report = transport::Copy(*src, *dst, opts);
  if (!report.ok()) return Fail(report.error());
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (f.json) {
    PrintJson(ReportJson(f, *report, secs));
  } else {
    if (!f.quiet) {
      std::cerr << "Copied " << f.src << " -> " << f.dest << ": " << report->blobs.size() << " blobs, "
                << HumanBytes(report->bytes_sent) << " sent in " << std::fixed << std::setprecision(1) << secs
                << " s\n";
    }
    std::cout << report->digest.str() << "\n";
  }
  return 0;
}

void AddCopyLike(CLI::App& app, Action& run, const std::string& verb, const std::string& help) {
  auto f = std::make_shared<CopyFlags>();
  CLI::App* cmd = app.add_subcommand(verb, help);
  cmd->add_option("src", f->src,
                  "oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:NAME:TAG] or "
                  "docker://HOST/REPO[:TAG|@DIGEST]")
      ->required();
  cmd->add_option("dest", f->dest, "Where to copy it (same forms)")->required();
  AddRemoteFlags(cmd, f->common);
  if (verb == "copy") {
    AddRemoteFlags(cmd, f->src_side, "src-");
    AddRemoteFlags(cmd, f->dest_side, "dest-");
  }
  cmd->add_option("--jobs,-j", f->jobs, "Blobs transferred at once")->default_str("3");
  cmd->add_option("--chunk-size", f->chunk_mib, "Upload chunk in MiB; larger blobs go in resumable chunks")
      ->default_str("1024");
  cmd->add_option("--limit-rate", f->limit_rate, "Upload bytes per second per blob (0: unlimited)");
  cmd->add_flag("--quiet,-q", f->quiet, "No progress; print only the digest");
  cmd->add_flag("--json", f->json, "Print a JSON report (digests, what happened to each blob)");
  cmd->add_option("--platform", f->platform, "Of an index, copy only the image for OS/ARCH[/VARIANT]");
  cmd->add_flag("--no-artifacts", f->no_artifacts,
                "Copy the image alone, not its sha256-<hex>.sig, .att and .sbom tags (nor its children's)");
  cmd->callback([f, &run, verb] { run = [f, verb] { return RunCopy(*f, verb); }; });
}

struct ResolveFlags {
  std::string ref;
  RemoteFlags remote;
  bool json = false;
};

int RunResolve(const ResolveFlags& f) {
  auto ref = ref::ParseReference(f.ref);
  if (!ref.ok()) return Fail(ref.error());
  if (!ref->digest.empty()) return Fail(MakeError(ErrorKind::kInvalidInput, f.ref + ": already names a digest"));
  auto repo = transport::OpenRepository(*ref, ToRegistryOptions(f.remote));
  if (!repo.ok()) return Fail(repo.error());
  auto desc = (*repo)->Resolve(transport::NameIn(*ref));
  if (!desc.ok()) return Fail(desc.error().Context(f.ref));
  if (f.json) {
    PrintJson({{"reference", f.ref}, {"digest", desc->digest.str()}, {"mediaType", desc->media_type}});
  } else {
    std::cout << desc->digest.str() << "\n";
  }
  return 0;
}

int RunTags(const ResolveFlags& f) {
  auto ref = ref::ParseReference(f.ref);
  if (!ref.ok()) return Fail(ref.error());
  auto repo = transport::OpenRepository(*ref, ToRegistryOptions(f.remote));
  if (!repo.ok()) return Fail(repo.error());
  auto tags = (*repo)->Tags();
  if (!tags.ok()) return Fail(tags.error());
  if (f.json) {
    PrintJson({{"repository", (*repo)->name()}, {"tags", *tags}});
  } else {
    for (const auto& t : *tags) std::cout << t << "\n";
  }
  return 0;
}

}  // namespace

void AddCopyCommands(CLI::App& app, Action& run) {
  AddCopyLike(app, run, "copy",
              "Copy an image, an index (with all its images) or an artifact between layouts,\n"
              "archives and registries, manifests byte for byte (digests never change), then its\n"
              "signatures, attestations and SBOM (sha256-<hex>.sig/.att/.sbom, also each child's).\n"
              "Every blob is checked (size, sha256) as it streams, before it is committed.\n"
              "Pipeline: open -> blobs (skip / mount / resumable upload / checked download) ->\n"
              "manifests, children first -> sink -> sibling artifacts.\n"
              "A docker-archive: DEST (docker save / docker load) takes one image (--platform picks one\n"
              "of an index), with its layers uncompressed and no signatures; the digest printed is\n"
              "then the one a reader of it gets (the manifest skopeo makes up for it).\n\n"
              "Examples:\n  imgtool copy oci:out/golden:latest docker://127.0.0.1:5000/golden:v1\n"
              "  imgtool copy oci:out/golden:latest docker-archive:golden.tar:golden:v1\n"
              "  imgtool copy --platform linux/arm64 docker://127.0.0.1:5000/golden:multi oci:out/arm64:v1");
  AddCopyLike(app, run, "push",
              "Push a local image to a registry (copy with a local SRC and a docker:// DEST).\n\n"
              "Example:\n  imgtool push oci:out/golden:latest docker://registry.example:5000/golden:v1");
  AddCopyLike(app, run, "pull",
              "Pull an image, index or artifact from a registry into a layout or archive, with its\n"
              "signatures; every blob is hashed while it streams and refused on mismatch before it\n"
              "is put in place.\n\n"
              "Example:\n  imgtool pull docker://registry.example:5000/golden:v1 oci:out/golden:v1");

  auto rf = std::make_shared<ResolveFlags>();
  CLI::App* resolve = app.add_subcommand("resolve",
                                         "Print the digest a tag points at (the registry's manifest, not pulled).\n\n"
                                         "Example:\n  imgtool resolve docker://registry.example:5000/golden:v1");
  resolve->add_option("ref", rf->ref, "docker://[HOST/]REPO[:TAG], oci:DIR[:TAG] or oci-archive:FILE[:TAG]")
      ->required();
  AddRemoteFlags(resolve, rf->remote);
  resolve->add_flag("--json", rf->json, "Print a JSON object");
  resolve->callback([rf, &run] { run = [rf] { return RunResolve(*rf); }; });

  auto tf = std::make_shared<ResolveFlags>();
  CLI::App* tags = app.add_subcommand("tags",
                                      "List the tags of a repository (signatures live at sha256-<hex>.sig tags).\n\n"
                                      "Example:\n  imgtool tags docker://registry.example:5000/golden");
  tags->add_option("repo", tf->ref, "docker://[HOST/]REPO, oci:DIR, oci-archive:FILE or docker-archive:FILE")
      ->required();
  AddRemoteFlags(tags, tf->remote);
  tags->add_flag("--json", tf->json, "Print a JSON object");
  tags->callback([tf, &run] { run = [tf] { return RunTags(*tf); }; });
}

}  // namespace imgtool::cli

// imgtool probe: this node -> fleet::Probe (dlopen of the CUDA libraries, their hashes,
// the environment) -> a fingerprint -> a table, --json, or -o FILE (the fingerprint JSON
// that `imgtool fleet check --fingerprint FILE` accepts). Exit 0; 2 invalid input.
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>

#include "cli/common.h"
#include "fleet/fingerprint.h"
#include "fleet/probe.h"
#include "fs/atomic_file.h"
#include "oci/digest.h"

namespace imgtool::cli {

namespace {

struct ProbeFlags {
  bool json = false;
  std::string image_digest;
  std::string image_index;
  std::string stack_json = "/etc/imgtool/stack.json";
  std::string hash_cache;
  bool no_hash_cache = false;
  std::string output;
};

double Tenths(double ms) { return std::round(ms * 10) / 10; }

void PrintTable(const char* title, const std::map<std::string, std::string>& rows) {
  size_t w = std::string(title).size();
  for (const auto& [k, v] : rows) w = std::max(w, k.size());
  std::cout << std::left << std::setw(static_cast<int>(w)) << title << "  VALUE\n";
  for (const auto& [k, v] : rows) std::cout << std::setw(static_cast<int>(w)) << k << "  " << v << "\n";
}

int RunProbe(const ProbeFlags& f) {
  fleet::ProbeOptions o;
  o.image_digest = f.image_digest;
  std::string digest_from = "--image-digest";
  if (o.image_digest.empty()) {
    const char* env = std::getenv("IMGTOOL_IMAGE_DIGEST");
    o.image_digest = env != nullptr ? env : "";
    digest_from = "IMGTOOL_IMAGE_DIGEST";
  }
  if (!o.image_digest.empty()) {
    if (auto d = oci::Digest::Parse(o.image_digest); !d.ok()) return Fail(d.error().Context(digest_from));
  }
  o.image_index = f.image_index;
  o.stack_json_path = f.stack_json;
  o.hash_cache_dir = f.no_hash_cache ? "" : !f.hash_cache.empty() ? f.hash_cache : fleet::DefaultHashCacheDir();
  fleet::ProbeTimings t;
  auto fp = fleet::Probe(o, &t);
  if (!fp.ok()) return Fail(fp.error());
  for (const auto& n : t.notes) PrintLine("imgtool: note: ", n);

  std::string digest = fleet::FingerprintDigest(*fp, {});
  oci::Json doc = fleet::ToJson(*fp);
  doc["digest"] = digest;
  if (!f.output.empty()) {
    if (auto st = fs::WriteFileAtomic(f.output, doc.dump(2) + "\n"); !st.ok()) return Fail(st.error());
  }
  if (f.json) {
    doc["timings"] = {{"loadMs", Tenths(t.load_ms)},
                      {"hashMs", Tenths(t.hash_ms)},
                      {"totalMs", Tenths(t.total_ms)},
                      {"librariesHashed", t.libraries_hashed},
                      {"librariesCached", t.libraries_cached}};
    PrintJson(doc);
    return 0;
  }
  std::cout << "fingerprint " << digest << "\n";
  PrintTable("FIELD (must match)", fp->fields);
  PrintTable("NODE (reported only)", fp->node);
  std::cout << std::fixed << std::setprecision(1) << "probe: " << (t.libraries_hashed + t.libraries_cached)
            << " libraries (" << t.libraries_cached << " from the hash cache, " << t.libraries_hashed
            << " hashed); load " << t.load_ms << " ms, hash " << t.hash_ms << " ms, total " << t.total_ms << " ms\n";
  if (!f.output.empty()) std::cout << "wrote " << f.output << "\n";
  return 0;
}

}  // namespace

void AddProbeCommand(CLI::App& app, Action& run) {
  auto f = std::make_shared<ProbeFlags>();
  CLI::App* cmd =
      app.add_subcommand("probe",
                         "Fingerprint this node's training stack: node -> dlopen + version queries + library\n"
                         "hashes + environment -> fingerprint -> a table, --json, or -o FILE.\n\n"
                         "What it reads: the image digest (--image-digest, else $IMGTOOL_IMAGE_DIGEST: a pod\n"
                         "cannot see its own image digest, so pass it in, e.g. from the Deployment), the\n"
                         "sha256 of /etc/imgtool/stack.json, /etc/os-release, the kernel and glibc versions;\n"
                         "libcuda.so.1 (driver API version; GPU count, model, SM count, memory, compute\n"
                         "capability; UUIDs) and /proc/driver/nvidia/version; the versions libcudart, libcublas,\n"
                         "libcudnn and libnccl report, each loaded by soname as the trainer would load it\n"
                         "(LD_LIBRARY_PATH, then the ld.so cache); the sha256 of every CUDA library that those\n"
                         "loads mapped (lib.<file>, plus cuDNN's sub-libraries); and the variables that change\n"
                         "numerics or communication (NCCL_*, CUDA_*, CUBLAS_*, CUBLASLT_*, CUDNN_*,\n"
                         "NVIDIA_TF32_OVERRIDE, ...).\n\n"
                         "It needs no GPU and links no CUDA: what is missing reads \"absent\" (gpu.count 0), and\n"
                         "error.<field> among the node facts says why. Fields must match across the fleet; node\n"
                         "facts (hostname, GPU UUIDs, library paths, CUDA_VISIBLE_DEVICES) are reported only.\n"
                         "The first line is the fingerprint digest: equal digests mean equal fields.\n"
                         "Library hashes are remembered in a hash cache keyed by path, inode, size, mtime and\n"
                         "ctime ($XDG_CACHE_HOME/imgtool/probe or ~/.cache/imgtool/probe), so a warm probe\n"
                         "only stats them. Exit 0; 2 invalid input (a malformed digest, an unreadable stack.json).\n\n"
                         "Examples:\n"
                         "  imgtool probe\n"
                         "  IMGTOOL_IMAGE_DIGEST=sha256:... imgtool probe --json\n"
                         "  imgtool probe -o /tmp/fp.json && imgtool fleet check --fingerprint /tmp/fp.json ...");
  cmd->add_flag("--json", f->json, "Print the fingerprint as JSON: {fields, node, digest, timings}");
  cmd->add_option("--image-digest", f->image_digest,
                  "The image's manifest digest, sha256:<64 hex> (default: $IMGTOOL_IMAGE_DIGEST, else \"unknown\")");
  cmd->add_option("--image-index", f->image_index,
                  "The multi-platform index the image came from, compared across platforms (default: "
                  "$IMGTOOL_IMAGE_INDEX, else \"unknown\")")
      ->envname("IMGTOOL_IMAGE_INDEX");
  cmd->add_option("--stack-json", f->stack_json, "The stack file the image build wrote (\"absent\" if missing)")
      ->capture_default_str();
  cmd->add_option("--hash-cache", f->hash_cache,
                  "Hash cache folder (default $XDG_CACHE_HOME/imgtool/probe, else ~/.cache/imgtool/probe)");
  cmd->add_flag("--no-hash-cache", f->no_hash_cache, "Hash every library, read and write no cache");
  cmd->add_option("-o,--output", f->output,
                  "Also write the fingerprint JSON {fields, node, digest} here, atomically "
                  "(for imgtool fleet check --fingerprint)");
  cmd->callback([f, &run] { run = [f] { return RunProbe(*f); }; });
}

}  // namespace imgtool::cli

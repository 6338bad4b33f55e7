// Layer reading (imgtool/archive/layer.h) from any image's layer: ListLayer,
// DigestLayer and ReadFileFromLayer over an in-memory blob, as verify, diff and a build
// on a foreign base image read them. The compression (gzip, zstd, plain tar) is found
// from the bytes, so one input reaches all three decoders and libarchive's tar reader.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "archive/layer.h"
#include "fs/atomic_file.h"
#include "fuzz_util.h"
#include "oci/memory_store.h"

namespace {

using namespace imgtool;

// Layers as a build writes them, one per compression: what a mutation starts from.
// (WriteLayer wants entries sorted by path, hardlinks after their target.)
fuzz::Seeds LayerSeeds() {
  std::vector<archive::Entry> entries;
  auto add = [&](std::string path, archive::EntryType type, std::string content = "", std::string target = "") {
    archive::Entry e;
    e.path = std::move(path);
    e.type = type;
    e.mode = type == archive::EntryType::kDir ? 0755 : 0644;
    e.content = std::move(content);
    e.size = e.content.size();
    e.link_target = std::move(target);
    entries.push_back(std::move(e));
  };
  add("etc", archive::EntryType::kDir);
  add("etc/passwd", archive::EntryType::kFile,
      "root:x:0:0:root:/root:/bin/sh\napp:x:10001:10001::/app:/sbin/nologin\n");
  add("etc/passwd-hard", archive::EntryType::kHardlink, "", "etc/passwd");
  add("etc/passwd-link", archive::EntryType::kSymlink, "", "passwd");
  add("usr", archive::EntryType::kDir);
  add("usr/" + std::string(120, 'l'), archive::EntryType::kFile, "a long name takes a PAX header\n");
  fuzz::Seeds seeds;
  for (auto [c, name] :
       {std::pair{archive::Compression::kGzip, "layer.tar.gz"}, std::pair{archive::Compression::kZstd, "layer.tar.zst"},
        std::pair{archive::Compression::kNone, "layer.tar"}}) {
    std::string path = fuzz::Scratch() + "/" + name;
    fs::AtomicFile out;
    archive::LayerOptions options;
    options.compression = c;
    if (!out.Open(path).ok() || !archive::WriteLayer(entries, options, out).ok() || !out.Commit().ok()) std::abort();
    auto bytes = fs::ReadSmallFile(path);
    if (!bytes.ok()) std::abort();
    seeds.emplace_back(name, *bytes);
  }
  return seeds;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::MaybeWriteSeeds(LayerSeeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto store = std::make_shared<oci::MemoryStore>("fuzz");
  oci::Descriptor d = store->Add(std::string(fuzz::Bytes(data, size)), "application/vnd.oci.image.layer.v1.tar+gzip");
  oci::Blob blob(store, d);
  (void)archive::ListLayer(blob);
  (void)archive::ReadFileFromLayer(blob, "etc/passwd", 4096);
  if (auto r = blob.Open(); r.ok()) (void)archive::DigestLayer(**r, "layer", true);
  return 0;
}

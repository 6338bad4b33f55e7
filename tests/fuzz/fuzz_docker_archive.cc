// docker-archive: (imgtool/tarball): a `docker save` tarball from anywhere, opened as a
// repository and walked as copy walks it: every image by "", @N and each tag, its
// config read and its layers streamed and checked.
//
// An input that starts with '[' or is a nesting recipe (fuzz_util.h) is a manifest.json:
// it goes to ParseManifestJson, and into a tarball beside fixed members the harness made
// (a plain layer, a gzip layer, their config, Docker 25 and legacy names, a symlink), so
// mutations of manifest.json reach the image synthesis, the diff_id checks and the
// member lookups with real blobs. Any other input is the tarball itself (seeds: whole
// tarballs, plain and gzip'ed).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "archive/layer.h"
#include "fs/atomic_file.h"
#include "fuzz_util.h"
#include "oci/canonical_json.h"
#include "oci/image_config.h"
#include "tarball/manifest_json.h"
#include "tarball/tarball_repository.h"

namespace {

using namespace imgtool;

// A ustar member: enough for the harness's own tarballs (names under 100 bytes).
void AddMember(std::string& tar, const std::string& name, const std::string& content, char type = '0',
               const std::string& link = "") {
  std::string h(512, '\0');
  auto put = [&](size_t at, const std::string& s) { h.replace(at, s.size(), s); };
  auto octal = [](uint64_t v, int width) {
    std::string s(width - 1, '0');
    for (int i = width - 2; i >= 0 && v; --i, v >>= 3) s[i] = static_cast<char>('0' + (v & 7));
    return s;
  };
  put(0, name.substr(0, 99));
  put(100, "0000644");
  put(108, "0000000");
  put(116, "0000000");
  put(124, octal(type == '0' ? content.size() : 0, 12));
  put(136, octal(0, 12));
  put(148, "        ");
  h[156] = type;
  put(157, link.substr(0, 99));
  put(257, std::string("ustar\0"
                       "00",
                       8));
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  put(148, octal(sum, 7) + std::string(1, '\0'));
  tar += h;
  if (type == '0') tar += content + std::string((512 - content.size() % 512) % 512, '\0');
}

struct Base {
  std::string members;  // every fixed member, without manifest.json or the end blocks
  fuzz::Seeds seeds;
};

std::string LayerBytes(archive::Compression c, const std::string& text, oci::Digest* diff_id) {
  std::string path = fuzz::Scratch() + "/layer";
  fs::AtomicFile out;
  if (!out.Open(path).ok()) std::abort();
  archive::Entry e;
  e.path = "f";
  e.content = text;
  e.size = text.size();
  archive::LayerOptions options;
  options.compression = c;
  auto written = archive::WriteLayer({e}, options, out);
  if (!written.ok() || !out.Commit().ok()) std::abort();
  *diff_id = written->diff_id;
  return *fs::ReadSmallFile(path);
}

const Base& TheBase() {
  static const Base* base = [] {
    auto* b = new Base;
    oci::Digest plain_id, gzip_id;
    std::string plain = LayerBytes(archive::Compression::kNone, "plain", &plain_id);
    std::string gzip = LayerBytes(archive::Compression::kGzip, "gzip", &gzip_id);
    oci::Json cfg = oci::NewImageConfig("linux", "amd64");
    cfg["rootfs"]["diff_ids"] = oci::Json::array({plain_id.str(), gzip_id.str()});
    std::string config = *oci::CanonicalJson(cfg);
    oci::Json one = oci::NewImageConfig("linux", "arm64");
    one["rootfs"]["diff_ids"] = oci::Json::array({plain_id.str(), plain_id.str()});
    AddMember(b->members, "p.tar", plain);
    AddMember(b->members, "blobs/sha256/" + gzip_id.hex(), gzip);
    AddMember(b->members, "c.json", config);
    AddMember(b->members, "twice.json", *oci::CanonicalJson(one));
    AddMember(b->members, "legacy/layer.tar", "", '2', "../p.tar");
    const std::string g = "blobs/sha256/" + gzip_id.hex();
    b->seeds = {
        {"one.json", R"([{"Config":"c.json","RepoTags":["app:v1"],"Layers":["p.tar",")" + g + R"("]}])"},
        {"two.json", R"([{"Config":"c.json","RepoTags":["a:1","b:2"],"Layers":["legacy/layer.tar",")" + g +
                         R"("]},{"Config":"twice.json","RepoTags":null,"Layers":["p.tar","legacy/layer.tar"]}])"},
        {"missing.json", R"([{"Config":"c.json","Layers":["p.tar","nothing.tar"]}])"},
    };
    return b;
  }();
  return *base;
}

std::string Tarball(const std::string& manifest_json) {
  std::string tar = TheBase().members;
  AddMember(tar, "manifest.json", manifest_json);
  return tar + std::string(1024, '\0');
}

void Walk(const std::string& path) {
  auto repo = tarball::OpenTarballRepository(path, "docker-archive:fuzz", "fuzz");
  if (!repo.ok()) return;
  std::vector<std::string> names = {"", "@0", "@1", "@2"};
  if (auto tags = (*repo)->Tags(); tags.ok()) names.insert(names.end(), tags->begin(), tags->end());
  for (const auto& name : names) {
    auto node = (*repo)->Open(name);
    if (!node.ok() || !node->image) continue;
    for (const auto& layer : node->image->layers()) {
      auto r = layer->Open();
      if (r.ok()) (void)oci::Drain(**r);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::MaybeWriteSeeds([] {
    fuzz::Seeds seeds = TheBase().seeds;
    seeds.emplace_back("tarball.tar", Tarball(seeds[1].second));
    return seeds;
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in = fuzz::Bytes(data, size);
  if (!in.empty() && (in[0] == '[' || in[0] == '\x01')) {
    std::string manifest_json = fuzz::NestedInput(data, size);
    (void)tarball::ParseManifestJson(manifest_json);
    Walk(fuzz::WriteInput(Tarball(manifest_json), "docker-archive.tar"));
  } else {
    Walk(fuzz::WriteInput(in, "docker-archive.tar"));
  }
  return 0;
}

// docker-archive read and written: the made-up manifest (skopeo's bytes and digests),
// several images in one tarball, every layer held to its diff_id, hostile tarballs, and
// the writer (deterministic, read back to the same image, refusing what does not fit).
#include <gtest/gtest.h>

#include "oci/media_types.h"
#include "oci/memory_store.h"
#include "tarball/tarball_repository.h"
#include "tarball/tarball_sink.h"
#include "tarball/tarball_test_util.h"

namespace imgtool::tarball {

namespace {

using archive::Compression;
using testing::File;
using testing::Layer;
using testing::Link;
using testing::MakeLayer;
using testing::ScratchDir;
using testing::TarEntry;
using testing::WriteTar;

Result<std::shared_ptr<TarballRepository>> OpenSaved(const std::string& path) {
  return OpenTarballRepository(path, "docker-archive:t.tar", "t.tar");
}

Status DrainAll(const oci::Image& image) {
  for (const auto& blob : image.layers()) {
    auto r = blob->Open();
    if (!r.ok()) return r.error();
    auto n = oci::Drain(**r);
    if (!n.ok()) return n.error();
  }
  return Status::Ok();
}

// A tarball laid out as Docker 25 writes it (blobs/sha256/...) with a legacy-style
// symlinked second name for the first layer, plus an uncompressed and a gzip layer.
struct Saved {
  Layer plain, gzip;
  std::string config;
  std::string path;
};

Saved MakeSaved(const ScratchDir& dir, const std::string& name = "save.tar") {
  Saved s{MakeLayer(dir, "plain layer", Compression::kNone), MakeLayer(dir, "gzip layer", Compression::kGzip), "", ""};
  s.config = testing::ConfigFor({s.plain.diff_id, s.gzip.diff_id});
  std::string manifest = R"([{"Config":"blobs/sha256/cfg","RepoTags":["app:v1","localhost:5000/team/app:v2"],)"
                         R"("Layers":["legacy/layer.tar","blobs/sha256/gz"]}])";
  s.path = WriteTar(dir / name, {File("blobs/sha256/plain", s.plain.bytes), File("blobs/sha256/gz", s.gzip.bytes),
                                 File("blobs/sha256/cfg", s.config), Link("legacy/layer.tar", "../blobs/sha256/plain"),
                                 File("manifest.json", manifest), File("repositories", "{}")});
  return s;
}

}  // namespace

// The manifest is skopeo's: schema 2, layers named by diff_id with their uncompressed
// size and the gzip media type whatever they hold, the config's exact bytes.
TEST(TarballRead, MadeUpManifestIsSkopeos) {
  ScratchDir dir;
  Saved s = MakeSaved(dir);
  auto repo = OpenSaved(s.path);
  ASSERT_TRUE(repo.ok()) << repo.error().message;
  auto node = (*repo)->Open("");
  ASSERT_TRUE(node.ok()) << node.error().message;
  auto gz_size = MakeLayer(dir, "gzip layer", Compression::kNone).bytes.size();
  std::string want = SchemaTwoManifest(oci::Digest::Of(s.config), s.config.size(),
                                       {{s.plain.diff_id, s.plain.bytes.size()}, {s.gzip.diff_id, gz_size}});
  EXPECT_EQ(node->image->raw_manifest(), want);
  const std::string head =
      R"({"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json","config":{"mediaType":"application/vnd.docker.container.image.v1+json","size":)";
  EXPECT_EQ(want.substr(0, head.size()), head);
  EXPECT_NE(want.find(R"({"mediaType":"application/vnd.docker.image.rootfs.diff.tar.gzip","size":)" +
                      std::to_string(gz_size) + R"(,"digest":")" + s.gzip.diff_id.str() + "\"}"),
            std::string::npos);
  EXPECT_EQ(node->descriptor.digest, oci::Digest::Of(want));
  EXPECT_EQ(*node->image->raw_config(), s.config);
  EXPECT_TRUE(DrainAll(*node->image).ok());
  EXPECT_EQ(*(*repo)->Tags(), (std::vector<std::string>{"docker.io/library/app:v1", "localhost:5000/team/app:v2"}));
  // By tag, normalised as skopeo compares them; by number.
  EXPECT_EQ((*repo)->Open("docker.io/library/app:v1")->descriptor.digest, node->descriptor.digest);
  EXPECT_EQ((*repo)->Open("localhost:5000/team/app:v2")->descriptor.digest, node->descriptor.digest);
  EXPECT_EQ((*repo)->Open("@0")->descriptor.digest, node->descriptor.digest);
  EXPECT_EQ((*repo)->Open("@1").error().message, "no image @1 (it holds 1, from @0)");
  EXPECT_EQ((*repo)->Open("docker.io/library/app:v2").error().kind, ErrorKind::kNotFound);
  EXPECT_EQ((*repo)->Open("sha256-" + std::string(64, 'a') + ".sig").error().kind, ErrorKind::kNotFound);
}

// How a layer is stored does not change the digest: the same image saved with plain
// layers gives the same manifest.
TEST(TarballRead, DigestDependsOnContentNotOnStorage) {
  ScratchDir dir;
  Saved s = MakeSaved(dir);
  auto plain_gz = MakeLayer(dir, "gzip layer", Compression::kNone);
  std::string path = WriteTar(dir / "plain.tar",
                              {File("a.tar", s.plain.bytes), File("b.tar", plain_gz.bytes), File("c.json", s.config),
                               File("manifest.json", R"([{"Config":"c.json","Layers":["a.tar","b.tar"]}])")});
  EXPECT_EQ((*OpenSaved(path))->Open("")->descriptor.digest, (*OpenSaved(s.path))->Open("")->descriptor.digest);
}

TEST(TarballRead, SeveralImagesAreNamedNotGuessed) {
  ScratchDir dir;
  auto a = MakeLayer(dir, "a", Compression::kNone);
  auto b = MakeLayer(dir, "b", Compression::kNone);
  std::string manifest = R"([{"Config":"a.json","RepoTags":["a:1"],"Layers":["a.tar"]},)"
                         R"({"Config":"b.json","RepoTags":["b:2"],"Layers":["b.tar"]}])";
  std::string path = WriteTar(
      dir / "two.tar", {File("a.tar", a.bytes), File("b.tar", b.bytes), File("a.json", testing::ConfigFor({a.diff_id})),
                        File("b.json", testing::ConfigFor({b.diff_id})), File("manifest.json", manifest)});
  auto repo = OpenSaved(path);
  ASSERT_TRUE(repo.ok()) << repo.error().message;
  EXPECT_EQ((*repo)->Open("").error().message,
            "it holds 2 images: name one, docker-archive:t.tar:NAME:TAG or docker-archive:t.tar:@N "
            "(tagged 'docker.io/library/a:1', 'docker.io/library/b:2')");
  auto first = (*repo)->Open("docker.io/library/a:1");
  auto second = (*repo)->Open("@1");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->image->layers()[0]->digest(), a.diff_id);
  EXPECT_EQ(second->image->layers()[0]->digest(), b.diff_id);
  EXPECT_EQ((*repo)->Open("docker.io/library/b:2")->descriptor.digest, second->descriptor.digest);
  EXPECT_TRUE(DrainAll(*first->image).ok() && DrainAll(*second->image).ok());
}

// An uncompressed layer is its diff_id: damage shows when it is read (inspect does not
// read it); a compressed one is inflated and checked when the image is opened.
TEST(TarballRead, EveryLayerIsHeldToItsDiffId) {
  ScratchDir dir;
  Saved s = MakeSaved(dir);
  std::string bytes = archive::testing::ReadAll(s.path);
  size_t at = bytes.find("plain layer");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = 'P';
  std::string damaged = dir.Put("damaged.tar", bytes);
  auto node = (*OpenSaved(damaged))->Open("");
  ASSERT_TRUE(node.ok()) << node.error().message;
  Status read = DrainAll(*node->image);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().kind, ErrorKind::kIntegrity);

  auto other = MakeLayer(dir, "another layer", Compression::kGzip);
  std::string path = WriteTar(dir / "lie.tar", {File("p", s.plain.bytes), File("g", other.bytes), File("c", s.config),
                                                File("manifest.json", R"([{"Config":"c","Layers":["p","g"]}])")});
  auto lie = (*OpenSaved(path))->Open("");
  ASSERT_FALSE(lie.ok());
  EXPECT_EQ(lie.error().kind, ErrorKind::kIntegrity);
  EXPECT_EQ(lie.error().message,
            "image @0: layer 'g' inflates to " + other.diff_id.str() + ", not its diff_id " + s.gzip.diff_id.str());
}

TEST(TarballRead, IncompleteOrHostileTarballsAreRefused) {
  ScratchDir dir;
  Saved s = MakeSaved(dir);
  auto open = [&](const std::vector<TarEntry>& entries) {
    auto repo = OpenSaved(WriteTar(dir / "h.tar", entries));
    if (!repo.ok()) return repo.error().message;
    auto node = (*repo)->Open("");
    return node.ok() ? std::string("accepted") : node.error().message;
  };
  const std::string two = R"([{"Config":"c","Layers":["p","g"]}])";
  EXPECT_EQ(open({File("p", s.plain.bytes), File("c", s.config), File("manifest.json", two)}),
            "image @0: layer 'g' (diff_id " + s.gzip.diff_id.str() + ") is missing from the archive");
  EXPECT_EQ(open({File("p", s.plain.bytes), File("manifest.json", two)}),
            "image @0: config 'c' is missing from the archive");
  EXPECT_EQ(open({File("p", s.plain.bytes), File("c", s.config),
                  File("manifest.json", R"([{"Config":"c","Layers":["p"]}])")}),
            "image @0: manifest.json names 1 layers, the config 2 diff_ids");
  EXPECT_EQ(open({File("real.json", "[]"), Link("manifest.json", "real.json")}),
            "docker-archive:t.tar: 'manifest.json' is not a regular file");
  EXPECT_EQ(open({File("repositories", "{}")}),
            "docker-archive:t.tar: no manifest.json, only a legacy `repositories` file (a docker save from before "
            "Docker 1.10, which imgtool does not read)");
  EXPECT_EQ(open({File("manifest.json", "[]"), File("../../evil", "x")}),
            "docker-archive:t.tar: member '../../evil' lies outside the archive; refusing it");
  EXPECT_EQ(open({File("c", s.config), Link("p", "/etc/passwd"), File("manifest.json", two)}),
            "docker-archive:t.tar: symlink 'p' -> '/etc/passwd' leads outside the archive");
  EXPECT_EQ(open({File("c", R"({"rootfs":{"type":"layers"}})"), File("manifest.json", R"([{"Config":"c"}])")}),
            "image @0: config 'c': $.rootfs.diff_ids missing");
}

TEST(TarballRead, ACompressedTarballIsInflatedFirst) {
  ScratchDir dir;
  Saved s = MakeSaved(dir);
  // `docker save | gzip`, which docker load and skopeo take.
  std::string gz_path = dir / "save.tar.gz";
  std::string cmd = "gzip -c -n " + s.path + " > " + gz_path;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto repo = OpenSaved(gz_path);
  ASSERT_TRUE(repo.ok()) << repo.error().message;
  EXPECT_EQ((*repo)->Open("")->descriptor.digest, (*OpenSaved(s.path))->Open("")->descriptor.digest);
}

namespace {

// An image in memory with gzip layers, as a registry or a layout would hand it over.
oci::Node MemoryImage(const ScratchDir& dir, const std::vector<std::string>& texts) {
  auto store = std::make_shared<oci::MemoryStore>();
  oci::Manifest m;
  std::vector<oci::Digest> diff_ids;
  for (const auto& t : texts) {
    auto layer = MakeLayer(dir, t, Compression::kGzip);
    m.layers.push_back(store->Add(layer.bytes, oci::kMediaTypeLayerGzip));
    diff_ids.push_back(layer.diff_id);
  }
  m.config = store->Add(testing::ConfigFor(diff_ids), oci::kMediaTypeConfig);
  return *oci::AddManifest(store, m);
}

Status WriteTo(TarballSink& sink, const oci::Node& node, const std::optional<std::string>& tag) {
  auto put = [&](const oci::Blob& b) { return sink.PutBlob(b, nullptr); };
  if (auto r = put(*node.image->config_blob()); !r.ok()) return r.error();
  for (const auto& l : node.image->layers()) {
    if (auto r = put(*l); !r.ok()) return r.error();
  }
  IMGTOOL_TRY(sink.PutManifest(node.descriptor, node.image->raw_manifest(), tag));
  return sink.Commit();
}

}  // namespace

TEST(TarballWrite, ReadsBackAsTheSameImageAndIsDeterministic) {
  ScratchDir dir;
  oci::Node src = MemoryImage(dir, {"one", "two", "one"});
  const std::string tag = "docker.io/foo/bar:v1";
  for (const char* name : {"a.tar", "b.tar"}) {
    auto sink = TarballSink::Open(dir / name, "docker-archive:out", tag);
    ASSERT_TRUE(sink.ok());
    Status st = WriteTo(**sink, src, tag);
    ASSERT_TRUE(st.ok()) << st.error().message;
  }
  EXPECT_EQ(archive::testing::ReadAll(dir / "a.tar"), archive::testing::ReadAll(dir / "b.tar"));
  auto repo = OpenSaved(dir / "a.tar");
  ASSERT_TRUE(repo.ok()) << repo.error().message;
  auto back = (*repo)->Open(tag);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back->image->raw_config(), *src.image->raw_config());
  ASSERT_EQ(back->image->layers().size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(back->image->layers()[i]->digest(), src.image->layers()[i]->diff_id());
  EXPECT_TRUE(DrainAll(*back->image).ok());
  EXPECT_EQ(*(*repo)->Tags(), std::vector<std::string>{tag});
}

TEST(TarballWrite, RefusesWhatADockerArchiveCannotHoldAndWritesNothing) {
  ScratchDir dir;
  oci::Node src = MemoryImage(dir, {"one"});
  const std::string out = dir / "out.tar";
  auto sink = TarballSink::Open(out, "docker-archive:out", "");
  Status sig = WriteTo(**sink, src, "sha256-" + std::string(64, 'a') + ".sig");
  ASSERT_FALSE(sig.ok());
  EXPECT_EQ(sig.error().message, "docker-archive:out: 'sha256-" + std::string(64, 'a') +
                                     ".sig' (a signature, attestation or other artifact) cannot go into a "
                                     "docker-archive, which holds images only (docker load)");
  Status child = WriteTo(**TarballSink::Open(out, "docker-archive:out", ""), src, std::nullopt);
  EXPECT_EQ(child.error().message,
            "docker-archive:out: a docker-archive holds single images, not an index: choose one with --platform");
  EXPECT_FALSE(fs::Exists(out));

  // A layer whose content is not the diff_id its config names.
  auto store = std::make_shared<oci::MemoryStore>();
  auto real = MakeLayer(dir, "real", Compression::kGzip);
  auto claimed = MakeLayer(dir, "claimed", Compression::kGzip);
  oci::Manifest m;
  m.layers.push_back(store->Add(real.bytes, oci::kMediaTypeLayerGzip));
  m.config = store->Add(testing::ConfigFor({claimed.diff_id}), oci::kMediaTypeConfig);
  Status lie = WriteTo(**TarballSink::Open(out, "docker-archive:out", ""), *oci::AddManifest(store, m), "");
  ASSERT_FALSE(lie.ok());
  EXPECT_EQ(lie.error().kind, ErrorKind::kIntegrity);
  EXPECT_NE(
      lie.error().message.find("inflates to " + real.diff_id.str() + ", not its diff_id " + claimed.diff_id.str()),
      std::string::npos)
      << lie.error().message;
  EXPECT_FALSE(fs::Exists(out));
}

}  // namespace imgtool::tarball

#include <gtest/gtest.h>

#include "build/builder.h"
#include "check/diff.h"
#include "check/verify.h"
#include "fs/atomic_file.h"
#include "layout/layout_reader.h"

namespace imgtool::check {

namespace {

// Builds a one-file image whose file holds `content`, into DIR/out (with the layer cache
// and known diff_ids in `cache_dir` when given).
std::string BuildImage(const std::string& dir, const std::string& content, const std::string& out,
                       const std::string& cache_dir = "") {
  EXPECT_TRUE(fs::MakeDirs(dir).ok());
  EXPECT_TRUE(fs::WriteFileAtomic(dir + "/f.txt", content).ok());
  EXPECT_TRUE(fs::WriteFileAtomic(dir + "/spec.json", R"({"base":"scratch","user":{"name":"t","uid":1,"gid":1},
      "layers":[{"files":[{"src":"f.txt","dest":"/f.txt"}]}]})")
                  .ok());
  build::BuildOptions o;
  o.spec_path = dir + "/spec.json";
  o.output = *ref::ParseReference("oci:" + out + ":v1");
  o.cache_dir = cache_dir;
  auto r = build::Build(o);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return out;
}

}  // namespace

TEST(Verify, CleanImageHasNoProblemsAndDamageIsNamed) {
  auto tmp = fs::TempDir::Create("check-test-");
  std::string out = BuildImage(tmp->path() + "/ctx", "hello", tmp->path() + "/img");
  auto report = VerifyLayoutImage(out, "v1");
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->blobs_checked, 4);  // manifest, config, two layers

  auto img = layout::OpenLayoutImage(out, "v1");
  std::string layer = *(*img)->layers()[0]->BlobPath();
  std::string bytes = *fs::ReadSmallFile(layer);
  bytes[bytes.size() / 2] ^= 1;
  ASSERT_TRUE(fs::WriteFileAtomic(layer, bytes).ok());
  report = VerifyLayoutImage(out, "v1");
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->problems.empty());
  EXPECT_EQ(report->problems[0].blob, (*img)->layers()[0]->digest().str());
}

TEST(Verify, KnownDiffIdsSpareTheInflateOnlyForTheBytesTheyWereRecordedFor) {
  auto tmp = fs::TempDir::Create("check-test-");
  std::string cache = tmp->path() + "/cache";
  std::string out = BuildImage(tmp->path() + "/ctx", "hello", tmp->path() + "/img", cache);
  VerifyOptions o;
  o.known = archive::KnownDiffIds::In(cache);

  // The build recorded both layers' diff_ids: nothing is inflated, every blob re-hashed.
  auto report = VerifyLayoutImage(out, "v1", o);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->diff_ids_known, 2);
  EXPECT_EQ(report->layers_decompressed, 0);
  EXPECT_EQ(report->blobs_checked, 4);

  // The record is what decides: a wrong one is a reported mismatch, never a silent pass;
  // --full ignores it and records the true diff_id again.
  auto img = layout::OpenLayoutImage(out, "v1");
  auto layer = (*img)->layers()[0];  // layers() returns a copy
  o.known.Record(layer->digest(), {oci::Digest::Of("not this tar"), 1});
  report = VerifyLayoutImage(out, "v1", o);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->problems.size(), 1u);
  EXPECT_NE(report->problems[0].what.find("uncompressed content hashes to " + oci::Digest::Of("not this tar").str()),
            std::string::npos);
  o.decompress_all = true;
  report = VerifyLayoutImage(out, "v1", o);
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->layers_decompressed, 2);
  o.decompress_all = false;
  report = VerifyLayoutImage(out, "v1", o);
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->diff_ids_known, 2);

  // Changed bytes do not match the digest the record is for: inflated and named.
  std::string path = *layer->BlobPath();
  std::string bytes = *fs::ReadSmallFile(path);
  bytes[bytes.size() / 2] ^= 1;
  ASSERT_TRUE(fs::WriteFileAtomic(path, bytes).ok());
  report = VerifyLayoutImage(out, "v1", o);
  ASSERT_FALSE(report->ok());
  EXPECT_EQ(report->problems[0].blob, layer->digest().str());
  EXPECT_EQ(report->diff_ids_known, 1);
  EXPECT_EQ(report->layers_decompressed, 0) << "the damaged blob did not decompress cleanly";

  // Without a record (the default options) every layer is inflated.
  std::string clean = BuildImage(tmp->path() + "/ctx2", "hello", tmp->path() + "/img2");
  report = VerifyLayoutImage(clean, "v1");
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->layers_decompressed, 2);
  EXPECT_EQ(report->diff_ids_known, 0);
}

TEST(Verify, UnknownTagIsAnError) {
  auto tmp = fs::TempDir::Create("check-test-");
  std::string out = BuildImage(tmp->path() + "/ctx", "hello", tmp->path() + "/img");
  auto report = VerifyLayoutImage(out, "nope");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().kind, ErrorKind::kNotFound);
}

TEST(Diff, NamesTheChangedFile) {
  auto tmp = fs::TempDir::Create("check-test-");
  auto a = layout::OpenLayoutImage(BuildImage(tmp->path() + "/a", "one", tmp->path() + "/ia"), "v1");
  auto b = layout::OpenLayoutImage(BuildImage(tmp->path() + "/b", "two", tmp->path() + "/ib"), "v1");
  auto same = DiffImages(**a, **a);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->identical());
  auto d = DiffImages(**a, **b);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_FALSE(d->identical());
  EXPECT_TRUE(d->config.empty());
  ASSERT_EQ(d->layers.size(), 1u);
  EXPECT_EQ(d->layers[0].index, 1u);
  ASSERT_EQ(d->layers[0].changes.size(), 1u);
  EXPECT_EQ(d->layers[0].changes[0].path, "f.txt");
  EXPECT_EQ(d->layers[0].changes[0].field, "content");
  EXPECT_EQ(d->layers[0].changes[0].a, oci::Digest::Of("one").str());
}

}  // namespace imgtool::check

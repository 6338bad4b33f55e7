// GatherFacts reads files from the image as a runtime would unpack it (rootfs/image_fs.h):
// a top layer that hides /etc/passwd behind a symlinked etc no longer passes nonRoot, a
// disagreement between unpackers or a missing layer fails closed, and the setuid list
// keeps files a later layer deleted.
#include <gtest/gtest.h>

#include "oci/media_types.h"
#include "oci/memory_store.h"
#include "policy/evaluate.h"
#include "policy/gather.h"
#include "rootfs/test_tar.h"

namespace imgtool::policy {
namespace {

using rootfs::testing::Dir;
using rootfs::testing::File;
using rootfs::testing::Symlink;
using rootfs::testing::TarEntry;

const std::string kSafe = "app:x:1000:1000::/home/app:/bin/sh\n";
const std::string kRoot = "app:x:0:0::/root:/bin/sh\n";

class GatherFiles : public ::testing::Test {
 protected:
  // An image with config User "app" and one plain-tar layer per entry list, bottom first.
  Result<oci::Node> Image(const std::vector<std::vector<TarEntry>>& layers) {
    oci::Json diff_ids = oci::Json::array();
    oci::Manifest m;
    for (const auto& entries : layers) {
      std::string tar = rootfs::testing::Tar(entries);
      diff_ids.push_back(oci::Digest::Of(tar).str());
      m.layers.push_back(store_->Add(tar, oci::kMediaTypeLayerTar));
    }
    oci::Json config = {{"architecture", "amd64"},
                        {"os", "linux"},
                        {"config", {{"User", "app"}}},
                        {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}};
    m.config = store_->Add(config.dump(), oci::kMediaTypeConfig);
    return oci::AddManifest(store_, m);
  }

  ImageFacts Gather(const Result<oci::Node>& node) {
    Policy p;
    p.non_root = true;
    p.no_setuid = true;
    p.allowed_stacks = AllowedStacksRule{{}, true};
    return GatherFacts("oci:/img:v1", node, p, nullptr).top;
  }

  std::shared_ptr<oci::MemoryStore> store_ = std::make_shared<oci::MemoryStore>();
};

TEST_F(GatherFiles, PasswdBehindASymlinkedEtcIsTheOneJudged) {
  auto base = std::vector<TarEntry>{Dir("etc"), File("etc/passwd", kSafe)};
  ImageFacts f = Gather(Image({base, {Dir("real"), File("real/passwd", kRoot), Symlink("etc", "real")}}));
  const std::string root = "config User 'app' is uid 0 in /etc/passwd (line 1 \"app:x:0:0::/root:/bin/sh\")";
  EXPECT_EQ(EvaluateNonRoot(f).reason, root);
  f = Gather(Image({base, {File("etc//passwd", kRoot)}}));
  EXPECT_EQ(EvaluateNonRoot(f).reason, root);
  f = Gather(Image({base}));
  EXPECT_EQ(EvaluateNonRoot(f).reason,
            "user 'app' is uid 1000 in /etc/passwd (line 1 \"app:x:1000:1000::/home/app:/bin/sh\")");
}

TEST_F(GatherFiles, UnpackersThatDisagreeOrAMissingLayerFailClosed) {
  auto node =
      Image({{Symlink("etc", "x"), File("x/passwd", kSafe)}, {File("etc/passwd", kRoot)}, {File("x/passwd", kSafe)}});
  ASSERT_TRUE(node.ok());
  ImageFacts f = Gather(node);
  RuleResult r = EvaluateNonRoot(f);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.reason.substr(0, 86),
            "config User 'app' is a name; /etc/passwd: unpackers disagree on its content: overlayfs");

  node = Image({{Dir("etc"), File("etc/passwd", kSafe)}});
  const oci::Digest layer = node->image->layers()[0]->digest();
  auto empty = std::make_shared<oci::MemoryStore>();  // the same manifest and config, no layer
  empty->Add(*node->image->raw_config(), oci::kMediaTypeConfig);
  f = Gather(oci::OpenNode(empty, node->descriptor, node->image->raw_manifest()));
  const std::string why = "unpacking the image's layers: memory: blob " + layer.str() + ": missing";
  EXPECT_EQ(EvaluateNonRoot(f).reason, "config User 'app' is a name; /etc/passwd: " + why);
  ASSERT_FALSE(f.stack_json.ok());
  EXPECT_EQ(f.stack_json.error().kind, ErrorKind::kIntegrity);  // not "no stack.json": allowNone must not pass
  EXPECT_FALSE(EvaluateAllowedStacks(AllowedStacksRule{{}, true}, f).pass);
  EXPECT_EQ(EvaluateNoSetuid(f).reason, why);
}

TEST_F(GatherFiles, SetuidFilesIncludeWhatALaterLayerDeleted) {
  ImageFacts f = Gather(Image({{File("usr/bin/su", "", 04755)}, {File("usr/bin/.wh.su", "")}}));
  ASSERT_TRUE(f.setuid_files.ok());
  ASSERT_EQ(f.setuid_files->size(), 1u);
  EXPECT_EQ((*f.setuid_files)[0].path, "usr/bin/su");
  EXPECT_FALSE(EvaluateNoSetuid(f).pass);
}

}  // namespace
}  // namespace imgtool::policy

#include "ref/reference.h"

#include <gtest/gtest.h>

namespace imgtool::ref {

TEST(Reference, OciLayoutWithAndWithoutTag) {
  auto r = ParseReference("oci:out/golden:v1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->transport, Transport::kOciLayout);
  EXPECT_EQ(r->path, "out/golden");
  EXPECT_EQ(r->tag, "v1");
  auto bare = ParseReference("oci:/abs/dir");
  EXPECT_EQ(bare->path, "/abs/dir");
  EXPECT_EQ(bare->tag, "");
  EXPECT_EQ(bare->str(), "oci:/abs/dir");
}

TEST(Reference, OciArchive) {
  auto r = ParseReference("oci-archive:img.tar:latest");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->transport, Transport::kOciArchive);
  EXPECT_EQ(r->path, "img.tar");
  EXPECT_EQ(r->tag, "latest");
}

TEST(Reference, Docker) {
  auto r = ParseReference("docker://127.0.0.1:5000/team/golden:v1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->host, "127.0.0.1:5000");
  EXPECT_EQ(r->repository, "team/golden");
  EXPECT_EQ(r->tag, "v1");
  std::string d = "sha256:" + std::string(64, 'a');
  auto pinned = ParseReference("docker://localhost/golden@" + d);
  ASSERT_TRUE(pinned.ok());
  EXPECT_EQ(pinned->digest, d);
  EXPECT_EQ(pinned->tag, "");
}

TEST(Reference, LocalPinnedByDigest) {
  std::string d = "sha256:" + std::string(64, 'b');
  auto r = ParseReference("oci:out/golden@" + d);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->path, "out/golden");
  EXPECT_EQ(r->digest, d);
  EXPECT_EQ(r->tag, d);  // what layout lookups take
  EXPECT_EQ(r->str(), "oci:out/golden@" + d);
  auto a = ParseReference("oci-archive:img.tar@" + d);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->path, "img.tar");
  EXPECT_EQ(a->str(), "oci-archive:img.tar@" + d);
  EXPECT_EQ(ParseReference("oci:dir:v1@" + d).error().message,
            "image reference 'oci:dir:v1@" + d + "': give a tag or a digest, not both");
  EXPECT_FALSE(ParseReference("oci:dir@sha256:abc").ok());
  EXPECT_FALSE(ParseReference("oci:@" + d).ok());
}

TEST(Reference, ErrorsSayWhatIsWanted) {
  EXPECT_EQ(ParseReference("golden").error().message,
            "image reference 'golden': want oci:DIR[:TAG], oci-archive:FILE[:TAG] or "
            "docker://HOST/REPO[:TAG|@DIGEST]");
  EXPECT_EQ(ParseReference("oci:dir:bad tag").error().message,
            "image reference 'oci:dir:bad tag': tag 'bad tag' is not a valid tag");
  EXPECT_FALSE(ParseReference("oci:").ok());
  EXPECT_FALSE(ParseReference("docker://host/UPPER").ok());
  EXPECT_FALSE(ParseReference("docker://nohost").ok());
}

}  // namespace imgtool::ref

#include "ref/reference.h"

#include <gtest/gtest.h>

#include <vector>

#include "ref/docker_name.h"

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

// What code outside transport/ and ref/ asks instead of comparing transports.
TEST(Reference, RegistryOrLocalPath) {
  for (const char* text : {"oci:out", "oci-archive:a.tar:v1", "docker-archive:s.tar"}) {
    auto r = ParseReference(text);
    ASSERT_TRUE(r.ok()) << text;
    EXPECT_FALSE(IsRegistry(*r)) << text;
    EXPECT_TRUE(IsLocalPath(*r)) << text;
  }
  auto d = ParseReference("docker://127.0.0.1:5000/r:t");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(IsRegistry(*d));
  EXPECT_FALSE(IsLocalPath(*d));
  Reference l = LayoutReference("base/layout");
  EXPECT_EQ(l.str(), "oci:base/layout");
  EXPECT_EQ(*ParseReference(l.str()), l);
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
            "image reference 'golden': want oci:DIR[:TAG], oci-archive:FILE[:TAG], "
            "docker-archive:FILE[:NAME:TAG] or docker://HOST/REPO[:TAG|@DIGEST]");
  EXPECT_EQ(ParseReference("oci:dir:bad tag").error().message,
            "image reference 'oci:dir:bad tag': tag 'bad tag' is not a valid tag");
  EXPECT_FALSE(ParseReference("oci:").ok());
  EXPECT_FALSE(ParseReference("docker://host/UPPER").ok());
}

namespace {

// The grammar's edge cases, one row each. Accepted rows give the parts and the canonical
// text (which must parse back to the same parts); refused rows give the exact reason.
const std::string kD = "sha256:" + std::string(64, 'a');

struct Accepted {
  std::string text;
  Reference want;
  std::string canonical;
};

Reference Docker(std::string host, std::string repo, std::string tag = "", std::string digest = "") {
  Reference r;
  r.transport = Transport::kDocker;
  r.host = std::move(host);
  r.repository = std::move(repo);
  r.tag = std::move(tag);
  r.digest = std::move(digest);
  return r;
}

Reference Local(Transport t, std::string path, std::string tag = "", std::string digest = "") {
  Reference r;
  r.transport = t;
  r.path = std::move(path);
  r.tag = std::move(tag);
  r.digest = std::move(digest);
  return r;
}

Reference Saved(std::string path, std::string host, std::string repo, std::string tag) {
  Reference r = Docker(std::move(host), std::move(repo), std::move(tag));
  r.transport = Transport::kDockerArchive;
  r.path = std::move(path);
  return r;
}

Reference Indexed(std::string path, int index) {
  Reference r = Local(Transport::kDockerArchive, std::move(path));
  r.source_index = index;
  return r;
}

std::vector<Accepted> AcceptedRows() {
  const auto kDockerArchive = Transport::kDockerArchive;
  const auto kOci = Transport::kOciLayout;
  const auto kArchive = Transport::kOciArchive;
  const std::string tag128(128, 't');
  const std::string repo243(243, 'r');  // "reg.example/" + 243 = 255, the longest name
  return {
      // Docker Hub short names, as containers/image normalises them.
      {"docker://nginx", Docker("docker.io", "library/nginx"), "docker://docker.io/library/nginx"},
      {"docker://nohost", Docker("docker.io", "library/nohost"), "docker://docker.io/library/nohost"},
      {"docker://nginx:1.25", Docker("docker.io", "library/nginx", "1.25"), "docker://docker.io/library/nginx:1.25"},
      {"docker://library/nginx", Docker("docker.io", "library/nginx"), "docker://docker.io/library/nginx"},
      {"docker://user/app", Docker("docker.io", "user/app"), "docker://docker.io/user/app"},
      {"docker://team/sub/app:v2", Docker("docker.io", "team/sub/app", "v2"), "docker://docker.io/team/sub/app:v2"},
      {"docker://docker.io/nginx", Docker("docker.io", "library/nginx"), "docker://docker.io/library/nginx"},
      {"docker://index.docker.io/nginx:latest", Docker("docker.io", "library/nginx", "latest"),
       "docker://docker.io/library/nginx:latest"},
      {"docker://index.docker.io/user/app", Docker("docker.io", "user/app"), "docker://docker.io/user/app"},
      {"docker://0/1", Docker("docker.io", "0/1"), "docker://docker.io/0/1"},
      // No '/': a short name even when it looks like a host (containers/image does the same).
      {"docker://localhost:5000", Docker("docker.io", "library/localhost", "5000"),
       "docker://docker.io/library/localhost:5000"},
      {"docker://a.b", Docker("docker.io", "library/a.b"), "docker://docker.io/library/a.b"},
      // Named hosts: a '.', a ':', localhost, or an uppercase letter.
      {"docker://localhost/app", Docker("localhost", "app"), "docker://localhost/app"},
      {"docker://localhost:5000/app:v1", Docker("localhost:5000", "app", "v1"), "docker://localhost:5000/app:v1"},
      {"docker://127.0.0.1:5000/team/golden:v1", Docker("127.0.0.1:5000", "team/golden", "v1"),
       "docker://127.0.0.1:5000/team/golden:v1"},
      {"docker://reg.example/a/b/c", Docker("reg.example", "a/b/c"), "docker://reg.example/a/b/c"},
      {"docker://reg:5000/app", Docker("reg:5000", "app"), "docker://reg:5000/app"},
      {"docker://[::1]:5000/app:v1", Docker("[::1]:5000", "app", "v1"), "docker://[::1]:5000/app:v1"},
      {"docker://[fe80::1]/app", Docker("[fe80::1]", "app"), "docker://[fe80::1]/app"},
      {"docker://Reg/app", Docker("Reg", "app"), "docker://Reg/app"},
      {"docker://REG.Example:443/team/app", Docker("REG.Example:443", "team/app"), "docker://REG.Example:443/team/app"},
      {"docker://registry-1.docker.io/library/nginx", Docker("registry-1.docker.io", "library/nginx"),
       "docker://registry-1.docker.io/library/nginx"},
      // Path components: one '.', one or two '_', any run of '-'.
      {"docker://a__b/c-d--e/f.g_h", Docker("docker.io", "a__b/c-d--e/f.g_h"), "docker://docker.io/a__b/c-d--e/f.g_h"},
      {"docker://a---b", Docker("docker.io", "library/a---b"), "docker://docker.io/library/a---b"},
      {"docker://reg.example/" + repo243, Docker("reg.example", repo243), "docker://reg.example/" + repo243},
      // Tags: word characters, then '.' and '-' too; up to 128.
      {"docker://nginx:_under", Docker("docker.io", "library/nginx", "_under"),
       "docker://docker.io/library/nginx:_under"},
      {"docker://nginx:V1.0-RC_2", Docker("docker.io", "library/nginx", "V1.0-RC_2"),
       "docker://docker.io/library/nginx:V1.0-RC_2"},
      {"docker://app:" + tag128, Docker("docker.io", "library/app", tag128),
       "docker://docker.io/library/app:" + tag128},
      // Digests, and a tag beside one (both kept: requests use the digest).
      {"docker://localhost/golden@" + kD, Docker("localhost", "golden", "", kD), "docker://localhost/golden@" + kD},
      {"docker://nginx@" + kD, Docker("docker.io", "library/nginx", "", kD), "docker://docker.io/library/nginx@" + kD},
      {"docker://nginx:latest@" + kD, Docker("docker.io", "library/nginx", "latest", kD),
       "docker://docker.io/library/nginx:latest@" + kD},
      {"docker://reg:5000/a/b:v1@" + kD, Docker("reg:5000", "a/b", "v1", kD), "docker://reg:5000/a/b:v1@" + kD},
      // oci: and oci-archive: paths end at the first ':'.
      {"oci:out/golden:v1", Local(kOci, "out/golden", "v1"), "oci:out/golden:v1"},
      {"oci:/abs/dir", Local(kOci, "/abs/dir"), "oci:/abs/dir"},
      {"oci:with space:v1", Local(kOci, "with space", "v1"), "oci:with space:v1"},
      {"oci:shots@2x:v1", Local(kOci, "shots@2x", "v1"), "oci:shots@2x:v1"},
      {"oci:dir@" + kD, Local(kOci, "dir", kD, kD), "oci:dir@" + kD},
      {"oci:a@b@" + kD, Local(kOci, "a@b", kD, kD), "oci:a@b@" + kD},
      {"oci-archive:img.tar:latest", Local(kArchive, "img.tar", "latest"), "oci-archive:img.tar:latest"},
      {"oci-archive:/tmp/x.tar", Local(kArchive, "/tmp/x.tar"), "oci-archive:/tmp/x.tar"},
      {"oci-archive:img.tar@" + kD, Local(kArchive, "img.tar", kD, kD), "oci-archive:img.tar@" + kD},
      // docker-archive: the path ends at the first ':'; a name as docker:// normalises it,
      // tagged "latest" when no tag is written; @N an image by its place.
      {"docker-archive:save.tar", Local(kDockerArchive, "save.tar"), "docker-archive:save.tar"},
      {"docker-archive:save.tar:busybox", Saved("save.tar", "docker.io", "library/busybox", "latest"),
       "docker-archive:save.tar:docker.io/library/busybox:latest"},
      {"docker-archive:/a/s.tar:localhost:5000/team/app:v1", Saved("/a/s.tar", "localhost:5000", "team/app", "v1"),
       "docker-archive:/a/s.tar:localhost:5000/team/app:v1"},
      {"docker-archive:s@2x.tar:foo/bar:v2", Saved("s@2x.tar", "docker.io", "foo/bar", "v2"),
       "docker-archive:s@2x.tar:docker.io/foo/bar:v2"},
      {"docker-archive:s.tar:@0", Indexed("s.tar", 0), "docker-archive:s.tar:@0"},
      {"docker-archive:s.tar:@007", Indexed("s.tar", 7), "docker-archive:s.tar:@7"},
  };
}

struct Refused {
  std::string text;
  std::string why;  // after "image reference 'TEXT': "
};

std::vector<Refused> RefusedRows() {
  const std::string lowercase_component =
      " is not a path component (lowercase letters and digits joined by '.', '_', '__' or '-'s)";
  const std::string hex64(64, 'b');
  const std::string sha512 = "sha512:" + std::string(128, 'c');
  return {
      {"golden",
       "want oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:NAME:TAG] or "
       "docker://HOST/REPO[:TAG|@DIGEST]"},
      {"docker:nginx",
       "want oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:NAME:TAG] or "
       "docker://HOST/REPO[:TAG|@DIGEST]"},
      {"docker://", "the name is empty"},
      {"docker://" + hex64, "'" + hex64 + "' is 64 hex digits: an image ID, not a repository"},
      // Empty parts and trailing separators.
      {"docker:///app", "repository '/app' has an empty path component"},
      {"docker://app/", "repository 'app/' has an empty path component"},
      {"docker://team//app", "repository 'team//app' has an empty path component"},
      {"docker://reg.example/", "the repository is empty"},
      {"docker://reg.example/:v1", "the repository is empty"},
      {"docker://app-", "repository 'app-': 'app-'" + lowercase_component},
      {"docker://-app", "repository '-app': '-app'" + lowercase_component},
      {"docker://a..b", "repository 'a..b': 'a..b'" + lowercase_component},
      {"docker://a___b", "repository 'a___b': 'a___b'" + lowercase_component},
      {"docker://a._b", "repository 'a._b': 'a._b'" + lowercase_component},
      {"docker://team/b_", "repository 'team/b_': 'b_'" + lowercase_component},
      {"docker://reg.example/a b", "repository 'a b': 'a b'" + lowercase_component},
      // Uppercase: a host when first, refused in the repository.
      {"docker://host/UPPER", "repository 'host/UPPER' must be lowercase"},
      {"docker://Nginx", "repository 'Nginx' must be lowercase"},
      {"docker://reg.example/Team/app", "repository 'Team/app' must be lowercase"},
      {"docker://Reg/App", "repository 'App' must be lowercase"},
      // Hosts and ports.
      {"docker://reg:/app", "registry host 'reg:' is not a valid HOST[:PORT]"},
      {"docker://reg:50a0/app", "registry host 'reg:50a0' is not a valid HOST[:PORT]"},
      {"docker://app:v1/x", "registry host 'app:v1' is not a valid HOST[:PORT]"},
      {"docker://-reg.example/app", "registry host '-reg.example' is not a valid HOST[:PORT]"},
      {"docker://reg_x.example/app", "registry host 'reg_x.example' is not a valid HOST[:PORT]"},
      {"docker://reg..example/app", "registry host 'reg..example' is not a valid HOST[:PORT]"},
      {"docker://[::1/app", "registry host '[::1' is not a valid HOST[:PORT]"},
      {"docker://[]:5000/app", "registry host '[]:5000' is not a valid HOST[:PORT]"},
      {"docker://[::1]5000/app", "registry host '[::1]5000' is not a valid HOST[:PORT]"},
      {"docker://[::g]/app", "registry host '[::g]' is not a valid HOST[:PORT]"},
      // Lengths.
      {"docker://reg.example/" + std::string(244, 'r'),
       "the name reg.example/rrrrrrrrrrrrrrrrrrrrrrrr... is 256 characters, more than 255"},
      {"docker://" + std::string(238, 'n'),
       "the name docker.io/library/nnnnnnnnnnnnnnnn... is 256 characters, more than 255"},
      {"docker://nginx:" + std::string(129, 't'), "the tag is 129 characters, more than 128"},
      // Tags.
      {"docker://nginx:", "the tag is empty"},
      {"docker://nginx:-x", "tag '-x' is not a valid tag"},
      {"docker://nginx:.x", "tag '.x' is not a valid tag"},
      {"docker://nginx:a+b", "tag 'a+b' is not a valid tag"},
      {"docker://a:b:c", "tag 'b:c' is not a valid tag"},
      // Digests: sha256 with 64 lowercase hex digits, nothing else.
      {"docker://nginx@", "the digest is empty"},
      {"docker://nginx@sha256:abc", "digest 'sha256:abc': want sha256: and 64 lowercase hex digits"},
      {"docker://nginx@sha256:" + std::string(64, 'A'),
       "digest 'sha256:" + std::string(64, 'A') + "': want sha256: and 64 lowercase hex digits"},
      {"docker://nginx@" + sha512, "unsupported digest algorithm 'sha512' (only sha256)"},
      {"docker://nginx@" + hex64, "digest '" + hex64 + "' has no algorithm: want sha256:<64 lowercase hex digits>"},
      {"docker://nginx@" + kD + "@" + kD, "digest '" + kD + "@" + kD + "': want sha256: and 64 lowercase hex digits"},
      {"docker://nginx:v1@" + sha512, "unsupported digest algorithm 'sha512' (only sha256)"},
      // oci: and oci-archive:.
      {"oci:", "path is empty"},
      {"oci::v1", "path is empty"},
      {"oci:@" + kD, "path is empty"},
      {"oci:dir:bad tag", "tag 'bad tag' is not a valid tag"},
      {"oci:a:b:c", "tag 'b:c' is not a valid tag"},
      {"oci:dir:" + std::string(129, 'v'), "the tag is 129 characters, more than 128"},
      {"oci:dir:v1@" + kD, "give a tag or a digest, not both"},
      {"oci:dir@sha256:abc", "digest 'sha256:abc': want sha256: and 64 lowercase hex digits"},
      {"oci:dir@" + sha512, "unsupported digest algorithm 'sha512' (only sha256)"},
      {"oci-archive:", "path is empty"},
      {"oci-archive:x.tar:", "the tag is empty"},
      {"oci-archive:x.tar@SHA256:" + hex64, "unsupported digest algorithm 'SHA256' (only sha256)"},
      {"docker-archive:", "path is empty"},
      {"docker-archive::busybox", "path is empty"},
      {"docker-archive:s.tar:", "the name is empty"},
      {"docker-archive:s.tar:Busybox", "repository 'Busybox' must be lowercase"},
      {"docker-archive:s.tar:busybox@" + kD, "a docker-archive names its images by NAME:TAG or @N, not by digest"},
      {"docker-archive:s.tar:@", "'@' is not an image number (@0, @1, ...)"},
      {"docker-archive:s.tar:@-1", "'@-1' is not an image number (@0, @1, ...)"},
      {"docker-archive:s.tar:@1x", "'@1x' is not an image number (@0, @1, ...)"},
      {"docker-archive:s.tar:@1234567", "'@1234567' is not an image number (@0, @1, ...)"},
  };
}

}  // namespace

TEST(ReferenceGrammar, AcceptedRowsNormaliseAndRoundTrip) {
  for (const auto& row : AcceptedRows()) {
    SCOPED_TRACE(row.text);
    auto r = ParseReference(row.text);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->transport, row.want.transport);
    EXPECT_EQ(r->path, row.want.path);
    EXPECT_EQ(r->host, row.want.host);
    EXPECT_EQ(r->repository, row.want.repository);
    EXPECT_EQ(r->tag, row.want.tag);
    EXPECT_EQ(r->digest, row.want.digest);
    EXPECT_EQ(r->source_index, row.want.source_index);
    EXPECT_EQ(r->str(), row.canonical);
    auto again = ParseReference(r->str());
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *r);
  }
}

TEST(ReferenceGrammar, RefusedRowsSayWhy) {
  for (const auto& row : RefusedRows()) {
    SCOPED_TRACE(row.text);
    auto r = ParseReference(row.text);
    ASSERT_FALSE(r.ok()) << r->str();
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
    EXPECT_EQ(r.error().message, "image reference '" + row.text + "': " + row.why);
  }
}

TEST(ReferenceGrammar, TableIsBigEnough) { EXPECT_GE(AcceptedRows().size() + RefusedRows().size(), 40u); }

TEST(RegistryApiHost, DockerHubAnswersElsewhere) {
  EXPECT_EQ(RegistryApiHost("docker.io"), "registry-1.docker.io");
  EXPECT_EQ(RegistryApiHost("index.docker.io"), "registry-1.docker.io");
  EXPECT_EQ(RegistryApiHost("registry-1.docker.io"), "registry-1.docker.io");
  EXPECT_EQ(RegistryApiHost("127.0.0.1:5000"), "127.0.0.1:5000");
  EXPECT_EQ(RegistryApiHost("localhost"), "localhost");
  EXPECT_EQ(RegistryApiHost("[::1]:5000"), "[::1]:5000");
}

}  // namespace imgtool::ref

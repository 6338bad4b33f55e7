#include "builder/spec.h"

#include <gtest/gtest.h>

#include <utility>

#include "builder/base_spec.h"

namespace imgtool::build {

namespace {
const char* kUser = R"("user":{"name":"t","uid":10001,"gid":10002})";
std::string SpecWith(const std::string& layers, const std::string& extra = "") {
  return std::string(R"({"base":"scratch",)") + kUser + R"(,"layers":)" + layers + extra + "}";
}
std::string ErrorOf(const std::string& raw) {
  auto s = ParseSpec(raw, "/ctx", "spec.json");
  return s.ok() ? "ok" : s.error().message;
}
}  // namespace

TEST(Spec, ParsesAFullSpec) {
  auto s = ParseSpec(SpecWith(R"([{"name":"app","root":"sub","files":[{"src":"a","dest":"/opt/","mode":"0755",
      "dir_mode":"0750","owner":"1:2"}]}])",
                              R"(,"env":{"A":"1"},"workdir":"/w","entrypoint":["x"],"cmd":[],"labels":{"k":"v"},
      "stack":{"cuda":"13.0.96"},"compression":"zstd","platform":{"architecture":"arm64"})"),
                     "/ctx", "spec.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->user.home, "/home/t");
  EXPECT_EQ(s->user.group, "t");
  EXPECT_EQ(s->user.gid, 10002u);
  ASSERT_EQ(s->layers.size(), 1u);
  EXPECT_EQ(s->layers[0].root, "/ctx/sub");
  EXPECT_EQ(*s->layers[0].files[0].mode, 0755u);
  EXPECT_EQ(*s->layers[0].files[0].dir_mode, 0750u);
  EXPECT_EQ(s->layers[0].files[0].uid, 1u);
  EXPECT_EQ(s->layers[0].files[0].gid, 2u);
  EXPECT_EQ(*s->compression, archive::Compression::kZstd);
  EXPECT_EQ(s->platform.architecture, "arm64");
  EXPECT_TRUE(s->cmd->empty());
  EXPECT_EQ(s->stack.at("cuda"), "13.0.96");
  EXPECT_EQ(StackLabel("cuda"), "org.imgtool.stack.cuda");
}

TEST(Spec, ErrorsNameTheJsonPath) {
  const std::string f = R"([{"files":[{"src":"a","dest":"/x")";
  EXPECT_EQ(ErrorOf(SpecWith(f + R"(,"mode":644}]}])")),
            "spec.json: $.layers[0].files[0].mode: want an octal string such as \"0644\"");
  EXPECT_EQ(ErrorOf(SpecWith(f + R"(,"owner":"root:root"}]}])")),
            "spec.json: $.layers[0].files[0].owner: 'root:root' is not numeric \"UID:GID\"");
  EXPECT_EQ(ErrorOf(SpecWith(f + R"(,"mode":"4755"}]}])")),
            "spec.json: $.layers[0].files[0]: mode sets setuid/setgid bits; add \"allow_setuid\": true if that is "
            "intended");
  EXPECT_EQ(ErrorOf(SpecWith(f + R"(,"mode":"4755","allow_setuid":true}]}])")), "ok");
  EXPECT_EQ(ErrorOf(SpecWith(R"([{"files":[{"src":"a","dest":"relative"}]}])")),
            "spec.json: $.layers[0].files[0].dest: 'relative' must be an absolute path in the image");
  EXPECT_EQ(ErrorOf(SpecWith(R"([{"files":[{"src":"a/../../b","dest":"/x"}]}])")),
            "spec.json: $.layers[0].files[0].src: 'a/../../b' escapes the layer root with '..'");
  EXPECT_EQ(ErrorOf(SpecWith(R"([{"files":[]}])")),
            "spec.json: $.layers[0].files: want a non-empty array of {src, dest} (or debs, wheels, installed_wheels)");
  EXPECT_EQ(ErrorOf(SpecWith("[]", R"(,"stack":{"cuda":"latest"})")),
            "spec.json: $.stack.cuda: 'latest' is not a version such as \"13.0.96\"");
  EXPECT_EQ(ErrorOf(SpecWith("[]", R"(,"stack":{"tensorrt":"10"})")),
            "spec.json: $.stack.tensorrt: unknown key (allowed: cublas, cuda, cudnn, driver, nccl)");
  EXPECT_EQ(ErrorOf(SpecWith("[]", R"(,"compression":"lz4")")).rfind("spec.json: $.compression: ", 0), 0u);
  EXPECT_EQ(ErrorOf(SpecWith("[]", R"(,"env":{"A":1})")), "spec.json: $.env.A: want a string");
}

// A NUL in any string of a spec (a C string would cut it: dest "/x\0y" written as "/x")
// is refused when the spec is parsed, naming the field: nothing is staged or written.
TEST(Spec, NulBytesAreRefusedInEveryField) {
  const std::string why = " holds a NUL byte, which no path, name or environment entry can carry";
  const std::string file = R"([{"files":[{"src":"a","dest":"/x"}]}])";
  const std::pair<std::string, std::string> cases[] = {
      {SpecWith(R"([{"files":[{"src":"a","dest":"/x\u0000y"}]}])"), R"($.layers[0].files[0].dest: "/x\x00y")"},
      {SpecWith(R"([{"files":[{"src":"a\u0000/b","dest":"/x"}]}])"), R"($.layers[0].files[0].src: "a\x00/b")"},
      {SpecWith(R"([{"name":"l\u0000","files":[{"src":"a","dest":"/x"}]}])"), R"($.layers[0].name: "l\x00")"},
      {SpecWith(R"([{"root":"r\u0000","files":[{"src":"a","dest":"/x"}]}])"), R"($.layers[0].root: "r\x00")"},
      {SpecWith(file, R"(,"env":{"A\u0000B":"1"})"), R"($.env: the key "A\x00B")"},
      {SpecWith(file, R"(,"env":{"A":"1\u0000"})"), R"($.env.A: "1\x00")"},
      {SpecWith(file, R"(,"labels":{"k":"v\u0000w"})"), R"($.labels.k: "v\x00w")"},
      {SpecWith(file, R"(,"entrypoint":["/bin/x","\u0000"])"), R"($.entrypoint[1]: "\x00")"},
      {SpecWith(file, R"(,"workdir":"/w\u0000")"), R"($.workdir: "/w\x00")"},
      {SpecWith(file, R"(,"platforms":["linux/amd64\u0000"])"), R"($.platforms[0]: "linux/amd64\x00")"},
      {SpecWith(R"([{"debs":[{"src":"x.deb","sha256":"00","name":"x\u0000","version":"1"}]}])"),
       R"($.layers[0].debs[0].name: "x\x00")"},
      {R"({"base":{"layout":"/l\u0000","digest":"sha256:00"},)" + std::string(kUser) + R"(,"layers":)" + file + "}",
       R"($.base.layout: "/l\x00")"},
  };
  for (const auto& [raw, where] : cases) EXPECT_EQ(ErrorOf(raw), "spec.json: " + where + why) << raw;
  // Other control characters are names a tar can carry; they are quoted where a message
  // names them, never raw.
  EXPECT_EQ(ErrorOf(SpecWith(R"([{"files":[{"src":"a","dest":"rel\n\u001b[2J"}]}])")),
            R"(spec.json: $.layers[0].files[0].dest: 'rel\n\x1b[2J' must be an absolute path in the image)");
  EXPECT_EQ(ErrorOf(SpecWith(file, R"(,"env":{"A\nB=":"1"})")),
            R"(spec.json: $.env."A\nB=": not a valid variable name)");
}

TEST(Spec, UserMustNotBeRoot) {
  EXPECT_EQ(ErrorOf(R"({"base":"scratch","user":{"name":"t","uid":0,"gid":1},"layers":[]})"),
            "spec.json: $.user.uid: 0 is root; imgtool images always run as a non-root user");
  EXPECT_EQ(ErrorOf(R"({"base":"scratch","user":{"name":"t","uid":1,"gid":0},"layers":[]})"),
            "spec.json: $.user.gid: 0 is the root group; choose a non-root group");
  EXPECT_EQ(ErrorOf(R"({"base":"scratch","user":{"name":"Bad Name","uid":1,"gid":1},"layers":[]})"),
            "spec.json: $.user.name: 'Bad Name' is not a valid user name ([a-z0-9_-], up to 32)");
  // What goes into /etc/passwd and /etc/group must read alike to every reader (rootfs/users.h).
  EXPECT_EQ(ErrorOf(R"({"base":"scratch","user":{"name":"-t","uid":1,"gid":1},"layers":[]})"),
            "spec.json: $.user.name: '-t' is not a valid user name: a leading '-' is \"exclude\" to glibc's compat "
            "service and an option to tools");
  EXPECT_EQ(ErrorOf(R"({"base":"scratch","user":{"name":"t","group":"0","uid":1,"gid":1},"layers":[]})"),
            "spec.json: $.user.group: '0' is not a valid group name: all digits, which runtimes, su and chown read as "
            "an id");
  EXPECT_EQ(
      ErrorOf(
          R"({"base":"scratch","user":{"name":"t","uid":1,"gid":1,"shell":"/bin/sh\nr:x:0:0::/:/bin/sh"},"layers":[]})"),
      "spec.json: $.user.shell: control character 10 (a newline would start a line of its own)");
  EXPECT_EQ(ErrorOf(R"({"base":"scratch","user":{"name":"t","uid":1,"gid":1,"home":"/h:0"},"layers":[]})"),
            "spec.json: $.user.home: a ':', which separates the fields of /etc/passwd");
}

TEST(Spec, BaseMustBePinnedByDigest) {
  std::string layers = R"(,"layers":[]})";
  EXPECT_EQ(ErrorOf(std::string(R"({"base":{"layout":"b"},)") + kUser + layers),
            "spec.json: $.base.digest: required: a base image is pinned by its manifest digest");
  auto s = ParseSpec(
      std::string(R"({"base":{"layout":"b","digest":"sha256:)") + std::string(64, 'a') + R"("},)" + kUser + layers,
      "/ctx", "spec.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_FALSE(s->base.scratch);
  EXPECT_FALSE(s->base.registry());
  EXPECT_EQ(s->base.reference.str(), "oci:/ctx/b@sha256:" + std::string(64, 'a'));
  EXPECT_EQ(s->base.digest.hex(), std::string(64, 'a'));
}

namespace {
const std::string kHex(64, 'b');
std::string WithBase(const std::string& base) { return R"({"base":)" + base + "," + kUser + R"(,"layers":[]})"; }
}  // namespace

TEST(Spec, BaseFromARegistry) {
  auto s = ParseSpec(WithBase(R"("docker://127.0.0.1:5000/team/base@sha256:)" + kHex + R"(")"), "/ctx", "spec.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->base.registry());
  EXPECT_EQ(s->base.reference.host, "127.0.0.1:5000");
  EXPECT_EQ(s->base.reference.repository, "team/base");
  EXPECT_EQ(s->base.digest.hex(), kHex);
  EXPECT_EQ(BaseName(s->base), "127.0.0.1:5000/team/base");
  EXPECT_EQ(BaseSource(s->base), "docker://127.0.0.1:5000/team/base");
  // Docker Hub short names go through the reference grammar; a tag beside the digest is kept.
  auto hub = ParseSpec(WithBase(R"("docker://ubuntu:24.04@sha256:)" + kHex + R"(")"), "/ctx", "spec.json");
  ASSERT_TRUE(hub.ok()) << hub.error().message;
  EXPECT_EQ(hub->base.reference.str(), "docker://docker.io/library/ubuntu:24.04@sha256:" + kHex);
  EXPECT_EQ(BaseName(hub->base), "docker.io/library/ubuntu:24.04");
}

TEST(Spec, BaseAsALocalReference) {
  auto s = ParseSpec(WithBase(R"("oci:bases/b@sha256:)" + kHex + R"(")"), "/ctx", "spec.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_FALSE(s->base.registry());
  EXPECT_EQ(s->base.reference.str(), "oci:/ctx/bases/b@sha256:" + kHex);
  EXPECT_EQ(BaseName(s->base), "") << "a folder is not a name";
  EXPECT_EQ(BaseSource(s->base), "");
  auto archive = ParseSpec(WithBase(R"("oci-archive:/abs/b.tar@sha256:)" + kHex + R"(")"), "/ctx", "spec.json");
  ASSERT_TRUE(archive.ok()) << archive.error().message;
  EXPECT_EQ(archive->base.reference.path, "/abs/b.tar");
  auto scratch = ParseSpec(WithBase(R"("scratch")"), "/ctx", "spec.json");
  ASSERT_TRUE(scratch.ok()) << scratch.error().message;
  EXPECT_TRUE(scratch->base.scratch);
  EXPECT_FALSE(scratch->base.registry());
}

TEST(Spec, BaseErrorsNameTheBase) {
  EXPECT_EQ(ErrorOf(WithBase(R"("docker://127.0.0.1:5000/base:1.0")")),
            "spec.json: $.base: 'docker://127.0.0.1:5000/base:1.0' is not pinned: add @sha256:<digest> of the image "
            "or index (a tag can move)");
  EXPECT_EQ(ErrorOf(WithBase(R"("docker://ubuntu")")),
            "spec.json: $.base: 'docker://ubuntu' is not pinned: add @sha256:<digest> of the image or index (a tag "
            "can move)");
  EXPECT_EQ(ErrorOf(WithBase(R"("oci:b:v1")")),
            "spec.json: $.base: 'oci:b:v1' is not pinned: add @sha256:<digest> of the image or index (a tag can move)");
  EXPECT_EQ(
      ErrorOf(WithBase(R"("docker://r.invalid/base@sha256:abc")")),
      "spec.json: $.base: image reference 'docker://r.invalid/base@sha256:abc': digest 'sha256:abc': want sha256: "
      "and 64 lowercase hex digits");
  const std::string forms =
      "want \"scratch\", \"docker://HOST/REPO@sha256:...\", \"oci:DIR@sha256:...\", "
      "\"oci-archive:FILE@sha256:...\" or {\"layout\": DIR, \"digest\": \"sha256:...\"}";
  EXPECT_EQ(ErrorOf(WithBase(R"("registry.invalid/base@sha256:)" + kHex + R"(")")),
            "spec.json: $.base: 'registry.invalid/base@sha256:" + kHex + "': " + forms);
  EXPECT_EQ(ErrorOf(WithBase(R"("containers-storage:base")")),
            "spec.json: $.base: 'containers-storage:base': " + forms);
  EXPECT_EQ(ErrorOf(WithBase("42")), "spec.json: $.base: " + forms);
  EXPECT_EQ(ErrorOf(WithBase(R"({"layout":"b","digest":"sha256:)" + kHex + R"(","tag":"v1"})")),
            "spec.json: $.base.tag: unknown key (allowed: digest, layout)");
  EXPECT_EQ(ErrorOf(WithBase(R"({"layout":"b","digest":"latest"})")).rfind("spec.json: $.base.digest: ", 0), 0u);
}

TEST(Spec, DigestIsOfTheExactBytes) {
  std::string a = SpecWith("[]");
  std::string b = a + "\n";
  EXPECT_NE(ParseSpec(a, "/c", "s")->digest, ParseSpec(b, "/c", "s")->digest);
}

}  // namespace imgtool::build

namespace imgtool::build {

TEST(Spec, ParsesPackages) {
  const std::string hex(64, 'a');
  auto s = ParseSpec(SpecWith(R"([{"debs":[{"src":"d/x.deb","sha256":")" + hex +
                              R"(","name":"x","version":"1-1","allow_setuid":true}],
      "wheels":[{"src":"w.whl","sha256":"sha256:)" +
                              hex + R"(","name":"w","version":"2","prefix":"/opt/py/"}],
      "installed_wheels":[{"dist_info":"di","root":"/site","strip_prefix":"nvidia/cu13/","name":"n","version":"3",
      "prefix":"/usr/local/cuda","record_sha256":")" +
                              hex + R"("}]}])"),
                     "/ctx", "spec.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  const auto& p = s->layers[0].packages;
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].kind, PackageKind::kDeb);
  EXPECT_EQ(p[0].src, "/ctx/d/x.deb");
  EXPECT_EQ(p[0].given, "d/x.deb");
  EXPECT_TRUE(p[0].allow_setuid);
  EXPECT_EQ(p[1].sha256.hex(), hex);
  EXPECT_EQ(p[1].prefix, "opt/py");
  EXPECT_EQ(p[2].dist_info, "/ctx/di");
  EXPECT_EQ(p[2].site_root, "/site");
  EXPECT_EQ(p[2].strip_prefix, "nvidia/cu13/");
  EXPECT_EQ(p[2].record_sha256->hex(), hex);
  EXPECT_EQ(p[2].where, "$.layers[0].installed_wheels[0]");
}

TEST(Spec, RefusesBadPackages) {
  const std::string hex(64, 'a');
  EXPECT_EQ(ErrorOf(SpecWith(R"([{"debs":[{"src":"x.deb","name":"x","version":"1"}]}])")),
            "spec.json: $.layers[0].debs[0].sha256: required: a package is pinned by the sha256 of its file");
  EXPECT_EQ(ErrorOf(SpecWith(R"([{"wheels":[{"src":"x.whl","sha256":")" + hex + R"(","name":"x","version":"1",
      "prefix":"rel"}]}])")),
            "spec.json: $.layers[0].wheels[0].prefix: 'rel' must be an absolute path in the image");
  EXPECT_EQ(ErrorOf(SpecWith(R"([{"debs":[{"src":"x.deb","sha256":")" + hex + R"(","name":"","version":"1"}]}])")),
            "spec.json: $.layers[0].debs[0].name: must not be empty");
  EXPECT_EQ(ErrorOf(SpecWith(R"([{"debs":[]}])")),
            "spec.json: $.layers[0].files: want a non-empty array of {src, dest} (or debs, wheels, installed_wheels)");
  EXPECT_EQ(ErrorOf(SpecWith(R"([{"debs":{}}])")), "spec.json: $.layers[0].debs: want an array");
}

}  // namespace imgtool::build

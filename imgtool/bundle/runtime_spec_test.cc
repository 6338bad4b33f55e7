// config.json from an image config: the image's User resolved against its own account
// files (names, ids, groups, what is refused), process args/env/cwd/user, and the bytes:
// canonical (sorted keys) and the same for the same image.
#include "bundle/runtime_spec.h"

#include <gtest/gtest.h>

#include <map>

namespace imgtool::bundle {
namespace {

const char* kPasswd =
    "root:x:0:0:root:/root:/bin/sh\n"
    "app:x:10001:10002::/app:/sbin/nologin\n"
    "svc:x:300:301::/:/sbin/nologin\n";
const char* kGroup =
    "root:x:0:\n"
    "app:x:10002:\n"
    "staff:x:50:app\n";

// The image's files: a path not in `files` is absent.
AccountReader Files(const std::map<std::string, std::string>& files) {
  return [files](const std::string& path) -> Result<std::optional<std::string>> {
    auto it = files.find(path);
    if (it == files.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  };
}

// "uid:gid", or the error's message.
std::string Resolve(const std::string& user,
                    const AccountReader& read = Files({{"/etc/passwd", kPasswd}, {"/etc/group", kGroup}})) {
  auto u = ResolveUser(user, read);
  if (!u.ok()) return (u.error().kind == ErrorKind::kInvalidInput ? "invalid: " : "other: ") + u.error().message;
  return std::to_string(u->uid) + ":" + std::to_string(u->gid);
}

TEST(ResolveUser, NamesIdsAndGroupsAsRuncResolvesThem) {
  EXPECT_EQ(Resolve(""), "0:0");
  EXPECT_EQ(Resolve("app"), "10001:10002");    // the gid from passwd
  EXPECT_EQ(Resolve("10001"), "10001:10002");  // a number's passwd entry gives the gid
  EXPECT_EQ(Resolve("4242"), "4242:0");        // a number in no entry is used as it is
  EXPECT_EQ(Resolve("10001:10001"), "10001:10001");
  EXPECT_EQ(Resolve("app:staff"), "10001:50");  // the group part overrides
  EXPECT_EQ(Resolve("svc:7"), "300:7");
  EXPECT_EQ(Resolve("0:staff"), "0:50");
  EXPECT_EQ(Resolve("+10001"), "10001:10002");  // a number to Go's Atoi, so to runc
  // Without account files a number still resolves; a name cannot.
  EXPECT_EQ(Resolve("10001:10001", Files({})), "10001:10001");
  EXPECT_EQ(Resolve("app", Files({})),
            "invalid: config User \"app\": the image has no /etc/passwd to look \"app\" up in");
  EXPECT_EQ(Resolve("app:staff", Files({{"/etc/passwd", kPasswd}})),
            "invalid: config User \"app:staff\": the image has no /etc/group to look \"staff\" up in");
}

TEST(ResolveUser, AnUnknownNameIsAnError) {
  EXPECT_EQ(Resolve("nobody"), "invalid: config User \"nobody\": no \"nobody\" in /etc/passwd");
  EXPECT_EQ(Resolve("app:wheel"), "invalid: config User \"app:wheel\": no \"wheel\" in /etc/group");
}

TEST(ResolveUser, WhatRuntimesReadDifferentlyIsRefused) {
  // Issue 24's file: glibc and Go read " t" as t, uid 0; musl as a name of its own.
  const std::string issue24 = " t:x:0:0:root:/root:/bin/sh\nt:x:10001:10001::/home/t:/bin/sh\n";
  std::string got = Resolve("t", Files({{"/etc/passwd", issue24}}));
  EXPECT_EQ(got.rfind("invalid: ", 0), 0u) << got;
  EXPECT_NE(got.find("resolve user 't' differently"), std::string::npos) << got;
  got = Resolve("app", Files({{"/etc/passwd", std::string(kPasswd) + "+::::::\n"}}));
  EXPECT_NE(got.find("\"+\" is a NIS compat entry"), std::string::npos) << got;
  got = Resolve("app", Files({{"/etc/passwd", std::string("app:x:10001:10002:::\0\n", 22)}}));
  EXPECT_NE(got.find("a NUL byte"), std::string::npos) << got;
  got = Resolve("app:g", Files({{"/etc/passwd", kPasswd}, {"/etc/group", " g:x:0:\ng:x:50:\n"}}));
  EXPECT_EQ(got.rfind("invalid: ", 0), 0u) << got;
  // User values runtimes parse differently (an id past 2^31-1, a negative one, extra colons);
  // "+0" is uid 0 to every runtime (strconv.Atoi), so it is not among them.
  for (const char* user : {"4294967296", "2147483648", "-1", "app:staff:x", "10001:"}) {
    SCOPED_TRACE(user);
    EXPECT_EQ(Resolve(user).rfind("invalid: config User", 0), 0u) << Resolve(user);
  }
}

TEST(ResolveUser, AReaderErrorIsPassedOn) {
  AccountReader broken = [](const std::string&) -> Result<std::optional<std::string>> {
    return MakeError(ErrorKind::kIntegrity, "layer damaged");
  };
  EXPECT_EQ(Resolve("app", broken), "other: layer damaged");
}

oci::Json Config() {
  return oci::ParseJsonOrDiscarded(R"({
    "architecture": "amd64", "os": "linux", "created": "2024-01-02T03:04:05Z",
    "config": {
      "User": "app",
      "Entrypoint": ["/usr/local/bin/trainer", "--config"],
      "Cmd": ["/etc/train.json", "--epochs", "1"],
      "Env": ["PATH=/usr/local/bin:/usr/bin", "OMP_NUM_THREADS=4"],
      "WorkingDir": "/work",
      "Labels": {"z.label": "last", "a.label": "first"}
    },
    "rootfs": {"type": "layers", "diff_ids": []}
  })");
}

TEST(RuntimeSpec, ProcessFromEntrypointCmdEnvWorkingDirAndUser) {
  auto bytes = RuntimeSpec(Config(), ProcessUser{10001, 10002}, {{"org.opencontainers.image.ref.digest", "sha256:ab"}});
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  auto spec = oci::ParseJsonOrDiscarded(*bytes);
  const auto& p = spec["process"];
  EXPECT_EQ(p["args"], oci::Json({"/usr/local/bin/trainer", "--config", "/etc/train.json", "--epochs", "1"}));
  EXPECT_EQ(p["env"], oci::Json({"PATH=/usr/local/bin:/usr/bin", "OMP_NUM_THREADS=4"}));
  EXPECT_EQ(p["cwd"], "/work");
  EXPECT_EQ(p["user"], oci::Json({{"uid", 10001}, {"gid", 10002}}));
  EXPECT_EQ(p["terminal"], false);
  EXPECT_EQ(spec["root"], oci::Json({{"path", "rootfs"}, {"readonly", false}}));
  EXPECT_EQ(spec["annotations"]["a.label"], "first");
  EXPECT_EQ(spec["annotations"]["org.opencontainers.image.architecture"], "amd64");
  EXPECT_EQ(spec["annotations"]["org.opencontainers.image.created"], "2024-01-02T03:04:05Z");
  EXPECT_EQ(spec["annotations"]["org.opencontainers.image.ref.digest"], "sha256:ab");
  // The host's network: no network namespace.
  for (const auto& ns : spec["linux"]["namespaces"]) EXPECT_NE(ns["type"], "network");
}

TEST(RuntimeSpec, EmptyAndRelativeFieldsAsUmociReadsThem) {
  oci::Json c = oci::ParseJsonOrDiscarded(R"({"config": {"Cmd": ["sh"], "WorkingDir": "work"}})");
  auto spec = oci::ParseJsonOrDiscarded(*RuntimeSpec(c, {}, {}));
  EXPECT_EQ(spec["process"]["args"], oci::Json({"sh"}));
  EXPECT_EQ(spec["process"]["cwd"], "/work");
  EXPECT_EQ(spec["process"]["env"], oci::Json::array());
  spec = oci::ParseJsonOrDiscarded(*RuntimeSpec(oci::ParseJsonOrDiscarded("{}"), {}, {}));
  EXPECT_EQ(spec["process"]["cwd"], "/");
  EXPECT_EQ(spec["process"]["args"], oci::Json::array());
  EXPECT_EQ(spec["process"]["user"], oci::Json({{"uid", 0}, {"gid", 0}}));
  // Members of the wrong type read as absent, never a throw.
  c = oci::ParseJsonOrDiscarded(R"({"config": {"Cmd": "sh", "Env": [1, "A=b"], "WorkingDir": 7, "Labels": []}})");
  auto odd = RuntimeSpec(c, {}, {});
  ASSERT_TRUE(odd.ok());
  spec = oci::ParseJsonOrDiscarded(*odd);
  EXPECT_EQ(spec["process"]["args"], oci::Json::array());
  EXPECT_EQ(spec["process"]["env"], oci::Json({"A=b"}));
  EXPECT_EQ(spec["process"]["cwd"], "/");
}

TEST(RuntimeSpec, TheSameImageGivesTheSameCanonicalBytes) {
  const std::map<std::string, std::string> extra = {{"org.opencontainers.image.ref.digest", "sha256:ab"}};
  auto first = RuntimeSpec(Config(), ProcessUser{1, 2}, extra);
  // The same config with its members written in another order.
  oci::Json reordered = oci::ParseJsonOrDiscarded(R"({
    "rootfs": {"diff_ids": [], "type": "layers"},
    "config": {
      "Labels": {"a.label": "first", "z.label": "last"},
      "WorkingDir": "/work", "Env": ["PATH=/usr/local/bin:/usr/bin", "OMP_NUM_THREADS=4"],
      "Cmd": ["/etc/train.json", "--epochs", "1"], "Entrypoint": ["/usr/local/bin/trainer", "--config"],
      "User": "app"
    },
    "created": "2024-01-02T03:04:05Z", "os": "linux", "architecture": "amd64"
  })");
  auto second = RuntimeSpec(reordered, ProcessUser{1, 2}, extra);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(*first, *RuntimeSpec(Config(), ProcessUser{1, 2}, extra));
  // Sorted keys, no whitespace: re-serializing canonically changes nothing.
  EXPECT_EQ(*oci::CanonicalJson(oci::ParseJsonOrDiscarded(*first)), *first);
  const std::string& s = *first;
  size_t last = 0;
  for (const char* key :
       {"\"annotations\":", "\"linux\":", "\"mounts\":", "\"ociVersion\":", "\"process\":", "\"root\":"}) {
    size_t at = s.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    EXPECT_GT(at, last) << key << " out of order";
    last = at;
  }
  EXPECT_EQ(s.find('\n'), std::string::npos);
  EXPECT_EQ(s.find(": "), std::string::npos);
  // A different user is different bytes (the test can fail).
  EXPECT_NE(*first, *RuntimeSpec(Config(), ProcessUser{1, 3}, extra));
}

}  // namespace
}  // namespace imgtool::bundle

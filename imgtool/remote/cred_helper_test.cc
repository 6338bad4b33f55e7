// Credential helpers and where credentials come from: credHelpers over credsStore over
// auths, the next file when one has nothing, Docker Hub's key, the exact error texts,
// and the bounds (timeout, output cap). The helpers are shell scripts written into a
// temporary folder put first on $PATH.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>

#include "fs/atomic_file.h"
#include "remote/cred_helper.h"
#include "remote/credentials.h"

namespace imgtool::remote {
namespace {

const char* kVars[] = {
    "PATH", "HOME", "REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR", "DOCKER_CONFIG", "IMGTOOL_CREDENTIAL_HELPER_TIMEOUT"};

class CredHelperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) {
      const char* old = std::getenv(v);
      if (old) saved_[v] = old;
    }
    auto tmp = fs::TempDir::Create("cred-helper-test-");
    ASSERT_TRUE(tmp.ok());
    tmp_ = std::move(*tmp);
    bin_ = tmp_.path() + "/bin";
    ASSERT_TRUE(fs::MakeDirs(bin_).ok());
    ::setenv("PATH", (bin_ + ":" + saved_["PATH"]).c_str(), 1);
    ::setenv("HOME", (tmp_.path() + "/home").c_str(), 1);
    for (const char* v :
         {"REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR", "DOCKER_CONFIG", "IMGTOOL_CREDENTIAL_HELPER_TIMEOUT"}) {
      ::unsetenv(v);
    }
  }
  void TearDown() override {
    for (const char* v : kVars) {
      if (saved_.count(v)) {
        ::setenv(v, saved_[v].c_str(), 1);
      } else {
        ::unsetenv(v);
      }
    }
  }

  // docker-credential-NAME running `body` under /bin/sh; $1 is the verb.
  void Helper(const std::string& name, const std::string& body) {
    std::string path = bin_ + "/docker-credential-" + name;
    ASSERT_TRUE(fs::WriteFileAtomic(path, "#!/bin/sh\n" + body + "\n").ok());
    ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
  }
  // A helper that logs "VERB STDIN" and answers `get` with NAME-user / NAME-pw.
  void Answering(const std::string& name) {
    Helper(name, "in=$(cat); echo \"$1 $in\" >>" + Log() + "\n" +
                     "[ \"$1\" = get ] && printf '{\"ServerURL\":\"%s\",\"Username\":\"" + name +
                     "-user\",\"Secret\":\"" + name + "-pw\"}' \"$in\"\nexit 0");
  }
  std::string Log() const { return tmp_.path() + "/calls.log"; }
  std::string Config(const std::string& json, const std::string& name = "config.json") {
    std::string path = tmp_.path() + "/" + name;
    EXPECT_TRUE(fs::WriteFileAtomic(path, json).ok());
    return path;
  }
  std::optional<Credentials> Lookup(const std::string& host, const std::string& authfile) {
    AuthOptions opts;
    opts.authfile = authfile;
    auto c = LookupCredentials(host, opts);
    EXPECT_TRUE(c.ok()) << c.error().message;
    return c.ok() ? *c : std::nullopt;
  }
  Error LookupError(const std::string& host, const std::string& authfile) {
    AuthOptions opts;
    opts.authfile = authfile;
    auto c = LookupCredentials(host, opts);
    EXPECT_FALSE(c.ok());
    return c.ok() ? Error{} : c.error();
  }

  fs::TempDir tmp_;
  std::string bin_;
  std::map<std::string, std::string> saved_;
};

TEST_F(CredHelperTest, CredHelpersWinOverCredsStoreWhichWinsOverAuths) {
  Answering("per");
  Answering("store");
  std::string auths = R"("auths":{"reg:5000":{"auth":")" + Base64Encode("file:pw") + R"("}})";
  std::string all = Config("{" + auths + R"(,"credsStore":"store","credHelpers":{"reg:5000":"per"}})");
  auto c = Lookup("reg:5000", all);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->username, "per-user");
  EXPECT_EQ(c->password, "per-pw");
  EXPECT_EQ(c->source, "docker-credential-per");
  EXPECT_EQ(Lookup("other:1", all)->username, "store-user");
  EXPECT_EQ(*ConfiguredHelper(all, "reg:5000"), "per");
  EXPECT_EQ(*ConfiguredHelper(all, "other:1"), "store");

  std::string store = Config("{" + auths + R"(,"credsStore":"store"})");
  EXPECT_EQ(Lookup("reg:5000", store)->username, "store-user");
  std::string file = Config("{" + auths + "}");
  EXPECT_EQ(Lookup("reg:5000", file)->username, "file");
  EXPECT_EQ(Lookup("reg:5000", file)->source, file);
  EXPECT_EQ(*ConfiguredHelper(file, "reg:5000"), "");
  EXPECT_EQ(*fs::ReadSmallFile(Log()), "get reg:5000\nget other:1\nget reg:5000\n");
}

// Docker's native store: "not found" is anonymous, and the auths entry beside the
// helper is not used; the next file in the search order still is.
TEST_F(CredHelperTest, NotFoundIsAnonymousAndPassesToTheNextFile) {
  Helper("empty", "echo 'credentials not found in native keychain'; exit 1");
  std::string auths = R"("auths":{"reg:5000":{"auth":")" + Base64Encode("file:pw") + R"("}})";
  std::string first = Config("{" + auths + R"(,"credsStore":"empty"})", "first.json");
  EXPECT_FALSE(Lookup("reg:5000", first).has_value());

  ::setenv("REGISTRY_AUTH_FILE", first.c_str(), 1);
  ASSERT_TRUE(fs::MakeDirs(tmp_.path() + "/home/.docker").ok());
  Config("{" + auths + "}", "home/.docker/config.json");
  auto c = Lookup("reg:5000", "");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->username, "file");
}

TEST_F(CredHelperTest, ErrorsNameTheHelperAndTheRegistry) {
  std::string missing = Config(R"({"credsStore":"absent"})", "missing.json");
  Error e = LookupError("reg:5000", missing);
  EXPECT_EQ(e.kind, ErrorKind::kNotFound);
  EXPECT_EQ(e.message, "credentials for reg:5000 (credsStore in " + missing +
                           "): docker-credential-absent get: not found in $PATH");

  Helper("fail", "echo 'keychain is locked'; exit 3");
  std::string failing = Config(R"({"credHelpers":{"reg:5000":"fail"}})", "failing.json");
  e = LookupError("reg:5000", failing);
  EXPECT_EQ(e.kind, ErrorKind::kTransport);
  EXPECT_EQ(e.message, "credentials for reg:5000 (credHelpers in " + failing +
                           "): docker-credential-fail get: exit status 3: keychain is locked");

  Helper("garbled", R"(echo '{"Username":"u","Secret":"hunter2"')");
  std::string garbled = Config(R"({"credsStore":"garbled"})", "garbled.json");
  e = LookupError("reg:5000", garbled);
  EXPECT_EQ(e.message,
            "credentials for reg:5000 (credsStore in " + garbled +
                R"(): docker-credential-garbled get: answer is not the JSON {"ServerURL","Username","Secret"})");

  std::string path = Config(R"({"credsStore":"../../bin/sh"})", "path.json");
  e = LookupError("reg:5000", path);
  EXPECT_EQ(e.kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(e.message, "credentials for reg:5000 (credsStore in " + path +
                           R"(): credential helper "../../bin/sh": want letters, digits, '-', '_', '.')");
  std::string typed = Config(R"({"credHelpers":{"reg:5000":1}})", "typed.json");
  EXPECT_EQ(LookupError("reg:5000", typed).message, typed + ": credHelpers.reg:5000: want a helper name");
}

TEST_F(CredHelperTest, HangingHelperIsKilledAtTheTimeout) {
  Helper("hang", "exec sleep 30");
  ::setenv("IMGTOOL_CREDENTIAL_HELPER_TIMEOUT", "0.5", 1);
  auto start = std::chrono::steady_clock::now();
  auto c = HelperGet("hang", "reg:5000");
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "docker-credential-hang get: no answer within 500 ms (killed)");
  EXPECT_LT(took, std::chrono::seconds(5));

  ::setenv("IMGTOOL_CREDENTIAL_HELPER_TIMEOUT", "soon", 1);
  EXPECT_EQ(HelperGet("hang", "reg:5000").error().message,
            "$IMGTOOL_CREDENTIAL_HELPER_TIMEOUT=soon: want seconds, more than 0");
}

TEST_F(CredHelperTest, OutputIsCapped) {
  Helper("chatty", "exec head -c 2000000 /dev/zero");
  auto c = HelperGet("chatty", "reg:5000");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "docker-credential-chatty get: output over 1048576 bytes (killed)");
}

TEST_F(CredHelperTest, TokenUsernameIsAnIdentityToken) {
  Helper("idt", R"(cat >/dev/null; echo '{"ServerURL":"reg:5000","Username":"<token>","Secret":"refresh-1"}')");
  auto c = HelperGet("idt", "reg:5000");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ((*c)->identity_token, "refresh-1");
  EXPECT_EQ((*c)->username, "");
  EXPECT_EQ((*c)->password, "");
}

TEST_F(CredHelperTest, DockerHubIsOneRegistryUnderDockersKey) {
  Answering("hub");
  std::string helpers = Config(R"({"credHelpers":{"https://index.docker.io/v1/":"hub"}})", "helpers.json");
  for (const char* host : {"docker.io", "index.docker.io", "registry-1.docker.io"}) {
    EXPECT_EQ(Lookup(host, helpers)->username, "hub-user") << host;
  }
  std::string plain = Config(R"({"credHelpers":{"docker.io":"hub"}})", "plain.json");
  EXPECT_EQ(Lookup("registry-1.docker.io", plain)->username, "hub-user");
  std::string asked = "get https://index.docker.io/v1/\n";
  EXPECT_EQ(*fs::ReadSmallFile(Log()), asked + asked + asked + asked);

  std::string file = tmp_.path() + "/hub.json";
  ASSERT_TRUE(StoreCredentials(file, "docker.io", Credentials{"alice", "pw"}).ok());
  auto raw = fs::ReadSmallFile(file);
  EXPECT_NE(raw->find("\"https://index.docker.io/v1/\""), std::string::npos) << *raw;
  EXPECT_EQ(Lookup("registry-1.docker.io", file)->username, "alice");
  EXPECT_TRUE(*RemoveCredentials(file, "index.docker.io"));
  EXPECT_FALSE(Lookup("docker.io", file).has_value());
}

TEST_F(CredHelperTest, StoreAndEraseSpeakTheProtocol) {
  Answering("keep");
  ASSERT_TRUE(HelperStore("keep", "reg:5000", Credentials{"alice", "s3cret"}).ok());
  auto e = HelperErase("keep", "reg:5000");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(*e);
  EXPECT_EQ(*fs::ReadSmallFile(Log()),
            "store {\"Secret\":\"s3cret\",\"ServerURL\":\"reg:5000\",\"Username\":\"alice\"}\nerase reg:5000\n");

  Helper("gone", "echo 'credentials not found in native keychain'; exit 1");
  EXPECT_FALSE(*HelperErase("gone", "reg:5000"));
  // A helper that echoes its input in the failure: the secret is cut out.
  Helper("echoing", "echo \"cannot store $(cat)\" >&2; exit 1");
  Status st = HelperStore("echoing", "reg:5000", Credentials{"alice", "s3cret"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "docker-credential-echoing store: exit status 1: cannot store "
            "{\"Secret\":\"<redacted>\",\"ServerURL\":\"reg:5000\",\"Username\":\"alice\"}");
}

}  // namespace
}  // namespace imgtool::remote

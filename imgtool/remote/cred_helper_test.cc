// Credential helpers and where credentials come from: credHelpers over credsStore over
// auths, the next file when one has nothing, Docker Hub's key, the exact error texts,
// and the bounds (timeout, output cap). The helpers are shell scripts written into a
// temporary folder put first on $PATH.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "fs/atomic_file.h"
#include "oci/base64.h"
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
  std::string auths = R"("auths":{"reg:5000":{"auth":")" + oci::Base64Encode("file:pw") + R"("}})";
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
  std::string auths = R"("auths":{"reg:5000":{"auth":")" + oci::Base64Encode("file:pw") + R"("}})";
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

  Helper("fail", "echo 'keychain is locked' >&2; exit 3");
  std::string failing = Config(R"({"credHelpers":{"reg:5000":"fail"}})", "failing.json");
  e = LookupError("reg:5000", failing);
  EXPECT_EQ(e.kind, ErrorKind::kTransport);
  EXPECT_EQ(e.message, "credentials for reg:5000 (credHelpers in " + failing +
                           "): docker-credential-fail get: exit status 3: keychain is locked");
  // The protocol's own failure messages are on stdout, where `get` answers: never shown.
  Helper("fail", "echo 'keychain is locked'; exit 3");
  EXPECT_EQ(LookupError("reg:5000", failing).message,
            "credentials for reg:5000 (credHelpers in " + failing + "): docker-credential-fail get: exit status 3");

  Helper("garbled", R"(echo '{"Username":"u","Secret":"hunter2"')");
  std::string garbled = Config(R"({"credsStore":"garbled"})", "garbled.json");
  e = LookupError("reg:5000", garbled);
  EXPECT_EQ(e.message,
            "credentials for reg:5000 (credsStore in " + garbled +
                R"(): docker-credential-garbled get: answer is not the JSON {"ServerURL","Username","Secret"})");

  std::string path = Config(R"({"credsStore":"../../bin/sh"})", "path.json");
  e = LookupError("reg:5000", path);
  EXPECT_EQ(e.kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(e.message, path + R"(: credsStore: credential helper "../../bin/sh": want 1 to 128 letters, digits, )"
                              R"('-', '_' or '.')");
  std::string typed = Config(R"({"credHelpers":{"reg:5000":1}})", "typed.json");
  EXPECT_EQ(LookupError("reg:5000", typed).message, typed + R"(: credHelpers."reg:5000": want a helper name)");
}

// A helper that prints its answer (the secret in it) and then fails: the secret is in no
// message, wherever the helper put it.
TEST_F(CredHelperTest, FailedHelperNeverEchoesTheSecret) {
  const std::string answer = R"({"ServerURL":"reg:5000","Username":"u","Secret":"hunter2-secret"})";
  Helper("leaky", "cat >/dev/null; echo '" + answer + "'; exit 1");
  Helper("leakyerr", "cat >/dev/null; echo '" + answer + "' >&2; exit 1");
  Helper("leakyboth", "cat >/dev/null; echo '" + answer + "'; echo 'token hunter2-secret expired' >&2; exit 1");
  Helper("leakyjq", "cat >/dev/null; printf 'Secret: hunter2-secret {\n' >&2; exit 1");
  const std::pair<const char*, const char*> cases[] = {
      {"leaky", "docker-credential-leaky get: exit status 1"},
      {"leakyerr", "docker-credential-leakyerr get: exit status 1: (its message is not shown: it may hold a secret)"},
      {"leakyboth", "docker-credential-leakyboth get: exit status 1: token <redacted> expired"},
      {"leakyjq", "docker-credential-leakyjq get: exit status 1: (its message is not shown: it may hold a secret)"},
  };
  for (const auto& [name, want] : cases) {
    auto c = HelperGet(name, "reg:5000");
    ASSERT_FALSE(c.ok()) << name;
    EXPECT_EQ(c.error().kind, ErrorKind::kTransport);
    EXPECT_EQ(c.error().message, want);
    EXPECT_EQ(c.error().message.find("hunter2"), std::string::npos) << c.error().message;
  }
  // The same through the auth file, and for `erase`.
  std::string config = Config(R"({"credsStore":"leaky"})");
  EXPECT_EQ(LookupError("reg:5000", config).message.find("hunter2"), std::string::npos);
  auto erased = HelperErase("leakyerr", "reg:5000");
  ASSERT_FALSE(erased.ok());
  EXPECT_EQ(erased.error().message.find("hunter2"), std::string::npos) << erased.error().message;
}

// Names from the auth file are checked before anything runs: a 5,000-character name is
// the file's mistake (invalid input, its name cut short), not an internal error from
// posix_spawn; control characters in one are escaped in the message.
TEST_F(CredHelperTest, HelperNamesAreValidatedUpFront) {
  std::string long_name(5000, 'a');
  std::string config = Config(R"({"credsStore":")" + long_name + R"("})");
  Error e = LookupError("reg:5000", config);
  EXPECT_EQ(e.kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(e.message, config + ": credsStore: credential helper \"" + std::string(40, 'a') +
                           "\"... (5000 characters): want 1 to 128 letters, digits, '-', '_' or '.'");
  EXPECT_EQ(HelperGet(long_name, "reg:5000").error().kind, ErrorKind::kInvalidInput);
  EXPECT_TRUE(ValidateHelperName(std::string(128, 'a')).ok());
  EXPECT_FALSE(ValidateHelperName(std::string(129, 'a')).ok());
  for (const char* bad : {"", "a/b", "../x", "a b", "pass\n", "x\x1b"})
    EXPECT_FALSE(ValidateHelperName(bad).ok()) << bad;
  EXPECT_TRUE(ValidateHelperName("desktop.exe").ok());

  std::string escape = Config("{\"credHelpers\":{\"reg:5000\":\"x\\n\\u001b[31m\\r\\u0000\"}}");
  e = LookupError("reg:5000", escape);
  EXPECT_EQ(e.kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(e.message, escape + R"(: credHelpers."reg:5000": credential helper "x\n\x1b[31m\r\x00": want 1 to 128 )"
                                R"(letters, digits, '-', '_' or '.')");
  for (char c : e.message) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << e.message;
}

// Whether any process of process group `pgid` is alive (zombies are not). /proc files
// say their size is 0: read them as streams.
bool GroupAlive(pid_t pgid) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat) || stat.rfind(')') == std::string::npos) continue;
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so read after its ')'.
    std::istringstream rest(stat.substr(stat.rfind(')') + 1));
    std::string state;
    long ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != "Z" && state != "X") return true;
  }
  return false;
}

// A process sent SIGKILL runs no more code of its own but may take a moment to leave
// (state R while the kernel tears it down): gone means gone within a generous while.
bool GroupGone(pid_t pgid) {
  for (int i = 0; i < 500 && GroupAlive(pgid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return !GroupAlive(pgid);
}

// A helper that leaves `sleep 300 &` behind, holding its stdout: the answer comes when
// the helper exits (not at the timeout), and no process of its group is left alive.
TEST_F(CredHelperTest, BackgroundChildDoesNotOutliveTheHelper) {
  const std::string pgid_file = tmp_.path() + "/pgid";
  Helper("bg", "cat >/dev/null; awk '{print $5}' /proc/$$/stat >" + pgid_file +
                   "; sleep 300 &\necho '{\"Username\":\"u\",\"Secret\":\"p\"}'");
  ::setenv("IMGTOOL_CREDENTIAL_HELPER_TIMEOUT", "20", 1);
  EXPECT_TRUE(GroupAlive(::getpgrp())) << "GroupAlive does not see this test's own group";
  auto c = HelperGet("bg", "reg:5000");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ((*c)->password, "p");
  auto pgid = fs::ReadSmallFile(pgid_file);
  ASSERT_TRUE(pgid.ok());
  pid_t group = static_cast<pid_t>(std::stol(*pgid));
  EXPECT_NE(group, ::getpgrp()) << "the helper ran in imgtool's own group";
  EXPECT_TRUE(GroupGone(group)) << "a process of the helper's group " << group << " is still alive";
}

// Killed at the timeout: the helper and everything it started.
TEST_F(CredHelperTest, TimeoutKillsTheWholeGroup) {
  const std::string pgid_file = tmp_.path() + "/pgid";
  Helper("bghang", "awk '{print $5}' /proc/$$/stat >" + pgid_file + "; sleep 300 & sleep 300");
  ::setenv("IMGTOOL_CREDENTIAL_HELPER_TIMEOUT", "1", 1);
  auto c = HelperGet("bghang", "reg:5000");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "docker-credential-bghang get: no answer within 1 s (killed)");
  pid_t group = static_cast<pid_t>(std::stol(*fs::ReadSmallFile(pgid_file)));
  EXPECT_TRUE(GroupGone(group)) << "a process of the helper's group " << group << " is still alive";
}

// What a helper says on stderr is escaped: no terminal control reaches a message.
TEST_F(CredHelperTest, HelperMessageIsEscaped) {
  Helper("loud", "printf 'vault\\033[2J\\rsealed\\007' >&2; exit 2");
  auto c = HelperGet("loud", "reg:5000");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, R"(docker-credential-loud get: exit status 2: vault\x1b[2J\rsealed\x07)");
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
  // A helper that repeats the secret it was given in its failure: the secret is cut out;
  // one that echoes its whole input (JSON) is not quoted at all.
  Helper("echoing", "cat >/dev/null; echo 'password s3cret refused for alice (s3cret)' >&2; exit 1");
  Status st = HelperStore("echoing", "reg:5000", Credentials{"alice", "s3cret"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "docker-credential-echoing store: exit status 1: password <redacted> refused for alice (<redacted>)");
  Helper("echoing", "echo \"cannot store $(cat)\" >&2; exit 1");
  st = HelperStore("echoing", "reg:5000", Credentials{"alice", "s3cret"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "docker-credential-echoing store: exit status 1: (its message is not shown: it may hold a secret)");
}

}  // namespace
}  // namespace imgtool::remote

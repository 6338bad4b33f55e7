// Unit tests of the registry client: challenge parsing, credentials files, error
// messages, saved upload sessions, and the Bearer flow + retries against a fake
// registry on 127.0.0.1 (the seam: real libcurl, real sockets, scripted answers).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "fs/atomic_file.h"
#include "remote/authorizer.h"
#include "remote/credentials.h"
#include "remote/fake_server.h"
#include "remote/registry.h"
#include "remote/registry_error.h"
#include "remote/response.h"
#include "remote/upload.h"

namespace imgtool::remote {
namespace {

TEST(Challenge, ParsesBearerWithQuotedCommas) {
  auto ch =
      ParseChallenge(R"(Bearer realm="https://auth.example/token",service="reg",scope="repository:a/b:pull,push")");
  ASSERT_TRUE(ch.ok());
  EXPECT_EQ(ch->scheme, "bearer");
  EXPECT_EQ(ch->params["realm"], "https://auth.example/token");
  EXPECT_EQ(ch->params["service"], "reg");
  EXPECT_EQ(ch->params["scope"], "repository:a/b:pull,push");
  auto basic = ParseChallenge("Basic realm=\"x\"");
  ASSERT_TRUE(basic.ok());
  EXPECT_EQ(basic->scheme, "basic");
}

TEST(Credentials, LooksUpAuthsAndStoresWithMode0600) {
  auto tmp = fs::TempDir::Create("remote-test-");
  ASSERT_TRUE(tmp.ok());
  std::string path = tmp->path() + "/auth.json";
  ASSERT_TRUE(
      fs::WriteFileAtomic(path, R"({"auths":{"https://reg.example:5000/v1/":{"auth":"YWxpY2U6czNjcmV0"}},"x":1})")
          .ok());
  AuthOptions opts;
  opts.authfile = path;
  auto c = LookupCredentials("reg.example:5000", opts);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ((*c)->username, "alice");
  EXPECT_EQ((*c)->password, "s3cret");
  auto none = LookupCredentials("other:5000", opts);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  opts.creds = "bob:pw";
  EXPECT_EQ((*LookupCredentials("reg.example:5000", opts))->username, "bob");

  ASSERT_TRUE(StoreCredentials(path, "new:1", Credentials{"carol", "pw"}).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto raw = fs::ReadSmallFile(path);
  ASSERT_TRUE(raw.ok());
  EXPECT_NE(raw->find("\"x\": 1"), std::string::npos) << *raw;  // other keys kept
  opts.creds.clear();
  EXPECT_EQ((*LookupCredentials("new:1", opts))->username, "carol");
  EXPECT_TRUE(*RemoveCredentials(path, "new:1"));
  EXPECT_FALSE((*LookupCredentials("new:1", opts)).has_value());

  ASSERT_TRUE(fs::WriteFileAtomic(path, "not json").ok());
  auto bad = LookupCredentials("reg.example:5000", opts);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, path + ": not a JSON object");
}

TEST(RegistryError, DescribesErrorBodies) {
  HttpResponse r;
  r.status = 401;
  r.body = R"({"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]})";
  EXPECT_EQ(DescribeResponse(r), "401 UNAUTHORIZED: authentication required");
  Error e = ErrorFromResponse(r, "pushing layer sha256:ab12");
  EXPECT_EQ(e.kind, ErrorKind::kDenied);
  EXPECT_EQ(e.message, "pushing layer sha256:ab12: 401 UNAUTHORIZED: authentication required");
  r.status = 404;
  r.body = "";
  EXPECT_EQ(ErrorFromResponse(r, "x").kind, ErrorKind::kNotFound);
  EXPECT_TRUE(IsTemporaryStatus(503));
  EXPECT_TRUE(IsTemporaryStatus(429));
  EXPECT_FALSE(IsTemporaryStatus(501));
  EXPECT_FALSE(IsTemporaryStatus(404));
}

// The file's part of LookupCredentials, without running a helper: what the auth_file fuzz
// target reads.
TEST(Credentials, ParseAuthFileSaysHelperOrCredentials) {
  auto helper = ParseAuthFile(R"({"credHelpers":{"reg:5000":"pass"},"credsStore":"desktop"})", "a.json", "reg:5000");
  ASSERT_TRUE(helper.ok());
  EXPECT_EQ(helper->helper, "pass");
  EXPECT_EQ(helper->helper_field, "credHelpers");
  EXPECT_FALSE(helper->credentials.has_value());
  auto auths = ParseAuthFile(R"({"auths":{"reg:5000":{"auth":"YWxpY2U6czNjcmV0"}}})", "a.json", "reg:5000");
  ASSERT_TRUE(auths.ok());
  EXPECT_EQ(auths->helper, "");
  ASSERT_TRUE(auths->credentials.has_value());
  EXPECT_EQ(auths->credentials->username, "alice");
  EXPECT_EQ(ParseAuthFile("[1]", "a.json", "reg").error().message, "a.json: not a JSON object");
  EXPECT_EQ(ParseAuthFile(R"({"credsStore":1})", "a.json", "reg").error().message,
            "a.json: credsStore: want a helper name");
}

TEST(Response, TagListPages) {
  EXPECT_EQ(NextPageUrl("</v2/a/b/tags/list?last=v2&n=2>; rel=\"next\"", "https://h:5000"),
            "https://h:5000/v2/a/b/tags/list?last=v2&n=2");
  EXPECT_EQ(NextPageUrl("<https://other/v2/x>; rel=\"next\"", "https://h"), "https://other/v2/x");
  EXPECT_EQ(NextPageUrl("</v2/a/b/tags/list?last=v2>; rel=\"prev\"", "https://h"), "");
  EXPECT_EQ(NextPageUrl("", "https://h"), "");
  EXPECT_EQ(TagsFromBody(R"({"name":"a/b","tags":["v1",null,2,"v2"]})"), (std::vector<std::string>{"v1", "v2"}));
  EXPECT_TRUE(TagsFromBody("not json").empty());
}

TEST(Response, UploadLocationAndRange) {
  EXPECT_EQ(AbsoluteLocation("https://h", "/v2/a/blobs/uploads/u?_state=s"), "https://h/v2/a/blobs/uploads/u?_state=s");
  EXPECT_EQ(AbsoluteLocation("https://h", "http://o/u"), "http://o/u");
  EXPECT_EQ(ResumeOffset("0-1048575"), 1048576u);
  EXPECT_EQ(ResumeOffset("0-0"), 0u);
  EXPECT_EQ(ResumeOffset(""), 0u);
  EXPECT_EQ(ResumeOffset("bytes"), 0u);
}

// Found by tests/fuzz (fuzz_registry_response): HEAD's Content-Length went through
// std::stoll, which throws on a value that is not a number or does not fit, and the
// exception ended the process. Such a value now means "size unknown", as a missing one.
TEST(Response, ContentLengthNeverThrows) {
  EXPECT_EQ(ContentLength("1234"), 1234);
  EXPECT_EQ(ContentLength(""), -1);
  EXPECT_EQ(ContentLength("abc"), -1);
  EXPECT_EQ(ContentLength("12abc"), -1);
  EXPECT_EQ(ContentLength("-5"), -1);
  EXPECT_EQ(ContentLength("99999999999999999999999"), -1);
}

// Found with tests/fuzz (fuzz_registry_response): nlohmann's value() throws when the
// member has another type, so {"token": 1} from a token server, or an error body with a
// numeric code, ended the process instead of being "no token" or a bare status.
TEST(Response, WrongTypesInServerJsonAreIgnored) {
  EXPECT_EQ(TokenFromReply(R"({"token":1,"access_token":"t"})"), "t");
  EXPECT_EQ(TokenFromReply(R"({"token":{"a":1}})"), "");
  EXPECT_EQ(TokenFromReply("[1]"), "");
  HttpResponse resp;
  resp.status = 401;
  resp.body = R"({"errors":[{"code":1,"message":["x"]},{"code":"DENIED","message":"no"}]})";
  EXPECT_EQ(DescribeResponse(resp), "401 DENIED: no");
}

// Issue 24: a server's body (or an auth file) nested far past the JSON depth cap. The
// answers read for hints take it as no answer; the auth file is refused by name.
TEST(Response, BodiesNestedPastTheCapAreNoAnswer) {
  const std::string deep = std::string(200'000, '[') + std::string(200'000, ']');
  EXPECT_EQ(TagsFromBody(R"({"tags":["v1"],"x":[[1]]})"), std::vector<std::string>{"v1"});
  EXPECT_TRUE(TagsFromBody(R"({"tags":["v1"],"x":)" + deep + "}").empty());
  EXPECT_EQ(TokenFromReply(R"({"token":"t","x":)" + deep + "}"), "");
  EXPECT_EQ(ManifestMediaType(R"({"mediaType":"application/vnd.oci.image.index.v1+json","x":)" + deep + "}", ""),
            "application/vnd.oci.image.manifest.v1+json");
  HttpResponse resp;
  resp.status = 401;
  resp.body = R"({"errors":[{"code":"DENIED","message":"no"}],"x":)" + deep + "}";
  EXPECT_EQ(DescribeResponse(resp), "401 UNAUTHORIZED: authentication required");
  auto auth = ParseAuthFile(R"({"auths":{},"x":)" + deep + "}", "a.json", "reg");
  ASSERT_FALSE(auth.ok());
  EXPECT_EQ(auth.error().message, "a.json: nested deeper than " + std::to_string(oci::kMaxJsonDepth) + " levels");
}

TEST(Upload, SessionsSaveAndLoad) {
  auto tmp = fs::TempDir::Create("remote-test-");
  ASSERT_TRUE(tmp.ok());
  auto d = oci::Digest::Of("blob");
  std::string p = UploadStatePath(tmp->path() + "/uploads", "h:1", "a/b", d);
  EXPECT_NE(p, UploadStatePath(tmp->path() + "/uploads", "h:1", "a/c", d));
  EXPECT_FALSE(LoadUploadSession(p)->has_value());
  ASSERT_TRUE(SaveUploadSession(p, UploadSession{"http://h:1/v2/a/b/blobs/uploads/u?_state=s", 1234}).ok());
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the session's token is private";
  auto s = LoadUploadSession(p);
  ASSERT_TRUE(s.ok() && s->has_value());
  EXPECT_EQ((*s)->offset, 1234u);
  EXPECT_EQ((*s)->location, "http://h:1/v2/a/b/blobs/uploads/u?_state=s");
  // A damaged file costs a fresh upload, whatever the damage: value() used to throw on an
  // offset of another type (the pattern the fuzz targets kept finding).
  ASSERT_TRUE(fs::WriteFileAtomic(p, R"({"location":"http://h:1/u","offset":"12"})").ok());
  s = LoadUploadSession(p);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->has_value());
  // So does one nested past the JSON depth cap (issue 24).
  ASSERT_TRUE(fs::WriteFileAtomic(
                  p, R"({"location":"http://h:1/u","x":)" + std::string(30'000, '[') + std::string(30'000, ']') + "}")
                  .ok());
  s = LoadUploadSession(p);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->has_value());
}

TEST(Registry, Localhost) {
  EXPECT_TRUE(IsLocalhost("localhost:5000"));
  EXPECT_TRUE(IsLocalhost("127.0.0.1"));
  EXPECT_TRUE(IsLocalhost("[::1]:5000"));
  EXPECT_FALSE(IsLocalhost("registry.example:5000"));
}

// The whole Bearer dance against a fake registry: 401 with a challenge, token fetched
// with Basic credentials and the asked scope, the request replayed with the token; a
// 503 with Retry-After is retried.
TEST(Registry, BearerFlowAndRetryAgainstFakeServer) {
  std::atomic<int> token_calls{0}, busy{0};
  std::string realm_host;
  FakeServer server([&](const std::string& line, const std::string& headers) -> std::string {
    bool has_token = headers.find("Authorization: Bearer tok-123") != std::string::npos;
    if (line.rfind("GET /token?", 0) == 0) {
      ++token_calls;
      if (headers.find("Authorization: Basic YWxpY2U6czNjcmV0") == std::string::npos) {
        return Reply(401, R"({"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]})");
      }
      if (line.find("scope=repository%3Ateam%2Fimg%3Apull") == std::string::npos ||
          line.find("service=fake") == std::string::npos) {
        return Reply(400, "{}");
      }
      return Reply(200, R"({"token":"tok-123"})");
    }
    std::string challenge = "WWW-Authenticate: Bearer realm=\"http://" + realm_host +
                            "/token\",service=\"fake\",scope=\"repository:team/img:pull\"\r\n";
    if (line == "GET /v2/") return Reply(401, "{}", challenge);
    if (line == "GET /v2/team/img/tags/list") {
      if (!has_token) return Reply(401, R"({"errors":[{"code":"UNAUTHORIZED","message":"need token"}]})", challenge);
      if (busy++ == 0) return Reply(503, "{}", "Retry-After: 0\r\n");
      return Reply(200, R"({"name":"team/img","tags":["v2","v1","sha256-ab.sig"]})");
    }
    return Reply(404, "{}");
  });
  realm_host = server.host();
  RegistryOptions opts;
  opts.auth.creds = "alice:s3cret";
  opts.backoff_seconds = 0.01;
  auto reg = Registry::Connect(server.host(), opts);
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  EXPECT_EQ((*reg)->base_url(), "http://" + server.host());
  auto tags = (*reg)->ListTags("team/img");
  ASSERT_TRUE(tags.ok()) << tags.error().message;
  EXPECT_EQ(*tags, (std::vector<std::string>{"sha256-ab.sig", "v1", "v2"}));
  EXPECT_EQ(token_calls.load(), 1);
  EXPECT_EQ(busy.load(), 2);  // one 503, one success

  opts.auth.creds = "alice:wrong";
  auto bad = Registry::Connect(server.host(), opts);
  ASSERT_TRUE(bad.ok());
  auto denied = (*bad)->ListTags("team/img");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().kind, ErrorKind::kDenied);
  EXPECT_NE(denied.error().message.find("401 UNAUTHORIZED: bad credentials"), std::string::npos)
      << denied.error().message;
}

// An identity token goes only to the token server, in the OAuth2 refresh-token POST
// body (never as a Basic password); a Basic-only registry is told so.
TEST(Authorizer, IdentityTokenUsesTheOAuth2Post) {
  std::string seen;
  FakeServer server([&](const std::string& line, const std::string& request) -> std::string {
    seen = line + "\n" + request;
    return Reply(200, R"({"access_token":"tok-9"})");
  });
  Credentials creds;
  creds.identity_token = "refresh-1";
  creds.source = "docker-credential-idt";
  Authorizer auth(creds);
  HttpClient http;
  HttpResponse unauthorized;
  unauthorized.status = 401;
  unauthorized.www_authenticate = {"Bearer realm=\"http://" + server.host() + "/token\",service=\"fake\""};
  std::vector<std::string> scopes{RepoScope("team/img", false)};
  ASSERT_TRUE(auth.Answer(http, unauthorized, scopes).ok());
  EXPECT_EQ(auth.HeaderFor(scopes), "Authorization: Bearer tok-9");
  EXPECT_EQ(seen.rfind("POST /token\n", 0), 0u) << seen;
  EXPECT_NE(seen.find("grant_type=refresh_token&client_id=imgtool&refresh_token=refresh-1&service=fake"
                      "&scope=repository%3Ateam%2Fimg%3Apull"),
            std::string::npos)
      << seen;
  EXPECT_EQ(seen.find("Authorization:"), std::string::npos) << seen;

  unauthorized.www_authenticate = {"Basic realm=\"x\""};
  Status st = auth.Answer(http, unauthorized, scopes);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "the registry wants Basic auth, but the credentials from docker-credential-idt are an identity token "
            "(user \"<token>\"), which only a token server takes");
}

// A saved session is resumed where the registry says it stands: GET on the session
// (204, Range: 0-9), then PATCH from byte 10 only, then the final PUT with the digest.
TEST(Upload, ResumesSavedSessionFromRegistryOffset) {
  auto tmp = fs::TempDir::Create("remote-test-");
  ASSERT_TRUE(tmp.ok());
  std::string blob(40, 'x');
  for (size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<char>('a' + i % 26);
  std::string path = tmp->path() + "/blob";
  ASSERT_TRUE(fs::WriteFileAtomic(path, blob).ok());
  oci::Descriptor desc{"application/octet-stream", oci::Digest::Of(blob), 40, {}, std::nullopt};
  std::string received;
  std::vector<std::string> lines;
  std::mutex mu;
  FakeServer server([&](const std::string& line, const std::string& req) -> std::string {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(line);
    std::string body = req.substr(req.find("\r\n\r\n") + 4);
    if (line == "GET /v2/") return Reply(200, "{}");
    if (line == "GET /v2/a/b/blobs/uploads/u1?_state=s1") {
      return Reply(204, "", "Range: 0-9\r\nLocation: /v2/a/b/blobs/uploads/u1?_state=s2\r\n");
    }
    if (line == "PATCH /v2/a/b/blobs/uploads/u1?_state=s2") {
      if (req.find("Content-Range: 10-39") == std::string::npos) return Reply(416, "{}");
      received += body;
      return Reply(202, "", "Range: 0-39\r\nLocation: /v2/a/b/blobs/uploads/u1?_state=s3\r\n");
    }
    if (line == "PUT /v2/a/b/blobs/uploads/u1?_state=s3&digest=" + desc.digest.str()) return Reply(201, "");
    return Reply(400, "{}");
  });
  RegistryOptions opts;
  opts.backoff_seconds = 0.01;
  auto reg = Registry::Connect(server.host(), opts);
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  UploadOptions up;
  up.monolithic_max = 8;
  up.chunk_size = 64;
  up.state_dir = tmp->path() + "/uploads";
  std::string state = UploadStatePath(up.state_dir, server.host(), "a/b", desc.digest);
  ASSERT_TRUE(
      SaveUploadSession(state, UploadSession{(*reg)->base_url() + "/v2/a/b/blobs/uploads/u1?_state=s1", 8}).ok());
  oci::StringReader body(blob);
  auto out = UploadBlob(**reg, "a/b", desc, body, up, nullptr);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->resumed);
  EXPECT_EQ(out->resumed_from, 10u);
  EXPECT_EQ(out->bytes_sent, 30u);
  EXPECT_EQ(received, blob.substr(10));
  EXPECT_FALSE(fs::Exists(state));  // a finished upload forgets its session

  // A source whose bytes are not the descriptor's is refused before the final PUT
  // commits anything: here the first 10 bytes (already at the registry) differ.
  std::string lying = blob;
  lying[3] ^= 1;
  ASSERT_TRUE(
      SaveUploadSession(state, UploadSession{(*reg)->base_url() + "/v2/a/b/blobs/uploads/u1?_state=s1", 8}).ok());
  lines.clear();
  oci::StringReader lie(lying);
  auto refused = UploadBlob(**reg, "a/b", desc, lie, up, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kIntegrity);
  EXPECT_NE(refused.error().message.find("not committed"), std::string::npos) << refused.error().message;
  for (const auto& l : lines) EXPECT_EQ(l.rfind("PUT ", 0), std::string::npos) << l;
}

}  // namespace
}  // namespace imgtool::remote

// Credentials stay on the registry's origin (scheme, host, port): an upload Location on
// another origin, a redirect elsewhere, and a 401 from elsewhere never see them. "Another
// origin" here is another port of 127.0.0.1, as a storage backend would be another host.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "oci/base64.h"
#include "oci/digest.h"
#include "oci/reader.h"
#include "remote/credentials.h"
#include "remote/fake_server.h"
#include "remote/registry.h"
#include "remote/upload.h"

namespace imgtool::remote {
namespace {

const std::string kBasic = "Authorization: Basic " + oci::Base64Encode("alice:s3cret");
const std::string kNeedAuth = "WWW-Authenticate: Basic realm=\"fake\"\r\n";

// What a server received, under a lock (the server has a thread of its own).
struct Seen {
  std::mutex mu;
  std::vector<std::string> requests;
  void Add(const std::string& r) {
    std::lock_guard<std::mutex> lock(mu);
    requests.push_back(r);
  }
  bool AnyHas(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& r : requests) {
      if (r.find(text) != std::string::npos) return true;
    }
    return false;
  }
};

// A registry that wants Basic credentials for everything but hands uploads to `storage`.
FakeServer::Handler RegistryUploadingTo(const std::string& storage, Seen& seen) {
  return [&seen, storage](const std::string& line, const std::string& req) -> std::string {
    seen.Add(req);
    if (req.find(kBasic) == std::string::npos) return Reply(401, "{}", kNeedAuth);
    if (line == "POST /v2/a/b/blobs/uploads/") {
      return Reply(202, "", "Location: http://" + storage + "/upload/u1?_state=s1\r\n");
    }
    return Reply(404, "{}");
  };
}

RegistryOptions WithCreds() {
  RegistryOptions o;
  o.auth.creds = "alice:s3cret";
  o.backoff_seconds = 0.01;
  return o;
}

// containerd and cosign take an upload Location on another origin (a storage service),
// but send it no credentials: the session token in the URL is what authorizes it.
TEST(Origin, UploadLocationElsewhereGetsNoAuthorization) {
  const std::string blob = "layer bytes";
  const oci::Descriptor desc{"application/octet-stream", oci::Digest::Of(blob), 11, {}, std::nullopt};
  Seen at_registry, at_storage;
  std::string stored;
  FakeServer storage([&](const std::string& line, const std::string& req) -> std::string {
    at_storage.Add(req);
    if (line != "PUT /upload/u1?_state=s1&digest=" + desc.digest.str()) return Reply(400, "{}");
    stored = req.substr(req.find("\r\n\r\n") + 4);
    return Reply(201, "");
  });
  FakeServer registry(RegistryUploadingTo(storage.host(), at_registry));
  auto reg = Registry::Connect(registry.host(), WithCreds());
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  EXPECT_FALSE((*reg)->SameOrigin("http://" + storage.host() + "/upload/u1"));
  EXPECT_TRUE((*reg)->SameOrigin("http://" + registry.host() + "/v2/a/b/blobs/uploads/u1"));

  oci::StringReader body(blob);
  auto out = UploadBlob(**reg, "a/b", desc, body, UploadOptions{}, nullptr);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(stored, blob);
  EXPECT_TRUE(at_registry.AnyHas(kBasic));  // the registry itself did get them
  EXPECT_FALSE(at_storage.AnyHas("Authorization:"));
}

// A 401 from another origin is reported, not answered: its challenge could name any
// realm, and answering would hand the credentials (or a token for them) to it.
TEST(Origin, A401FromElsewhereIsReportedNotAnswered) {
  const std::string blob = "layer bytes";
  const oci::Descriptor desc{"application/octet-stream", oci::Digest::Of(blob), 11, {}, std::nullopt};
  Seen at_registry, at_storage;
  FakeServer storage([&](const std::string&, const std::string& req) -> std::string {
    at_storage.Add(req);
    return Reply(401, R"({"errors":[{"code":"UNAUTHORIZED","message":"storage wants credentials"}]})", kNeedAuth);
  });
  FakeServer registry(RegistryUploadingTo(storage.host(), at_registry));
  auto reg = Registry::Connect(registry.host(), WithCreds());
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  oci::StringReader body(blob);
  auto out = UploadBlob(**reg, "a/b", desc, body, UploadOptions{}, nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kDenied);
  EXPECT_EQ(out.error().message, "pushing blob " + desc.digest.str() + ": 401 UNAUTHORIZED: storage wants credentials");
  EXPECT_EQ(at_storage.requests.size(), 1u);  // asked once, never again with credentials
  EXPECT_FALSE(at_storage.AnyHas("Authorization:"));
}

// Blob GETs are redirected to storage. libcurl 7.88 (CURLOPT_UNRESTRICTED_AUTH off)
// drops our own Authorization header when a redirect changes host, port or scheme, and
// keeps it within the origin; this pins both.
TEST(Origin, RedirectElsewhereDropsAuthorization) {
  Seen at_registry, at_storage;
  FakeServer storage([&](const std::string&, const std::string& req) -> std::string {
    at_storage.Add(req);
    return Reply(200, "from storage");
  });
  FakeServer registry([&](const std::string& line, const std::string& req) -> std::string {
    at_registry.Add(req);
    if (req.find(kBasic) == std::string::npos) return Reply(401, "{}", kNeedAuth);
    if (line == "GET /v2/a/b/blobs/elsewhere") return Reply(307, "", "Location: http://" + storage.host() + "/b\r\n");
    if (line == "GET /v2/a/b/blobs/here") return Reply(307, "", "Location: /v2/a/b/blobs/final\r\n");
    if (line == "GET /v2/a/b/blobs/final") return Reply(200, "from the registry");
    return Reply(404, "{}");
  });
  auto reg = Registry::Connect(registry.host(), WithCreds());
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  HttpRequest req;
  req.url = (*reg)->base_url() + "/v2/a/b/blobs/elsewhere";
  auto away = (*reg)->Do(req, {}, "blob");
  ASSERT_TRUE(away.ok()) << away.error().message;
  EXPECT_EQ(away->body, "from storage");
  EXPECT_FALSE(at_storage.AnyHas("Authorization:"));

  req.url = (*reg)->base_url() + "/v2/a/b/blobs/here";
  auto home = (*reg)->Do(req, {}, "blob");
  ASSERT_TRUE(home.ok()) << home.error().message;
  EXPECT_EQ(home->status, 200);  // a 401 here would mean the header was dropped at home too
  EXPECT_EQ(home->body, "from the registry");
}

}  // namespace
}  // namespace imgtool::remote

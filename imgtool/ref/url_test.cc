#include "ref/url.h"

#include <gtest/gtest.h>

namespace imgtool::ref {

TEST(Url, WithoutUserinfoKeepsEverythingElse) {
  EXPECT_EQ(WithoutUserinfo("https://u:p@host/a.deb"), "https://host/a.deb");
  EXPECT_EQ(WithoutUserinfo("http://user:pa@ss@127.0.0.1:8080/w.whl?x=1"), "http://127.0.0.1:8080/w.whl?x=1");
  EXPECT_EQ(WithoutUserinfo("https://token@host"), "https://host");
  // An '@' after the authority is not userinfo.
  EXPECT_EQ(WithoutUserinfo("https://host/a@b?c=d@e#f@g"), "https://host/a@b?c=d@e#f@g");
  EXPECT_EQ(WithoutUserinfo("https://host?mail=a@b"), "https://host?mail=a@b");
  // Not a URL: unchanged (a path may hold '@').
  EXPECT_EQ(WithoutUserinfo("debs/x@1.deb"), "debs/x@1.deb");
  EXPECT_EQ(WithoutUserinfo("file:///srv/u@h/x.deb"), "file:///srv/u@h/x.deb");
  EXPECT_EQ(WithoutUserinfo("HTTPS://u:p@Host/%41"), "HTTPS://Host/%41");  // never re-encoded
}

TEST(Url, OriginIsSchemeHostPort) {
  EXPECT_EQ(OriginOf("https://Registry.Example/v2/"), "https://registry.example:443");
  EXPECT_EQ(OriginOf("https://registry.example:443/v2/a"), "https://registry.example:443");
  EXPECT_EQ(OriginOf("http://127.0.0.1:5000/v2/a/blobs/uploads/u?_state=s"), "http://127.0.0.1:5000");
  EXPECT_EQ(OriginOf("http://u:p@127.0.0.1:0080"), "http://127.0.0.1:80");
  EXPECT_EQ(OriginOf("http://[::1]:5000/v2/"), "http://[::1]:5000");
  EXPECT_EQ(OriginOf("http://[::1]/v2/"), "http://[::1]:80");
  EXPECT_EQ(OriginOf("HTTP://host?q"), "http://host:80");
  // Another port, scheme or host is another origin.
  EXPECT_NE(OriginOf("http://127.0.0.1:5000/"), OriginOf("http://127.0.0.1:5001/"));
  EXPECT_NE(OriginOf("http://host/"), OriginOf("https://host/"));
  EXPECT_NE(OriginOf("https://host/"), OriginOf("https://host.evil/"));
  // Nothing that is not an absolute http(s) URL has an origin.
  EXPECT_EQ(OriginOf("/v2/a/blobs/uploads/u"), "");
  EXPECT_EQ(OriginOf("ftp://host/x"), "");
  EXPECT_EQ(OriginOf("https:///x"), "");
  EXPECT_EQ(OriginOf("https://host:80x/"), "");
}

}  // namespace imgtool::ref

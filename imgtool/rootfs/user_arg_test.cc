// A config's User part as runc/Docker (moby/sys/user) and containerd read it, and the
// strconv.Atoi model both rest on (account_readers.h).
#include "rootfs/user_arg.h"

#include <gtest/gtest.h>

#include <limits>

#include "rootfs/account_readers.h"

namespace imgtool::rootfs {
namespace {

std::string Arg(std::string_view s) {
  UserArg a = ParseUserArg(s);
  switch (a.kind) {
    case UserArg::Kind::kName:
      return "name";
    case UserArg::Kind::kId:
      return "id " + std::to_string(a.id);
    case UserArg::Kind::kRefused:
      return "refused " + std::to_string(a.id) + ": " + a.why;
  }
  return "?";
}

TEST(UserArg, NumbersAsRuntimesReadThem) {
  EXPECT_EQ(Arg("10001"), "id 10001");
  EXPECT_EQ(Arg("+10001"), "id 10001");
  EXPECT_EQ(Arg("0010001"), "id 10001");
  EXPECT_EQ(Arg("0"), "id 0");
  EXPECT_EQ(Arg("0000"), "id 0");
  EXPECT_EQ(Arg("+0"), "id 0");
  EXPECT_EQ(Arg("-0"), "id 0");
  EXPECT_EQ(Arg("2147483647"), "id 2147483647");
  EXPECT_EQ(Arg("2147483648"),
            "refused 2147483648: 2147483648 is outside 0..2147483647: runc and Docker refuse it, containerd keeps its "
            "low 32 bits and runs it as 2147483648");
  EXPECT_EQ(Arg("4294967296"),
            "refused 0: 4294967296 is outside 0..2147483647: runc and Docker refuse it, containerd keeps its low 32 "
            "bits and runs it as 0 (root)");
  EXPECT_EQ(Arg("-4294967296").substr(0, 10), "refused 0:");
  EXPECT_EQ(Arg("-1").substr(0, 19), "refused 4294967295:");
  EXPECT_EQ(Arg("99999999999999999999"),
            "refused 0: a number too large for an int: runc and Docker refuse it, containerd looks it up as a name");
  // Atoi's syntax errors are names to both.
  for (const char* name : {"app", "", " 1", "1 ", "0x10", "1_000", "+", "-", "1e3", "\xef\xbc\x91"}) {
    EXPECT_EQ(Arg(name), "name") << name;
  }
}

TEST(UserArg, GoAtoiFollowsStrconv) {
  using internal::GoAtoi;
  using E = internal::GoInt::Error;
  auto is = [](internal::GoInt n, int64_t v, E e) { return n.value == v && n.error == e; };
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_TRUE(is(GoAtoi("999999999999999999"), 999999999999999999, E::kNone));  // 18 bytes: the fast path
  EXPECT_TRUE(is(GoAtoi("00000000000000000001"), 1, E::kNone));                 // 20 bytes: ParseInt
  EXPECT_TRUE(is(GoAtoi("9223372036854775807"), kMax, E::kNone));
  EXPECT_TRUE(is(GoAtoi("9223372036854775808"), kMax, E::kRange));
  EXPECT_TRUE(is(GoAtoi("-9223372036854775808"), kMin, E::kNone));
  EXPECT_TRUE(is(GoAtoi("-9223372036854775809"), kMin, E::kRange));
  EXPECT_TRUE(is(GoAtoi("-99999999999999999999"), kMin, E::kRange));
  // ParseUint reports the overflow at the digit that causes it, before seeing the 'x'.
  EXPECT_TRUE(is(GoAtoi("99999999999999999999x"), kMax, E::kRange));
  EXPECT_TRUE(is(GoAtoi("9999999999999999999x"), 0, E::kSyntax));  // no overflow before the 'x'
  EXPECT_TRUE(is(GoAtoi("1x"), 0, E::kSyntax));
  EXPECT_TRUE(is(GoAtoi(""), 0, E::kSyntax));
  EXPECT_TRUE(is(GoAtoi("+"), 0, E::kSyntax));
  EXPECT_TRUE(is(GoAtoi("+-1"), 0, E::kSyntax));
}

}  // namespace
}  // namespace imgtool::rootfs

// /etc/passwd and /etc/group as glibc, musl and Go read them (users.h, account_readers.h):
// a table of hostile lines with what each reader takes from them and what a lookup then
// answers; the glibc model checked against this machine's glibc (fgetpwent, fgetgrent) on
// the table and on generated files; the file-level refusals; adding the spec's user.
#include "rootfs/users.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>

#include <cstdio>
#include <random>

#include "rootfs/account_readers.h"

namespace imgtool::rootfs {
namespace {

using internal::Reader;
using internal::Record;

// Each record of one reader as "name:id:gid@line" (a group: "name:gid@line").
std::string Read(Reader r, AccountKind kind, std::string_view text) {
  std::string out;
  for (const Record& rec : internal::ReadAccounts(r, kind, text)) {
    out += (out.empty() ? "" : " ") + rec.name + ":" + std::to_string(rec.id) +
           (kind == AccountKind::kUser ? ":" + std::to_string(rec.gid) : "") + "@" + std::to_string(rec.line);
  }
  return out;
}

// What FindName answers: "uid N at WHERE", "none", or the error.
std::string Lookup(AccountKind kind, std::string_view text, std::string_view name) {
  auto f = AccountFile::Parse(kind, text);
  if (!f.ok()) return f.error().message;
  auto a = f->FindName(name);
  if (!a.ok()) return a.error().message;
  if (!*a) return "none";
  return "id " + std::to_string((*a)->id) + " at " + (*a)->where;
}

struct Row {
  const char* what;
  std::string text;
  const char* glibc;
  const char* musl;
  const char* go;
  const char* lookup_t;  // FindName("t"): "id N at ...", "none", or part of the error
};

const std::vector<Row>& PasswdRows() {
  static const std::vector<Row> rows = {
      {"leading blank before a root line (issue 24)", " t:x:0:0:root:/root:/bin/sh\nt:x:10001:10001::/home/t:/bin/sh\n",
       "t:0:0@1 t:10001:10001@2", " t:0:0@1 t:10001:10001@2", "t:0:0@1 t:10001:10001@2",
       "/etc/passwd: runtimes resolve user 't' differently: glibc and Go: line 1 \" t:x:0:0:root:/root:/bin/sh\" "
       "(user 't', uid 0, gid 0); musl: line 2 \"t:x:10001:10001::/home/t:/bin/sh\" (user 't', uid 10001, gid 10001)"},
      {"leading tab", "\tt:x:0:0:::\n", "t:0:0@1", "\tt:0:0@1", "t:0:0@1", "glibc and Go: line 1 \"\\x09t:x:0:0:::\""},
      {"CR at the end of a whole line", "t:x:10001:10001::/home/t:/bin/sh\r\n", "t:10001:10001@1", "t:10001:10001@1",
       "t:10001:10001@1", "id 10001 at line 1 \"t:x:10001:10001::/home/t:/bin/sh\\x0d\""},
      {"CR after the gid: glibc and musl skip the line, Go trims it", "t:x:0:0\r\nt:x:10001:10001:::\n",
       "t:10001:10001@2", "t:10001:10001@2", "t:0:0@1 t:10001:10001@2",
       "glibc and musl: line 2 \"t:x:10001:10001:::\" (user 't', uid 10001, gid 10001); Go: line 1"},
      {"a comment line is a name to musl and Go, never 't'", "#t:x:0:0:::\nt:x:10001:10001:::\n", "t:10001:10001@2",
       "#t:0:0@1 t:10001:10001@2", "#t:0:0@1 t:10001:10001@2", "id 10001 at line 2 \"t:x:10001:10001:::\""},
      {"duplicate, root first: first match wins everywhere", "t:x:0:0:::\nt:x:10001:10001:::\n",
       "t:0:0@1 t:10001:10001@2", "t:0:0@1 t:10001:10001@2", "t:0:0@1 t:10001:10001@2",
       "id 0 at line 1 \"t:x:0:0:::\""},
      {"duplicate, root second", "t:x:10001:10001:::\nt:x:0:0:::\n", "t:10001:10001@1 t:0:0@2",
       "t:10001:10001@1 t:0:0@2", "t:10001:10001@1 t:0:0@2", "id 10001 at line 1 \"t:x:10001:10001:::\""},
      {"uid 0000 is 0 to all", "t:x:0000:10:::\n", "t:0:10@1", "t:0:10@1", "t:0:10@1", "id 0 at line 1"},
      {"uid +0: musl skips the line", "t:x:+0:10:::\n", "t:0:10@1", "", "t:0:10@1", "musl: none"},
      {"uid ' 0': strtoul skips the blank, Atoi fails (0)", "t:x: 0:10:::\n", "t:0:10@1", "", "t:0:10@1",
       "glibc and Go: line 1"},
      {"uid ' 10001': Go reads 0", "t:x: 10001:10:::\n", "t:10001:10@1", "", "t:0:10@1",
       "glibc: line 1 \"t:x: 10001:10:::\" (user 't', uid 10001, gid 10); musl: none; Go: line 1"},
      {"uid 2^32: glibc skips, musl wraps, Go keeps the low bits", "t:x:4294967296:10:::\n", "", "t:0:10@1", "t:0:10@1",
       "glibc: none; musl and Go: line 1 \"t:x:4294967296:10:::\" (user 't', uid 0, gid 10)"},
      {"uid 2^32-1 is read by all", "t:x:4294967295:10:::\n", "t:4294967295:10@1", "t:4294967295:10@1",
       "t:4294967295:10@1", "id 4294967295 at line 1"},
      {"uid 10^20-1: overflows everything", "t:x:99999999999999999999:10:::\n", "", "t:1661992959:10@1",
       "t:4294967295:10@1", "musl: line 1"},
      {"uid -1", "t:x:-1:10:::\n", "", "", "t:4294967295:10@1", "glibc and musl: none; Go: line 1"},
      {"uid -0 is 0 to glibc and Go", "t:x:-0:10:::\n", "t:0:10@1", "", "t:0:10@1", "glibc and Go: line 1"},
      {"uid -2^32: 0 to Go", "t:x:-4294967296:10:::\n", "", "", "t:0:10@1",
       "glibc and musl: none; Go: line 1 \"t:x:-4294967296:10:::\" (user 't', uid 0, gid 10)"},
      {"uid -(2^64-1) is 1 to glibc", "t:x:-18446744073709551615:10:::\n", "t:1:10@1", "", "t:0:10@1", "glibc: line 1"},
      {"empty uid: glibc skips, musl and Go read 0", "t:x::10:::\n", "", "t:0:10@1", "t:0:10@1",
       "glibc: none; musl and Go: line 1"},
      {"a name alone is uid 0 to Go", "t\n", "", "", "t:0:0@1", "glibc and musl: none; Go: line 1 \"t\""},
      {"four fields: musl wants seven", "t:x:10001:10001\n", "t:10001:10001@1", "", "t:10001:10001@1", "musl: none"},
      {"more than seven fields go into the shell", "t:x:10001:10001:::/bin/sh:extra\n", "t:10001:10001@1",
       "t:10001:10001@1", "t:10001:10001@1", "id 10001 at line 1"},
      {"no newline: musl drops the last byte, here a ':'", "t:x:10001:10001:::", "t:10001:10001@1", "",
       "t:10001:10001@1", "musl: none"},
      {"no newline, a byte musl can lose", "t:x:10001:10001::/home/t:/bin/sh", "t:10001:10001@1", "t:10001:10001@1",
       "t:10001:10001@1", "id 10001 at line 1"},
      {"no-break space: Go trims it, C does not", "\xc2\xa0t:x:0:0:::\nt:x:10001:10001:::\n",
       "\xc2\xa0t:0:0@1 t:10001:10001@2", "\xc2\xa0t:0:0@1 t:10001:10001@2", "t:0:0@1 t:10001:10001@2",
       "glibc and musl: line 2 \"t:x:10001:10001:::\" (user 't', uid 10001, gid 10001); Go: line 1 "
       "\"\\xc2\\xa0t:x:0:0:::\" (user 't', uid 0, gid 0)"},
      {"trailing blank", "t:x:10001:10001::: \n", "t:10001:10001@1", "t:10001:10001@1", "t:10001:10001@1",
       "id 10001 at line 1"},
      {"a blank inside the name", "t :x:0:0:::\n", "t :0:0@1", "t :0:0@1", "t :0:0@1", "none"},
      {"empty lines and blank lines", "\n  \n\t\nt:x:10001:10001:::\n", "t:10001:10001@4", "t:10001:10001@4",
       "t:10001:10001@4", "id 10001 at line 4"},
      {"same ids on different lines agree", "t:x:10001:10001\nt:x:10001:10001:::\n", "t:10001:10001@1 t:10001:10001@2",
       "t:10001:10001@2", "t:10001:10001@1 t:10001:10001@2",
       "id 10001 at line 1 \"t:x:10001:10001\" (glibc and Go), line 2 \"t:x:10001:10001:::\" (musl)"},
  };
  return rows;
}

TEST(Users, EachReaderReadsTheHostileLinesAsItsSourceDoes) {
  for (const Row& row : PasswdRows()) {
    SCOPED_TRACE(row.what);
    EXPECT_EQ(Read(Reader::kGlibc, AccountKind::kUser, row.text), row.glibc);
    EXPECT_EQ(Read(Reader::kMusl, AccountKind::kUser, row.text), row.musl);
    EXPECT_EQ(Read(Reader::kGo, AccountKind::kUser, row.text), row.go);
    std::string got = Lookup(AccountKind::kUser, row.text, "t");
    EXPECT_NE(got.find(row.lookup_t), std::string::npos) << got;
  }
}

TEST(Users, TheIssue24FileMakesTRootForGlibcAndGo) {
  const std::string text = " t:x:0:0:root:/root:/bin/sh\nt:x:10001:10001::/home/t:/bin/sh\n";
  auto f = AccountFile::Parse(AccountKind::kUser, text);
  ASSERT_TRUE(f.ok());
  auto t = f->FindName("t");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().kind, ErrorKind::kInvalidInput);
  // The other names of the file still resolve.
  auto root_free = AccountFile::Parse(AccountKind::kUser, "root:x:0:0:::\napp:x:1000:1000:::\n" + text);
  ASSERT_TRUE(root_free.ok());
  EXPECT_EQ((*root_free->FindName("app"))->id, 1000u);
  EXPECT_EQ((*root_free->FindName("root"))->id, 0u);
  EXPECT_FALSE(root_free->FindName("t").ok());
}

TEST(Users, FileLevelRefusalsNameTheLine) {
  auto refused = [](AccountKind kind, const std::string& text) {
    auto f = AccountFile::Parse(kind, text);
    return f.ok() ? std::string("accepted") : f.error().message;
  };
  const auto user = AccountKind::kUser;
  EXPECT_EQ(refused(user, "root:x:0:0:::\n+t:x:0:0:::\n"),
            "/etc/passwd: line 2: \"+t\" is a NIS compat entry: glibc's compat service looks it up in NIS, Go and "
            "musl read an account named \"+t\"");
  EXPECT_NE(refused(user, "+\n").find("line 1: \"+\" is a NIS compat entry"), std::string::npos);
  EXPECT_NE(refused(user, "-t\n").find("line 1: \"-t\" is a NIS compat entry"), std::string::npos);
  EXPECT_NE(refused(user, "a:x:1:1:::\n  +::::::\n").find("line 2: \"+\" is a NIS"), std::string::npos);
  EXPECT_EQ(refused(user, std::string("t:x:0:0:::\0\n", 12)),
            "/etc/passwd: line 1: a NUL byte: C libraries end the line there, Go reads past it");
  EXPECT_EQ(refused(user, "a:x:1:1:::\n" + std::string(65536, 'a') + "\n"),
            "/etc/passwd: line 2: 65536 bytes: Go's bufio.Scanner (runc, containerd, Docker) stops reading the file "
            "at a line over 65535 bytes");
  EXPECT_EQ(refused(user, std::string(65535, 'a') + "\n"), "accepted");
  // Group lines may be longer (moby/sys/user gives that scanner 1 MiB).
  EXPECT_EQ(refused(AccountKind::kGroup, "g:x:5:" + std::string(65536, 'a') + "\n"), "accepted");
  EXPECT_EQ(refused(user, std::string(kMaxAccountFile + 1, '\n')),
            "/etc/passwd: 1048577 bytes; at most 1048576 are read");
  EXPECT_EQ(refused(user, std::string(kMaxAccountFile, '\n')), "accepted");
  EXPECT_EQ(refused(user, "a:x:1:1:::\n t:x:1:1:::"),
            "/etc/passwd: line 2: the last line starts with a blank and has no newline: glibc 2.32 and later read "
            "its last 1 bytes twice (nss_readline), older glibc and Go once");
  EXPECT_EQ(refused(user, "a:x:1:1:::\n t:x:1:1:::\n"), "accepted");
  EXPECT_EQ(refused(user, ""), "accepted");
}

TEST(Users, GroupFiles) {
  const auto group = AccountKind::kGroup;
  EXPECT_EQ(Read(Reader::kGlibc, group, " g:x:0:\ng:x:10001:\n"), "g:0@1 g:10001@2");
  EXPECT_EQ(Read(Reader::kMusl, group, " g:x:0:\ng:x:10001:\n"), " g:0@1 g:10001@2");
  EXPECT_EQ(Read(Reader::kGo, group, " g:x:0:\ng:x:10001:\n"), "g:0@1 g:10001@2");
  EXPECT_NE(Lookup(group, " g:x:0:\ng:x:10001:\n", "g").find("runtimes resolve group 'g' differently: glibc and Go"),
            std::string::npos);
  // Go skips '#' lines in group (not in passwd); musl reads them.
  EXPECT_EQ(Read(Reader::kGo, group, "#g:x:0:\n"), "");
  EXPECT_EQ(Read(Reader::kMusl, group, "#g:x:0:\n"), "#g:0@1");
  // Three fields: glibc and Go take them, musl wants the ':' after the gid.
  EXPECT_EQ(Read(Reader::kGlibc, group, "g:x:10001\n"), "g:10001@1");
  EXPECT_EQ(Read(Reader::kMusl, group, "g:x:10001\n"), "");
  EXPECT_EQ(Lookup(group, "root:x:0:\ng:x:10001:a,b\n", "g"), "id 10001 at line 2 \"g:x:10001:a,b\"");
}

TEST(Users, FindIdComparesWhatEachReaderCompares) {
  // Go's numeric lookup compares the int it parsed: 4294977297 is not 10001 to it, though
  // every runtime runs that user as uint32 10001.
  auto f = AccountFile::Parse(AccountKind::kUser, "big:x:4294977297:1:::\nt:x:10001:10001:::\n");
  ASSERT_TRUE(f.ok());
  auto id = f->FindId(10001);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.error().message.find("runtimes resolve uid 10001 differently: glibc and Go: line 2 "
                                    "\"t:x:10001:10001:::\" (user 't', uid 10001, gid 10001); musl: line 1 "
                                    "\"big:x:4294977297:1:::\" (user 'big', uid 10001, gid 1)"),
            std::string::npos)
      << id.error().message;
  auto plain = AccountFile::Parse(AccountKind::kUser, "root:x:0:0:::\nt:x:10001:10001:::\n");
  EXPECT_EQ((*plain->FindId(10001))->name, "t");
  EXPECT_FALSE(plain->FindId(5)->has_value());
}

// ---- the glibc model against this machine's glibc ----

// (name, uid, gid) of each entry fgetpwent (fgetgrent) returns for `text`.
std::string RealGlibc(AccountKind kind, const std::string& text) {
  if (text.empty()) return "";
  FILE* f = fmemopen(const_cast<char*>(text.data()), text.size(), "r");
  if (f == nullptr) return "fmemopen failed";
  std::string out;
  auto add = [&](const char* name, uint32_t id, const std::string& gid) {
    out += (out.empty() ? "" : " ") + std::string(name) + ":" + std::to_string(id) + gid;
  };
  if (kind == AccountKind::kUser) {
    while (passwd* p = fgetpwent(f)) add(p->pw_name, p->pw_uid, ":" + std::to_string(p->pw_gid));
  } else {
    while (group* g = fgetgrent(f)) add(g->gr_name, g->gr_gid, "");
  }
  std::fclose(f);
  return out;
}

std::string Model(AccountKind kind, const std::string& text) {
  std::string out;
  for (const Record& r : internal::ReadAccounts(Reader::kGlibc, kind, text)) {
    out += (out.empty() ? "" : " ") + r.name + ":" + std::to_string(r.id) +
           (kind == AccountKind::kUser ? ":" + std::to_string(r.gid) : "");
  }
  return out;
}

TEST(Users, TheGlibcModelReadsTheTableAsThisGlibcDoes) {
  int compared = 0;
  for (const Row& row : PasswdRows()) {
    if (!AccountFile::Parse(AccountKind::kUser, row.text).ok()) continue;
    EXPECT_EQ(Model(AccountKind::kUser, row.text), RealGlibc(AccountKind::kUser, row.text)) << row.what;
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(PasswdRows().size()));
}

// Files made of the fragments that matter to the readers, each compared with fgetpwent and
// fgetgrent. Only files every reader can be modelled on are compared (Parse accepts them).
TEST(Users, TheGlibcModelReadsGeneratedFilesAsThisGlibcDoes) {
  const std::vector<std::string> pieces = {
      "t",  "root", ":",       ":",       ":",  "x",  "0",  "1", "10001",      "0000",
      "+",  "-",    " ",       "\t",      "\r", "\n", "\n", "#", "4294967296", "99999999999999999999",
      "\v", "a,b",  "/bin/sh", "\xc2\xa0"};
  std::mt19937 rng(24);
  int compared = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string text;
    int n = static_cast<int>(rng() % 24);
    for (int k = 0; k < n; ++k) text += pieces[rng() % pieces.size()];
    for (AccountKind kind : {AccountKind::kUser, AccountKind::kGroup}) {
      if (!AccountFile::Parse(kind, text).ok()) continue;
      ASSERT_EQ(Model(kind, text), RealGlibc(kind, text)) << "file: \"" << text << "\"";
      ++compared;
    }
  }
  EXPECT_GT(compared, 4000);  // most files are comparable; the rest hold a NIS line
}

// ---- adding the spec's user and group ----

TEST(Users, WithUserRefusesANameThatResolvesElsewhere) {
  NewUser t{"t", 10001, 10001, "/home/t", "/sbin/nologin"};
  // musl reads " t" as a name of its own; glibc and Go read t, uid 0.
  auto issue24 = WithUser(" t:x:0:0:root:/root:/bin/sh\n", t);
  ASSERT_FALSE(issue24.ok());
  EXPECT_EQ(issue24.error().message,
            "/etc/passwd: runtimes resolve user 't' differently: glibc and Go: line 1 \" t:x:0:0:root:/root:/bin/sh\" "
            "(user 't', uid 0, gid 0); musl: none; user 't' cannot be added as uid 10001 (gid 10001)");
  auto root = WithUser("root:x:0:0:::\nt:x:0:0:root:/root:/bin/sh\n", t);
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().message,
            "/etc/passwd: user 't' is already uid 0 (gid 0) at line 2 \"t:x:0:0:root:/root:/bin/sh\", not uid 10001 "
            "(gid 10001)");
  auto two_lines = WithUser(" t:x:0:0:root:/root:/bin/sh\nt:x:10001:10001::/home/t:/bin/sh\n", t);
  ASSERT_FALSE(two_lines.ok());
  EXPECT_NE(two_lines.error().message.find("runtimes resolve user 't' differently"), std::string::npos);
  auto go_only = WithUser("root:x:0:0:::\nt\n", t);  // Go reads user t, uid 0
  ASSERT_FALSE(go_only.ok());
  EXPECT_NE(go_only.error().message.find("glibc and musl: none; Go: line 2 \"t\" (user 't', uid 0, gid 0)"),
            std::string::npos);
  auto gid = WithUser("t:x:10001:5:::\n", t);
  ASSERT_FALSE(gid.ok());
  EXPECT_NE(gid.error().message.find("is already uid 10001 (gid 5)"), std::string::npos);
  auto taken = WithUser("other:x:10001:10001::/:/bin/sh\n", t);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().message,
            "/etc/passwd: uid 10001 already belongs to user 'other' at line 1 \"other:x:10001:10001::/:/bin/sh\", so "
            "it cannot be user 't' too");
  auto nis = WithUser("root:x:0:0:::\n+::::::\n", t);
  ASSERT_FALSE(nis.ok());
  EXPECT_NE(nis.error().message.find("line 2: \"+\" is a NIS compat entry"), std::string::npos);
}

TEST(Users, WithUserAppendsALineEveryReaderTakes) {
  NewUser t{"t", 10001, 10001, "/home/t", "/sbin/nologin"};
  EXPECT_EQ(*WithUser("root:x:0:0:root:/root:/bin/sh", t),
            "root:x:0:0:root:/root:/bin/sh\nt:x:10001:10001::/home/t:/sbin/nologin\n");
  EXPECT_EQ(*WithUser("root:x:0:0:::\nt:x:10001:10001::/elsewhere:/bin/sh\n", t),
            "root:x:0:0:::\nt:x:10001:10001::/elsewhere:/bin/sh\n");  // already there: unchanged
  EXPECT_EQ(*WithGroup("root:x:0:\n", {"t", 10001}), "root:x:0:\nt:x:10001:\n");
  auto g = WithGroup("root:x:0:\nwheel:x:10001:\n", {"t", 10001});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message,
            "/etc/group: gid 10001 already belongs to group 'wheel' at line 2 \"wheel:x:10001:\", so it cannot be "
            "group 't' too");
}

TEST(Users, NamesAndFieldsImgtoolWrites) {
  EXPECT_TRUE(CheckAccountName("trainer", "user name").ok());
  EXPECT_TRUE(CheckAccountName("1app", "user name").ok());
  EXPECT_EQ(CheckAccountName("-t", "user name").error().message,
            "'-t' is not a valid user name: a leading '-' is \"exclude\" to glibc's compat service and an option to "
            "tools");
  EXPECT_EQ(CheckAccountName("10001", "group name").error().message,
            "'10001' is not a valid group name: all digits, which runtimes, su and chown read as an id");
  EXPECT_EQ(CheckAccountName("Bad Name", "user name").error().message,
            "'Bad Name' is not a valid user name ([a-z0-9_-], up to 32)");
  EXPECT_EQ(CheckAccountField("/bin/sh\nr:x:0:0:::").error().message,
            "control character 10 (a newline would start a line of its own)");
  EXPECT_EQ(CheckAccountField("/home/a:0").error().message, "a ':', which separates the fields of /etc/passwd");
  NewUser injected{"t", 10001, 10001, "/home/t", "/bin/sh\nr:x:0:0::/:/bin/sh"};
  auto out = WithUser("root:x:0:0:::\n", injected);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message, "shell: control character 10 (a newline would start a line of its own)");
}

}  // namespace
}  // namespace imgtool::rootfs

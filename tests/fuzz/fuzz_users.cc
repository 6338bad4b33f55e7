// /etc/passwd and /etc/group (imgtool/rootfs/users.h): the same bytes as a passwd and as
// a group file. Checks, on every file Parse accepts:
// - the glibc model reads exactly what this process's glibc reads (fgetpwent, fgetgrent
//   over the same bytes): a difference aborts, so the fuzzer hunts model errors too;
// - lookups of the names and ids the readers found answer or refuse, never crash;
// - WithUser / WithGroup either refuse or write a file that reads back as the account
//   (an internal error aborts);
// and ParseUserArg on the first line.
#include <grp.h>
#include <pwd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "rootfs/account_readers.h"
#include "rootfs/user_arg.h"
#include "rootfs/users.h"

namespace {

using imgtool::ErrorKind;
using imgtool::rootfs::AccountFile;
using imgtool::rootfs::AccountKind;
namespace internal = imgtool::rootfs::internal;

std::string Model(AccountKind kind, const std::string& text) {
  std::string out;
  for (const auto& r : internal::ReadAccounts(internal::Reader::kGlibc, kind, text)) {
    out += r.name + ":" + std::to_string(r.id) + ":" + std::to_string(r.gid) + "\n";
  }
  return out;
}

std::string RealGlibc(AccountKind kind, const std::string& text) {
  std::string out;
  if (text.empty()) return out;
  FILE* f = fmemopen(const_cast<char*>(text.data()), text.size(), "r");
  if (f == nullptr) std::abort();
  if (kind == AccountKind::kUser) {
    while (passwd* p = fgetpwent(f))
      out += std::string(p->pw_name) + ":" + std::to_string(p->pw_uid) + ":" + std::to_string(p->pw_gid) + "\n";
  } else {
    while (group* g = fgetgrent(f)) out += std::string(g->gr_name) + ":" + std::to_string(g->gr_gid) + ":0\n";
  }
  std::fclose(f);
  return out;
}

void Check(AccountKind kind, const std::string& text) {
  auto file = AccountFile::Parse(kind, text);
  if (!file.ok()) return;
  if (Model(kind, text) != RealGlibc(kind, text)) {
    std::fprintf(stderr, "glibc model:\n%s\nthis glibc:\n%s\n", Model(kind, text).c_str(),
                 RealGlibc(kind, text).c_str());
    std::abort();
  }
  int asked = 0;
  for (internal::Reader reader : internal::kReaders) {
    for (const auto& r : internal::ReadAccounts(reader, kind, text)) {
      if (++asked > 24) break;
      (void)file->FindName(r.name);
      (void)file->FindId(r.id);
    }
  }
  auto added = kind == AccountKind::kUser ? imgtool::rootfs::WithUser(text, {"t", 10001, 10001, "/home/t", "/bin/sh"})
                                          : imgtool::rootfs::WithGroup(text, {"t", 10001});
  if (!added.ok() && added.error().kind == ErrorKind::kInternal) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(imgtool::fuzz::Bytes(data, size));
  Check(AccountKind::kUser, text);
  Check(AccountKind::kGroup, text);
  (void)imgtool::rootfs::ParseUserArg(text.substr(0, text.find('\n')));
  return 0;
}

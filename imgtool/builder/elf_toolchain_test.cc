#include "builder/elf_toolchain.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>

namespace imgtool::build {

namespace {

// A minimal ELF64 little-endian file: the header, then each section's bytes, then
// .shstrtab, then the section headers (index 0 is the null section).
std::string MakeElf(const std::vector<std::pair<std::string, std::string>>& sections) {
  std::string names(1, '\0'), body;
  std::vector<Elf64_Shdr> headers(1);
  std::memset(headers.data(), 0, sizeof(Elf64_Shdr));
  for (const auto& [name, bytes] : sections) {
    Elf64_Shdr h{};
    h.sh_name = uint32_t(names.size());
    h.sh_type = SHT_PROGBITS;
    h.sh_offset = sizeof(Elf64_Ehdr) + body.size();
    h.sh_size = bytes.size();
    names += name + '\0';
    body += bytes;
    headers.push_back(h);
  }
  Elf64_Shdr strtab{};
  strtab.sh_name = uint32_t(names.size());
  names += std::string(".shstrtab") + '\0';
  strtab.sh_type = SHT_STRTAB;
  strtab.sh_offset = sizeof(Elf64_Ehdr) + body.size();
  strtab.sh_size = names.size();
  body += names;
  headers.push_back(strtab);
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_shoff = sizeof(Elf64_Ehdr) + body.size();
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = uint16_t(headers.size());
  eh.e_shstrndx = uint16_t(headers.size() - 1);
  std::string out(reinterpret_cast<const char*>(&eh), sizeof eh);
  out += body;
  out.append(reinterpret_cast<const char*>(headers.data()), headers.size() * sizeof(Elf64_Shdr));
  return out;
}

std::vector<std::string> Of(const std::string& bytes) {
  oci::StringReader r(bytes);
  return ElfToolchain(r, bytes.size());
}

// A file in memory that counts the bytes read from it.
class CountingReader : public oci::Reader {
 public:
  explicit CountingReader(const std::string& bytes) : inner_(bytes) {}
  Result<size_t> Read(void* buf, size_t n) override { return Count(inner_.Read(buf, n)); }
  bool CanReadAt() const override { return true; }
  Result<size_t> ReadAt(uint64_t offset, void* buf, size_t n) override { return Count(inner_.ReadAt(offset, buf, n)); }
  uint64_t bytes = 0;

 private:
  Result<size_t> Count(Result<size_t> got) {
    if (got.ok()) bytes += *got;
    return got;
  }
  oci::StringReader inner_;
};

// `elf` with its section table rewritten: `n` headers (the null one, .shstrtab last),
// every other one named `name` and pointing at [offset, offset + size(i)).
std::string WithSections(const std::string& elf, uint16_t n, const std::string& name, uint64_t offset,
                         const std::function<uint64_t(int)>& size) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, elf.data(), sizeof eh);
  std::vector<Elf64_Shdr> headers(eh.e_shnum);
  std::memcpy(headers.data(), elf.data() + eh.e_shoff, headers.size() * sizeof(Elf64_Shdr));
  Elf64_Shdr strtab = headers.back();
  // The name's offset in .shstrtab: find it among the names already there.
  std::string names = elf.substr(strtab.sh_offset, strtab.sh_size);
  uint32_t at = uint32_t(names.find(name + '\0'));
  std::string out = elf.substr(0, eh.e_shoff);
  std::vector<Elf64_Shdr> table(n);
  std::memset(table.data(), 0, n * sizeof(Elf64_Shdr));
  for (int i = 1; i + 1 < n; ++i) {
    table[i].sh_name = at;
    table[i].sh_type = SHT_PROGBITS;
    table[i].sh_offset = offset;
    table[i].sh_size = size(i);
  }
  table[n - 1] = strtab;
  eh.e_shnum = n;
  eh.e_shstrndx = uint16_t(n - 1);
  std::memcpy(out.data(), &eh, sizeof eh);
  out.append(reinterpret_cast<const char*>(table.data()), table.size() * sizeof(Elf64_Shdr));
  return out;
}

const std::string kGcc = "GCC: (Debian 12.2.0-14+deb12u1) 12.2.0";
const std::string kNvcc = "Cuda compilation tools, release 13.0, V13.0.88";

}  // namespace

TEST(ElfToolchain, NamesTheCompilersOfThisTestBinary) {
  // The binary itself: /proc/self/exe is a symlink, which ElfToolchainOf does not follow.
  auto found = ElfToolchainOf(std::filesystem::read_symlink("/proc/self/exe").string());
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found[0].rfind("GCC: ", 0) == 0 || found[0].find("clang") != std::string::npos, true) << found[0];
}

TEST(ElfToolchain, CommentStringsAndNvccFromTheFatbin) {
  std::string comment = kGcc + '\0' + kGcc + '\0' + "clang version 14.0.6" + '\0';
  std::string fatbin = std::string("\x50\xed\x55\xba\x01\x00", 6) + "xx" + kNvcc + '\n' + "Build cuda_13.0" + '\0';
  auto found = Of(MakeElf({{".text", "code"}, {".comment", comment}, {".nv_fatbin", fatbin}}));
  EXPECT_EQ(found, (std::vector<std::string>{kGcc, "clang version 14.0.6", kNvcc}));
}

TEST(ElfToolchain, AnythingElseHasNone) {
  EXPECT_TRUE(Of("").empty());
  EXPECT_TRUE(Of("#!/bin/sh\necho hi\n").empty());
  std::string elf = MakeElf({{".comment", kGcc + '\0'}});
  EXPECT_EQ(Of(elf).size(), 1u);
  std::string big_endian = elf;
  big_endian[EI_DATA] = ELFDATA2MSB;
  EXPECT_TRUE(Of(big_endian).empty());
  std::string thirty_two = elf;
  thirty_two[EI_CLASS] = ELFCLASS32;
  EXPECT_TRUE(Of(thirty_two).empty());
  EXPECT_TRUE(ElfToolchainOf("/nonexistent/file").empty());
  EXPECT_TRUE(ElfToolchainOf("/dev/null").empty());  // not a regular file
}

// Lying offsets, sizes and counts: never read past the file, never a crash, never a guess.
TEST(ElfToolchain, HostileHeadersAreBounded) {
  std::string elf = MakeElf({{".comment", kGcc + '\0'}});
  Elf64_Ehdr eh;
  std::memcpy(&eh, elf.data(), sizeof eh);
  auto with = [&](auto mutate) {
    Elf64_Ehdr copy = eh;
    mutate(copy);
    std::string out = elf;
    std::memcpy(out.data(), &copy, sizeof copy);
    return Of(out);
  };
  EXPECT_TRUE(with([](Elf64_Ehdr& h) { h.e_shoff = ~uint64_t(0) - 10; }).empty());
  EXPECT_TRUE(with([](Elf64_Ehdr& h) { h.e_shnum = 60000; }).empty());
  EXPECT_TRUE(with([](Elf64_Ehdr& h) { h.e_shstrndx = 7; }).empty());
  EXPECT_TRUE(Of(elf.substr(0, elf.size() - 1)).empty());  // truncated section table
  // A section whose size runs past the end: skipped, the rest still read.
  std::string lying = elf;
  Elf64_Shdr comment;
  std::memcpy(&comment, lying.data() + eh.e_shoff + sizeof(Elf64_Shdr), sizeof comment);
  comment.sh_size = uint64_t(1) << 40;
  std::memcpy(lying.data() + eh.e_shoff + sizeof(Elf64_Shdr), &comment, sizeof comment);
  EXPECT_TRUE(Of(lying).empty());
  // Control characters in a comment are not a toolchain name.
  EXPECT_TRUE(Of(MakeElf({{".comment", std::string("GCC\x1b[31m") + '\0'}})).empty());
}

// Issue 24: 4,096 section headers naming the same 8 MiB (an 8.3 MB staged file) were each
// read, 32 GiB in all. Identical sections are read once, and a budget of twice the file
// bounds sections that overlap without being identical: the same answer either way.
TEST(ElfToolchain, SectionsOverTheSameBytesAreReadAtMostTwiceOver) {
  std::string fatbin(8 << 20, 'f');
  fatbin.replace(1000, kNvcc.size() + 1, kNvcc + '\n');
  const std::string elf = MakeElf({{".comment", kGcc + '\0'}, {".nv_fatbin", fatbin}});
  const std::vector<std::string> want{kGcc, kNvcc};
  ASSERT_EQ(Of(elf), want);
  CountingReader plain(elf);
  EXPECT_EQ(ElfToolchain(plain, elf.size()), want);
  EXPECT_LE(plain.bytes, elf.size());  // a sane file: each part once

  const uint64_t at = sizeof(Elf64_Ehdr) + kGcc.size() + 1;  // .nv_fatbin's offset
  for (const auto& size : std::vector<std::function<uint64_t(int)>>{
           [&](int) { return uint64_t(fatbin.size()); },        // all the same
           [&](int i) { return uint64_t(fatbin.size()) - i; },  // overlapping, each other
       }) {
    std::string hostile = WithSections(elf, 4096, ".nv_fatbin", at, size);
    CountingReader counted(hostile);
    EXPECT_EQ(ElfToolchain(counted, hostile.size()), std::vector<std::string>{kNvcc});
    EXPECT_LE(counted.bytes, 2 * hostile.size());
  }
}

}  // namespace imgtool::build

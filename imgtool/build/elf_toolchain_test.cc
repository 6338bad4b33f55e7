#include "build/elf_toolchain.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>

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

const std::string kGcc = "GCC: (Debian 12.2.0-14+deb12u1) 12.2.0";
const std::string kNvcc = "Cuda compilation tools, release 13.0, V13.0.88";

}  // namespace

TEST(ElfToolchain, NamesTheCompilersOfThisTestBinary) {
  auto found = ElfToolchainOf("/proc/self/exe");
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

}  // namespace imgtool::build

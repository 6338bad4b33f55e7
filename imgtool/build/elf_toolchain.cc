#include "build/elf_toolchain.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "fs/safe_open.h"

namespace imgtool::build {

namespace {

constexpr uint16_t kMaxSections = 4096;
constexpr uint64_t kMaxNames = 1 << 20;       // .shstrtab
constexpr uint64_t kMaxComment = 64 << 10;    // .comment
constexpr uint64_t kFatbinScan = 8 << 20;     // the head of .nv_fatbin, where nvcc's note sits
constexpr size_t kMaxStrings = 16;
constexpr size_t kMaxStringLength = 200;
constexpr std::string_view kNvcc = "Cuda compilation tools, release ";

// Exactly `n` bytes at `offset`, or nothing.
std::optional<std::string> ReadExact(oci::Reader& file, uint64_t size, uint64_t offset, uint64_t n) {
  if (offset > size || n > size - offset) return std::nullopt;
  std::string out(n, '\0');
  size_t done = 0;
  while (done < n) {
    auto got = file.ReadAt(offset + done, out.data() + done, n - done);
    if (!got.ok() || *got == 0) return std::nullopt;
    done += *got;
  }
  return out;
}

bool Printable(std::string_view s) {
  return !s.empty() && s.size() <= kMaxStringLength &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

void Add(std::vector<std::string>& out, std::string_view s) {
  if (Printable(s) && out.size() < kMaxStrings && std::find(out.begin(), out.end(), s) == out.end()) {
    out.emplace_back(s);
  }
}

struct Section {
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// The section headers with their names; empty when the file is not a sane ELF64 LE file.
std::vector<Section> Sections(oci::Reader& file, uint64_t size) {
  auto head = ReadExact(file, size, 0, sizeof(Elf64_Ehdr));
  if (!head) return {};
  Elf64_Ehdr eh;
  std::memcpy(&eh, head->data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shnum > kMaxSections || eh.e_shstrndx >= eh.e_shnum) {
    return {};
  }
  auto table = ReadExact(file, size, eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr));
  if (!table) return {};
  std::vector<Elf64_Shdr> headers(eh.e_shnum);
  std::memcpy(headers.data(), table->data(), table->size());
  const Elf64_Shdr& names_header = headers[eh.e_shstrndx];
  if (names_header.sh_type == SHT_NOBITS || names_header.sh_size > kMaxNames) return {};
  auto names = ReadExact(file, size, names_header.sh_offset, names_header.sh_size);
  if (!names) return {};
  std::vector<Section> out;
  for (const auto& h : headers) {
    if (h.sh_type == SHT_NOBITS || h.sh_name >= names->size()) continue;
    const char* name = names->data() + h.sh_name;
    out.push_back({std::string(name, strnlen(name, names->size() - h.sh_name)), h.sh_offset, h.sh_size});
  }
  return out;
}

void CommentStrings(oci::Reader& file, uint64_t size, const Section& s, std::vector<std::string>& out) {
  auto bytes = ReadExact(file, size, s.offset, std::min(s.size, kMaxComment));
  if (!bytes) return;
  size_t start = 0;
  while (start < bytes->size()) {
    size_t end = bytes->find('\0', start);
    if (end == std::string::npos) end = bytes->size();
    Add(out, std::string_view(*bytes).substr(start, end - start));
    start = end + 1;
  }
}

void NvccIdentity(oci::Reader& file, uint64_t size, const Section& s, std::vector<std::string>& out) {
  auto bytes = ReadExact(file, size, s.offset, std::min(s.size, kFatbinScan));
  if (!bytes) return;
  size_t at = bytes->find(kNvcc);
  if (at == std::string::npos) return;
  size_t end = bytes->find_first_of(std::string_view("\0\n\r", 3), at);
  Add(out, std::string_view(*bytes).substr(at, (end == std::string::npos ? bytes->size() : end) - at));
}

}  // namespace

std::vector<std::string> ElfToolchain(oci::Reader& file, uint64_t size) {
  std::vector<std::string> out;
  for (const Section& s : Sections(file, size)) {
    if (s.name == ".comment") CommentStrings(file, size, s, out);
    if (s.name == ".nv_fatbin") NvccIdentity(file, size, s, out);
  }
  return out;
}

std::vector<std::string> ElfToolchainOf(const std::string& path) {
  uint64_t size = 0;
  auto fd = fs::OpenRegular(path, &size);
  if (!fd.ok()) return {};
  fs::FdReader reader(std::move(*fd));
  return ElfToolchain(reader, size);
}

}  // namespace imgtool::build

#include "builder/elf_toolchain.h"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <tuple>

#include "fs/safe_open.h"

namespace imgtool::build {

namespace {

constexpr uint16_t kMaxSections = 4096;
constexpr uint64_t kMaxNames = 1 << 20;     // .shstrtab
constexpr uint64_t kMaxComment = 64 << 10;  // .comment
constexpr uint64_t kFatbinScan = 8 << 20;   // the head of .nv_fatbin, where nvcc's note sits
constexpr size_t kMaxStrings = 16;
constexpr size_t kMaxStringLength = 200;
constexpr std::string_view kNvcc = "Cuda compilation tools, release ";

// The file as this reader sees it: every read is charged to one budget of kReadsPerByte
// times the file's size, whatever its headers say, so that no file costs more than a few
// passes over it (4,096 section headers naming the same 8 MiB once read 32 GiB: > 100 s).
// A real ELF file reads far less than its own size: its header, section table, names,
// .comment and the head of .nv_fatbin, each once.
class ElfFile {
 public:
  static constexpr uint64_t kReadsPerByte = 2;
  ElfFile(oci::Reader& file, uint64_t size)
      : file_(file), size_(size), budget_(size > UINT64_MAX / kReadsPerByte ? UINT64_MAX : kReadsPerByte * size) {}
  uint64_t size() const { return size_; }

  // Exactly `n` bytes at `offset`, or nothing (past the end, or past the budget).
  std::optional<std::string> Read(uint64_t offset, uint64_t n) {
    if (offset > size_ || n > size_ - offset || n > budget_) return std::nullopt;
    budget_ -= n;
    std::string out(n, '\0');
    size_t done = 0;
    while (done < n) {
      auto got = file_.ReadAt(offset + done, out.data() + done, n - done);
      if (!got.ok() || *got == 0) return std::nullopt;
      done += *got;
    }
    return out;
  }

 private:
  oci::Reader& file_;
  uint64_t size_;
  uint64_t budget_;
};

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
std::vector<Section> Sections(ElfFile& file) {
  auto head = file.Read(0, sizeof(Elf64_Ehdr));
  if (!head) return {};
  Elf64_Ehdr eh;
  std::memcpy(&eh, head->data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shnum > kMaxSections || eh.e_shstrndx >= eh.e_shnum) {
    return {};
  }
  auto table = file.Read(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr));
  if (!table) return {};
  std::vector<Elf64_Shdr> headers(eh.e_shnum);
  std::memcpy(headers.data(), table->data(), table->size());
  const Elf64_Shdr& names_header = headers[eh.e_shstrndx];
  if (names_header.sh_type == SHT_NOBITS || names_header.sh_size > kMaxNames) return {};
  auto names = file.Read(names_header.sh_offset, names_header.sh_size);
  if (!names) return {};
  std::vector<Section> out;
  for (const auto& h : headers) {
    if (h.sh_type == SHT_NOBITS || h.sh_name >= names->size()) continue;
    const char* name = names->data() + h.sh_name;
    out.push_back({std::string(name, strnlen(name, names->size() - h.sh_name)), h.sh_offset, h.sh_size});
  }
  return out;
}

void CommentStrings(ElfFile& file, const Section& s, std::vector<std::string>& out) {
  auto bytes = file.Read(s.offset, std::min(s.size, kMaxComment));
  if (!bytes) return;
  size_t start = 0;
  while (start < bytes->size()) {
    size_t end = bytes->find('\0', start);
    if (end == std::string::npos) end = bytes->size();
    Add(out, std::string_view(*bytes).substr(start, end - start));
    start = end + 1;
  }
}

void NvccIdentity(ElfFile& file, const Section& s, std::vector<std::string>& out) {
  auto bytes = file.Read(s.offset, std::min(s.size, kFatbinScan));
  if (!bytes) return;
  size_t at = bytes->find(kNvcc);
  if (at == std::string::npos) return;
  size_t end = bytes->find_first_of(std::string_view("\0\n\r", 3), at);
  Add(out, std::string_view(*bytes).substr(at, (end == std::string::npos ? bytes->size() : end) - at));
}

}  // namespace

std::vector<std::string> ElfToolchain(oci::Reader& file, uint64_t size) {
  ElfFile elf(file, size);
  std::vector<std::string> out;
  // Sections naming the same bytes are read once: the same strings would come out.
  std::set<std::tuple<std::string, uint64_t, uint64_t>> read;
  for (const Section& s : Sections(elf)) {
    bool comment = s.name == ".comment", fatbin = s.name == ".nv_fatbin";
    if ((!comment && !fatbin) || !read.emplace(s.name, s.offset, s.size).second) continue;
    if (comment) CommentStrings(elf, s, out);
    if (fatbin) NvccIdentity(elf, s, out);
  }
  return out;
}

std::vector<std::string> ElfToolchainOf(const std::string& path) {
  archive::Entry e;
  e.source = path;
  return ElfToolchainOf(e);
}

std::vector<std::string> ElfToolchainOf(const archive::Entry& e) {
  uint64_t size = 0;
  // A layer input as the layer opens it: a symlink put there since planning is not read.
  auto fd = archive::OpenSource(e, &size);
  if (!fd.ok()) return {};
  fs::FdReader reader(std::move(*fd));
  return ElfToolchain(reader, size);
}

}  // namespace imgtool::build

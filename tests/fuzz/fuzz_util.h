// What the harnesses share. Inputs that the code under test only reads from files (a
// .deb, a wheel, an oci-archive) go to a scratch folder of this process, and whatever
// a hostile input unpacked is removed before the next one, so a long run neither fills
// the disk nor lets one input see another's leftovers.
//
// Not a framework: each fuzz_<name>.cc is one LLVMFuzzerTestOneInput over one parser.
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fs/atomic_file.h"

namespace imgtool::fuzz {

inline std::string_view Bytes(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// Gives the owner every permission on `path` and, for a folder, on what it holds, so it
// can be removed: unpacked packages may hold read-only folders, and the fuzzer need not
// run as root.
inline void MakeRemovable(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
  ::chmod(path.c_str(), 0700);
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") MakeRemovable(path + "/" + name);
  }
  ::closedir(d);
}

inline void RemoveAll(const std::string& path) {
  if (fs::RemoveTree(path).ok()) return;
  MakeRemovable(path);
  if (!fs::RemoveTree(path).ok()) std::abort();  // a leftover would change what the next input sees
}

// `bytes` into `path` with plain stdio, no fsync: thousands of these a second must not
// wait for the disk. false when it could not be written.
inline bool WriteBytes(const std::string& path, std::string_view bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && written;
}

// This process's scratch folder, removed at exit: in /dev/shm when there is one, since
// the code under test fsyncs what it writes and on a disk that costs more than the rest
// of an input; else $TMPDIR or /tmp. Never freed: the exit handler runs after static
// destructors would have run.
inline const std::string& Scratch() {
  static const std::string* path = [] {
    auto dir = fs::TempDir::Create("imgtool-fuzz-", ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "");
    if (!dir.ok()) std::abort();
    auto* p = new std::string(dir->path());
    dir->Release();
    std::atexit([] { RemoveAll(Scratch()); });
    return p;
  }();
  return *path;
}

// Writes the input to <scratch>/<name> and returns its path.
inline std::string WriteInput(std::string_view bytes, const std::string& name = "input") {
  std::string path = Scratch() + "/" + name;
  if (!WriteBytes(path, bytes)) std::abort();
  return path;
}

// An empty folder <scratch>/<name>, emptied again by the next call for that name.
inline std::string FreshFolder(const std::string& name) {
  std::string path = Scratch() + "/" + name;
  RemoveAll(path);
  if (::mkdir(path.c_str(), 0700) != 0) std::abort();
  return path;
}

// The harness's own bookkeeping over a large expanded input (ExpandNesting, NoteNesting):
// not traced for coverage nor checked by ASan (clang), so it costs a memcpy-speed pass,
// not the harness's throughput; the code under test stays instrumented.
#if defined(__clang__)
#define IMGTOOL_FUZZ_UNTRACED __attribute__((no_sanitize("coverage", "address"), noinline))
#else
#define IMGTOOL_FUZZ_UNTRACED
#endif

// `unit` `times` times over, by doubling: a few copies however large.
inline std::string Repeat(std::string_view unit, size_t times) {
  std::string out;
  const size_t total = unit.size() * times;
  if (total == 0) return out;
  out.reserve(total);
  out.append(unit);
  while (out.size() < total) out.append(out, 0, std::min(out.size(), total - out.size()));
  return out;
}

// Deep nesting from a small input (issue 24: an index nested 12,000 deep and a config
// 200,000 deep ended imgtool; a fuzzer whose inputs are a few KiB never got there). An
// input that starts with the byte 0x01, which no JSON document starts with, is a recipe:
//   0x01 D2 D1 D0 HEAD 0x01 OPEN 0x01 MIDDLE 0x01 CLOSE 0x01 TAIL
// and the harness reads HEAD + OPEN x D + MIDDLE + CLOSE x D + TAIL, where D is the
// 24-bit big-endian count, cut so the document stays under 256 KiB: 131,072 levels of
// "[]", ten times the 12,000 of the report and far past where any recursion over them
// would overflow the stack under ASan (a few thousand levels), while a mutated count,
// mostly large, still costs the harness little throughput. Missing parts are empty. Any other
// input is read as it is. The harnesses of JSON readers call this, and NoteNesting on
// what it gives, so every run reports how deep its inputs went.
IMGTOOL_FUZZ_UNTRACED inline std::string ExpandNesting(std::string_view input) {
  if (input.size() < 4 || input[0] != '\x01') return std::string(input);
  size_t depth = (size_t(uint8_t(input[1])) << 16) | (size_t(uint8_t(input[2])) << 8) | uint8_t(input[3]);
  std::string_view rest = input.substr(4);
  std::string_view part[5];
  for (auto& p : part) {
    size_t end = std::min(rest.find('\x01'), rest.size());
    p = rest.substr(0, end);
    rest = rest.substr(std::min(end + 1, rest.size()));
  }
  const auto& [head, open, middle, close, tail] = part;
  constexpr size_t kMaxDocument = 256 << 10;
  size_t per_level = open.size() + close.size();
  depth = per_level == 0 ? 0 : std::min(depth, kMaxDocument / per_level);
  std::string out(head);
  out.reserve(head.size() + depth * per_level + middle.size() + tail.size());
  out += Repeat(open, depth);
  out += middle;
  out += Repeat(close, depth);
  out += tail;
  return out;
}

// The deepest nesting of arrays and objects NoteNesting has seen in this process; printed
// at exit in libFuzzer's final-stats form ("stat::max_nesting_depth: N"), which bench/fuzz
// puts in its table.
inline size_t& DeepestNesting() {
  static size_t deepest = 0;
  static const bool reported = [] {
    std::atexit([] { std::fprintf(stderr, "stat::max_nesting_depth: %zu\n", DeepestNesting()); });
    return true;
  }();
  (void)reported;
  return deepest;
}

// Notes how deeply `doc` nests (brackets outside strings) in DeepestNesting.
IMGTOOL_FUZZ_UNTRACED inline void NoteNesting(std::string_view doc) {
  size_t& deepest = DeepestNesting();
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (char c : doc) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

// ExpandNesting, noted: the document a JSON harness feeds its parsers.
inline std::string NestedInput(const uint8_t* data, size_t size) {
  std::string doc = ExpandNesting(Bytes(data, size));
  NoteNesting(doc);
  return doc;
}

// Seeds a harness makes with the code under test (a real manifest, a signed payload, a
// checkpoint): `IMGTOOL_FUZZ_WRITE_SEEDS=DIR fuzz_<name>` writes them into DIR and exits
// (tests/fuzz/make_corpus.sh). Call from LLVMFuzzerInitialize.
using Seeds = std::vector<std::pair<std::string, std::string>>;  // file name, bytes
inline void MaybeWriteSeeds(const std::function<Seeds()>& make) {
  const char* dir = std::getenv("IMGTOOL_FUZZ_WRITE_SEEDS");
  if (dir == nullptr || *dir == 0) return;
  for (const auto& [name, bytes] : make()) {
    std::string path = std::string(dir) + "/" + name;
    if (!WriteBytes(path, bytes)) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      std::exit(1);
    }
  }
  std::exit(0);
}

}  // namespace imgtool::fuzz

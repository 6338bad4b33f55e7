// `imgtool unpack`'s rootfs writer (bundle::UnpackLayers: archive::ExtractLayer ->
// rootfs::Applier -> bundle::DiskWriter) on hostile layers, into a fresh folder per input.
// The input is one layer, or up to four split by kNextLayer (whiteouts and opaque folders
// across layers); each is a plain tar or compressed (ExtractLayer finds gzip, zstd from
// the bytes). After each input the harness checks what no layer may do:
//   - write outside the rootfs: two sentinel folders stay empty, one beside the rootfs
//     ("../sentinel" from it) and one at a fixed absolute path (kHostSentinel, the
//     target the seeds' absolute symlinks name); the case folder holds only the two;
//   - leave on disk something the merged view (umoci's) does not have, or miss something
//     it has: an unpack that succeeds gives exactly the view's names, types and links.
// Owners are not given (chown off, as a non-root unpack): run it as any user.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "bundle/bundle.h"
#include "fuzz_util.h"
#include "oci/memory_store.h"
#include "rootfs/test_tar.h"

namespace {

using namespace imgtool;

constexpr std::string_view kNextLayer = "IMGTOOL-NEXT-LAYER";
constexpr size_t kMaxLayers = 4;
const char* const kHostSentinel = "/tmp/imgtool-fuzz-unpack-sentinel";

[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_unpack_layer: %s\n", what.c_str());
  std::abort();
}

bool EmptyFolder(const std::string& path) {
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return false;
  int names = 0;
  while (dirent* e = ::readdir(d)) names += std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..";
  ::closedir(d);
  return names == 0;
}

// path -> "type [link]" of everything below `dir` on disk, following nothing.
void ListDisk(const std::string& dir, const std::string& prefix, std::map<std::string, std::string>* out) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = prefix.empty() ? name : prefix + "/" + name;
    struct stat st {};
    if (::lstat((dir + "/" + name).c_str(), &st) != 0) Finding("lstat " + path);
    if (S_ISDIR(st.st_mode)) {
      (*out)[path] = "dir";
      ::chmod((dir + "/" + name).c_str(), 0700);  // read-only folders the image made
      ListDisk(dir + "/" + name, path, out);
    } else if (S_ISLNK(st.st_mode)) {
      char target[4097] = {};
      ssize_t n = ::readlink((dir + "/" + name).c_str(), target, sizeof target - 1);
      (*out)[path] = "symlink " + std::string(target, n < 0 ? 0 : static_cast<size_t>(n));
    } else {
      (*out)[path] = S_ISREG(st.st_mode) ? "file" : "other";
    }
  }
  ::closedir(d);
}

std::map<std::string, std::string> ListView(const rootfs::ImageFs& fs) {
  std::map<std::string, std::string> out;
  fs.Walk(rootfs::Unpacker::kMerged, [&](const rootfs::FileInfo& f) {
    if (f.path.empty()) return;
    switch (f.type) {
      case rootfs::FileType::kDir:
        out[f.path] = "dir";
        break;
      case rootfs::FileType::kSymlink:
        out[f.path] = "symlink " + f.link;
        break;
      case rootfs::FileType::kFile:
        out[f.path] = "file";
        break;
      case rootfs::FileType::kOther:
        out[f.path] = "other";
        break;
    }
  });
  return out;
}

std::string FirstDifference(const std::map<std::string, std::string>& disk,
                            const std::map<std::string, std::string>& view) {
  for (const auto& [path, what] : disk) {
    auto it = view.find(path);
    if (it == view.end()) return "on disk, not in the merged view: " + path + " (" + what + ")";
    if (it->second != what) return path + ": disk " + what + ", view " + it->second;
  }
  for (const auto& [path, what] : view) {
    if (!disk.count(path)) return "in the merged view, not on disk: " + path + " (" + what + ")";
  }
  return "";
}

std::vector<std::shared_ptr<const oci::Layer>> Layers(std::string_view input) {
  auto store = std::make_shared<oci::MemoryStore>("fuzz");
  std::vector<std::shared_ptr<const oci::Layer>> layers;
  while (layers.size() + 1 < kMaxLayers) {
    size_t at = input.find(kNextLayer);
    if (at == std::string_view::npos) break;
    layers.push_back(std::make_shared<oci::Blob>(store, store->Add(std::string(input.substr(0, at)), "")));
    input.remove_prefix(at + kNextLayer.size());
  }
  layers.push_back(std::make_shared<oci::Blob>(store, store->Add(std::string(input), "")));
  return layers;
}

// ---- seeds: what the checks above are about ----

using rootfs::testing::Dir;
using rootfs::testing::File;
using rootfs::testing::Hardlink;
using rootfs::testing::Symlink;
using rootfs::testing::Tar;
using rootfs::testing::TarEntry;
using rootfs::testing::Whiteout;

TarEntry Fifo(std::string name) { return {std::move(name), '6', "", "", 0644}; }

std::string Stack(const std::vector<std::vector<TarEntry>>& layers) {
  std::string out;
  for (const auto& l : layers) out += (out.empty() ? "" : std::string(kNextLayer)) + Tar(l);
  return out;
}

fuzz::Seeds UnpackSeeds() {
  const std::string host = kHostSentinel;
  return {
      {"dotdot.tar", Tar({File("../../escaped", "x"), File("a/../../b", "y"), Dir("./etc/../.."), File("/abs", "z")})},
      {"symlink-then-write.tar",
       Tar({Symlink("evil", host), File("evil/pwned", "x"), Symlink("rel", "../sentinel"), File("rel/pwned", "y"),
            Symlink("up", "../../../../.."), File("up" + host + "/deep", "z")})},
      {"symlink-chain.tar", Tar({Dir("d"), Symlink("d/l1", "../d/l2"), Symlink("d/l2", host), File("d/l1/x", "1")})},
      {"hardlinks.tar", Tar({File("f", "content", 0755), Hardlink("h", "f", 0700), Hardlink("up", "../../f"),
                             Symlink("s", host), Hardlink("hs", "s")})},
      {"special.tar", Tar({Fifo("run/fifo"), Dir("ro", 0555), File("ro/f", "x", 04755), Dir("ro/sub", 0)})},
      {"whiteouts.tar",
       Stack({{Dir("etc"), File("etc/a", "1"), Dir("opt"), Dir("opt/x"), File("opt/x/y", "2"), Symlink("lnk", "etc")},
              {Whiteout("etc/.wh.a"), Whiteout("opt/.wh..wh..opq"), File("opt/new", "3"), Whiteout("lnk/.wh.a"),
               File("lnk/b", "4")},
              {Whiteout(".wh.etc"), File("etc", "now a file"), Whiteout(".wh.opt"), Dir("opt", 0700)}})},
      {"replace-kinds.tar",
       Stack({{Dir("a"), File("a/x", "1"), File("b", "2"), Symlink("c", host)},
              {File("a", "dir to file"), Dir("b"), File("c", "symlink to file"), Symlink("a2", "a")}})},
      // Written, then refused at the last entry: the unpack fails, nothing escapes.
      {"refused-last.tar", Stack({{File("keep", "1"), Symlink("out", host), File("out/x", "2")},
                                  {Symlink("loop", "loop"), File("loop/x", "3")}})},
      {"refused-hardlink.tar", Tar({Symlink("out", host), File("out/y", "4"), Hardlink("missing", "nothing")})},
      {"refused-under-file.tar", Tar({File("a", "x"), Symlink("a2", "a"), File("a2/x", "under a file")})},
      {"refused-whiteout.tar", Tar({Dir("etc"), Whiteout(".wh..")})},
  };
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::MaybeWriteSeeds(UnpackSeeds);
  ::mkdir(kHostSentinel, 0755);
  if (!EmptyFolder(kHostSentinel)) Finding(std::string(kHostSentinel) + " is not an empty folder before the run");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string work = fuzz::FreshFolder("case");
  const std::string root = work + "/root", sentinel = work + "/sentinel";
  if (::mkdir(root.c_str(), 0755) != 0 || ::mkdir(sentinel.c_str(), 0755) != 0) std::abort();
  fs::UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd) std::abort();
  bundle::UnpackOptions options;
  options.limits.max_entries = 4096;  // the input is a few KiB: what a mutation reaches
  bundle::WriterStats stats;
  auto fs = bundle::UnpackLayers(Layers(fuzz::Bytes(data, size)), root_fd.get(), options, &stats);

  if (!EmptyFolder(sentinel)) Finding("a write escaped the rootfs into the folder beside it");
  if (!EmptyFolder(kHostSentinel)) Finding(std::string("a write escaped the rootfs into ") + kHostSentinel);
  std::map<std::string, std::string> beside;
  ListDisk(work, "", &beside);  // also makes every folder removable
  for (const auto& [path, what] : beside) {
    if (path != "root" && path != "sentinel" && path.rfind("root/", 0) != 0) Finding("outside the rootfs: " + path);
  }
  if (fs.ok()) {
    std::map<std::string, std::string> disk;
    for (const auto& [path, what] : beside) {
      if (path.rfind("root/", 0) == 0) disk[path.substr(5)] = what;
    }
    const std::string diff = FirstDifference(disk, ListView(*fs));
    if (!diff.empty()) Finding("the rootfs is not the merged view: " + diff);
  }
  return 0;
}

// The main of a harness built without libFuzzer (any compiler, the suite's own builds):
// runs LLVMFuzzerTestOneInput once on every file named, or under a folder named, in
// name order. So every seed and every regression input in corpus/ is replayed by the
// ordinary test suite, and under ASan + UBSan by the sanitizer suite (scripts/test
// --sanitize address,undefined), without clang; a crash there is a failed test.
// libFuzzer's own main (IMGTOOL_FUZZ=ON) replaces this one for fuzzing.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

std::vector<std::filesystem::path> InputsOf(const char* arg) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  if (fs::is_directory(arg)) {
    for (const auto& e : fs::recursive_directory_iterator(arg)) {
      if (e.is_regular_file()) out.push_back(e.path());
    }
    std::sort(out.begin(), out.end());
  } else {
    out.emplace_back(arg);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE|FOLDER...  (replays each input once)\n", argv[0]);
    return 2;
  }
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    for (const auto& path : InputsOf(argv[i])) {
      std::ifstream in(path, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "%s: cannot read\n", path.c_str());
        return 1;
      }
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      // A copy of its own, as libFuzzer passes: an overread past the input is then found.
      std::vector<uint8_t> data(bytes.begin(), bytes.end());
      LLVMFuzzerTestOneInput(data.data(), data.size());
      ++count;
    }
  }
  std::printf("replayed %zu inputs\n", count);
  return count > 0 ? 0 : 1;
}

// Driver for bench/verify_blob: one keyless verification repeated in one process, warm
// (the trusted root parsed once, as an admission webhook holds it), each iteration
// parsing the bundle and verifying it from scratch. Prints CPU p50/p99 per verification.
//   verify_bench ROOT BUNDLE ARTIFACT IDENTITY ISSUER RUNS
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sigstore/verifier.h"

namespace {

std::string Slurp(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace imgtool::sigstore;  // NOLINT(google-build-using-namespace): a driver
  if (argc != 7) {
    std::fprintf(stderr, "usage: verify_bench ROOT BUNDLE ARTIFACT IDENTITY ISSUER RUNS\n");
    return 2;
  }
  auto root = ParseTrustedRoot(Slurp(argv[1]), argv[1]);
  if (!root.ok()) return std::fprintf(stderr, "%s\n", root.error().message.c_str()), 1;
  const std::string bundle_text = Slurp(argv[2]);
  const Artifact artifact = ArtifactOf(Slurp(argv[3]));
  VerifyPolicy policy;
  policy.identity = IdentityPolicy{argv[4], {}, argv[5], {}};
  int runs = std::max(1, std::atoi(argv[6]));
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    double t0 = ThreadCpuMs();
    auto bundle = ParseBundle(bundle_text, argv[2]);
    auto v = bundle.ok() ? VerifyBundle(*bundle, *root, artifact, policy) : imgtool::Result<Verified>(bundle.error());
    ms.push_back(ThreadCpuMs() - t0);
    if (!v.ok()) return std::fprintf(stderr, "refused: %s\n", v.error().message.c_str()), 1;
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%d %.3f %.3f\n", runs, ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 99 / 100)]);
  return 0;
}

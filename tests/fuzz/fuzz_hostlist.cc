// Slurm's compressed lists (trainer/cluster/hostlist.h): SLURM_STEP_NODELIST and
// SLURM_STEP_TASKS_PER_NODE, which whoever submits a job can set to anything. Checked:
// what is accepted stays inside the caps (names, their length and characters, counts),
// under the default limits and under tight ones, so the caps are reached quickly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cluster/hostlist.h"
#include "fuzz_util.h"

namespace {

void CheckNames(std::string_view text, const trainer::HostlistLimits& limits) {
  auto names = trainer::ExpandHostlist(text, limits);
  if (!names.ok()) return;
  if (names->empty() || names->size() > limits.max_nodes) std::abort();
  for (const auto& n : *names) {
    if (n.empty() || n.size() > limits.max_name) std::abort();
    if (n.find_first_of("[],") != std::string::npos) std::abort();
  }
}

void CheckCounts(std::string_view text, int max_count, const trainer::HostlistLimits& limits) {
  auto counts = trainer::ExpandTaskCounts(text, max_count, limits);
  if (!counts.ok()) return;
  if (counts->empty() || counts->size() > limits.max_nodes) std::abort();
  for (int c : *counts) {
    if (c < 1 || c > max_count) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = imgtool::fuzz::Bytes(data, size);
  CheckNames(text, {});
  CheckCounts(text, 65536, {});
  trainer::HostlistLimits tight;
  tight.max_nodes = 64;
  tight.max_name = 12;
  tight.max_bound_digits = 3;
  tight.max_groups_per_name = 2;
  CheckNames(text, tight);
  CheckCounts(text, 8, tight);
  return 0;
}

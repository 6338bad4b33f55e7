// Golden run: a short deterministic training on this worker alone (the trainer's
// library, CPU reference backend, one process, fixed seed, shape and steps, synthetic
// inputs drawn from Philox so it needs no dataset). Same stack and healthy hardware give
// the same weights digest everywhere; a worker whose digest differs from the majority is
// a suspect (stack drift or silent data corruption).
#pragma once

#include <cstdint>
#include <string>

#include "oci/result.h"

namespace imgtool::fleet {

struct GoldenRunOptions {
  int steps = 50;
  uint64_t seed = 20261130;
  int threads = 1;
};

struct GoldenRunResult {
  std::string weights_digest;  // "sha256:<hex>" as the trainer prints it
  double seconds = 0;
};

Result<GoldenRunResult> GoldenRun(const GoldenRunOptions& options);

}  // namespace imgtool::fleet

// Finds and loads the CUDA backend plugin (cuda/backend.h) for --backend cuda. Part of
// the trainer binary, which links no CUDA library itself.
#pragma once

#include "core/result.h"
#include "cuda/backend.h"

namespace trainer::cuda {

// Looks in $TRAINER_CUDA_PLUGIN (a file), then beside the running binary, then in the
// loader's search path (LD_LIBRARY_PATH, ld.so.cache). kInvalidInput naming the file and
// dlerror() when it cannot be loaded (e.g. libcublas.so.13 missing on this machine).
Result<const Backend*> LoadBackend();

}  // namespace trainer::cuda

// The rest of one layer's digest on three threads: the caller's reads the stored bytes
// and hashes them, a second inflates them, a third hashes what comes out. Inflating is
// the slowest of the three (ISA-L ~0.9 GB/s out, SHA-256 ~1.7 GB/s here), so on two
// cores the pipeline runs at the inflater's pace instead of the sum of all three.
//
// Memory is two BufferPipes of kPipeBuffers x 256 KiB, whatever the layer's size. Errors
// come back in stream order, as the one-thread loop meets them: a decoding error in bytes
// read before a failed read wins over that read's error; a failed stage cancels both pipes,
// so no thread waits on another that stopped.
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <cstddef>
#include <optional>

#include "archive/layer_decoder.h"
#include "oci/digest.h"
#include "oci/reader.h"
#include "oci/result.h"

namespace imgtool::archive::internal {

constexpr size_t kPipeBuffers = 8;
constexpr size_t kPipeBufferBytes = 256 << 10;

// Reads `in` to its end, hashing it into `raw`, feeding `decoder` (then End) and hashing
// its output into `diff`; `decoder`'s sink is replaced. The error is the first one in
// stream order; `diff` is complete only when it is Ok. nullopt: no thread could be
// started and nothing was read (the caller goes on alone).
std::optional<Status> DigestPipelined(oci::Reader& in, oci::Sha256& raw, Decoder& decoder, oci::Sha256& diff);

}  // namespace imgtool::archive::internal

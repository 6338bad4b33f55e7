// A DEFLATE encoder (RFC 1951) whose output is a function of its input alone.
//
// Why our own: the gzip layer digest must be the same on every builder. ISA-L, the fastest
// encoder in Debian, picks its match finder at run time and hashes with the CRC32
// instruction on x86 and otherwise elsewhere, so an arm64 or pre-SSE4.2 builder writes
// other bytes; its portable path is not exported. zlib and libdeflate are portable but
// 8-20x slower on the CUDA libraries (measured: ISA-L level 1 1,030 MB/s, libdeflate
// level 1 125 MB/s, zlib level 1 50 MB/s, one core). This encoder is plain C++ with no
// CPU dispatch: the same bytes on x86-64 and arm64, at any optimisation level.
//
// What it does, per chunk: greedy LZ77 with one hash-table candidate per 4-byte hash
// (every position looked at, and every other one inside a match, enters the table; after
// 8 misses in a row it steps further, one more byte per 8 misses, as LZ4 does, so
// incompressible stretches cost little), matches of 4..258 bytes up to 32 KiB back, also into the dictionary; a
// block per 128 KiB of input, each written with dynamic Huffman codes (length-limited,
// canonical) or stored, whichever is smaller. Every choice is a deterministic function
// of the bytes; there are no tunables at run time. Changing any constant in deflate.cc
// changes layer digests: bump kDeflateVersion then.
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "archive/huffman.h"

namespace imgtool::archive::internal {

// Names the encoder's output format in build records: bump with any change to the bytes.
inline constexpr int kDeflateVersion = 1;
inline constexpr size_t kDeflateWindow = 32 << 10;

class DeflateEncoder {
 public:
  DeflateEncoder();

  // Encodes data[dict_len, size) as DEFLATE blocks into `out`, which has room for
  // Bound(size - dict_len) bytes; returns the bytes written. Matches may reach into
  // data[0, dict_len), which must be the bytes just before the chunk in the stream (at
  // most kDeflateWindow of them are used). `last`: the final block carries BFINAL and the
  // stream ends. Otherwise the output ends with an empty stored block, byte aligned
  // (zlib's Z_SYNC_FLUSH), so the next chunk's output can simply follow it.
  size_t EncodeChunk(const uint8_t* data, size_t dict_len, size_t size, bool last, uint8_t* out);

  // The most bytes EncodeChunk can write for `len` input bytes.
  static size_t Bound(size_t len);

 private:
  struct Sequence {
    uint32_t literals;  // bytes copied as literals before the match
    uint16_t length;    // match length, 0 for none (the block's trailing literals)
    uint16_t distance;
  };

  size_t FindSequences(const uint8_t* data, size_t pos, size_t block_end, size_t size);
  void WriteBlock(BitWriter& w, const uint8_t* data, size_t pos, size_t end, bool final_block);
  void InsertDictionary(const uint8_t* data, size_t dict_len);

  std::vector<uint32_t> table_;  // hash -> position + 1 (0: empty)
  std::vector<Sequence> sequences_;
  uint32_t litlen_freq_[286];
  uint32_t literal_freq_[4][256];  // counted apart, added into litlen_freq_ per block
  uint32_t dist_freq_[30];
};

}  // namespace imgtool::archive::internal

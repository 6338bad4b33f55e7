// Length-limited canonical Huffman codes and the bit writer for the DEFLATE encoder
// (deflate.h). Deterministic: ties between equal frequencies are broken by symbol.
//
// Internal to imgtool/archive: not part of layer.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace imgtool::archive::internal {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "BitWriter stores its word as is; a big-endian port must swap");

// Writes bits least significant first, as DEFLATE wants, into a buffer the caller sized
// (DeflateEncoder::Bound, which keeps 8 bytes of slack: Flush stores a whole word).
class BitWriter {
 public:
  explicit BitWriter(uint8_t* out) : out_(out) {}

  // Adds `count` <= 32 bits (`bits` < 2^count) and flushes.
  void Put(uint64_t bits, unsigned count) {
    Add(bits, count);
    Flush();
  }
  // Adds without flushing: at most 56 bits may be added between two Flush calls.
  void Add(uint64_t bits, unsigned count) {
    buf_ |= bits << fill_;
    fill_ += count;
  }
  // Stores the whole bytes held; at most 7 bits stay behind.
  void Flush() {
    std::memcpy(out_, &buf_, 8);  // little-endian host (static_assert below)
    unsigned bytes = fill_ >> 3;  // <= 7: at most 7 + 56 bits are held
    out_ += bytes;
    buf_ >>= 8 * bytes;
    fill_ &= 7;
  }
  // Pads with zero bits to a byte boundary and flushes everything held.
  void AlignToByte() {
    Flush();
    if (fill_ > 0) Add(0, 8 - fill_);
    Flush();
  }
  void PutBytes(const uint8_t* data, size_t len) {  // only when aligned
    std::memcpy(out_, data, len);
    out_ += len;
  }
  uint8_t* position() const { return out_; }

 private:
  uint8_t* out_;
  uint64_t buf_ = 0;
  unsigned fill_ = 0;
};

// One symbol's code, bit-reversed for BitWriter, and its length (0: unused).
struct HuffCode {
  uint16_t bits;
  uint8_t length;
};

// Code lengths for freq[0, n), none longer than max_length, every used symbol coded; at
// least two symbols get codes (decoders reject a one-symbol code of another length).
void BuildCodeLengths(const uint32_t* freq, int n, int max_length, uint8_t* lengths);
// Canonical codes (RFC 1951 3.2.2) for the given lengths, bit-reversed.
void BuildCanonicalCodes(const uint8_t* lengths, int n, HuffCode* codes);

// The dynamic block header: HLIT, HDIST, HCLEN, the code-length code and the run-length
// coded lengths of both codes.
class DynamicHeader {
 public:
  DynamicHeader(const uint8_t* litlen_lengths, const uint8_t* dist_lengths);
  uint64_t bits() const { return bits_; }  // its size, the 3 block-type bits excluded
  void Write(BitWriter& w) const;

 private:
  int hlit_, hdist_, hclen_;
  uint8_t rle_sym_[286 + 30];
  uint8_t rle_extra_[286 + 30];
  int rle_count_ = 0;
  uint8_t cl_lengths_[19];
  HuffCode cl_codes_[19];
  uint64_t bits_ = 0;
};

}  // namespace imgtool::archive::internal

#include "archive/deflate.h"

#include <algorithm>
#include <cstring>

#include "archive/huffman.h"

namespace imgtool::archive::internal {

// The constants below shape the output bytes (see deflate.h).
namespace {

constexpr int kHashBits = 16;
constexpr size_t kMinMatch = 4;
constexpr size_t kMaxMatch = 258;
constexpr unsigned kSkipShift = 3;         // step 1 + misses / 8
constexpr size_t kBlockInput = 128 << 10;  // input bytes per block
constexpr size_t kStoredMax = 65535;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the match finder reads words little-endian; a big-endian port must swap");

inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t Hash(uint32_t four_bytes) { return (four_bytes * 2654435761u) >> (32 - kHashBits); }

// Bytes equal at a and b, at most `limit`.
inline size_t MatchLength(const uint8_t* a, const uint8_t* b, size_t limit) {
  size_t n = 0;
  while (n + 8 <= limit) {
    uint64_t diff = Load64(a + n) ^ Load64(b + n);
    if (diff != 0) return n + (__builtin_ctzll(diff) >> 3);
    n += 8;
  }
  while (n < limit && a[n] == b[n]) ++n;
  return n;
}

// RFC 1951 3.2.5: length and distance symbols, their extra bits and bases.
constexpr uint16_t kLengthBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr uint8_t kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr uint16_t kDistBase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                    33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                    1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

struct SymbolTables {
  uint8_t length_code[kMaxMatch + 1];  // length -> index into kLengthBase
  uint8_t dist_code_small[256];        // distance - 1 < 256
  uint8_t dist_code_large[256];        // (distance - 1) >> 7, for distance > 256
  SymbolTables() {
    for (int c = 0; c < 29; ++c) {
      for (int l = kLengthBase[c]; l < kLengthBase[c] + (1 << kLengthExtra[c]) && l <= 258; ++l)
        length_code[l] = uint8_t(c);
    }
    length_code[258] = 28;  // 258 has its own code, not 227 + 31
    for (int c = 0; c < 30; ++c) {
      for (int d = kDistBase[c]; d < kDistBase[c] + (1 << kDistExtra[c]); ++d) {
        if (d <= 256)
          dist_code_small[d - 1] = uint8_t(c);
        else
          dist_code_large[(d - 1) >> 7] = uint8_t(c);
      }
    }
  }
  int DistCode(unsigned d) const { return d <= 256 ? dist_code_small[d - 1] : dist_code_large[(d - 1) >> 7]; }
};
const SymbolTables& Tables() {
  static const SymbolTables tables;
  return tables;
}

void WriteStored(BitWriter& w, const uint8_t* data, size_t len, bool final_block) {
  do {
    size_t piece = std::min(len, kStoredMax);
    bool final_piece = final_block && piece == len;
    w.Put(final_piece ? 1 : 0, 1);
    w.Put(0, 2);
    w.AlignToByte();
    uint8_t lens[4] = {uint8_t(piece), uint8_t(piece >> 8), uint8_t(~piece), uint8_t(~piece >> 8)};
    w.PutBytes(lens, 4);
    w.PutBytes(data, piece);
    data += piece;
    len -= piece;
  } while (len > 0);
}

// One block's codes, built from its symbol frequencies.
struct BlockCodes {
  uint8_t litlen_len[286];
  uint8_t dist_len[30];
  HuffCode litlen[286];
  HuffCode dist[30];
};

// A byte histogram in four tables, so that runs of one byte value do not wait on their
// own previous increment (the hot loop on poorly compressible data).
void CountBytes(const uint8_t* p, size_t n, uint32_t (&freq)[4][256]) {
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    ++freq[0][p[k]];
    ++freq[1][p[k + 1]];
    ++freq[2][p[k + 2]];
    ++freq[3][p[k + 3]];
  }
  for (; k < n; ++k) ++freq[0][p[k]];
}

// Three literals (at most 45 bits) per flush: the hot loop on poorly compressible data.
void WriteLiterals(BitWriter& w, const HuffCode* codes, const uint8_t* p, size_t n) {
  size_t k = 0;
  for (; k + 3 <= n; k += 3) {
    w.Add(codes[p[k]].bits, codes[p[k]].length);
    w.Add(codes[p[k + 1]].bits, codes[p[k + 1]].length);
    w.Add(codes[p[k + 2]].bits, codes[p[k + 2]].length);
    w.Flush();
  }
  for (; k < n; ++k) w.Put(codes[p[k]].bits, codes[p[k]].length);
}

}  // namespace

DeflateEncoder::DeflateEncoder() : table_(size_t(1) << kHashBits) {}

size_t DeflateEncoder::Bound(size_t len) {
  // Never worse than stored: 5 bytes per stored piece, the sync block, slack for headers.
  return len + 5 * (len / kStoredMax + len / kBlockInput + 2) + 64 + 8;
}

void DeflateEncoder::InsertDictionary(const uint8_t* data, size_t dict_len) {
  std::fill(table_.begin(), table_.end(), 0);
  size_t from = dict_len > kDeflateWindow ? dict_len - kDeflateWindow : 0;
  for (size_t p = from; p + kMinMatch <= dict_len; ++p) table_[Hash(Load32(data + p))] = uint32_t(p + 1);
}

// Greedy matching from `pos` until `block_end` (a match may run past it); returns where
// the block ends. Counts every symbol into the frequency tables.
size_t DeflateEncoder::FindSequences(const uint8_t* data, size_t pos, size_t block_end, size_t size) {
  const SymbolTables& t = Tables();
  size_t ip = pos, anchor = pos;
  size_t stop = std::min(block_end, size >= kMinMatch ? size - kMinMatch + 1 : 0);
  unsigned misses = 0;
  auto count_literals = [&](size_t from, size_t to) { CountBytes(data + from, to - from, literal_freq_); };
  while (ip < stop) {
    uint32_t four = Load32(data + ip);
    uint32_t& slot = table_[Hash(four)];
    size_t candidate = slot;
    slot = uint32_t(ip + 1);
    if (candidate != 0 && ip - (candidate - 1) <= kDeflateWindow && Load32(data + candidate - 1) == four) {
      size_t from = candidate - 1;
      size_t limit = std::min(kMaxMatch, size - ip);
      size_t len = kMinMatch + MatchLength(data + from + kMinMatch, data + ip + kMinMatch, limit - kMinMatch);
      size_t dist = ip - from;
      sequences_.push_back({uint32_t(ip - anchor), uint16_t(len), uint16_t(dist)});
      count_literals(anchor, ip);
      ++litlen_freq_[257 + t.length_code[len]];
      ++dist_freq_[t.DistCode(unsigned(dist))];
      // Every other position inside the match goes into the table too: cheap (matches are
      // the compressible minority) and later repeats find their start (text: 28.3% -> 26.3%).
      for (size_t q = ip + 1; q < ip + len && q + kMinMatch <= size; q += 2) {
        table_[Hash(Load32(data + q))] = uint32_t(q + 1);
      }
      ip += len;
      anchor = ip;
      misses = 0;
    } else {
      ip += 1 + (misses++ >> kSkipShift);
    }
  }
  size_t end = std::min(ip, size);
  if (end + kMinMatch > size) end = size;  // no match can start in the last 3 bytes
  sequences_.push_back({uint32_t(end - anchor), 0, 0});
  count_literals(anchor, end);
  for (int b = 0; b < 256; ++b) {
    litlen_freq_[b] += literal_freq_[0][b] + literal_freq_[1][b] + literal_freq_[2][b] + literal_freq_[3][b];
  }
  return end;
}

void DeflateEncoder::WriteBlock(BitWriter& w, const uint8_t* data, size_t pos, size_t end, bool final_block) {
  const SymbolTables& t = Tables();
  ++litlen_freq_[256];
  BlockCodes c;
  BuildCodeLengths(litlen_freq_, 286, 15, c.litlen_len);
  BuildCodeLengths(dist_freq_, 30, 15, c.dist_len);
  BuildCanonicalCodes(c.litlen_len, 286, c.litlen);
  BuildCanonicalCodes(c.dist_len, 30, c.dist);
  DynamicHeader header(c.litlen_len, c.dist_len);
  uint64_t dynamic_bits = 3 + header.bits();
  for (int s = 0; s < 286; ++s) dynamic_bits += uint64_t(litlen_freq_[s]) * c.litlen_len[s];
  for (int s = 257; s < 286; ++s) dynamic_bits += uint64_t(litlen_freq_[s]) * kLengthExtra[s - 257];
  for (int s = 0; s < 30; ++s) dynamic_bits += uint64_t(dist_freq_[s]) * (c.dist_len[s] + kDistExtra[s]);
  size_t len = end - pos;
  if ((len / kStoredMax + 1) * 48 + 8 * uint64_t(len) <= dynamic_bits) {
    WriteStored(w, data + pos, len, final_block);
    return;
  }
  w.Put(final_block ? 1 : 0, 1);
  w.Put(2, 2);
  header.Write(w);
  const uint8_t* p = data + pos;
  for (const Sequence& s : sequences_) {
    WriteLiterals(w, c.litlen, p, s.literals);
    p += s.literals;
    if (s.length == 0) continue;
    int lc = t.length_code[s.length];
    w.Put(c.litlen[257 + lc].bits, c.litlen[257 + lc].length);
    if (kLengthExtra[lc]) w.Put(s.length - kLengthBase[lc], kLengthExtra[lc]);
    int dc = t.DistCode(s.distance);
    w.Put(c.dist[dc].bits, c.dist[dc].length);
    if (kDistExtra[dc]) w.Put(s.distance - kDistBase[dc], kDistExtra[dc]);
    p += s.length;
  }
  w.Put(c.litlen[256].bits, c.litlen[256].length);
}

size_t DeflateEncoder::EncodeChunk(const uint8_t* data, size_t dict_len, size_t size, bool last, uint8_t* out) {
  BitWriter w(out);
  InsertDictionary(data, dict_len);
  bool wrote_final = false;
  for (size_t pos = dict_len; pos < size;) {
    std::fill(std::begin(litlen_freq_), std::end(litlen_freq_), 0);
    std::fill(std::begin(dist_freq_), std::end(dist_freq_), 0);
    std::memset(literal_freq_, 0, sizeof(literal_freq_));
    sequences_.clear();
    size_t end = FindSequences(data, pos, std::min(size, pos + kBlockInput), size);
    wrote_final = last && end == size;
    WriteBlock(w, data, pos, end, wrote_final);
    pos = end;
  }
  if (!wrote_final) {  // the sync marker of a middle chunk, or an empty final block
    w.Put(last ? 1 : 0, 1);
    w.Put(0, 2);
    w.AlignToByte();
    const uint8_t empty[4] = {0x00, 0x00, 0xff, 0xff};
    w.PutBytes(empty, 4);
  }
  w.AlignToByte();
  return size_t(w.position() - out);
}

}  // namespace imgtool::archive::internal

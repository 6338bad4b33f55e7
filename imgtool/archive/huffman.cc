#include "archive/huffman.h"

#include <algorithm>
#include <array>
#include <vector>

namespace imgtool::archive::internal {

namespace {

struct Leaf {
  uint32_t freq;
  uint16_t symbol;
};

// Optimal (unlimited) code lengths of leaves sorted by ascending frequency: the
// two-queue Huffman construction; on equal weights the leaf queue goes first.
std::vector<int> HuffmanDepths(const std::vector<Leaf>& leaves) {
  size_t n = leaves.size();
  std::vector<uint64_t> weight(2 * n - 1);
  std::vector<size_t> parent(2 * n - 1, 0);
  for (size_t i = 0; i < n; ++i) weight[i] = leaves[i].freq;
  size_t next_leaf = 0, next_node = n, made = n;
  auto take = [&]() {
    bool leaf = next_leaf < n && (next_node == made || weight[next_leaf] <= weight[next_node]);
    return leaf ? next_leaf++ : next_node++;
  };
  for (; made < 2 * n - 1; ++made) {
    size_t a = take(), b = take();
    weight[made] = weight[a] + weight[b];
    parent[a] = parent[b] = made;
  }
  std::vector<int> depth(2 * n - 1, 0);  // the root (last node) has depth 0
  for (size_t i = 2 * n - 1; i-- > 0;) {
    if (i != 2 * n - 2) depth[i] = depth[parent[i]] + 1;
  }
  depth.resize(n);
  return depth;
}

// Makes the length counts fit max_length with the Kraft sum exactly 1: overlong codes are
// cut to max_length, then leaves are pushed down from the deepest shorter level until
// the code is complete again.
void LimitLengthCounts(std::array<int, 64>& count, int max_length) {
  for (int len = max_length + 1; len < 64; ++len) {
    count[max_length] += count[len];
    count[len] = 0;
  }
  uint64_t kraft = 0;
  for (int len = 1; len <= max_length; ++len) kraft += uint64_t(count[len]) << (max_length - len);
  while (kraft > (uint64_t(1) << max_length)) {
    --count[max_length];
    for (int len = max_length - 1; len > 0; --len) {
      if (count[len] > 0) {
        --count[len];
        count[len + 1] += 2;
        break;
      }
    }
    --kraft;
  }
}

}  // namespace

void BuildCodeLengths(const uint32_t* freq, int n, int max_length, uint8_t* lengths) {
  std::vector<Leaf> leaves;
  for (int s = 0; s < n; ++s) {
    lengths[s] = 0;
    if (freq[s] > 0) leaves.push_back({freq[s], uint16_t(s)});
  }
  // Two codes at least: give the lowest unused symbols a code.
  for (int s = 0; leaves.size() < 2 && s < n; ++s) {
    if (freq[s] == 0) leaves.push_back({0, uint16_t(s)});
  }
  std::sort(leaves.begin(), leaves.end(),
            [](const Leaf& a, const Leaf& b) { return a.freq != b.freq ? a.freq < b.freq : a.symbol < b.symbol; });
  std::array<int, 64> count{};
  for (int d : HuffmanDepths(leaves)) ++count[std::min(d, 63)];
  LimitLengthCounts(count, max_length);
  // Longest codes to the rarest symbols, in the sorted order.
  size_t next = 0;
  for (int len = max_length; len > 0; --len) {
    for (int k = 0; k < count[len]; ++k) lengths[leaves[next++].symbol] = uint8_t(len);
  }
}

void BuildCanonicalCodes(const uint8_t* lengths, int n, HuffCode* codes) {
  uint32_t count[16] = {}, next[16] = {};
  for (int s = 0; s < n; ++s) ++count[lengths[s]];
  count[0] = 0;
  for (int len = 1; len < 16; ++len) next[len] = (next[len - 1] + count[len - 1]) << 1;
  for (int s = 0; s < n; ++s) {
    int len = lengths[s];
    uint32_t code = len ? next[len]++ : 0;
    uint32_t reversed = 0;
    for (int b = 0; b < len; ++b) reversed |= ((code >> b) & 1u) << (len - 1 - b);
    codes[s] = {uint16_t(reversed), uint8_t(len)};
  }
}

namespace {
constexpr uint8_t kCodeLengthOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
constexpr uint8_t kRleExtraBits[19] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7};
}  // namespace

DynamicHeader::DynamicHeader(const uint8_t* litlen_lengths, const uint8_t* dist_lengths) {
  hlit_ = 286;
  while (hlit_ > 257 && litlen_lengths[hlit_ - 1] == 0) --hlit_;
  hdist_ = 30;
  while (hdist_ > 1 && dist_lengths[hdist_ - 1] == 0) --hdist_;
  uint8_t all[286 + 30];
  std::copy(litlen_lengths, litlen_lengths + hlit_, all);
  std::copy(dist_lengths, dist_lengths + hdist_, all + hlit_);
  int total = hlit_ + hdist_;
  auto emit = [&](int sym, int extra) {
    rle_sym_[rle_count_] = uint8_t(sym);
    rle_extra_[rle_count_++] = uint8_t(extra);
  };
  for (int i = 0; i < total;) {
    int v = all[i], run = 1;
    while (i + run < total && all[i + run] == v) ++run;
    i += run;
    if (v == 0) {
      for (; run >= 11; run -= std::min(run, 138)) emit(18, std::min(run, 138) - 11);
      if (run >= 3) {
        emit(17, run - 3);
        run = 0;
      }
    } else {
      emit(v, 0);
      for (--run; run >= 3; run -= std::min(run, 6)) emit(16, std::min(run, 6) - 3);
    }
    for (; run > 0; --run) emit(v, 0);
  }
  uint32_t freq[19] = {};
  for (int k = 0; k < rle_count_; ++k) ++freq[rle_sym_[k]];
  BuildCodeLengths(freq, 19, 7, cl_lengths_);
  BuildCanonicalCodes(cl_lengths_, 19, cl_codes_);
  hclen_ = 19;
  while (hclen_ > 4 && cl_lengths_[kCodeLengthOrder[hclen_ - 1]] == 0) --hclen_;
  bits_ = 5 + 5 + 4 + 3 * uint64_t(hclen_);
  for (int k = 0; k < rle_count_; ++k) bits_ += cl_lengths_[rle_sym_[k]] + kRleExtraBits[rle_sym_[k]];
}

void DynamicHeader::Write(BitWriter& w) const {
  w.Put(uint64_t(hlit_ - 257), 5);
  w.Put(uint64_t(hdist_ - 1), 5);
  w.Put(uint64_t(hclen_ - 4), 4);
  for (int k = 0; k < hclen_; ++k) w.Put(cl_lengths_[kCodeLengthOrder[k]], 3);
  for (int k = 0; k < rle_count_; ++k) {
    const HuffCode& c = cl_codes_[rle_sym_[k]];
    w.Put(c.bits, c.length);
    if (kRleExtraBits[rle_sym_[k]]) w.Put(rle_extra_[k], kRleExtraBits[rle_sym_[k]]);
  }
}

}  // namespace imgtool::archive::internal

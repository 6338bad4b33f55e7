#include "cluster/hostlist.h"

#include <algorithm>
#include <cstdint>

namespace trainer {
namespace {

Error Invalid(const std::string& msg) { return MakeError(ErrorKind::kInvalidInput, msg); }

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}
bool IsDigits(std::string_view s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos; }

std::string Quote(std::string_view s) {
  constexpr size_t kShown = 64;  // a hostile list may be a megabyte
  std::string out(1, '"');       // appended, not concatenated: GCC 12's -Wrestrict misreads the concatenation
  out.append(s.substr(0, kShown));
  out.append(s.size() > kShown ? "...\"" : "\"");
  return out;
}

struct Range {
  uint64_t lo = 0, hi = 0;
  size_t width = 0;  // zero padding; 0: none
};

// One bracket group's ranges, "1-3,7"; its size added to *size, capped.
Result<std::vector<Range>> ParseGroup(std::string_view body, const HostlistLimits& limits, uint64_t* size) {
  std::vector<Range> out;
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t comma = body.find(',', pos);
    if (comma == std::string_view::npos) comma = body.size();
    std::string_view part = body.substr(pos, comma - pos);
    size_t dash = part.find('-');
    std::string_view lo = part.substr(0, dash);
    std::string_view hi = dash == std::string_view::npos ? lo : part.substr(dash + 1);
    if (!IsDigits(lo) || !IsDigits(hi)) return Invalid("range " + Quote(part) + " is not N or N-M");
    if (lo.size() > limits.max_bound_digits || hi.size() > limits.max_bound_digits) {
      return Invalid("range " + Quote(part) + " has a bound over " + std::to_string(limits.max_bound_digits) +
                     " digits");
    }
    Range r{std::stoull(std::string(lo)), std::stoull(std::string(hi)), lo.size() > 1 && lo[0] == '0' ? lo.size() : 0};
    if (r.lo > r.hi) return Invalid("range " + Quote(part) + " runs backwards");
    *size += r.hi - r.lo + 1;  // at most 10^9 per range, so no overflow before the check
    if (*size > limits.max_nodes) {
      return Invalid("range " + Quote(part) + " takes the list past " + std::to_string(limits.max_nodes) + " names");
    }
    out.push_back(r);
    pos = comma + 1;
  }
  return out;
}

// One name with its groups: literal pieces between them (pieces.size() == groups.size() + 1).
struct Pattern {
  std::vector<std::string> pieces;
  std::vector<std::vector<Range>> groups;
  uint64_t count = 1;
};

Result<Pattern> ParsePattern(std::string_view item, const HostlistLimits& limits) {
  Pattern p;
  p.pieces.emplace_back();
  size_t longest = 0;  // the longest name this pattern can make
  for (size_t i = 0; i < item.size(); ++i) {
    char c = item[i];
    if (c == '[') {
      size_t close = item.find(']', i);
      if (close == std::string_view::npos) return Invalid("name " + Quote(item) + " has an unclosed '['");
      if (p.groups.size() == limits.max_groups_per_name) {
        return Invalid("name " + Quote(item) + " has more than " + std::to_string(limits.max_groups_per_name) +
                       " bracket groups");
      }
      uint64_t size = 0;
      auto group = ParseGroup(item.substr(i + 1, close - i - 1), limits, &size);
      if (!group.ok()) return group.error().Context("name " + Quote(item));
      p.count *= size;  // both factors <= max_nodes, so the product fits in 64 bits
      if (p.count > limits.max_nodes) {
        return Invalid("name " + Quote(item) + " expands past " + std::to_string(limits.max_nodes) + " names");
      }
      size_t digits = 0;
      for (const auto& r : *group) digits = std::max({digits, r.width, std::to_string(r.hi).size()});
      longest += digits;
      p.groups.push_back(std::move(*group));
      p.pieces.emplace_back();
      i = close;
    } else if (IsNameChar(c)) {
      p.pieces.back() += c;
      ++longest;
    } else {
      return Invalid("name " + Quote(item) + " holds '" + std::string(1, c) +
                     "' (a node name has letters, digits, '-', '_', '.')");
    }
    if (longest > limits.max_name) {
      return Invalid("name " + Quote(item) + " is longer than " + std::to_string(limits.max_name) + " characters");
    }
  }
  return p;
}

std::string Padded(uint64_t v, size_t width) {
  std::string s = std::to_string(v);
  return s.size() < width ? std::string(width - s.size(), '0') + s : s;
}

// Every name of a pattern, the last group varying fastest: an odometer, no recursion.
void Expand(const Pattern& p, std::vector<std::string>* out) {
  const size_t n = p.groups.size();
  std::vector<size_t> range(n, 0);
  std::vector<uint64_t> value(n);
  for (size_t g = 0; g < n; ++g) value[g] = p.groups[g][0].lo;
  while (true) {
    std::string name = p.pieces[0];
    for (size_t g = 0; g < n; ++g) name += Padded(value[g], p.groups[g][range[g]].width) + p.pieces[g + 1];
    out->push_back(std::move(name));
    size_t g = n;
    while (g > 0) {
      --g;
      const Range& r = p.groups[g][range[g]];
      if (value[g] < r.hi) {
        ++value[g];
        break;
      }
      if (range[g] + 1 < p.groups[g].size()) {
        value[g] = p.groups[g][++range[g]].lo;
        break;
      }
      range[g] = 0;
      value[g] = p.groups[g][0].lo;
      if (g == 0) return;
    }
    if (n == 0) return;
  }
}

// The top-level items of a list: commas inside brackets belong to the group.
Result<std::vector<std::string_view>> SplitItems(std::string_view list) {
  std::vector<std::string_view> items;
  size_t start = 0;
  bool open = false;
  for (size_t i = 0; i <= list.size(); ++i) {
    char c = i < list.size() ? list[i] : ',';
    if (c == '[') {
      if (open) return Invalid("nested '[' in " + Quote(list.substr(start)));
      open = true;
    } else if (c == ']') {
      if (!open) return Invalid("']' without '[' in " + Quote(list.substr(start)));
      open = false;
    } else if (c == ',' && !open) {
      if (i == start) return Invalid("an empty name in the list " + Quote(list));
      items.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  if (open) return Invalid("an unclosed '[' in " + Quote(list.substr(start)));
  return items;
}

}  // namespace

Result<std::vector<std::string>> ExpandHostlist(std::string_view list, const HostlistLimits& limits) {
  if (list.size() > limits.max_input) {
    return Invalid("a hostlist of " + std::to_string(list.size()) + " bytes (the limit is " +
                   std::to_string(limits.max_input) + ")");
  }
  if (list.empty()) return Invalid("an empty hostlist");
  auto items = SplitItems(list);
  if (!items.ok()) return items.error();
  // Every pattern is parsed and counted before a single name is made.
  std::vector<Pattern> patterns;
  uint64_t total = 0;
  for (std::string_view item : *items) {
    auto p = ParsePattern(item, limits);
    if (!p.ok()) return p.error();
    total += p->count;
    if (total > limits.max_nodes) {
      return Invalid("the hostlist expands past " + std::to_string(limits.max_nodes) + " names (at " + Quote(item) +
                     ")");
    }
    patterns.push_back(std::move(*p));
  }
  std::vector<std::string> out;
  out.reserve(total);
  for (const auto& p : patterns) Expand(p, &out);
  return out;
}

Result<std::vector<int>> ExpandTaskCounts(std::string_view list, int max_count, const HostlistLimits& limits) {
  if (list.empty()) return Invalid("an empty task count list");
  if (list.size() > limits.max_input) {
    return Invalid("a task count list of " + std::to_string(list.size()) + " bytes (the limit is " +
                   std::to_string(limits.max_input) + ")");
  }
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view part = list.substr(pos, comma - pos);
    std::string_view count = part, times = "1";
    if (size_t paren = part.find("(x"); paren != std::string_view::npos && part.back() == ')') {
      count = part.substr(0, paren);
      times = part.substr(paren + 2, part.size() - paren - 3);
    }
    if (!IsDigits(count) || !IsDigits(times) || count.size() > 9 || times.size() > 9) {
      return Invalid("task count " + Quote(part) + " is not N or N(xM)");
    }
    const uint64_t c = std::stoull(std::string(count)), m = std::stoull(std::string(times));
    if (c < 1 || c > static_cast<uint64_t>(max_count)) {
      return Invalid("task count " + Quote(part) + " is outside 1.." + std::to_string(max_count));
    }
    if (m < 1 || out.size() + m > limits.max_nodes) {
      return Invalid("task count " + Quote(part) + " takes the list outside 1.." + std::to_string(limits.max_nodes) +
                     " nodes");
    }
    out.insert(out.end(), m, static_cast<int>(c));
    pos = comma + 1;
  }
  return out;
}

}  // namespace trainer

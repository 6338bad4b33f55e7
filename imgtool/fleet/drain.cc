#include "fleet/drain.h"

#include <algorithm>
#include <map>
#include <set>

namespace imgtool::fleet {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

size_t RanksIn(const FieldDiff& d) {
  size_t n = 0;
  for (const auto& g : d.groups) n += g.ranks.size();
  return n;
}

std::string GroupSizes(const FieldDiff& d) {
  std::string out;
  for (size_t i = 0; i < d.groups.size(); ++i) {
    out += (i == 0 ? "" : (i + 1 == d.groups.size() ? " and " : ", ")) + std::to_string(d.groups[i].ranks.size());
  }
  return out;
}

// The ranks of `d` that are odd, or the reason no one can be called odd.
struct OddRanks {
  std::vector<int> ranks;
  std::string refused;
};

OddRanks OddRanksOf(const FieldDiff& d) {
  OddRanks out;
  if (d.expected) {
    for (const auto& g : d.groups) {
      if (!ExpectedValueMatches(d.field, *d.expected, g.value)) {
        out.ranks.insert(out.ranks.end(), g.ranks.begin(), g.ranks.end());
      }
    }
    return out;
  }
  if (d.groups.empty()) return out;
  if (2 * d.groups[0].ranks.size() <= RanksIn(d)) {
    out.refused = "no majority for " + d.field + (d.platform.empty() ? "" : " on " + d.platform) + " (" +
                  GroupSizes(d) + " workers)";
    return out;
  }
  for (size_t i = 1; i < d.groups.size(); ++i) {
    out.ranks.insert(out.ranks.end(), d.groups[i].ranks.begin(), d.groups[i].ranks.end());
  }
  return out;
}

// "imgtool: a, b differ", cut to kMaxReasonBytes; unsafe field names counted, not shown.
std::string Reason(const std::set<std::string>& fields) {
  std::string list;
  size_t shown = 0;
  for (const auto& f : fields) {
    if (!IsSafeNodeName(f)) continue;
    std::string next = (list.empty() ? "" : ", ") + f;
    if (std::string("imgtool: ").size() + list.size() + next.size() + 20 > kMaxReasonBytes) break;
    list += next;
    ++shown;
  }
  const size_t more = fields.size() - shown;
  if (shown == 0) return "imgtool: " + std::to_string(fields.size()) + " fields differ";
  if (more > 0) list += " and " + std::to_string(more) + " more";
  return "imgtool: " + list + (fields.size() == 1 ? " differs" : " differ");
}

}  // namespace

bool IsSafeNodeName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '-') return false;
  return std::all_of(name.begin(), name.end(), IsNameChar);
}

DrainPlan PlanDrain(const Verdict& verdict, const std::vector<std::string>& node_of_rank) {
  DrainPlan plan;
  if (verdict.diffs.empty() && !verdict.missing.empty()) {
    plan.refused = "no arrived worker differs, and a missing worker is not drained (it may be slow or unreachable)";
    return plan;
  }
  std::map<int, std::set<std::string>> odd;  // rank -> fields
  for (const auto& d : verdict.diffs) {
    OddRanks o = OddRanksOf(d);
    if (!o.refused.empty()) {
      plan.refused = o.refused;
      return plan;
    }
    for (int r : o.ranks) odd[r].insert(d.field);
  }
  std::map<std::string, std::pair<std::set<std::string>, std::vector<int>>> by_node;
  for (const auto& [rank, fields] : odd) {
    const std::string node =
        rank >= 0 && static_cast<size_t>(rank) < node_of_rank.size() ? node_of_rank[static_cast<size_t>(rank)] : "";
    if (node.empty()) {
      plan.refused = "rank " + std::to_string(rank) + " differs but its node is unknown";
      return plan;
    }
    if (!IsSafeNodeName(node)) {
      plan.refused = "rank " + std::to_string(rank) + "'s node name is not one scontrol may be given safely";
      return plan;
    }
    auto& entry = by_node[node];
    entry.first.insert(fields.begin(), fields.end());
    entry.second.push_back(rank);
  }
  for (auto& [node, entry] : by_node) plan.drain.push_back({node, Reason(entry.first), entry.second});
  return plan;
}

std::string RenderDrainPlan(const DrainPlan& plan) {
  if (!plan.refused.empty()) return "not draining: " + plan.refused + "\n";
  std::string out;
  for (const auto& d : plan.drain) {
    std::string ranks;
    for (int r : d.ranks) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    out += "drain " + d.node + ": " + d.reason + " (rank " + ranks + ")\n";
  }
  return out;
}

oci::Json DrainPlanJson(const DrainPlan& plan) {
  oci::Json nodes = oci::Json::array();
  for (const auto& d : plan.drain) nodes.push_back({{"node", d.node}, {"reason", d.reason}, {"ranks", d.ranks}});
  oci::Json j = {{"nodes", nodes}};
  if (!plan.refused.empty()) j["refused"] = plan.refused;
  return j;
}

}  // namespace imgtool::fleet

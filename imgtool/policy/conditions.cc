#include "policy/conditions.h"

#include <algorithm>
#include <utility>

#include "policy/debian_version.h"

namespace imgtool::policy {

namespace {

using oci::Json;
using State = ConditionOutcome::State;

const std::vector<std::pair<std::string, ConditionOp>>& Operators() {
  static const std::vector<std::pair<std::string, ConditionOp>> ops = {
      {"equals", ConditionOp::kEquals},
      {"matches", ConditionOp::kMatches},
      {"oneOf", ConditionOp::kOneOf},
      {"present", ConditionOp::kPresent},
      {"absent", ConditionOp::kAbsent},
      {"every", ConditionOp::kEvery},
      {"any", ConditionOp::kAny},
      {"none", ConditionOp::kNone},
      {"versionBelow", ConditionOp::kVersionBelow},
      {"versionAtLeast", ConditionOp::kVersionAtLeast}};
  return ops;
}

Error Bad(const std::string& where, const std::string& why) {
  return MakeError(ErrorKind::kInvalidInput, where + ": " + why);
}

std::string Known() {
  std::string s = "pointer";
  for (const auto& [name, op] : Operators()) s += ", " + name;
  return s;
}

// RFC 6901: "" is the whole predicate; otherwise "/"-separated tokens, ~1 for '/', ~0 for '~'.
Result<std::vector<std::string>> ParsePointer(const std::string& p, const std::string& where) {
  std::vector<std::string> tokens;
  if (p.empty()) return tokens;
  if (p[0] != '/') return Bad(where, "a JSON pointer starts with '/' (or is \"\" for the whole predicate)");
  std::string cur;
  for (size_t i = 1; i <= p.size(); ++i) {
    if (i == p.size() || p[i] == '/') {
      if (tokens.size() == kMaxPointerTokens)
        return Bad(where, "more than " + std::to_string(kMaxPointerTokens) + " tokens");
      tokens.push_back(std::move(cur));
      cur.clear();
    } else if (p[i] == '~') {
      if (i + 1 == p.size() || (p[i + 1] != '0' && p[i + 1] != '1')) return Bad(where, "'~' not followed by 0 or 1");
      cur += p[++i] == '0' ? '~' : '/';
    } else {
      cur += p[i];
    }
  }
  return tokens;
}

std::string EncodePointer(const std::vector<std::string>& tokens, size_t from, size_t to) {
  std::string s;
  for (size_t i = from; i < to; ++i) {
    s += '/';
    for (char c : tokens[i]) s += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  }
  return s;
}

Result<std::vector<Condition>> ParseList(const Json& j, const std::string& where, int depth);

Status ParseOperand(Condition& c, const Json& v, const std::string& at, int depth) {
  switch (c.op) {
    case ConditionOp::kEquals:
      c.value = v;
      return Status::Ok();
    case ConditionOp::kMatches: {
      if (!v.is_string() || v.get<std::string>().empty()) return Bad(at, "want a non-empty regexp (Go/RE2 syntax)");
      auto re = regexp::GoRegexp::Compile(v.get<std::string>());
      if (!re.ok()) return Bad(at, re.error().message);
      c.regexp = std::move(*re);
      return Status::Ok();
    }
    case ConditionOp::kOneOf:
      if (!v.is_array() || v.empty()) return Bad(at, "want a non-empty array of values");
      c.value = v;
      return Status::Ok();
    case ConditionOp::kPresent:
    case ConditionOp::kAbsent:
      if (!v.is_boolean() || !v.get<bool>()) return Bad(at, "want true");
      return Status::Ok();
    case ConditionOp::kVersionBelow:
    case ConditionOp::kVersionAtLeast: {
      if (!v.is_string()) return Bad(at, "want a Debian version string");
      if (auto st = CheckDebianVersion(v.get<std::string>()); !st.ok()) return Bad(at, st.error().message);
      c.version = v.get<std::string>();
      return Status::Ok();
    }
    case ConditionOp::kEvery:
    case ConditionOp::kAny:
    case ConditionOp::kNone: {
      if (depth + 1 > kMaxConditionDepth) {
        return Bad(at, "every/any/none nested deeper than " + std::to_string(kMaxConditionDepth) + " levels");
      }
      auto nested = ParseList(v, at, depth + 1);
      if (!nested.ok()) return nested.error();
      c.nested = std::move(*nested);
      return Status::Ok();
    }
  }
  return Bad(at, "unknown operator");
}

// A '*' token is `every` over the array before it: "/a/*/b" op X is "/a" every [{"/b" op X}].
Condition Unstar(Condition c) {
  auto star = std::find(c.tokens.begin(), c.tokens.end(), "*");
  if (star == c.tokens.end()) return c;
  size_t at = static_cast<size_t>(star - c.tokens.begin());
  Condition inner = c;
  inner.tokens.assign(c.tokens.begin() + static_cast<std::ptrdiff_t>(at) + 1, c.tokens.end());
  inner.pointer = EncodePointer(inner.tokens, 0, inner.tokens.size());
  Condition outer;
  outer.tokens.assign(c.tokens.begin(), c.tokens.begin() + static_cast<std::ptrdiff_t>(at));
  outer.pointer = EncodePointer(outer.tokens, 0, outer.tokens.size());
  outer.op = ConditionOp::kEvery;
  outer.nested.push_back(Unstar(std::move(inner)));
  return outer;
}

Result<Condition> ParseOne(const Json& j, const std::string& where, int depth) {
  if (!j.is_object()) return Bad(where, "want an object {\"pointer\": ..., OPERATOR: ...}");
  Condition c;
  std::string op_name;
  for (const auto& [k, v] : j.items()) {
    if (k == "pointer") continue;
    const std::string& key = k;  // a structured binding cannot be captured (clang 14)
    auto it = std::find_if(Operators().begin(), Operators().end(), [&](const auto& o) { return o.first == key; });
    if (it == Operators().end()) return Bad(where + "." + k, "unknown field or operator (known: " + Known() + ")");
    if (!op_name.empty()) return Bad(where, "two operators (" + op_name + ", " + k + "): want exactly one");
    op_name = k;
    c.op = it->second;
  }
  if (op_name.empty()) return Bad(where, "no operator (want one of: " + Known().substr(9) + ")");
  if (!j.contains("pointer") || !j["pointer"].is_string())
    return Bad(where + ".pointer", "required: a JSON pointer string");
  c.pointer = j["pointer"].get<std::string>();
  auto tokens = ParsePointer(c.pointer, where + ".pointer");
  if (!tokens.ok()) return tokens.error();
  c.tokens = std::move(*tokens);
  int stars = static_cast<int>(std::count(c.tokens.begin(), c.tokens.end(), "*"));
  if (depth + stars > kMaxConditionDepth) {
    return Bad(where + ".pointer",
               "every/any/none ('*' included) nested deeper than " + std::to_string(kMaxConditionDepth) + " levels");
  }
  IMGTOOL_TRY(ParseOperand(c, j[op_name], where + "." + op_name, depth + stars));
  return Unstar(std::move(c));
}

Result<std::vector<Condition>> ParseList(const Json& j, const std::string& where, int depth) {
  if (!j.is_array() || j.empty()) return Bad(where, "want a non-empty array of conditions");
  std::vector<Condition> out;
  for (size_t i = 0; i < j.size(); ++i) {
    auto c = ParseOne(j[i], where + "[" + std::to_string(i) + "]", depth);
    if (!c.ok()) return c.error();
    out.push_back(std::move(*c));
  }
  return out;
}

// ---- evaluation ----

// A value as a reason quotes it: scalars as JSON, at most 64 characters of a string (with
// its length), containers by size only (the predicate is the signer's text, and a reason
// is read by a person).
std::string Shown(const Json& v) {
  if (v.is_object()) return "an object (" + std::to_string(v.size()) + " members)";
  if (v.is_array()) return "an array (" + std::to_string(v.size()) + " elements)";
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.size() <= 64) return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
    return Json(s.substr(0, 64)).dump(-1, ' ', false, Json::error_handler_t::replace) + "... (" +
           std::to_string(s.size()) + " characters)";
  }
  return v.dump();
}

std::string ShownPath(const std::string& path) { return path.empty() ? "the predicate" : path; }

// The array index token RFC 6901 allows: "0" or digits without a leading zero.
bool ArrayIndex(const std::string& t, size_t size, size_t* out) {
  if (t.empty() || t.size() > 9 || (t.size() > 1 && t[0] == '0')) return false;
  size_t n = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  *out = n;
  return n < size;
}

const Json* Resolve(const Json& node, const std::vector<std::string>& tokens) {
  const Json* at = &node;
  for (const auto& t : tokens) {
    if (at->is_object()) {
      auto it = at->find(t);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array()) {
      size_t i = 0;
      if (!ArrayIndex(t, at->size(), &i)) return nullptr;
      at = &(*at)[i];
    } else {
      return nullptr;
    }
  }
  return at;
}

ConditionOutcome Holds(std::string why) { return {State::kHolds, std::move(why)}; }
ConditionOutcome Fails(std::string why) { return {State::kFails, std::move(why)}; }
ConditionOutcome Unevaluable(std::string why) { return {State::kUnevaluable, std::move(why)}; }

ConditionOutcome OverSteps() {
  return Unevaluable("more than " + std::to_string(kMaxConditionSteps) +
                     " condition evaluations (the cap on one attestation)");
}

ConditionOutcome All(const std::vector<Condition>& cs, const Json& node, const std::string& base, size_t& steps);

ConditionOutcome Version(const Condition& c, const Json* t, const std::string& path) {
  const bool below = c.op == ConditionOp::kVersionBelow;
  const std::string name = OperatorName(c.op);
  if (t == nullptr) return Unevaluable(path + " is missing (" + name + " needs a version)");
  if (!t->is_string()) return Unevaluable(path + " is " + Shown(*t) + ", not a version string");
  const std::string& v = t->get_ref<const std::string&>();
  if (auto st = CheckDebianVersion(v); !st.ok()) return Unevaluable(path + " " + Shown(*t) + ": " + st.error().message);
  int cmp = CompareDebianVersions(v, c.version);
  bool holds = below ? cmp < 0 : cmp >= 0;
  std::string relation = below ? (holds ? "is below " : "is not below ") : (holds ? "is at least " : "is below ");
  return {holds ? State::kHolds : State::kFails, path + " " + Shown(*t) + " " + relation + Json(c.version).dump()};
}

// every / any / none over the array at `t`, each element judged by all of c.nested.
ConditionOutcome Quantified(const Condition& c, const Json* t, const std::string& path, size_t& steps) {
  const std::string name = OperatorName(c.op);
  if (t == nullptr) return Unevaluable(ShownPath(path) + " is missing (" + name + " needs an array)");
  if (!t->is_array())
    return Unevaluable(ShownPath(path) + " is " + Shown(*t) + ", not an array (" + name + " needs one)");
  if (t->size() > kMaxConditionArray) {
    return Unevaluable(ShownPath(path) + " has " + std::to_string(t->size()) + " elements; " + name +
                       " walks at most " + std::to_string(kMaxConditionArray));
  }
  std::optional<ConditionOutcome> unevaluable;
  for (size_t i = 0; i < t->size(); ++i) {
    ConditionOutcome r = All(c.nested, (*t)[i], path + "/" + std::to_string(i), steps);
    if (steps > kMaxConditionSteps) return OverSteps();
    if (r.state == State::kUnevaluable) {
      if (!unevaluable) unevaluable = r;
      continue;
    }
    if (c.op == ConditionOp::kEvery && !r.holds()) return r;
    if (c.op == ConditionOp::kAny && r.holds()) return r;
    if (c.op == ConditionOp::kNone && r.holds())
      return Fails(r.why + " (no element of " + ShownPath(path) + " may match)");
  }
  if (unevaluable) return *unevaluable;
  const std::string n = std::to_string(t->size());
  switch (c.op) {
    case ConditionOp::kEvery:
      return Holds(t->empty() ? ShownPath(path) + " is empty (every holds)"
                              : "all " + n + " elements of " + ShownPath(path) + " hold");
    case ConditionOp::kAny:
      return Fails(t->empty() ? ShownPath(path) + " is empty (any needs one element that holds)"
                              : "none of the " + n + " elements of " + ShownPath(path) + " holds");
    default:
      return Holds("no element of " + ShownPath(path) + " (" + n + ") matches");
  }
}

ConditionOutcome One(const Condition& c, const Json& node, const std::string& base, size_t& steps) {
  if (++steps > kMaxConditionSteps) return OverSteps();
  const std::string path = base + EncodePointer(c.tokens, 0, c.tokens.size());
  const std::string shown = ShownPath(path);
  const Json* t = Resolve(node, c.tokens);
  switch (c.op) {
    case ConditionOp::kPresent:
      return t ? Holds(shown + " is present") : Fails(shown + " is absent, wants it present");
    case ConditionOp::kAbsent:
      return t ? Fails(shown + " is " + Shown(*t) + ", wants it absent") : Holds(shown + " is absent");
    case ConditionOp::kEquals:
      if (!t) return Unevaluable(shown + " is missing (wants " + Shown(c.value) + ")");
      if (*t == c.value) return Holds(shown + " is " + Shown(*t));
      return Fails(shown + " is " + Shown(*t) + ", wants " + Shown(c.value));
    case ConditionOp::kOneOf:
      if (!t) return Unevaluable(shown + " is missing (wants one of " + std::to_string(c.value.size()) + " values)");
      for (const auto& v : c.value) {
        if (*t == v) return Holds(shown + " is " + Shown(*t));
      }
      return Fails(shown + " is " + Shown(*t) + ", not one of the " + std::to_string(c.value.size()) +
                   " allowed values");
    case ConditionOp::kMatches:
      if (!t) return Unevaluable(shown + " is missing (wants a match of " + Json(c.regexp->pattern()).dump() + ")");
      if (!t->is_string()) return Unevaluable(shown + " is " + Shown(*t) + ", not a string (matches needs one)");
      if (c.regexp->Search(t->get_ref<const std::string&>()))
        return Holds(shown + " " + Shown(*t) + " matches " + Json(c.regexp->pattern()).dump());
      return Fails(shown + " is " + Shown(*t) + ", does not match " + Json(c.regexp->pattern()).dump());
    case ConditionOp::kVersionBelow:
    case ConditionOp::kVersionAtLeast:
      return Version(c, t, shown);
    case ConditionOp::kEvery:
    case ConditionOp::kAny:
    case ConditionOp::kNone:
      return Quantified(c, t, path, steps);
  }
  return Unevaluable(shown + ": unknown operator");
}

// A conjunction: a condition that fails decides it (whatever else cannot be evaluated),
// then one that cannot be evaluated; it holds only when every one holds.
ConditionOutcome All(const std::vector<Condition>& cs, const Json& node, const std::string& base, size_t& steps) {
  std::optional<ConditionOutcome> unevaluable;
  std::string held;
  for (const auto& c : cs) {
    ConditionOutcome r = One(c, node, base, steps);
    if (steps > kMaxConditionSteps) return OverSteps();
    if (r.state == State::kFails) return r;
    if (r.state == State::kUnevaluable) {
      if (!unevaluable) unevaluable = std::move(r);
      continue;
    }
    held += (held.empty() ? "" : " and ") + r.why;
  }
  if (unevaluable) return *unevaluable;
  return Holds(held);
}

}  // namespace

std::string OperatorName(ConditionOp op) {
  for (const auto& [name, o] : Operators()) {
    if (o == op) return name;
  }
  return "?";
}

Result<std::vector<Condition>> ParseConditions(const Json& j, const std::string& where) {
  return ParseList(j, where, 0);
}

ConditionOutcome EvaluateConditions(const std::vector<Condition>& conditions, const Json& predicate, size_t& steps) {
  return All(conditions, predicate, "", steps);
}

}  // namespace imgtool::policy

#include "oci/canonical_json.h"

#include <set>
#include <vector>

namespace imgtool::oci {

namespace {

// Floats have no single text form; our documents never need them.
bool HasFloat(const Json& v) {
  if (v.is_number_float()) return true;
  if (v.is_structured()) {
    for (const auto& child : v) {
      if (HasFloat(child)) return true;
    }
  }
  return false;
}

// Thrown from the parse callback when an array or object opens past kMaxJsonDepth: the
// only way to end an nlohmann parse from its callback. The partial tree is then freed by
// nlohmann's destructor, which does not recurse.
struct NestedTooDeep {};

// nlohmann's parser with the depth cap and, when asked, the duplicate-key check in its
// callback; the first duplicate key goes to `duplicate`. Throws NestedTooDeep and
// Json::exception.
Json ParseCapped(std::string_view bytes, bool refuse_duplicates, std::string& duplicate) {
  // Keys per open object (the default parser silently keeps the last).
  std::vector<std::set<std::string>> open_objects;
  auto callback = [&](int depth, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        // `depth` counts the arrays and objects already open around this one.
        if (depth >= kMaxJsonDepth) throw NestedTooDeep{};
        if (refuse_duplicates && event == Json::parse_event_t::object_start) open_objects.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        if (refuse_duplicates) open_objects.pop_back();
        break;
      case Json::parse_event_t::key:
        if (refuse_duplicates && !open_objects.back().insert(parsed.get<std::string>()).second && duplicate.empty()) {
          duplicate = parsed.get<std::string>();
        }
        break;
      default:
        break;
    }
    return true;
  };
  return Json::parse(bytes.begin(), bytes.end(), callback);
}

Error TooDeep(const std::string& what) {
  return MakeError(ErrorKind::kInvalidInput,
                   what + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
}

}  // namespace

Result<std::string> CanonicalJson(const Json& value) {
  if (HasFloat(value)) {
    return MakeError(ErrorKind::kInvalidInput, "canonical JSON: floating-point numbers are not allowed");
  }
  try {
    // nlohmann's default object type is a std::map: keys come out sorted by bytes.
    return value.dump(-1, ' ', false, Json::error_handler_t::strict);
  } catch (const Json::exception& e) {
    return MakeError(ErrorKind::kInvalidInput, std::string("canonical JSON: ") + e.what());
  }
}

std::string StringMember(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<Json> ParseJson(std::string_view bytes, const std::string& what) {
  std::string duplicate;
  try {
    Json j = ParseCapped(bytes, /*refuse_duplicates=*/true, duplicate);
    if (!duplicate.empty()) {
      return MakeError(ErrorKind::kInvalidInput, what + ": duplicate key \"" + duplicate + "\"");
    }
    return j;
  } catch (const NestedTooDeep&) {
    return TooDeep(what);
  } catch (const Json::parse_error& e) {
    return MakeError(ErrorKind::kInvalidInput, what + ": malformed JSON at byte " + std::to_string(e.byte) + ": " +
                                                   std::string(e.what()).substr(std::string(e.what()).find(':') + 2));
  } catch (const Json::exception& e) {
    // Well-formed text nlohmann still refuses, with another exception type: a number
    // beyond a double ("1e400" is out_of_range 406, "number overflow parsing ...").
    std::string why = e.what();
    return MakeError(ErrorKind::kInvalidInput, what + ": malformed JSON: " + why.substr(why.find(']') + 2));
  }
}

Result<Json> ParseJsonLenient(std::string_view bytes, const std::string& what) {
  std::string unused;
  try {
    return ParseCapped(bytes, /*refuse_duplicates=*/false, unused);
  } catch (const NestedTooDeep&) {
    return TooDeep(what);
  } catch (const Json::exception&) {
    return Json(Json::value_t::discarded);
  }
}

Json ParseJsonOrDiscarded(std::string_view bytes) {
  auto j = ParseJsonLenient(bytes, "");
  return j.ok() ? std::move(*j) : Json(Json::value_t::discarded);
}

}  // namespace imgtool::oci

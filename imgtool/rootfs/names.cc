#include "rootfs/names.h"

#include "oci/quote.h"

namespace imgtool::rootfs::internal {

namespace {

// Calls fn(part) for each '/'-separated part, empty ones and "." skipped.
template <typename Fn>
void ForEachPart(std::string_view s, Fn&& fn) {
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('/', start);
    if (end == std::string_view::npos) end = s.size();
    std::string_view part = s.substr(start, end - start);
    if (!part.empty() && part != ".") fn(part);
    start = end + 1;
  }
}

}  // namespace

Components CleanName(std::string_view name) {
  Components out;
  ForEachPart(name, [&](std::string_view part) {
    if (part != "..") {
      out.emplace_back(part);
    } else if (!out.empty()) {
      out.pop_back();
    }
  });
  return out;
}

Result<Components> LinkComponents(std::string_view target) {
  Components out;
  bool named = false;
  bool ambiguous = false;
  ForEachPart(target, [&](std::string_view part) {
    if (part == "..") ambiguous = ambiguous || named;
    named = named || part != "..";
    out.emplace_back(part);
  });
  if (ambiguous) {
    return MakeError(ErrorKind::kInvalidInput, "\"" + std::string(target) +
                                                   "\" has a \"..\" after a name, which unpackers and the kernel "
                                                   "resolve differently");
  }
  return out;
}

std::string Join(const Components& c) {
  std::string out;
  for (const auto& part : c) out += (out.empty() ? "" : "/") + part;
  return out;
}

std::string TooLongComponent(const Components& c) {
  for (const auto& part : c) {
    if (part.size() > kMaxComponent) return part;
  }
  return "";
}

std::string QuoteName(const std::string& name) {
  constexpr size_t kShown = 200;
  if (name.size() <= kShown) return oci::Quoted(name);
  std::string q = oci::Quoted(name.substr(0, kShown));
  return q.insert(q.size() - 1, "...");
}

}  // namespace imgtool::rootfs::internal

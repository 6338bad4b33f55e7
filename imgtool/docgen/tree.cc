#include "docgen/tree.h"

namespace imgtool::docgen {

namespace {

// CLI11 hides an option or subcommand by giving it the empty group.
bool Visible(const CLI::Option* o) { return !o->get_group().empty(); }

void CollectVerbs(CLI::App& app, const std::vector<std::string>& words, std::vector<Verb>& out) {
  auto subs = Subcommands(app);
  if (subs.empty() && !words.empty()) out.push_back({&app, words});
  for (CLI::App* sub : subs) {
    auto more = words;
    more.push_back(sub->get_name());
    CollectVerbs(*sub, more, out);
  }
}

}  // namespace

std::vector<CLI::App*> Subcommands(CLI::App& app) {
  return app.get_subcommands([](CLI::App* s) { return !s->get_name().empty() && !s->get_group().empty(); });
}

std::vector<Verb> Verbs(CLI::App& root) {
  std::vector<Verb> out;
  CollectVerbs(root, {}, out);
  return out;
}

std::vector<const CLI::Option*> Options(const CLI::App& app, bool positional) {
  auto keep = [positional](const CLI::Option* o) { return Visible(o) && o->get_positional() == positional; };
  std::vector<const CLI::Option*> out = app.get_options(keep);
  auto groups = app.get_subcommands([](const CLI::App* s) { return s->get_name().empty(); });
  for (const CLI::App* group : groups) {
    for (const CLI::Option* o : group->get_options(keep)) out.push_back(o);
  }
  return out;
}

std::string Summary(const std::string& description) {
  std::string para = description.substr(0, description.find("\n\n"));
  std::string joined;
  for (char c : para) joined += c == '\n' ? ' ' : c;
  size_t stop = joined.find(". ");
  return stop == std::string::npos ? joined : joined.substr(0, stop + 1);
}

std::string OptionNames(const CLI::Option& opt) {
  std::string out;
  for (const auto& s : opt.get_snames()) out += (out.empty() ? "-" : ", -") + s;
  for (const auto& l : opt.get_lnames()) out += (out.empty() ? "--" : ", --") + l;
  return out.empty() ? opt.get_name() : out;
}

std::string ValueName(const CLI::Option& opt) {
  // As CLI11's own help shows it (Formatter::make_option_opts): a flag has no type name.
  if (!opt.get_option_text().empty()) return opt.get_option_text();
  if (opt.get_type_size() == 0 || opt.get_type_name().empty()) return "";
  return opt.get_type_name() + (opt.get_expected_max() > 1 ? "..." : "");
}

}  // namespace imgtool::docgen

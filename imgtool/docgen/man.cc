#include "docgen/man.h"

#include <cctype>

#include "docgen/roff.h"
#include "docgen/tree.h"

namespace imgtool::docgen {

namespace {

std::string Join(const std::vector<std::string>& words, const std::string& sep) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

std::string Header(const std::string& name, const ManInfo& info) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return ".TH \"" + RoffEscape(upper) + "\" \"1\" \"\" \"" + RoffEscape(info.source) + "\" \"" +
         RoffEscape(info.manual) + "\"\n" +
         // Command lines and paths read better neither hyphenated nor stretched.
         ".nh\n.ad l\n.SH NAME\n" + RoffEscape(name) + " \\- " + RoffEscape(info.summary) + "\n";
}

// Lines joined into filled text (a .TP body cannot hold paragraphs).
std::string Filled(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos) out += RoffEscape(line.substr(first)) + "\n";
    start = end + 1;
  }
  return out;
}

std::string OptionEntry(const CLI::Option& o) {
  std::string head;
  for (const auto& s : o.get_snames()) head += (head.empty() ? "" : ", ") + ("\\fB" + RoffEscape("-" + s) + "\\fR");
  for (const auto& l : o.get_lnames()) head += (head.empty() ? "" : ", ") + ("\\fB" + RoffEscape("--" + l) + "\\fR");
  if (head.empty()) head = "\\fI" + RoffEscape(o.get_name()) + "\\fR";
  std::string value = o.get_positional() ? "" : ValueName(o);
  if (!value.empty()) head += " \\fI" + RoffEscape(value) + "\\fR";
  std::string body = Filled(o.get_description());
  if (o.get_required() && !o.get_positional()) body += ".br\nRequired.\n";
  if (!o.get_default_str().empty()) body += RoffEscape("Default: " + o.get_default_str() + ".") + "\n";
  if (!o.get_envname().empty()) body += RoffEscape("Environment: " + o.get_envname() + ".") + "\n";
  return ".TP\n" + head + "\n" + body;
}

std::string OptionSection(const std::string& title, const std::vector<const CLI::Option*>& options) {
  if (options.empty()) return "";
  std::string out = ".SH " + title + "\n";
  for (const auto* o : options) out += OptionEntry(*o);
  return out;
}

// "[OPTIONS] spec [ref]...": what follows the command's words.
std::string SynopsisArgs(const CLI::App& app) {
  std::string out = Options(app, false).empty() ? "" : " [\\fIOPTIONS\\fR]";
  for (const auto* p : Options(app, true)) {
    std::string arg = "\\fI" + RoffEscape(p->get_name()) + "\\fR" + (p->get_expected_max() > 1 ? "..." : "");
    out += p->get_required() ? " " + arg : " [" + arg + "]";
  }
  return out.empty() ? out : out.substr(1);
}

// The description without its "Examples:" paragraph, and that paragraph's lines.
void SplitExamples(const std::string& body, std::string& text, std::string& examples) {
  size_t at = body.rfind("Example");
  if (at == std::string::npos || (at != 0 && (at < 2 || body.compare(at - 2, 2, "\n\n") != 0))) {
    text = body;
    return;
  }
  text = body.substr(0, at);
  size_t eol = body.find('\n', at);
  examples = eol == std::string::npos ? "" : body.substr(eol + 1);
}

}  // namespace

ManPage ProgramPage(CLI::App& root, const ManInfo& info) {
  std::string out = Header(info.program, info) + ".SH SYNOPSIS\n.B " + RoffEscape(info.program) + "\n" +
                    "[\\fIOPTIONS\\fR] \\fISUBCOMMAND\\fR\n.SH DESCRIPTION\n" +
                    RoffParagraphs(root.get_description() + "\n\n" + root.get_footer());
  out += OptionSection("OPTIONS", Options(root, false));
  out += ".SH COMMANDS\n";
  std::vector<std::string> pages;
  for (const auto& verb : Verbs(root)) {
    std::string page = root.get_name() + "-" + Join(verb.words, "-");
    out += ".TP\n\\fB" + RoffEscape(info.program + " " + Join(verb.words, " ")) + "\\fR\n" +
           RoffEscape(Summary(verb.app->get_description())) + "\n" + "See \\fB" + RoffEscape(page) + "\\fR(1).\n";
    pages.push_back("\\fB" + RoffEscape(page) + "\\fR(1)");
  }
  out += ".SH SEE ALSO\n" + Join(pages, ",\n") + "\n";
  return {info.program, out};
}

std::vector<ManPage> VerbPages(CLI::App& root, const ManInfo& info) {
  std::vector<ManPage> pages;
  for (const auto& verb : Verbs(root)) {
    std::string name = root.get_name() + "-" + Join(verb.words, "-");
    ManInfo mine = info;
    mine.summary = Summary(verb.app->get_description());
    std::string text, examples;
    SplitExamples(verb.app->get_description() + "\n\n" + verb.app->get_footer(), text, examples);
    std::string out = Header(name, mine) + ".SH SYNOPSIS\n.B " +
                      RoffEscape(root.get_name() + " " + Join(verb.words, " ")) + "\n" + SynopsisArgs(*verb.app) +
                      "\n.SH DESCRIPTION\n" + RoffParagraphs(text);
    out += OptionSection("ARGUMENTS", Options(*verb.app, true));
    out += OptionSection("OPTIONS", Options(*verb.app, false));
    if (!examples.empty()) out += ".SH EXAMPLES\n" + RoffParagraphs(examples);
    out += ".SH SEE ALSO\n\\fB" + RoffEscape(root.get_name()) + "\\fR(1)\n";
    pages.push_back({name, out});
  }
  return pages;
}

}  // namespace imgtool::docgen

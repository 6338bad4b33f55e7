// Help text -> man(7) source. The CLI's descriptions are plain text wrapped by hand:
// paragraphs split by blank lines, indented lines (examples, lists) meant verbatim.
#pragma once

#include <string>

namespace imgtool::docgen {

// One line of text made safe for roff: backslashes and minus signs escaped (so options
// copy and paste as typed), a leading '.' or '\'' defused, anything beyond ASCII as a
// \[uXXXX] character (the page renders the same in any locale).
std::string RoffEscape(const std::string& text);
// Paragraphs (.PP) of filled text; runs of indented lines in no-fill blocks (.nf/.fi).
std::string RoffParagraphs(const std::string& text);

}  // namespace imgtool::docgen

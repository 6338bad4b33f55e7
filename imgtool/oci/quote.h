// Outside strings in messages. A name that comes from a file, a registry, an archive or a
// config (a helper name, a tag, an entry name, a header value) may hold a newline that
// forges a second line of output, an ESC that drives the terminal, a CR that overwrites
// what came before or a NUL that cuts the line short. Every message that names one
// quotes it with Quoted(); the CLI passes every line it prints through Printable() as
// the last guard, so a site that forgot still cannot reach the terminal with an ESC.
//
// Escapes: \" (the quote character) and \\, \n \r \t, \xHH for the other C0 controls,
// DEL and every byte that is not valid UTF-8, \uHHHH for C1 controls and the bidi
// overrides (U+202A-U+202E, U+2066-U+2069) that reorder what a reader sees. Valid
// printable UTF-8 is kept as it is: names may be non-ASCII.
#pragma once

#include <string>
#include <string_view>

namespace imgtool::oci {

// `s` between `quote` characters, escaped as above: Quoted("a\nb") is "a\nb" with a
// backslash, not a line break. A plain name gives exactly quote + s + quote.
std::string Quoted(std::string_view s, char quote = '"');

// `s` escaped as above but neither quoted nor with '"' and '\\' escaped. Keeping line
// breaks and tabs: for whole messages on their way to a terminal, which may be several
// lines by design. Without them (keep_line_breaks false): for text from outside that
// reads as part of a message (a registry's error message), where quotes would not.
std::string Printable(std::string_view s, bool keep_line_breaks = true);

}  // namespace imgtool::oci

#pragma once

#include <map>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ebb::tools {

// One manual page, roff source of section 1: `file` is "ebb.1" or
// "ebb-<command>.1".
struct ManPage {
  std::string file;
  std::string roff;
};

// The manual pages of the ebb command line, made from the CLI::App that
// runEbb parses (buildEbbApp), so that they say what `--help` says and
// cannot drift from it: ebb.1 (global options, the commands) and one page per
// command (its description, positionals and every option that --help lists,
// with type, default and constraints). `extra` maps a page's file name to
// hand-written roff appended to it (FILES, SEE ALSO, ...: facts --help does
// not hold). `version` goes into each page's footer. No date is written, so
// the pages are reproducible.
std::vector<ManPage> renderManPages(const CLI::App& ebb, const std::string& version,
                                    const std::map<std::string, std::string>& extra);

// `text` as roff body text: backslashes escaped, and a line that starts with
// a control character ('.' or '\'') guarded.
std::string roffText(const std::string& text);

}  // namespace ebb::tools

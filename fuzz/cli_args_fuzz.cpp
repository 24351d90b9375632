// libFuzzer target: the command line of every subcommand (argument-vector
// fuzzing). The input is split at newlines into arguments after "ebb" and
// parsed and checked exactly as `ebb` does (tools::parseEbb), without running
// the command. Any argument vector must give exit 0 (it would run), 1 or 2,
// with a message on stderr when it is not 0; never a crash, a sanitizer
// report or an exception escaping.
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "tools/command.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ebb;
  if (size > 4096) return 0;  // a command line, not a file
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> words = {"ebb"};
  std::string word;
  for (char c : text) {
    if (c == '\n') {
      words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  std::vector<const char*> argv;
  for (const std::string& w : words)
    argv.push_back(w.c_str());
  std::ostringstream out, err;
  int code = -1;
  try {
    code = tools::parseEbb(static_cast<int>(argv.size()), argv.data(), out, err);
  } catch (const std::exception& e) {
    fuzz::broken("no exception escapes the command line", e.what());
  }
  EBB_FUZZ_CHECK(code == tools::kExitOk || code == tools::kExitError || code == tools::kExitUsage,
                 "exit code " + std::to_string(code));
  if (code != tools::kExitOk) EBB_FUZZ_CHECK(!err.str().empty(), "a refusal without a message");
  return 0;
}

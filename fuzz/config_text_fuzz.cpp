// libFuzzer target: the text-format config loader (config::parseTextConfig)
// and, on a config that parses, the command-line overrides
// (config::applyOverride): lines "#=<path>=<value>" of the input (comments
// to the text-format parser) are applied in order. Any input must give a
// config or an error naming the source: E_PARSE for text the parser
// refuses, E_INVALID for a value it takes that no field allows (an enum
// number outside the enum); an override: E_INVALID. Never a crash, a
// sanitizer report or an exception.
#include <sstream>

#include <google/protobuf/util/message_differencer.h>

#include "configs/config_loader.h"
#include "configs/overrides.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ebb;
  const std::string source = "fuzz.textproto";
  const std::string text(reinterpret_cast<const char*>(data), size);
  Result<config::Config> cfg = config::parseTextConfig(text, source);
  if (!cfg) {
    EBB_FUZZ_CHECK(cfg.status().code() == ErrorCode::kParse ||
                       cfg.status().code() == ErrorCode::kInvalidArgument,
                   cfg.status().toString());
    fuzz::checkNamesSource(cfg.status().message(), source);
    return 0;
  }
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("#=", 0) != 0) continue;
    const config::Config before = *cfg;
    Status s = config::applyOverride(*cfg, line.substr(2));
    if (!s.isOk()) {
      EBB_FUZZ_CHECK(s.code() == ErrorCode::kInvalidArgument, s.toString());
      EBB_FUZZ_CHECK(google::protobuf::util::MessageDifferencer::Equals(*cfg, before),
                     "a failed override changed the config");
    }
  }
  return 0;
}

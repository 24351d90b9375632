// libFuzzer target: the ibnetdiscover reader (fabric::parseIbnetdiscover),
// which also reads ibsim net files (same grammar). Any input must give a
// topology or an E_PARSE / E_NOT_FAT_TREE error naming the source; never a
// crash, a sanitizer report or an exception.
#include <sstream>

#include <fmt/format.h>

#include "fabric/ibnetdiscover.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ebb;
  const std::string source = "fuzz.topo";
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  Result<fabric::Topology> t = fabric::parseIbnetdiscover(in, source);
  if (!t) {
    const ErrorCode c = t.status().code();
    EBB_FUZZ_CHECK(c == ErrorCode::kParse || c == ErrorCode::kNotFatTree, t.status().toString());
    fuzz::checkNamesSource(t.status().message(), source);
    return 0;
  }
  EBB_FUZZ_CHECK(t->numSwitches() > 0, "a topology without switches");
  return 0;
}

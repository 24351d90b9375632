// libFuzzer target: the datagrams of ebb's OpenSM event plugin as `ebb agent`
// receives them (daemon::parseOsmEvent; network input). Any bytes must give
// an event or E_INVALID saying what is wrong; never a crash, a sanitizer
// report or an exception.
#include <string_view>

#include "daemon/osm_event_intake.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ebb;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  Result<daemon::OsmEvent> e = daemon::parseOsmEvent(line);
  if (!e) {
    EBB_FUZZ_CHECK(e.status().code() == ErrorCode::kInvalidArgument, e.status().toString());
    EBB_FUZZ_CHECK(!e.status().message().empty(), "an error without a message");
    return 0;
  }
  EBB_FUZZ_CHECK(!e->event.empty(), "an event without a name");
  if (e->event == "trap") EBB_FUZZ_CHECK(e->trap >= 0, "a trap without a number");
  EBB_FUZZ_CHECK(e->port >= -1 && e->port <= 255, "port " + std::to_string(e->port));
  return 0;
}

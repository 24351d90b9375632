// libFuzzer target: a config with its overrides all the way to the run spec
// (config::parseTextConfig, config::applyOverride, replay::buildRunSpec), as
// `ebb replay CONFIG key=value...` takes them. Lines "#=<path>=<value>" of
// the input are overrides. Any input must give a spec whose numbers the
// emulator can run with, or an error naming a field; never a crash, a
// sanitizer report, an exception or a wrapped-around time.
#include <cmath>
#include <sstream>

#include "configs/config_loader.h"
#include "configs/overrides.h"
#include "fuzz/fuzz_util.h"
#include "replay/run_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ebb;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Result<config::Config> cfg = config::parseTextConfig(text, "fuzz.textproto");
  if (!cfg) return 0;  // config_text_fuzz covers the parser's errors
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("#=", 0) == 0 && !config::applyOverride(*cfg, line.substr(2)).isOk()) return 0;
  }
  Result<replay::RunSpec> spec = replay::buildRunSpec(*cfg, "");
  if (!spec) {
    const Status s = spec.status();
    EBB_FUZZ_CHECK(s.code() == ErrorCode::kInvalidArgument || s.code() == ErrorCode::kParse,
                   s.toString());
    EBB_FUZZ_CHECK(!s.message().empty(), "an error without a message");
    return 0;
  }
  const auto& em = spec->emulator;
  EBB_FUZZ_CHECK(em.validate().isOk(), em.validate().toString());
  EBB_FUZZ_CHECK(em.cyclePs > 0 && em.linkLatencyPs >= 0 && em.routingDelayPs >= 0,
                 "emulator times");
  EBB_FUZZ_CHECK(spec->agent.checkPeriodPs > 0, "check period");
  EBB_FUZZ_CHECK(em.turnOnPs >= 0 && em.turnOnPs <= spec->agent.checkPeriodPs, "T_on");
  EBB_FUZZ_CHECK(em.turnOffPs >= 0 && em.turnOffPs <= spec->agent.checkPeriodPs, "T_off");
  EBB_FUZZ_CHECK(spec->agent.controlLatencyPs >= 0, "control latency");
  EBB_FUZZ_CHECK(em.lpi.hold >= 0, "LPI hold");
  EBB_FUZZ_CHECK(spec->workload.messageBytes > 0, "message size");
  EBB_FUZZ_CHECK(spec->messageLimit.check(spec->workload.messageBytes, "x").isOk(),
                 "a message over the limit");
  EBB_FUZZ_CHECK(std::isfinite(spec->workload.rate.max()) && spec->workload.rate.max() >= 0,
                 "rate");
  EBB_FUZZ_CHECK(spec->workload.rate.end() >= 0, "workload end");
  EBB_FUZZ_CHECK(spec->faults.detectionPs >= 0 && spec->faults.retransmitTimeoutPs > 0,
                 "fault timing");
  EBB_FUZZ_CHECK(spec->timeseriesGroup >= 0, "timeseries period");
  return 0;
}

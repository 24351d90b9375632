// Anti-flap in the loop: under a load that makes links cycle, a flap limit
// caps how often any one link goes off within the window, in the emulator as
// on InfiniBand (the same guard).
#include <gtest/gtest.h>

#include <map>

#include "configs/config_loader.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::replay {
namespace {

// The largest number of turn-offs of one link within any window of `w`.
std::size_t worstOffsPerWindow(const RunOutput& out, const fabric::Topology& t, TimePs w) {
  std::map<std::uint32_t, std::vector<TimePs>> offs;
  for (const agent::DecisionRecord& d : out.decisions) {
    if (d.turnOn || !d.refused.empty() || d.source != "gating") continue;
    offs[t.sw(d.port.sw).ports[d.port.index].link.value()].push_back(d.time);
  }
  std::size_t worst = 0;
  for (const auto& [link, times] : offs) {
    std::size_t first = 0;
    for (std::size_t i = 0; i < times.size(); ++i) {
      while (times[i] - times[first] >= w)
        ++first;
      worst = std::max(worst, i - first + 1);
    }
  }
  return worst;
}

TEST(Flap, AFlapLimitCapsTurnOffsPerLinkPerWindow) {
  const fabric::Topology t = fabric::KAryNTree::make(4, 3).value().build();
  const fabric::MinimalTree mt = fabric::MinimalTree::build(t).value();
  auto cfg = config::parseTextConfig(
      "workload { uniform { rate: 0.12 duration_cycles: 200000 } message_bytes: 256 } "
      "gating { policy: DYNAMIC u_on: 0.15 }",
      "test");
  ASSERT_TRUE(cfg) << cfg.status().toString();
  RunSpec spec = buildRunSpec(*cfg).value();
  const TimePs window = 20 * spec.agent.checkPeriodPs;
  const RunOutput free = runEmulation(spec, t, mt, true, {}).value();
  const std::size_t freeWorst = worstOffsPerWindow(free, t, window);
  ASSERT_GT(freeWorst, 2u) << "the load must make some link cycle";
  spec.agent.rateLimits.flap = {2, window, window};
  const RunOutput damped = runEmulation(spec, t, mt, true, {}).value();
  EXPECT_LE(worstOffsPerWindow(damped, t, window), 2u);
  EXPECT_LT(damped.summary.link_transitions(), free.summary.link_transitions());
  const auto held = std::count_if(damped.decisions.begin(), damped.decisions.end(),
                                  [](const agent::DecisionRecord& d) {
                                    return d.refused.find("flap damping") != std::string::npos;
                                  });
  EXPECT_GT(held, 0);
  EXPECT_EQ(damped.summary.messages_delivered(), damped.summary.messages_generated());
}

}  // namespace
}  // namespace ebb::replay

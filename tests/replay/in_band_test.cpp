// The in-band mode of `ebb replay` (gating.in_band, docs/emulator.md "In-band
// mode"): whole-link gating under the guard's in-band rules, its config
// errors, its report and determinism.
#include <gtest/gtest.h>

#include <google/protobuf/util/json_util.h>

#include <algorithm>

#include "configs/config_loader.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "replay/in_band.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::replay {
namespace {

struct Fixture {
  explicit Fixture(int k = 4, int n = 3)
      : topo(fabric::KAryNTree::make(k, n).value().build()),
        mt(fabric::MinimalTree::build(topo).value()) {}
  fabric::Topology topo;
  fabric::MinimalTree mt;
};

Result<RunSpec> parse(const std::string& text) {
  auto cfg = config::parseTextConfig(text, "test");
  EXPECT_TRUE(cfg) << cfg.status().toString();
  return buildRunSpec(*cfg);
}

constexpr const char* kRamp =
    "workload { alonso_ramp { time_scale: 0.1 } } gating { policy: DYNAMIC u_on: 0.15 ";

RunSpec inBand(const std::string& inBandFields) {
  Result<RunSpec> s =
      parse(std::string(kRamp) + "in_band { enabled: true " + inBandFields + " } }");
  EXPECT_TRUE(s) << s.status().toString();
  return *s;
}

std::string json(const google::protobuf::Message& m) {
  std::string out;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(m, &out).ok());
  return out;
}

TEST(InBand, ConfigDefaultsAndErrorsNameTheField) {
  const RunSpec def = inBand("");
  EXPECT_TRUE(def.inBand.enabled);
  EXPECT_EQ(def.inBand.resilience, agent::Resilience::kSingleLink);
  EXPECT_TRUE(def.inBand.managementSwitch.empty());
  EXPECT_EQ(inBand("resilience: NONE").inBand.resilience, agent::Resilience::kNone);
  EXPECT_FALSE(parse(std::string(kRamp) + "}")->inBand.enabled);

  Result<RunSpec> orphan = parse(std::string(kRamp) + "in_band { resilience: NONE } }");
  ASSERT_FALSE(orphan);
  EXPECT_NE(orphan.status().message().find("gating.in_band: "), std::string::npos)
      << orphan.status().message();
  Result<RunSpec> allOn = parse(
      "workload { alonso_ramp { time_scale: 0.1 } } gating { policy: ALL_ON in_band { enabled: "
      "true } }");
  ASSERT_FALSE(allOn);
  EXPECT_NE(allOn.status().message().find("gating.in_band.enabled: "), std::string::npos)
      << allOn.status().message();

  Fixture f;
  const RunSpec unknown = inBand("management_switch: \"nowhere\"");
  Result<RunOutput> run = runEmulation(unknown, f.topo, f.mt, true, {});
  ASSERT_FALSE(run);
  EXPECT_EQ(run.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(run.status().message(), "gating.in_band.management_switch: no switch \"nowhere\"");
}

TEST(InBand, TheManagementSwitchDefaultsToTheLeafOfHostZero) {
  Fixture f;
  EXPECT_EQ(managementSwitch(InBandDef{true, "", agent::Resilience::kNone}, f.topo).value(),
            f.topo.leafOf(fabric::HostId(0)));
  const fabric::SwitchId root = f.topo.switchesAtLevel(0)[1];
  EXPECT_EQ(
      managementSwitch(InBandDef{true, f.topo.sw(root).name, agent::Resilience::kNone}, f.topo)
          .value(),
      root);
}

TEST(InBand, LinksOffAtStartAreDisabledAtTheEndNearerManagement) {
  Fixture f;
  const fabric::SwitchId root = f.topo.leafOf(fabric::HostId(0));
  const std::vector<fabric::SwitchId> ends = nearerEnds(f.topo, root);
  for (fabric::LinkId::rep_type i = 0; i < f.topo.numLinks(); ++i) {
    const fabric::Link& l = f.topo.link(fabric::LinkId(i));
    if (l.lowerIsHost) {
      EXPECT_EQ(ends[i], l.upper.sw);
    } else if (l.lower.sw == root) {
      EXPECT_EQ(ends[i], root);  // the management leaf's own up links
    }
  }
  // A leaf elsewhere is reached from above.
  const fabric::SwitchId far =
      f.topo.leafOf(fabric::HostId(static_cast<std::uint32_t>(f.topo.numHosts() - 1)));
  for (std::uint16_t up : f.topo.sw(far).upPorts) {
    const fabric::LinkId link = f.topo.sw(far).ports[up].link;
    EXPECT_EQ(ends[link.value()], f.topo.link(link).upper.sw);
  }
}

// Both resiliences: whole links only (the lower switch gates, no down-link
// rule), every message delivered, and the runner's own connectivity proof
// after every change (an error if the guard let a pair apart) held.
TEST(InBand, RunsGateWholeLinksAndNeverDisconnectAPair) {
  Fixture f;
  for (const char* resilience : {"resilience: NONE", "resilience: SINGLE_LINK"}) {
    const RunSpec s = inBand(resilience);
    Result<RunOutput> run = runEmulation(s, f.topo, f.mt, true, {});
    ASSERT_TRUE(run) << run.status().toString();
    const RunOutput& out = *run;
    EXPECT_EQ(out.summary.messages_delivered(), out.summary.messages_generated());
    std::size_t offs = 0;
    for (const agent::DecisionRecord& d : out.decisions) {
      EXPECT_TRUE(d.up) << d.source;
      EXPECT_NE(d.source, "down-link-rule");
      if (!d.turnOn && d.refused.empty()) ++offs;
    }
    EXPECT_GT(offs, 5u) << resilience;
    // Two directions stop being usable per link turned off: one proof each.
    EXPECT_EQ(out.connectivityProofs, 2 * offs);
    ASSERT_TRUE(out.summary.has_in_band());
    const results::InBandReport& r = out.summary.in_band();
    EXPECT_EQ(r.management_switch(), f.topo.sw(f.topo.leafOf(fabric::HostId(0))).name);
    EXPECT_EQ("resilience: " + r.resilience(), resilience);
    EXPECT_GE(r.guard_checks(), offs);
  }
}

// The dynamic policy's turn-offs from the minimal tree on never meet the
// rule on these trees; the proportional policy shedding links from all on
// does (with a turn-off the failure of one link could make unrecoverable).
TEST(InBand, SingleLinkResilienceRefusesWhatNoneAllows) {
  Fixture f;
  const auto spec = [](const std::string& resilience) {
    Result<RunSpec> s = parse(
        "workload { alonso_ramp { time_scale: 0.1 } } gating { policy: PROPORTIONAL start: "
        "FROM_ALL_ON in_band { enabled: true resilience: " +
        resilience + " } }");
    EXPECT_TRUE(s) << s.status().toString();
    return *s;
  };
  const RunOutput none = runEmulation(spec("NONE"), f.topo, f.mt, true, {}).value();
  const RunOutput single = runEmulation(spec("SINGLE_LINK"), f.topo, f.mt, true, {}).value();
  EXPECT_GT(single.summary.in_band().guard_refused(), none.summary.in_band().guard_refused());
  bool sawRule = false;
  for (const agent::DecisionRecord& d : single.decisions)
    sawRule |= d.refused.find("single-failure resilience") != std::string::npos;
  EXPECT_TRUE(sawRule);
  // Keeping more links on costs power, never the other way round.
  EXPECT_GE(single.summary.relative_power_switch_links(),
            none.summary.relative_power_switch_links());
}

// A packet in-band gating drops (its way down went off as it climbed) is
// counted once, in the in-band section: the faults section of the same run,
// whose only event comes after the end, lost nothing (it showed "dropped 1;
// lost 1" before each loss got one cause).
TEST(InBand, AGatingDropIsNoFaultLoss) {
  Fixture f;
  Result<RunSpec> s = parse(
      "gating { in_band { enabled: true resilience: SINGLE_LINK } } "
      "workload { rate_points { point { at_cycles: 0 rate: 0.02 } point { at_cycles: 6000 rate: "
      "0.4 } point { at_cycles: 12000 rate: 0.01 } } message_bytes: 64 } "
      "faults { event { at_cycles: 17000 action: RESTART_AGENT switch_name: \"S0_0_0\" } } "
      "lpi { mode: HYBRID hold_ts: 1 } seed: 5");
  ASSERT_TRUE(s) << s.status().toString();
  Result<RunOutput> run = runEmulation(*s, f.topo, f.mt, true, {});
  ASSERT_TRUE(run) << run.status().toString();
  const results::RunSummary& sum = run->summary;
  ASSERT_TRUE(sum.has_in_band());
  ASSERT_GE(sum.in_band().packets_dropped(), 1u) << "no gating drop: the case is not exercised";
  EXPECT_GE(sum.in_band().messages_dropped(), 1u);
  EXPECT_LE(sum.in_band().messages_dropped(), sum.in_band().packets_dropped());
  ASSERT_TRUE(sum.has_faults());
  EXPECT_EQ(sum.faults().packets_dropped(), 0u);
  EXPECT_EQ(sum.faults().lost_messages(), 0u);
  EXPECT_EQ(sum.messages_generated() - sum.messages_delivered(), sum.in_band().messages_dropped());
}

TEST(InBand, RunsAreDeterministicAndOthersReportNoInBandSection) {
  Fixture f;
  const RunSpec s = inBand("");
  const RunOutput a = runEmulation(s, f.topo, f.mt, true, {}).value();
  const RunOutput b = runEmulation(s, f.topo, f.mt, true, {}).value();
  EXPECT_EQ(json(a.summary), json(b.summary));
  ASSERT_EQ(a.decisions.size(), b.decisions.size());
  for (std::size_t i = 0; i < a.decisions.size(); ++i)
    EXPECT_EQ(agent::toJsonLine(a.decisions[i]), agent::toJsonLine(b.decisions[i]));

  const RunSpec perDirection = parse(std::string(kRamp) + "}").value();
  const RunOutput c = runEmulation(perDirection, f.topo, f.mt, true, {}).value();
  EXPECT_FALSE(c.summary.has_in_band());
  EXPECT_EQ(json(c.summary).find("in_band"), std::string::npos);
}

}  // namespace
}  // namespace ebb::replay

// The emulator's routing pieces on their own: the down table against the
// tree's structure, each named up-routing strategy, and the fallback order.
#include "sim_backend/routing.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "fabric/kary_tree.h"

namespace ebb::sim {
namespace {

using fabric::SwitchId;

// The leaves below `sw`, by walking down ports.
std::set<std::uint32_t> leavesBelow(const fabric::Topology& t, SwitchId sw) {
  if (sw.value() >= t.numSwitches()) return {};
  if (t.sw(sw).level == t.depth() - 1) return {sw.value()};
  std::set<std::uint32_t> out;
  for (std::uint16_t port : t.sw(sw).downPorts) {
    const fabric::Link& l = t.link(t.sw(sw).ports[port].link);
    if (l.lowerIsHost) continue;
    const auto below = leavesBelow(t, l.lower.sw);
    out.insert(below.begin(), below.end());
  }
  return out;
}

TEST(Routing, DownTableNamesTheLowestDownPortLeadingToEachLeafBelow) {
  for (auto [k, n] : {std::pair{2, 3}, std::pair{4, 3}, std::pair{3, 4}}) {
    const fabric::Topology t = fabric::KAryNTree::make(k, n).value().build();
    const DownRoutes routes(t);
    const auto& leaves = t.switchesAtLevel(t.depth() - 1);
    for (int level = 0; level < t.depth() - 1; ++level) {
      for (SwitchId s : t.switchesAtLevel(level)) {
        const auto below = leavesBelow(t, s);
        for (SwitchId leaf : leaves) {
          const std::uint16_t port = routes.port(s, leaf);
          if (!below.count(leaf.value())) {
            EXPECT_EQ(port, DownRoutes::kNoPort) << k << "-ary " << n << "-tree";
            continue;
          }
          ASSERT_NE(port, DownRoutes::kNoPort);
          // The port leads to the leaf, and no lower down port does.
          const auto viaPort = leavesBelow(t, t.link(t.sw(s).ports[port].link).lower.sw);
          EXPECT_TRUE(viaPort.count(leaf.value()));
          for (std::uint16_t p : t.sw(s).downPorts) {
            if (p >= port) break;
            EXPECT_FALSE(
                leavesBelow(t, t.link(t.sw(s).ports[p].link).lower.sw).count(leaf.value()));
          }
        }
      }
    }
  }
}

TEST(Routing, AdaptivePicksMostFreeCreditThenShortestQueueThenRandomAmongTies) {
  const auto adaptive = makeUpRouting(UpRouting::kAdaptive);
  EXPECT_STREQ(adaptive->name(), "adaptive");
  EXPECT_TRUE(adaptive->needsLoad());
  std::mt19937_64 rng(1);
  EXPECT_EQ(adaptive->choose({{10, 64, 0}, {11, 128, 5}, {12, 100, 0}}, 0, rng), 11u);
  EXPECT_EQ(adaptive->choose({{10, 128, 3}, {11, 128, 1}, {12, 128, 2}}, 0, rng), 11u);
  // A single candidate draws nothing from the RNG.
  std::mt19937_64 a(7), b(7);
  EXPECT_EQ(adaptive->choose({{42, 0, 0}}, 0, a), 42u);
  EXPECT_EQ(a(), b());
  // Ties: every tied link is picked sometimes, never one outside the tie.
  std::map<std::uint32_t, int> seen;
  for (int i = 0; i < 300; ++i)
    ++seen[adaptive->choose({{1, 64, 0}, {2, 64, 0}, {3, 32, 0}, {4, 64, 0}}, 0, rng)];
  EXPECT_EQ(seen.count(3), 0u);
  EXPECT_GT(seen[1], 50);
  EXPECT_GT(seen[2], 50);
  EXPECT_GT(seen[4], 50);
}

TEST(Routing, RandomIgnoresLoadAndIsSeeded) {
  const auto random = makeUpRouting(UpRouting::kRandom);
  EXPECT_STREQ(random->name(), "random");
  EXPECT_FALSE(random->needsLoad());
  std::mt19937_64 r1(3), r2(3);
  std::map<std::uint32_t, int> seen;
  for (int i = 0; i < 300; ++i) {
    const std::uint32_t x = random->choose({{1, 1000, 0}, {2, 0, 9}, {3, 0, 9}}, 0, r1);
    EXPECT_EQ(x, random->choose({{1, 1000, 0}, {2, 0, 9}, {3, 0, 9}}, 0, r2));
    ++seen[x];
  }
  for (std::uint32_t ch : {1u, 2u, 3u})
    EXPECT_GT(seen[ch], 60) << ch;
}

// D-mod-K: the preferred up port while usable, else the next usable one
// after it (wrapping around); the RNG is never drawn.
TEST(Routing, DestinationTakesThePreferredPortOrTheNextUsable) {
  const auto dest = makeUpRouting(UpRouting::kDestination);
  EXPECT_STREQ(dest->name(), "destination");
  EXPECT_TRUE(dest->needsDestination());
  EXPECT_FALSE(makeUpRouting(UpRouting::kRandom)->needsDestination());
  std::mt19937_64 a(5), b(5);
  const std::vector<UpCandidate> all = {{10, 0, 0, 0}, {11, 0, 0, 1}, {12, 0, 0, 2}, {13, 0, 0, 3}};
  for (std::uint32_t p = 0; p < 4; ++p)
    EXPECT_EQ(dest->choose(all, p, a), 10u + p);
  const std::vector<UpCandidate> someOff = {{10, 0, 0, 0}, {13, 0, 0, 3}};  // ports 1, 2 off
  EXPECT_EQ(dest->choose(someOff, 1, a), 13u);
  EXPECT_EQ(dest->choose(someOff, 3, a), 13u);
  EXPECT_EQ(dest->choose({{11, 0, 0, 1}}, 3, a), 11u) << "wraps around";
  EXPECT_EQ(a(), b());
}

TEST(Routing, FallbackWaitsOnADrainingLinkElseOneTurningOnElseTheFirst) {
  EXPECT_EQ(fallbackUp({{5, false, false}, {6, false, true}, {7, true, false}}), 7u);
  EXPECT_EQ(fallbackUp({{5, false, false}, {6, false, true}, {7, false, true}}), 6u);
  EXPECT_EQ(fallbackUp({{5, false, false}, {6, false, false}}), 5u);
}

}  // namespace
}  // namespace ebb::sim

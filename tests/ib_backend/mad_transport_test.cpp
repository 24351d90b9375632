// MadTransport over the fake wire, in virtual time: TID matching, deadlines,
// retries, the outstanding bound and its queue, and a receive path that
// survives any bytes.
#include <infiniband/mad.h>

#include <gtest/gtest.h>

#include <random>

#include "agent/virtual_scheduler.h"
#include "ib_backend/fake_mad_transport.h"

namespace ebb::ib {
namespace {

constexpr TimePs kMs = 1'000'000'000;

MadAddress lid(std::uint16_t l) {
  MadAddress a;
  a.mgmtClass = MgmtClass::kSmiLid;
  a.lid = l;
  return a;
}

std::uint32_t attrModOf(const MadBytes& m) {
  return mad_get_field(const_cast<std::uint8_t*>(m.data()), 0, IB_MAD_ATTRMOD_F);
}

MadBytes request(std::uint32_t attrMod) {
  return buildRequest(lid(1), Method::kGet, Attr::kPortInfo, attrMod);
}

struct Recorder {
  std::vector<std::pair<std::uint32_t, Status>> results;  // attrMod of the request, status
  MadTransport::Done done(std::uint32_t mod) {
    return [this, mod](Result<MadBytes> r) { results.emplace_back(mod, r.status()); };
  }
};

TransportOptions opts(int retries = 2, int maxOutstanding = 16) {
  TransportOptions o;
  o.timeoutPs = 100 * kMs;
  o.retries = retries;
  o.maxOutstanding = maxOutstanding;
  return o;
}

TEST(MadTransport, MatchesRepliesByTransactionIdInAnyOrder) {
  agent::VirtualScheduler sched;
  std::vector<MadBytes> wire;
  FakeMadTransport t(sched, opts(), [&](const MadAddress&, const MadBytes& m) {
    wire.push_back(m);
    return std::optional<std::vector<std::uint8_t>>{};
  });
  Recorder rec;
  for (std::uint32_t i = 1; i <= 3; ++i)
    t.send(lid(1), request(i), rec.done(i));
  ASSERT_EQ(wire.size(), 3u);
  EXPECT_NE(transactionId(wire[0]), transactionId(wire[1]));
  for (int i = 2; i >= 0; --i)
    t.inject(replyTo(wire[static_cast<std::size_t>(i)]));
  ASSERT_EQ(rec.results.size(), 3u);
  EXPECT_EQ(rec.results[0].first, 3u);  // answered in the order replies came
  EXPECT_EQ(rec.results[2].first, 1u);
  for (const auto& r : rec.results)
    EXPECT_TRUE(r.second.isOk());
  t.inject(replyTo(wire[0]));  // a duplicate: nobody waits for it any more
  EXPECT_EQ(t.stats().unmatched, 1u);
  EXPECT_EQ(t.stats().completed, 3u);
}

TEST(MadTransport, RetriesOnTimeoutThenFails) {
  agent::VirtualScheduler sched;
  FakeMadTransport t(sched, opts(2), [](const MadAddress&, const MadBytes&) {
    return std::optional<std::vector<std::uint8_t>>{};
  });
  Recorder rec;
  t.send(lid(1), request(1), rec.done(1));
  sched.runAll();
  ASSERT_EQ(rec.results.size(), 1u);
  EXPECT_EQ(rec.results[0].second.code(), ErrorCode::kTimeout);
  EXPECT_EQ(t.stats().sent, 3u);  // first try and two retries
  EXPECT_EQ(t.stats().timeouts, 3u);
  EXPECT_EQ(sched.now(), 300 * kMs);
}

TEST(MadTransport, ALateFirstReplyStillCompletesTheRetry) {
  agent::VirtualScheduler sched;
  int n = 0;
  FakeMadTransport t(sched, opts(2), [&](const MadAddress&, const MadBytes& m) {
    return ++n == 1 ? std::optional<std::vector<std::uint8_t>>{} : replyTo(m);
  });
  Recorder rec;
  t.send(lid(1), request(1), rec.done(1));
  sched.runAll();
  ASSERT_EQ(rec.results.size(), 1u);
  EXPECT_TRUE(rec.results[0].second.isOk());
  EXPECT_EQ(t.stats().sent, 2u);
}

TEST(MadTransport, BoundsMadsOutstandingAndQueuesTheRestUrgentFirst) {
  agent::VirtualScheduler sched;
  std::vector<MadBytes> wire;
  FakeMadTransport t(sched, opts(0, 2), [&](const MadAddress&, const MadBytes& m) {
    wire.push_back(m);
    return std::optional<std::vector<std::uint8_t>>{};
  });
  Recorder rec;
  t.send(lid(1), request(1), rec.done(1));
  t.send(lid(1), request(2), rec.done(2));
  t.send(lid(1), request(3), rec.done(3));                   // routine
  t.send(lid(1), request(4), rec.done(4), /*urgent=*/true);  // a port Set, say
  EXPECT_EQ(wire.size(), 2u);
  EXPECT_EQ(t.stats().outstanding, 2u);
  EXPECT_EQ(t.stats().queued, 2u);
  t.inject(replyTo(wire[0]));
  ASSERT_EQ(wire.size(), 3u);
  EXPECT_EQ(attrModOf(wire[2]), 4u);  // the urgent one went first
  t.inject(replyTo(wire[1]));
  ASSERT_EQ(wire.size(), 4u);
  EXPECT_EQ(attrModOf(wire[3]), 3u);
  EXPECT_EQ(t.stats().peakOutstanding, 2u);
}

TEST(MadTransport, ABadReplyFailsAtOnceWithoutRetry) {
  agent::VirtualScheduler sched;
  FakeMadTransport t(sched, opts(2), [](const MadAddress&, const MadBytes& m) {
    auto r = replyTo(m);
    r[4] = 0x00;  // status: "unsupported attribute" (0x001c) in the high bits
    r[5] = 0x1c;
    return std::optional<std::vector<std::uint8_t>>{r};
  });
  Recorder rec;
  t.send(lid(1), request(1), rec.done(1));
  sched.runAll();
  ASSERT_EQ(rec.results.size(), 1u);
  EXPECT_EQ(rec.results[0].second.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(t.stats().sent, 1u);
  EXPECT_EQ(t.stats().malformed, 1u);
}

TEST(MadTransport, ABrokenWireAndFailAllEndEveryRequest) {
  agent::VirtualScheduler sched;
  FakeMadTransport t(sched, opts(2, 1), [](const MadAddress&, const MadBytes&) {
    return std::optional<std::vector<std::uint8_t>>{};
  });
  Recorder rec;
  t.send(lid(1), request(1), rec.done(1));
  t.send(lid(1), request(2), rec.done(2));  // queued behind the first
  t.failAll(Status(ErrorCode::kUnavailable, "closing"));
  ASSERT_EQ(rec.results.size(), 2u);
  for (const auto& r : rec.results)
    EXPECT_EQ(r.second.code(), ErrorCode::kUnavailable);
  EXPECT_EQ(t.stats().outstanding, 0u);
  EXPECT_EQ(t.stats().queued, 0u);
  sched.runAll();  // no stale deadline fires into a finished request
  EXPECT_EQ(rec.results.size(), 2u);
  t.setBroken(true);
  t.send(lid(1), request(3), rec.done(3));
  sched.runAll();
  ASSERT_EQ(rec.results.size(), 3u);
  EXPECT_EQ(rec.results[2].second.code(), ErrorCode::kUnavailable);
}

// Whatever arrives — random bytes, truncated or bit-flipped replies — the
// transport neither crashes nor completes a request with a bad reply.
TEST(MadTransport, ReceivePathSurvivesGarbage) {
  agent::VirtualScheduler sched;
  std::vector<MadBytes> wire;
  FakeMadTransport t(sched, opts(0), [&](const MadAddress&, const MadBytes& m) {
    wire.push_back(m);
    return std::optional<std::vector<std::uint8_t>>{};
  });
  Recorder rec;
  t.send(lid(1), request(1), rec.done(1));
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<std::size_t> len(0, 300);
  for (int i = 0; i < 5000; ++i) {
    std::vector<std::uint8_t> junk;
    if (i % 2 == 0) {
      junk.resize(len(rng));
      for (auto& b : junk)
        b = static_cast<std::uint8_t>(byte(rng));
    } else {
      junk = replyTo(wire[0]);
      junk.resize(std::min(junk.size(), len(rng)));
      if (!junk.empty())
        junk[len(rng) % junk.size()] ^= static_cast<std::uint8_t>(1 + byte(rng) % 255);
    }
    if (junk.size() == kMadBytes && checkReply(wire[0], junk).isOk()) continue;  // a real answer
    t.inject(junk);
  }
  for (const auto& r : rec.results)
    EXPECT_FALSE(r.second.isOk());  // only a failure may have completed it
  EXPECT_GT(t.stats().malformed + t.stats().unmatched, 0u);
}

}  // namespace
}  // namespace ebb::ib

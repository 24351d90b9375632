// The PortInfo read-modify-write: errors name the port, and the Set carries
// what was read with exactly the edited fields changed.
#include "ib_backend/port_info_write.h"

#include <infiniband/mad.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>

#include "ib_backend/fake_mad_transport.h"

namespace ebb::ib {
namespace {

// A scripted SMP wire: records every request; answers from a queue.
struct Wire {
  std::vector<MadBytes> sent;
  std::deque<Result<MadBytes>> replies;
  int setsCounted = 0;
  SmpSender sender() {
    return [this](std::function<MadBytes(const MadAddress&)> build, MadTransport::Done done) {
      MadAddress to;
      to.path.hops = {0, 3};
      sent.push_back(build(to));
      Result<MadBytes> r = replies.front();
      replies.pop_front();
      done(r);
    };
  }
};

// A PortInfo GetResp with every field the Set must carry back set to something.
MadBytes portInfoReply() {
  MadAddress to;
  to.path.hops = {0, 3};
  const MadBytes req = buildRequest(to, Method::kGet, Attr::kPortInfo, 5);
  const std::vector<std::uint8_t> r = replyTo(req);
  MadBytes m{};
  std::copy(r.begin(), r.end(), m.begin());
  std::uint8_t* d = m.data() + 64;
  mad_set_field(d, 0, IB_PORT_LID_F, 0x1234);
  mad_set_field(d, 0, IB_PORT_STATE_F, 4);
  mad_set_field(d, 0, IB_PORT_PHYS_STATE_F, static_cast<std::uint32_t>(PhysState::kLinkUp));
  mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ENABLED_F, kWidth1x | kWidth4x);
  mad_set_field(d, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F, kWidth1x | kWidth4x | kWidth12x);
  mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, kWidth4x);
  mad_set_field(d, 0, IB_PORT_LINK_SPEED_ENABLED_F, 7);
  mad_set_field(d, 0, IB_PORT_MKEY_LEASE_F, 0xBEEF);
  mad_set_field(d, 0, IB_PORT_NEIGHBOR_MTU_F, 5);
  return m;
}

PortInfoWrite write(Wire& w, PortInfoEdit edit) {
  PortInfoWrite pw;
  pw.send = w.sender();
  pw.portNumber = 5;
  pw.where = "S1/P5";
  pw.modify = [edit](const PortInfo&) -> Result<PortInfoEdit> { return edit; };
  pw.onSet = [&w] { ++w.setsCounted; };
  return pw;
}

Result<PortInfoChange> run(PortInfoWrite pw) {
  Result<PortInfoChange> out = Status(ErrorCode::kInternal, "not done");
  int calls = 0;
  writePortInfo(std::move(pw), [&](Result<PortInfoChange> r) {
    out = r;
    ++calls;
  });
  EXPECT_EQ(calls, 1);
  return out;
}

TEST(PortInfoWrite, TheSetCarriesWhatWasReadWithOnlyTheEditedFieldsChanged) {
  for (const PortInfoEdit edit :
       {PortInfoEdit{PhysState::kDisabled, 0}, PortInfoEdit{PhysState::kNoChange, kWidth1x}}) {
    Wire w;
    const MadBytes got = portInfoReply();
    MadBytes after = got;
    mad_set_field(after.data() + 64, 0, IB_PORT_LINK_WIDTH_ENABLED_F, kWidth1x);
    w.replies = {got, after};
    const auto r = run(write(w, edit));
    ASSERT_TRUE(r) << r.status().toString();
    ASSERT_EQ(w.sent.size(), 2u);
    EXPECT_EQ(w.setsCounted, 1);
    MadBytes set = w.sent[1];
    EXPECT_EQ(mad_get_field(set.data(), 0, IB_MAD_METHOD_F),
              static_cast<std::uint32_t>(Method::kSet));
    EXPECT_EQ(mad_get_field(set.data(), 0, IB_MAD_ATTRMOD_F), 5u);
    // What the Set must carry: the payload read, with PortState and
    // LinkSpeedEnabled as "no change" and the edit applied.
    MadBytes want = got;
    std::uint8_t* d = want.data() + 64;
    mad_set_field(d, 0, IB_PORT_STATE_F, 0);
    mad_set_field(d, 0, IB_PORT_LINK_SPEED_ENABLED_F, 0);
    mad_set_field(d, 0, IB_PORT_PHYS_STATE_F, static_cast<std::uint32_t>(edit.phys));
    mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ENABLED_F, edit.widthEnabled);
    EXPECT_TRUE(std::equal(set.begin() + 64, set.begin() + 128, want.begin() + 64))
        << edit.describe();
    EXPECT_EQ(r->before.widthEnabled, kWidth1x | kWidth4x);
    EXPECT_EQ(r->after.widthEnabled, kWidth1x);
    EXPECT_EQ(r->edit.phys, edit.phys);
  }
}

TEST(PortInfoWrite, ErrorsNameThePortAndStopBeforeTheSet) {
  {  // The Get fails: no Set.
    Wire w;
    w.replies = {Status(ErrorCode::kTimeout, "no reply")};
    const auto r = run(write(w, {PhysState::kPolling, 0}));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().code(), ErrorCode::kTimeout);
    EXPECT_EQ(r.status().message(), "S1/P5: no reply");
    EXPECT_EQ(w.sent.size(), 1u);
    EXPECT_EQ(w.setsCounted, 0);
  }
  {  // modify refuses: no Set.
    Wire w;
    w.replies = {portInfoReply()};
    PortInfoWrite pw = write(w, {});
    pw.modify = [](const PortInfo& before) -> Result<PortInfoEdit> {
      EXPECT_EQ(before.lid, 0x1234);
      return Status(ErrorCode::kInvalidArgument, "not that");
    };
    const auto r = run(std::move(pw));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().message(), "S1/P5: not that");
    EXPECT_EQ(w.sent.size(), 1u);
    EXPECT_EQ(w.setsCounted, 0);
  }
  {  // The Set fails: named with what it set.
    Wire w;
    w.replies = {portInfoReply(), Status(ErrorCode::kTimeout, "lost")};
    auto r = run(write(w, {PhysState::kPolling, 0}));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().message(), "setting S1/P5 Polling: lost");
    Wire w2;
    w2.replies = {portInfoReply(), Status(ErrorCode::kTimeout, "lost")};
    r = run(write(w2, {PhysState::kNoChange, kWidth1x}));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().message(), "setting S1/P5 LinkWidthEnabled 1x: lost");
    EXPECT_EQ(w2.setsCounted, 1);
  }
}

}  // namespace
}  // namespace ebb::ib

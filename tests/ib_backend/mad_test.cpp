// The MAD codec against libibmad's own field accessors: what ebb builds is
// what infiniband-diags would read, and what it parses is what they write.
#include <infiniband/mad.h>

#include <gtest/gtest.h>

#include "ib_backend/fake_mad_transport.h"
#include "ib_backend/mad.h"

namespace ebb::ib {
namespace {

std::uint32_t get(const MadBytes& m, int base, enum MAD_FIELDS f) {
  return mad_get_field(const_cast<std::uint8_t*>(m.data()), base, f);
}

MadBytes toBytes(const std::vector<std::uint8_t>& v) {
  MadBytes m{};
  std::copy_n(v.begin(), std::min(v.size(), m.size()), m.begin());
  return m;
}

MadAddress dr(std::vector<std::uint8_t> hops) {
  MadAddress a;
  a.mgmtClass = MgmtClass::kSmiDirect;
  a.path.hops = std::move(hops);
  return a;
}

TEST(Mad, DirectedRouteGetHeaderAndPath) {
  const MadAddress to = dr({0, 1, 5, 7});
  const MadBytes m = buildRequest(to, Method::kGet, Attr::kPortInfo, 6, 0x1234);
  EXPECT_EQ(get(m, 0, IB_MAD_BASEVER_F), 1u);
  EXPECT_EQ(get(m, 0, IB_MAD_MGMTCLASS_F), 0x81u);
  EXPECT_EQ(get(m, 0, IB_MAD_METHOD_F), 1u);
  EXPECT_EQ(get(m, 0, IB_MAD_ATTRID_F), 0x15u);
  EXPECT_EQ(get(m, 0, IB_MAD_ATTRMOD_F), 6u);
  EXPECT_EQ(get(m, 0, IB_DRSMP_HOPCNT_F), 3u);
  EXPECT_EQ(get(m, 0, IB_DRSMP_HOPPTR_F), 0u);
  EXPECT_EQ(mad_get_field64(const_cast<std::uint8_t*>(m.data()), 0, IB_MAD_MKEY_F), 0x1234u);
  // Initial path: byte i of the path block is hop i.
  EXPECT_EQ(m[128 + 1], 1);
  EXPECT_EQ(m[128 + 2], 5);
  EXPECT_EQ(m[128 + 3], 7);
  EXPECT_EQ(to.path.toString(), "0,1,5,7");
  EXPECT_EQ(to.path.extended(2).toString(), "0,1,5,7,2");
  EXPECT_EQ(transactionId(m), 0u);  // the transport assigns it
}

TEST(Mad, PerformanceGetByLidSelectsThePort) {
  MadAddress to;
  to.mgmtClass = MgmtClass::kPerf;
  to.lid = 42;
  MadBytes m = buildRequest(to, Method::kGet, Attr::kPortCountersExt, 0);
  setCounterPortSelect(m, 7);
  EXPECT_EQ(get(m, 0, IB_MAD_MGMTCLASS_F), 0x04u);
  EXPECT_EQ(get(m, 0, IB_MAD_ATTRID_F), 0x1Du);
  EXPECT_EQ(get(m, 64, IB_PC_EXT_PORT_SELECT_F), 7u);  // the PMA payload starts at 64
  setTransactionId(m, 0xABCDEF);
  EXPECT_EQ(transactionId(m), 0xABCDEFu);
}

TEST(Mad, CheckReplyAcceptsTheAnswerAndNamesWhatIsWrong) {
  const MadBytes req = buildRequest(dr({0, 1}), Method::kGet, Attr::kNodeInfo, 0);
  auto good = replyTo(req);
  EXPECT_TRUE(checkReply(req, good).isOk()) << checkReply(req, good).toString();

  auto wrongAttr = good;
  mad_set_field(wrongAttr.data(), 0, IB_MAD_ATTRID_F, 0x15);
  EXPECT_FALSE(checkReply(req, wrongAttr).isOk());
  EXPECT_NE(checkReply(req, wrongAttr).message().find("attr"), std::string::npos)
      << checkReply(req, wrongAttr).toString();

  auto notResp = good;
  mad_set_field(notResp.data(), 0, IB_MAD_METHOD_F, 1);
  mad_set_field(notResp.data(), 0, IB_MAD_RESPONSE_F, 0);
  EXPECT_FALSE(checkReply(req, notResp).isOk());

  auto bad = good;
  mad_set_field(bad.data(), 0, IB_DRSMP_STATUS_F, 0x1c);
  const Status s = checkReply(req, bad);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("status"), std::string::npos) << s.toString();

  const std::vector<std::uint8_t> shortReply(good.begin(), good.begin() + 100);
  EXPECT_FALSE(checkReply(req, shortReply).isOk());
  EXPECT_EQ(checkReply(req, shortReply).code(), ErrorCode::kInvalidArgument);
}

TEST(Mad, ParsesNodeInfoAndPortInfoAsLibibmadWritesThem) {
  const MadBytes req = buildRequest(dr({0, 1}), Method::kGet, Attr::kNodeInfo, 0);
  MadBytes ni = toBytes(replyTo(req));
  std::uint8_t* d = payload(ni).data();
  mad_set_field(d, 0, IB_NODE_TYPE_F, 2);  // switch
  mad_set_field(d, 0, IB_NODE_NPORTS_F, 36);
  mad_set_field64(d, 0, IB_NODE_GUID_F, 0x0002c90000000011ULL);
  mad_set_field64(d, 0, IB_NODE_PORT_GUID_F, 0x0002c90000000012ULL);
  mad_set_field(d, 0, IB_NODE_LOCAL_PORT_F, 3);
  const NodeInfo n = parseNodeInfo(ni);
  EXPECT_TRUE(n.isSwitch);
  EXPECT_EQ(n.numPorts, 36);
  EXPECT_EQ(n.nodeGuid, 0x0002c90000000011ULL);
  EXPECT_EQ(n.portGuid, 0x0002c90000000012ULL);
  EXPECT_EQ(n.localPort, 3);

  MadBytes pi = toBytes(replyTo(buildRequest(dr({0, 1}), Method::kGet, Attr::kPortInfo, 5)));
  d = payload(pi).data();
  mad_set_field(d, 0, IB_PORT_LID_F, 17);
  mad_set_field(d, 0, IB_PORT_STATE_F, 4);
  mad_set_field(d, 0, IB_PORT_PHYS_STATE_F, 5);
  mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, 2);  // 4x
  mad_set_field(d, 0, IB_PORT_LINK_SPEED_ACTIVE_F, 4);  // QDR
  const PortInfo p = parsePortInfo(pi);
  EXPECT_EQ(p.lid, 17);
  EXPECT_EQ(p.state, PortState::kActive);
  EXPECT_EQ(p.phys, PhysState::kLinkUp);
  EXPECT_DOUBLE_EQ(p.gbps(), 32.0);  // 4 lanes x 10 Gb/s x 8/10
}

TEST(Mad, PortInfoSetChangesOnlyThePhysicalState) {
  const MadAddress to = dr({0, 1, 5});
  MadBytes reply = toBytes(replyTo(buildRequest(to, Method::kGet, Attr::kPortInfo, 5)));
  std::uint8_t* d = payload(reply).data();
  mad_set_field(d, 0, IB_PORT_LID_F, 23);
  mad_set_field(d, 0, IB_PORT_SMLID_F, 1);
  mad_set_field(d, 0, IB_PORT_STATE_F, 4);
  mad_set_field(d, 0, IB_PORT_PHYS_STATE_F, 5);
  mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ENABLED_F, 3);
  mad_set_field(d, 0, IB_PORT_HOQ_LIFE_F, 9);
  MadBytes set = buildPortInfoSet(to, 5, reply, PhysState::kDisabled, 0, 0x77);
  EXPECT_EQ(get(set, 0, IB_MAD_METHOD_F), 2u);
  EXPECT_EQ(get(set, 0, IB_MAD_ATTRMOD_F), 5u);
  EXPECT_EQ(get(set, 0, IB_DRSMP_HOPCNT_F), 2u);
  std::uint8_t* s = payload(set).data();
  EXPECT_EQ(mad_get_field(s, 0, IB_PORT_PHYS_STATE_F), 3u);
  EXPECT_EQ(mad_get_field(s, 0, IB_PORT_STATE_F), 0u);  // NoChange: the SM owns it
  EXPECT_EQ(mad_get_field(s, 0, IB_PORT_LID_F), 23u);
  EXPECT_EQ(mad_get_field(s, 0, IB_PORT_SMLID_F), 1u);
  // Width and speed enabled: 0 is "no state change" (IBA 14.2.5.6).
  EXPECT_EQ(mad_get_field(s, 0, IB_PORT_LINK_WIDTH_ENABLED_F), 0u);
  EXPECT_EQ(mad_get_field(s, 0, IB_PORT_LINK_SPEED_ENABLED_F), 0u);
  EXPECT_EQ(mad_get_field(s, 0, IB_PORT_HOQ_LIFE_F), 9u);
  EXPECT_EQ(mad_get_field64(set.data(), 0, IB_MAD_MKEY_F), 0x77u);
  // Width reduction asks for a width explicitly.
  MadBytes narrow = buildPortInfoSet(to, 5, reply, PhysState::kNoChange, 1);
  EXPECT_EQ(mad_get_field(payload(narrow).data(), 0, IB_PORT_LINK_WIDTH_ENABLED_F), 1u);
  EXPECT_EQ(mad_get_field(payload(narrow).data(), 0, IB_PORT_PHYS_STATE_F), 0u);
}

TEST(Mad, ParsesPortCountersExtended) {
  MadAddress to;
  to.mgmtClass = MgmtClass::kPerf;
  to.lid = 9;
  MadBytes r = toBytes(replyTo(buildRequest(to, Method::kGet, Attr::kPortCountersExt, 0)));
  std::uint8_t* d = payload(r).data();
  mad_set_field64(d, 0, IB_PC_EXT_XMT_BYTES_F, 0x123456789ULL);
  mad_set_field64(d, 0, IB_PC_EXT_XMT_PKTS_F, 4242);
  mad_set_field64(d, 0, IB_PC_EXT_RCV_BYTES_F, 77);
  const PortCountersExt c = parsePortCountersExt(r);
  EXPECT_EQ(c.xmitDataWords, 0x123456789ULL);
  EXPECT_EQ(c.xmitPkts, 4242u);
  EXPECT_EQ(c.rcvDataWords, 77u);
}

}  // namespace
}  // namespace ebb::ib

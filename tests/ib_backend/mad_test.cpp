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
  EXPECT_DOUBLE_EQ(p.dataGbps(false).value(), 32.0);  // 4 lanes x 10 Gb/s x 8/10
}

// A PortInfo reply as a switch port would send it, built with libibmad.
MadBytes portInfoReply(std::uint32_t width, std::uint32_t speed, std::uint32_t speedExt,
                       std::uint32_t capMask = 0) {
  MadBytes pi = toBytes(replyTo(buildRequest(dr({0, 1}), Method::kGet, Attr::kPortInfo, 5)));
  std::uint8_t* d = payload(pi).data();
  mad_set_field(d, 0, IB_PORT_PHYS_STATE_F, 5);
  mad_set_field(d, 0, IB_PORT_CAPMASK_F, capMask);
  mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, width);
  mad_set_field(d, 0, IB_PORT_LINK_SPEED_ACTIVE_F, speed);
  mad_set_field(d, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F, speedExt);
  return pi;
}

// Data rates (docs/ib_agent.md, *Link speeds*): lanes x the lane's data rate,
// LinkSpeedExtActive taking over when the port reports extended speeds.
TEST(Mad, LinkSpeedsFromSdrToNdrTimesTheWidth) {
  constexpr std::uint32_t kExt = 1u << 14;  // IsExtendedSpeedsSupported
  struct Case {
    std::uint32_t width, speed, ext, cap;
    double gbps;
  };
  const Case cases[] = {
      {kWidth1x, 1, 0, 0, 2.0},                 // 1x SDR
      {kWidth4x, 1, 0, 0, 8.0},                 // 4x SDR
      {kWidth12x, 1, 0, 0, 24.0},               // 12x SDR
      {kWidth4x, 2, 0, 0, 16.0},                // 4x DDR
      {kWidth4x, 4, 0, 0, 32.0},                // 4x QDR
      {kWidth12x, 4, 0, 0, 96.0},               // 12x QDR
      {kWidth2x, 4, 0, 0, 16.0},                // 2x QDR
      {kWidth4x, 4, 1, kExt, 56.25 * 64 / 66},  // 4x FDR
      {kWidth1x, 4, 2, kExt, 25.0},             // 1x EDR
      {kWidth4x, 4, 2, kExt, 100.0},            // 4x EDR
      {kWidth12x, 4, 2, kExt, 300.0},           // 12x EDR
      {kWidth4x, 4, 4, kExt, 200.0},            // 4x HDR
      {kWidth1x, 4, 4, kExt, 50.0},             // 1x HDR
      {kWidth4x, 4, 8, kExt, 400.0},            // 4x NDR
      {kWidth8x, 4, 8, kExt, 800.0},            // 8x NDR
      {kWidth4x, 4, 0, kExt, 32.0},             // extended speeds supported, none active: QDR
      {kWidth4x, 2, 2, 0, 16.0},  // no extended speeds reported: the ext field is not read
  };
  for (const Case& c : cases) {
    const PortInfo p = parsePortInfo(portInfoReply(c.width, c.speed, c.ext, c.cap));
    const Result<double> g = p.dataGbps(p.extendedSpeeds());
    ASSERT_TRUE(g) << c.width << "/" << c.speed << "/" << c.ext << ": " << g.status().toString();
    EXPECT_NEAR(*g, c.gbps, 1e-9) << c.width << "/" << c.speed << "/" << c.ext;
  }
  // A switch reports the capability at port 0 only: the caller passes it.
  const PortInfo edr = parsePortInfo(portInfoReply(kWidth4x, 4, 2));
  EXPECT_FALSE(edr.extendedSpeeds());
  EXPECT_DOUBLE_EQ(edr.dataGbps(true).value(), 100.0);
  EXPECT_DOUBLE_EQ(edr.dataGbps(false).value(), 32.0);
}

TEST(Mad, AnUnknownSpeedOrWidthCodeIsAnErrorNamingTheField) {
  const PortInfo noSpeed = parsePortInfo(portInfoReply(kWidth4x, 0, 0));
  ASSERT_FALSE(noSpeed.dataGbps(false));
  EXPECT_NE(noSpeed.dataGbps(false).status().message().find("LinkSpeedActive 0"), std::string::npos)
      << noSpeed.dataGbps(false).status().toString();
  const PortInfo badExt = parsePortInfo(portInfoReply(kWidth4x, 4, 3));
  ASSERT_FALSE(badExt.dataGbps(true));
  EXPECT_NE(badExt.dataGbps(true).status().message().find("LinkSpeedExtActive 3"),
            std::string::npos)
      << badExt.dataGbps(true).status().toString();
  const PortInfo noWidth = parsePortInfo(portInfoReply(0, 4, 0));
  ASSERT_FALSE(noWidth.dataGbps(false));
  EXPECT_NE(noWidth.dataGbps(false).status().message().find("LinkWidthActive"), std::string::npos);
  EXPECT_FALSE(parsePortInfo(portInfoReply(0x20, 4, 0)).dataGbps(false));  // no such width
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

// The width Set on the wire, byte by byte, against the IBA layout (vol. 1
// 14.2.5.6, PortInfo): the attribute starts at MAD byte 64; LinkWidthEnabled
// is PortInfo byte 29, LinkWidthSupported 30, LinkWidthActive 31; byte 32
// holds LinkSpeedSupported:4 PortState:4, byte 33 PortPhysicalState:4
// LinkDownDefaultState:4, byte 35 LinkSpeedActive:4 LinkSpeedEnabled:4.
TEST(Mad, WidthSetPutsLinkWidthEnabledAtPortInfoByte29AndChangesNothingElse) {
  const MadAddress to = dr({0, 1, 5});
  MadBytes reply = toBytes(replyTo(buildRequest(to, Method::kGet, Attr::kPortInfo, 5)));
  std::uint8_t* d = payload(reply).data();
  d[16] = 0x00;  // LID 0x0017, big endian
  d[17] = 0x17;
  d[29] = 0x03;  // LinkWidthEnabled 1x|4x
  d[30] = 0x1f;  // LinkWidthSupported 1x|4x|8x|12x|2x
  d[31] = 0x02;  // LinkWidthActive 4x
  d[32] = 0x74;  // LinkSpeedSupported 7, PortState Active
  d[33] = 0x52;  // PortPhysicalState LinkUp, LinkDownDefaultState Polling
  d[35] = 0x47;  // LinkSpeedActive QDR, LinkSpeedEnabled 7
  const PortInfo before = parsePortInfo(reply);
  EXPECT_EQ(before.widthEnabled, kWidth1x | kWidth4x);
  EXPECT_EQ(before.widthSupported, 0x1f);
  EXPECT_EQ(before.widthActive, kWidth4x);
  EXPECT_EQ(before.phys, PhysState::kLinkUp);
  EXPECT_EQ(before.lid, 0x17);

  const MadBytes set = buildPortInfoSet(to, 5, reply, PhysState::kNoChange, kWidth1x, 0x99);
  // Header: base version 1, directed-route SMP class 0x81, class version 1,
  // SubnSet (0x02), attribute PortInfo 0x0015, modifier = the port.
  EXPECT_EQ(set[0], 0x01);
  EXPECT_EQ(set[1], 0x81);
  EXPECT_EQ(set[2], 0x01);
  EXPECT_EQ(set[3], 0x02);
  EXPECT_EQ(set[16], 0x00);
  EXPECT_EQ(set[17], 0x15);
  EXPECT_EQ(set[20] | set[21] | set[22], 0x00);
  EXPECT_EQ(set[23], 0x05);
  EXPECT_EQ(set[31], 0x99);  // M_Key, last byte (MAD bytes 24..31)
  // The attribute.
  EXPECT_EQ(set[64 + 29], 0x01);  // LinkWidthEnabled: 1x
  EXPECT_EQ(set[64 + 30], 0x1f);  // LinkWidthSupported: as read (read-only)
  EXPECT_EQ(set[64 + 31], 0x02);  // LinkWidthActive: as read (read-only)
  EXPECT_EQ(set[64 + 32], 0x70);  // PortState 0: no change (the SM owns it)
  EXPECT_EQ(set[64 + 33], 0x02);  // PortPhysicalState 0: no change; LinkDownDefault kept
  EXPECT_EQ(set[64 + 35], 0x40);  // LinkSpeedEnabled 0: no change
  EXPECT_EQ(set[64 + 16], 0x00);  // LID written back as read
  EXPECT_EQ(set[64 + 17], 0x17);
  // Nothing else of the attribute differs from what was read.
  for (std::size_t i = 0; i < 64; ++i) {
    if (i == 29 || i == 32 || i == 33 || i == 35) continue;
    EXPECT_EQ(set[64 + i], reply[64 + i]) << "PortInfo byte " << i;
  }
  // Restoring writes the value read before, e.g. 1x|4x.
  const MadBytes back = buildPortInfoSet(to, 5, reply, PhysState::kNoChange, 0x03);
  EXPECT_EQ(back[64 + 29], 0x03);
}

TEST(Mad, LinkWidthNamesAndNarrowest) {
  EXPECT_EQ(linkWidthName(0x03), "1x|4x");
  EXPECT_EQ(linkWidthName(0x1f), "1x|2x|4x|8x|12x");
  EXPECT_EQ(linkWidthName(0), "none");
  EXPECT_EQ(narrowestWidth(0x1f), kWidth1x);
  EXPECT_EQ(narrowestWidth(kWidth4x | kWidth12x), kWidth4x);
  EXPECT_EQ(narrowestWidth(kWidth2x | kWidth4x), kWidth2x);
  EXPECT_EQ(narrowestWidth(0), kWidth1x);
  EXPECT_EQ(widestLanes(0x03), 4);
  EXPECT_EQ(widestLanes(kWidth1x), 1);
  EXPECT_EQ(widestLanes(0), 0);
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

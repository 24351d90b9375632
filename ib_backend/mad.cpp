#include "ib_backend/mad.h"

#include <fmt/format.h>
#include <infiniband/mad.h>

#include <algorithm>

namespace ebb::ib {
namespace {

// libibmad's accessors take non-const buffers; they only read in the getters.
void* raw(const std::uint8_t* p) {
  return const_cast<std::uint8_t*>(p);
}
std::uint32_t field(const MadBytes& m, int base, MAD_FIELDS f) {
  return mad_get_field(raw(m.data()), base, f);
}
std::uint64_t field64(const MadBytes& m, int base, MAD_FIELDS f) {
  return mad_get_field64(raw(m.data()), base, f);
}
template <class T>
T narrow(std::uint32_t v) {
  return static_cast<T>(v);
}

constexpr int kData = IB_SMP_DATA_OFFS;  // SMP and PMA payloads both start at byte 64
constexpr int kDrPathOffset = 128;
constexpr std::uint16_t kPermissiveLid = 0xFFFF;

std::string statusText(std::uint32_t status) {
  const std::uint32_t invalid = (status >> 2) & 0x7;
  switch (invalid) {
    case 0:
      return (status & 0x1) ? "busy" : "redirect required";
    case 1:
      return "bad version";
    case 2:
      return "method not supported";
    case 3:
      return "method/attribute combination not supported";
    case 7:
      return "invalid attribute or attribute modifier";
    default:
      return "invalid field";
  }
}

}  // namespace

const char* physStateName(PhysState s) {
  switch (s) {
    case PhysState::kNoChange:
      return "NoChange";
    case PhysState::kSleep:
      return "Sleep";
    case PhysState::kPolling:
      return "Polling";
    case PhysState::kDisabled:
      return "Disabled";
    case PhysState::kTraining:
      return "PortConfigurationTraining";
    case PhysState::kLinkUp:
      return "LinkUp";
    case PhysState::kErrorRecovery:
      return "LinkErrorRecovery";
  }
  return "?";
}

namespace {
// Widths by lanes, narrowest first.
constexpr std::pair<std::uint8_t, int> kWidths[] = {
    {kWidth1x, 1}, {kWidth2x, 2}, {kWidth4x, 4}, {kWidth8x, 8}, {kWidth12x, 12}};
}  // namespace

std::string linkWidthName(std::uint8_t mask) {
  std::string s;
  for (const auto& [bit, lanes] : kWidths) {
    if (mask & bit) s += fmt::format("{}{}x", s.empty() ? "" : "|", lanes);
  }
  return s.empty() ? "none" : s;
}

std::uint8_t narrowestWidth(std::uint8_t supported) {
  for (const auto& [bit, lanes] : kWidths) {
    if (supported & bit) return bit;
  }
  return kWidth1x;
}

int widestLanes(std::uint8_t mask) {
  int best = 0;
  for (const auto& [bit, lanes] : kWidths) {
    if (mask & bit) best = lanes;
  }
  return best;
}

DrPath DrPath::extended(std::uint8_t port) const {
  DrPath p;
  p.hops.resize(std::max<std::size_t>(hops.size(), 1) + 1, 0);
  std::copy(hops.begin(), hops.end(), p.hops.begin());
  p.hops.back() = port;
  return p;
}

std::string DrPath::toString() const {
  std::string s = "0";
  for (std::size_t i = 1; i < hops.size(); ++i)
    s += fmt::format(",{}", hops[i]);
  return s;
}

std::string MadAddress::toString() const {
  return mgmtClass == MgmtClass::kSmiDirect ? "DR path " + path.toString()
                                            : fmt::format("LID {}", lid);
}

MadBytes buildRequest(const MadAddress& to, Method method, Attr attr, std::uint32_t attrMod,
                      std::uint64_t mKey) {
  MadBytes m{};
  void* b = m.data();
  mad_set_field(b, 0, IB_MAD_BASEVER_F, 1);
  mad_set_field(b, 0, IB_MAD_MGMTCLASS_F, static_cast<std::uint32_t>(to.mgmtClass));
  mad_set_field(b, 0, IB_MAD_CLASSVER_F, 1);
  mad_set_field(b, 0, IB_MAD_METHOD_F, static_cast<std::uint32_t>(method));
  mad_set_field(b, 0, IB_MAD_ATTRID_F, static_cast<std::uint32_t>(attr));
  mad_set_field(b, 0, IB_MAD_ATTRMOD_F, attrMod);
  if (to.mgmtClass != MgmtClass::kPerf) mad_set_field64(b, 0, IB_MAD_MKEY_F, mKey);
  if (to.mgmtClass == MgmtClass::kSmiDirect) {
    const std::size_t hopCount = to.path.hops.empty() ? 0 : to.path.hops.size() - 1;
    mad_set_field(b, 0, IB_DRSMP_HOPCNT_F, static_cast<std::uint32_t>(hopCount));
    mad_set_field(b, 0, IB_DRSMP_HOPPTR_F, 0);
    mad_set_field(b, 0, IB_DRSMP_DRSLID_F, kPermissiveLid);
    mad_set_field(b, 0, IB_DRSMP_DRDLID_F, kPermissiveLid);
    for (std::size_t i = 1; i < to.path.hops.size() && i < 64; ++i) {
      m[kDrPathOffset + i] = to.path.hops[i];
    }
  }
  return m;
}

std::span<std::uint8_t> payload(MadBytes& mad) {
  return std::span<std::uint8_t>(mad).subspan(kData);
}
std::span<const std::uint8_t> payload(const MadBytes& mad) {
  return std::span<const std::uint8_t>(mad).subspan(kData);
}

std::uint64_t transactionId(const MadBytes& mad) {
  return field64(mad, 0, IB_MAD_TRID_F);
}
void setTransactionId(MadBytes& mad, std::uint64_t tid) {
  mad_set_field64(mad.data(), 0, IB_MAD_TRID_F, tid);
}

Status checkReply(const MadBytes& request, std::span<const std::uint8_t> reply) {
  auto bad = [](std::string what) { return Status(ErrorCode::kInvalidArgument, std::move(what)); };
  if (reply.size() < kMadBytes) {
    return bad(fmt::format("reply is {} bytes, a MAD is {}", reply.size(), kMadBytes));
  }
  MadBytes r{};
  std::copy_n(reply.begin(), kMadBytes, r.begin());
  if (const auto v = field(r, 0, IB_MAD_BASEVER_F); v != 1) {
    return bad(fmt::format("base version {} (expected 1)", v));
  }
  const auto cls = field(request, 0, IB_MAD_MGMTCLASS_F);
  if (const auto c = field(r, 0, IB_MAD_MGMTCLASS_F); c != cls) {
    return bad(fmt::format("management class 0x{:02x} (expected 0x{:02x})", c, cls));
  }
  if (const auto m = field(r, 0, IB_MAD_METHOD_F) | (field(r, 0, IB_MAD_RESPONSE_F) << 7);
      m != static_cast<std::uint32_t>(Method::kGetResp)) {
    return bad(fmt::format("method 0x{:02x} (expected GetResp 0x81)", m));
  }
  if (const auto a = field(r, 0, IB_MAD_ATTRID_F); a != field(request, 0, IB_MAD_ATTRID_F)) {
    return bad(fmt::format("attribute 0x{:04x} (expected 0x{:04x})", a,
                           field(request, 0, IB_MAD_ATTRID_F)));
  }
  if (const auto mod = field(r, 0, IB_MAD_ATTRMOD_F); mod != field(request, 0, IB_MAD_ATTRMOD_F)) {
    return bad(fmt::format("attribute modifier {} (expected {})", mod,
                           field(request, 0, IB_MAD_ATTRMOD_F)));
  }
  const bool dr = cls == static_cast<std::uint32_t>(MgmtClass::kSmiDirect);
  const auto status = dr ? field(r, 0, IB_DRSMP_STATUS_F) : field(r, 0, IB_MAD_STATUS_F);
  if (status != 0) return bad(fmt::format("status 0x{:04x}: {}", status, statusText(status)));
  return Status::ok();
}

NodeInfo parseNodeInfo(const MadBytes& r) {
  NodeInfo n;
  n.isSwitch = field(r, kData, IB_NODE_TYPE_F) == 2;
  n.numPorts = narrow<std::uint8_t>(field(r, kData, IB_NODE_NPORTS_F));
  n.nodeGuid = field64(r, kData, IB_NODE_GUID_F);
  n.portGuid = field64(r, kData, IB_NODE_PORT_GUID_F);
  n.localPort = narrow<std::uint8_t>(field(r, kData, IB_NODE_LOCAL_PORT_F));
  return n;
}

std::uint8_t parseSmState(const MadBytes& r) {
  return narrow<std::uint8_t>(field(r, kData, IB_SMINFO_STATE_F));
}

std::string parseNodeDesc(const MadBytes& r) {
  const auto p = payload(r);
  const auto end = std::find(p.begin(), p.begin() + 64, std::uint8_t{0});
  std::string s(p.begin(), end);
  std::replace_if(
      s.begin(), s.end(), [](char c) { return c < 0x20 || c > 0x7e; }, '?');
  return s;
}

PortInfo parsePortInfo(const MadBytes& r) {
  PortInfo p;
  p.lid = narrow<std::uint16_t>(field(r, kData, IB_PORT_LID_F));
  p.masterSmLid = narrow<std::uint16_t>(field(r, kData, IB_PORT_SMLID_F));
  p.state = narrow<PortState>(field(r, kData, IB_PORT_STATE_F));
  p.phys = narrow<PhysState>(field(r, kData, IB_PORT_PHYS_STATE_F));
  p.widthActive = narrow<std::uint8_t>(field(r, kData, IB_PORT_LINK_WIDTH_ACTIVE_F));
  p.speedActive = narrow<std::uint8_t>(field(r, kData, IB_PORT_LINK_SPEED_ACTIVE_F));
  p.speedExtActive = narrow<std::uint8_t>(field(r, kData, IB_PORT_LINK_SPEED_EXT_ACTIVE_F));
  p.capabilityMask = field(r, kData, IB_PORT_CAPMASK_F);
  p.widthEnabled = narrow<std::uint8_t>(field(r, kData, IB_PORT_LINK_WIDTH_ENABLED_F));
  p.widthSupported = narrow<std::uint8_t>(field(r, kData, IB_PORT_LINK_WIDTH_SUPPORTED_F));
  return p;
}

// Signalling rate per lane times the line code's efficiency (IBA vol. 2):
// 8b/10b up to QDR, 64b/66b for FDR and EDR; HDR and NDR (PAM4, RS-FEC) carry
// 50 and 100 Gb/s of data per lane.
double laneGbps(std::uint8_t speedActive) {
  switch (speedActive) {
    case 1:
      return 2.0;  // SDR 2.5 Gb/s x 8/10
    case 2:
      return 4.0;  // DDR 5 Gb/s x 8/10
    case 4:
      return 8.0;  // QDR 10 Gb/s x 8/10
    default:
      return 0.0;
  }
}

double laneGbpsExt(std::uint8_t speedExtActive) {
  switch (speedExtActive) {
    case 1:
      return 14.0625 * 64.0 / 66.0;  // FDR
    case 2:
      return 25.78125 * 64.0 / 66.0;  // EDR: 25
    case 4:
      return 50.0;  // HDR 53.125 Gb/s PAM4
    case 8:
      return 100.0;  // NDR 106.25 Gb/s PAM4
    default:
      return 0.0;
  }
}

Result<double> PortInfo::dataGbps(bool extendedSpeeds) const {
  const int lanes = widestLanes(widthActive);
  if (lanes == 0 || (widthActive & ~(kWidth1x | kWidth2x | kWidth4x | kWidth8x | kWidth12x))) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("LinkWidthActive 0x{:02x} is not a known width", widthActive));
  }
  if (extendedSpeeds && speedExtActive != 0) {
    const double lane = laneGbpsExt(speedExtActive);
    if (lane <= 0) {
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("LinkSpeedExtActive {} is not a known speed (1 FDR, 2 EDR, "
                                "4 HDR, 8 NDR)",
                                speedExtActive));
    }
    return lanes * lane;
  }
  const double lane = laneGbps(speedActive);
  if (lane <= 0) {
    return Status(
        ErrorCode::kInvalidArgument,
        fmt::format("LinkSpeedActive {} is not a known speed (1 SDR, 2 DDR, 4 QDR){}", speedActive,
                    extendedSpeeds ? "" : "; the port does not report extended speeds"));
  }
  return lanes * lane;
}

Result<double> PortInfo::laneDataGbps(bool extendedSpeeds) const {
  Result<double> d = dataGbps(extendedSpeeds);
  if (!d) return d;
  return *d / widestLanes(widthActive);
}

PortCountersExt parsePortCountersExt(const MadBytes& r) {
  PortCountersExt c;
  c.xmitDataWords = field64(r, kData, IB_PC_EXT_XMT_BYTES_F);
  c.xmitPkts = field64(r, kData, IB_PC_EXT_XMT_PKTS_F);
  c.rcvDataWords = field64(r, kData, IB_PC_EXT_RCV_BYTES_F);
  return c;
}

std::uint32_t parsePortXmitWait(const MadBytes& r) {
  return field(r, kData, IB_PC_XMT_WAIT_F);
}

void setCounterPortSelect(MadBytes& request, std::uint8_t port) {
  // PortSelect sits at the same place in PortCounters and PortCountersExtended.
  mad_set_field(request.data(), kData, IB_PC_EXT_PORT_SELECT_F, port);
}

MadBytes buildPortInfoSet(const MadAddress& to, std::uint8_t port, const MadBytes& getReply,
                          PhysState phys, std::uint8_t widthEnabled, std::uint64_t mKey) {
  MadBytes m = buildRequest(to, Method::kSet, Attr::kPortInfo, port, mKey);
  std::copy_n(getReply.begin() + kData, 64, m.begin() + kData);
  void* d = m.data() + kData;
  mad_set_field(d, 0, IB_PORT_STATE_F, static_cast<std::uint32_t>(PortState::kNoChange));
  mad_set_field(d, 0, IB_PORT_PHYS_STATE_F, static_cast<std::uint32_t>(phys));
  // Enabled width and speed fields: 0 means "no change" except where asked.
  mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ENABLED_F, widthEnabled);
  mad_set_field(d, 0, IB_PORT_LINK_SPEED_ENABLED_F, 0);
  return m;
}

}  // namespace ebb::ib

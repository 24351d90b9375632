#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace ebb::ib {

// InfiniBand management datagrams (IBA vol. 1 ch. 13-16): what ebb sends and
// what it reads back. Field offsets come from libibmad's field tables, so
// ebb and infiniband-diags agree bit for bit.
inline constexpr std::size_t kMadBytes = 256;
using MadBytes = std::array<std::uint8_t, kMadBytes>;

enum class MgmtClass : std::uint8_t {
  kSmiLid = 0x01,     // LID-routed subnet management
  kPerf = 0x04,       // performance management (PMA), over QP1
  kSmiDirect = 0x81,  // directed-route subnet management
};

enum class Method : std::uint8_t { kGet = 0x01, kSet = 0x02, kGetResp = 0x81 };

enum class Attr : std::uint16_t {
  kNodeDesc = 0x0010,
  kNodeInfo = 0x0011,
  kPortInfo = 0x0015,
  kPortCounters = 0x0012,
  kPortCountersExt = 0x001D,
  kSmInfo = 0x0020,
};

// PortInfo.PortPhysicalState values (IBA 14.2.5.6).
enum class PhysState : std::uint8_t {
  kNoChange = 0,
  kSleep = 1,
  kPolling = 2,
  kDisabled = 3,
  kTraining = 4,
  kLinkUp = 5,
  kErrorRecovery = 6,
};
// PortInfo.PortState values.
enum class PortState : std::uint8_t {
  kNoChange = 0,
  kDown = 1,
  kInit = 2,
  kArmed = 3,
  kActive = 4
};

const char* physStateName(PhysState s);

// PortInfo.LinkWidth{Enabled,Supported,Active} bits (IBA 14.2.5.6, 2x from
// MgtWG RefIDs 9306-9309): 1=1x 2=4x 4=8x 8=12x 16=2x. In LinkWidthEnabled
// 0 means "no change" and 255 "set to LinkWidthSupported".
inline constexpr std::uint8_t kWidth1x = 0x01;
inline constexpr std::uint8_t kWidth4x = 0x02;
inline constexpr std::uint8_t kWidth8x = 0x04;
inline constexpr std::uint8_t kWidth12x = 0x08;
inline constexpr std::uint8_t kWidth2x = 0x10;
// "1x|4x" (narrowest first); "none" for 0.
std::string linkWidthName(std::uint8_t mask);
// The narrowest width in `supported` (1x when it is empty: every port supports 1x).
std::uint8_t narrowestWidth(std::uint8_t supported);
// Lanes of the widest width in `mask` (0 for none).
int widestLanes(std::uint8_t mask);

// A directed route: the exit port at each hop from the local port (IBA
// 14.2.2.2; element 0 is unused). At most 63 hops.
struct DrPath {
  std::vector<std::uint8_t> hops;
  DrPath extended(std::uint8_t port) const;
  std::string toString() const;  // "0,1,5,2" as ibnetdiscover and smpquery -D print it
};

// Where a request goes: a directed route (SMPs only) or a LID.
struct MadAddress {
  MgmtClass mgmtClass = MgmtClass::kSmiDirect;
  DrPath path;            // kSmiDirect
  std::uint16_t lid = 0;  // kSmiLid, kPerf
  std::string toString() const;
};

// Builds a request. The transaction id is left 0: the transport assigns it.
MadBytes buildRequest(const MadAddress& to, Method method, Attr attr, std::uint32_t attrMod,
                      std::uint64_t mKey = 0);
// The attribute payload (64 bytes for SMPs, 192 for PMA) of a MAD.
std::span<std::uint8_t> payload(MadBytes& mad);
std::span<const std::uint8_t> payload(const MadBytes& mad);

std::uint64_t transactionId(const MadBytes& mad);
void setTransactionId(MadBytes& mad, std::uint64_t tid);

// Checks that `reply` (received bytes) answers `request`: full length, base
// version 1, same class, GetResp, same attribute and modifier, status 0.
// E_INVALID naming the field otherwise ("status 0x001c: unsupported attribute").
Status checkReply(const MadBytes& request, std::span<const std::uint8_t> reply);

struct NodeInfo {
  bool isSwitch = false;
  std::uint8_t numPorts = 0;
  std::uint64_t nodeGuid = 0;
  std::uint64_t portGuid = 0;
  std::uint8_t localPort = 0;  // the port the MAD entered by
};
struct PortInfo {
  std::uint16_t lid = 0;
  std::uint16_t masterSmLid = 0;  // the LID of the master SM, 0 before an SM ran
  PortState state = PortState::kDown;
  PhysState phys = PhysState::kPolling;
  std::uint8_t widthActive = 0;      // bit mask: 1=1x 2=4x 4=8x 8=12x 16=2x
  std::uint8_t speedActive = 0;      // LinkSpeedActive: 1=SDR 2=DDR 4=QDR
  std::uint8_t speedExtActive = 0;   // LinkSpeedExtActive: 0 none, 1=FDR 2=EDR 4=HDR 8=NDR
  std::uint32_t capabilityMask = 0;  // on a switch, valid at port 0 only
  std::uint8_t widthEnabled = 0;
  std::uint8_t widthSupported = 0;
  // CapabilityMask.IsExtendedSpeedsSupported (IBA 14.2.5.6, bit 14).
  bool extendedSpeeds() const { return (capabilityMask & (1u << 14)) != 0; }
  // The data rate of one direction in Gb/s: LinkWidthActive lanes times the
  // per-lane data rate (after line encoding) of LinkSpeedExtActive when
  // `extendedSpeeds` (the port's, or on a switch its port 0's capability) and
  // it is non-zero, else of LinkSpeedActive. The table is in
  // docs/ib_agent.md. E_INVALID naming the field when a code is unknown.
  Result<double> dataGbps(bool extendedSpeeds) const;
  // One lane's data rate (dataGbps over the active lanes): a byte on a lane,
  // the IBA's symbol time, takes 8 / laneDataGbps ns.
  Result<double> laneDataGbps(bool extendedSpeeds) const;
};
// Per-lane data rate in Gb/s of a LinkSpeedActive / LinkSpeedExtActive code
// (one bit: the active speed); 0 for a code the IBA does not define.
double laneGbps(std::uint8_t speedActive);
double laneGbpsExt(std::uint8_t speedExtActive);
struct PortCountersExt {
  std::uint64_t xmitDataWords = 0;  // PortXmitData, in 4-byte words
  std::uint64_t xmitPkts = 0;
  std::uint64_t rcvDataWords = 0;
};

NodeInfo parseNodeInfo(const MadBytes& reply);
std::string parseNodeDesc(const MadBytes& reply);
PortInfo parsePortInfo(const MadBytes& reply);
PortCountersExt parsePortCountersExt(const MadBytes& reply);
// SMInfo.SMState (IBA 14.2.5.13): 0 not active, 1 discovering, 2 standby, 3 master.
inline constexpr std::uint8_t kSmStateMaster = 3;
std::uint8_t parseSmState(const MadBytes& reply);
// PortXmitWait from PortCounters (32 bits, in ticks of the port's clock;
// it stops at kXmitWaitSaturated).
std::uint32_t parsePortXmitWait(const MadBytes& reply);
inline constexpr std::uint32_t kXmitWaitSaturated = 0xFFFFFFFFu;

// Request payload setters.
void setCounterPortSelect(MadBytes& request, std::uint8_t port);
// Turns a PortInfo Get reply into a Set that changes only the physical state
// (and width-enabled when `widthEnabled` != 0): PortState=NoChange, the rest
// written back as read (the IBA read-modify-write rule).
MadBytes buildPortInfoSet(const MadAddress& to, std::uint8_t port, const MadBytes& getReply,
                          PhysState phys, std::uint8_t widthEnabled = 0, std::uint64_t mKey = 0);

}  // namespace ebb::ib

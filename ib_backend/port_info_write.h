#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "ib_backend/mad.h"
#include "ib_backend/mad_transport.h"

namespace ebb::ib {

// The fields of one PortInfo Set; everything else is written back as read
// (PortState and LinkSpeedEnabled as "no change").
struct PortInfoEdit {
  PhysState phys = PhysState::kNoChange;
  std::uint8_t widthEnabled = 0;  // 0: no change
  // "Polling", "LinkWidthEnabled 1x" (error messages).
  std::string describe() const;
};

// What a read-modify-write did: the PortInfo read, what was written, and
// the PortInfo the Set's reply carries.
struct PortInfoChange {
  PortInfo before;
  PortInfoEdit edit;
  PortInfo after;
};

// Sends one SMP built for the address of the moment (a directed route may
// change between the Get and the Set) and completes with its reply.
using SmpSender =
    std::function<void(std::function<MadBytes(const MadAddress&)> build, MadTransport::Done done)>;

// Read-modify-write of one port's PortInfo: Get, `modify` decides the edit
// from what was read (or refuses), Set with every other field as read; an
// edit that changes nothing (no PhysState, no width) sends no Set.
// Errors name the port (`where`): "<where>: <Get error>", "<where>: <refusal>",
// "setting <where> <edit>: <Set error>". `onSet` hears of every Set sent.
struct PortInfoWrite {
  SmpSender send;
  std::uint8_t portNumber = 0;  // IB port number (label + 1)
  std::uint64_t mKey = 0;
  std::string where;
  std::function<Result<PortInfoEdit>(const PortInfo& before)> modify;
  std::function<void()> onSet;
};
void writePortInfo(PortInfoWrite w, std::function<void(Result<PortInfoChange>)> done);

}  // namespace ebb::ib

#pragma once

// Writes small OTF2 archives for the OTF2 reader's tests: locations with
// explicit ids, each in a PROCESS location group (several per group for a
// multi-threaded process), events at explicit timestamps, and optional local
// definition files. Only built with OTF2.

#include <otf2/otf2.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace ebb::workload::testing {

// The regions every test archive defines (Enter/Leave take these).
enum Region : OTF2_RegionRef { kMpiSend, kMpiRecv, kMpiBarrier, kMpiIsend, kMpiWait, kRegions };

struct Otf2Event {
  enum Kind { kEnter, kLeave, kSend, kRecv, kIsend, kIsendComplete, kCollective, kRmaPut };
  Kind kind = kSend;
  OTF2_TimeStamp time = 0;
  std::uint32_t peer = 0;  // a rank of `comm` (MPI_COMM_WORLD, 0)
  std::uint64_t length = 64;
  std::uint64_t req = 0;
  OTF2_RegionRef region = kMpiSend;
  OTF2_CollectiveOp op = OTF2_COLLECTIVE_OP_BARRIER;
  std::uint32_t tag = 7;
  OTF2_CommRef comm = 0;
};

struct Otf2Location {
  OTF2_LocationRef id = 0;
  OTF2_LocationGroupRef process = 0;  // its PROCESS location group
  std::vector<Otf2Event> events{};
  // Local definitions: none unless `localDefs`; then a file (maybe empty)
  // with these clock offsets (time, offset) and, if `mapping`, an identity
  // mapping table of the regions.
  bool localDefs = false;
  std::vector<std::pair<OTF2_TimeStamp, std::int64_t>> clockOffsets{};
  bool mapping = false;
};

struct Otf2Archive {
  std::vector<Otf2Location> locations;
  // MPI_COMM_WORLD's locations in rank order (the COMM_LOCATIONS group):
  // a process's master thread.
  std::vector<OTF2_LocationRef> world;
  std::uint64_t ticksPerSecond = 1000000000;  // 1 tick = 1 ns
};

// Writes `a` in `dir` (emptied first); returns the anchor file's path.
std::string writeOtf2Archive(const std::filesystem::path& dir, const Otf2Archive& a);

// A scratch folder for `name`, unique to this test process.
std::filesystem::path otf2ScratchDir(const std::string& name);

}  // namespace ebb::workload::testing

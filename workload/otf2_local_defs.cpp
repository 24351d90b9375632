#include "workload/otf2_local_defs.h"

#include <fmt/format.h>

#include <system_error>

#include "workload/otf2_archive_files.h"

namespace ebb::workload::otf2 {
namespace {

// What a location's local definitions carry that changes its events.
struct Carried {
  bool clockOffsets = false;
  bool mappingTables = false;
};

OTF2_CallbackCode onClockOffset(void* ud, OTF2_TimeStamp, int64_t, double) {
  static_cast<Carried*>(ud)->clockOffsets = true;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onMappingTable(void* ud, OTF2_MappingType, const OTF2_IdMap*) {
  static_cast<Carried*>(ud)->mappingTables = true;
  return OTF2_CALLBACK_SUCCESS;
}

std::string whatCarried(const Carried& c) {
  return c.clockOffsets && c.mappingTables ? "clock offsets and mapping tables"
         : c.clockOffsets                  ? "clock offsets"
                                           : "mapping tables";
}

}  // namespace

Status readLocalDefinitions(OTF2_Reader* reader, const std::string& anchor,
                            const std::map<OTF2_LocationRef, std::uint32_t>& locations,
                            std::vector<std::string>& warnings) {
  std::map<OTF2_LocationRef, std::uint32_t> missing;
  std::error_code ec;
  for (const auto& [loc, rank] : locations) {
    if (!std::filesystem::exists(locationFile(anchor, loc, "def"), ec)) missing.emplace(loc, rank);
  }
  if (missing.size() == locations.size()) return Status::ok();  // a trace without any
  if (OTF2_Reader_OpenDefFiles(reader) != OTF2_SUCCESS) {
    return Status(ErrorCode::kParse, fmt::format("{}: cannot open the local definition files",
                                                 archiveOf(anchor).string()));
  }
  OTF2_DefReaderCallbacks* cbs = OTF2_DefReaderCallbacks_New();
  OTF2_DefReaderCallbacks_SetClockOffsetCallback(cbs, onClockOffset);
  OTF2_DefReaderCallbacks_SetMappingTableCallback(cbs, onMappingTable);
  Carried carried;
  OTF2_LocationRef carrier = 0;  // a location whose definitions carry them, for the message
  Status status = Status::ok();
  for (const auto& [loc, rank] : locations) {
    if (missing.count(loc)) continue;
    const std::string file = locationFile(anchor, loc, "def").string();
    OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader, loc);
    if (!dr) {
      status = Status(ErrorCode::kParse,
                      fmt::format("{}: unreadable local definitions ({}: the library cannot "
                                  "open it)",
                                  file, rankLabel(rank, loc)));
      break;
    }
    Carried mine;
    OTF2_Reader_RegisterDefCallbacks(reader, dr, cbs, &mine);
    uint64_t n = 0;
    const OTF2_ErrorCode st = OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &n);
    OTF2_Reader_CloseDefReader(reader, dr);
    if (st != OTF2_SUCCESS) {
      status = Status(ErrorCode::kParse,
                      fmt::format("{}: unreadable local definitions ({}, after {} records: {})",
                                  file, rankLabel(rank, loc), n, OTF2_Error_GetDescription(st)));
      break;
    }
    if ((mine.clockOffsets || mine.mappingTables) && !carried.clockOffsets &&
        !carried.mappingTables) {
      carrier = loc;
    }
    carried.clockOffsets |= mine.clockOffsets;
    carried.mappingTables |= mine.mappingTables;
  }
  OTF2_DefReaderCallbacks_Delete(cbs);
  OTF2_Reader_CloseDefFiles(reader);
  if (!status.isOk() || missing.empty()) return status;
  const auto [loc, rank] = *missing.begin();
  const std::string file = locationFile(anchor, loc, "def").string();
  if (carried.clockOffsets || carried.mappingTables) {
    // What the file held cannot be known, and the others say it held
    // something: its events would replay with unmapped references and
    // timestamps on the location's own clock, with nothing to show it.
    return Status(
        ErrorCode::kParse,
        fmt::format("{} ({}) is missing, while the other locations' local definitions carry {} "
                    "({}): without it location {}'s event references are not mapped to the "
                    "global definitions and its timestamps are not corrected to the global "
                    "clock, so its events would replay wrongly; restore the file from the "
                    "original archive",
                    file, rankLabel(rank, loc), whatCarried(carried),
                    locationFile(anchor, carrier, "def").string(), loc));
  }
  for (const auto& [l, r] : missing) {
    warnings.push_back(fmt::format(
        "{} ({}) is missing while other locations have local definitions; theirs carry no "
        "clock offsets nor mapping tables, so location {}'s events are read as they are",
        locationFile(anchor, l, "def").string(), rankLabel(r, l), l));
  }
  return Status::ok();
}

}  // namespace ebb::workload::otf2

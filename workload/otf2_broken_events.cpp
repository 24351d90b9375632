#include "workload/otf2_broken_events.h"

#include <fmt/format.h>

#include <filesystem>

#include "workload/otf2_archive_files.h"

namespace ebb::workload::otf2 {

std::string brokenEventFile(const std::string& anchor,
                            const std::map<OTF2_LocationRef, std::uint32_t>& rankOf,
                            const std::map<OTF2_LocationRef, LocationDef>& locations) {
  for (const auto& [loc, rank] : rankOf) {
    const std::filesystem::path file = locationFile(anchor, loc, "evt");
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
      const auto def = locations.find(loc);
      if (def == locations.end() || def->second.events == 0) continue;  // no events: no file
      return fmt::format("{} ({}) is missing, and the definitions give location {} {} events",
                         file.string(), rankLabel(rank, loc), loc, def->second.events);
    }
    OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
    if (!r) return {};
    OTF2_Reader_SetSerialCollectiveCallbacks(r);
    OTF2_Reader_SelectLocation(r, loc);
    OTF2_Reader_OpenEvtFiles(r);
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(r, loc);
    uint64_t n = 0;
    const OTF2_ErrorCode st =
        er ? OTF2_Reader_ReadAllLocalEvents(r, er, &n) : OTF2_ERROR_INVALID_ARGUMENT;
    OTF2_Reader_CloseEvtFiles(r);
    OTF2_Reader_Close(r);
    if (st != OTF2_SUCCESS) {
      return fmt::format("{} ({}, after {} events: {}): unreadable events", file.string(),
                         rankLabel(rank, loc), n, OTF2_Error_GetDescription(st));
    }
  }
  return {};
}

}  // namespace ebb::workload::otf2

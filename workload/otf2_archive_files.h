#pragma once

// The files of an OTF2 archive: the anchor "x/traces.otf2" lists the folder
// "x/traces", which holds each location's events (<location>.evt) and local
// definitions (<location>.def).

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace ebb::workload::otf2 {

// The archive folder of an anchor ("x/traces.otf2" -> "x/traces").
inline std::filesystem::path archiveOf(const std::string& anchor) {
  const std::filesystem::path p(anchor);
  return p.parent_path() / p.stem();
}

// A location's file: `ext` "evt" or "def".
inline std::filesystem::path locationFile(const std::string& anchor, std::uint64_t location,
                                          const char* ext) {
  return archiveOf(anchor) / fmt::format("{}.{}", location, ext);
}

// "rank R" for a location that is its rank's number, "rank R, location L"
// otherwise (a thread of a process, or ids not in rank order).
inline std::string rankLabel(std::uint32_t rank, std::uint64_t location) {
  return rank == location ? fmt::format("rank {}", rank)
                          : fmt::format("rank {}, location {}", rank, location);
}

}  // namespace ebb::workload::otf2

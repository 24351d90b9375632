#pragma once

// A location's local definitions (<archive>/<location>.def) hold its mapping
// tables (its own ids of strings, regions, communicators... to the global
// definitions' ids) and its clock offsets (its clock to the global clock).
// The OTF2 library applies both to the location's events as they are read,
// once the local definitions have been read; a location without the file
// gets neither. Only built with OTF2.

#include <otf2/otf2.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace ebb::workload::otf2 {

// Reads the local definitions of `locations` (location -> rank, those whose
// events will be read) into `reader` (with them selected).
// A trace may have none at all (ids already global, one clock). But when
// some locations have them and carry mapping tables or clock offsets, a
// location with events and no file lost what makes its events right: an
// E_PARSE error naming the file. When theirs carry neither, a missing file
// loses nothing ebb uses: a warning in `warnings`. A file that cannot be
// read is an E_PARSE error naming it.
Status readLocalDefinitions(OTF2_Reader* reader, const std::string& anchor,
                            const std::map<OTF2_LocationRef, std::uint32_t>& locations,
                            std::vector<std::string>& warnings);

}  // namespace ebb::workload::otf2

// The irregular fabric of the failure tests (tests/ib/irregular_fabric.h).
#include "tests/ib/irregular_fabric.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "fabric/ibnetdiscover.h"

namespace ebb::testing {

namespace {
// The ibsim net file: every leaf has 3 up cables (one per spine);
// tests/ib/topology_mismatch_test.cpp drops one cable from each side.
constexpr const char* kNet = R"(
caguid=0x0002c90000a00000
Hca	1 "H0"
[1]	"L1"[1]
caguid=0x0002c90000a00001
Hca	1 "H1"
[1]	"L1"[3]
caguid=0x0002c90000a00002
Hca	1 "H2"
[1]	"L2"[2]
caguid=0x0002c90000a00003
Hca	1 "H3"
[1]	"L2"[4]
caguid=0x0002c90000a00004
Hca	1 "H4"
[1]	"L3"[1]
caguid=0x0002c90000a00005
Hca	1 "H5"
[1]	"L3"[2]
caguid=0x0002c90000a00006
Hca	1 "H6"
[1]	"L4"[3]
caguid=0x0002c90000a00007
Hca	1 "H7"
[1]	"L4"[8]
caguid=0x0002c90000a00008
Hca	1 "H8"
[1]	"L5"[4]
caguid=0x0002c90000a00009
Hca	1 "H9"
[1]	"L5"[7]

switchguid=0x0002c90000b00001
Switch	12 "S1"
[1]	"L1"[5]
[4]	"L2"[1]
[7]	"L3"[6]
[10]	"L4"[2]
[12]	"L5"[1]

switchguid=0x0002c90000b00002
Switch	12 "S2"
[3]	"L1"[6]
[1]	"L2"[7]
[5]	"L3"[3]
[10]	"L4"[7]
[8]	"L5"[2]

switchguid=0x0002c90000b00003
Switch	12 "S3"
[2]	"L1"[8]
[6]	"L2"[5]
[9]	"L3"[4]
[12]	"L4"[5]
[3]	"L5"[6]

switchguid=0x0002c90000c00001
Switch	8 "L1"
[1]	"H0"[1]
[3]	"H1"[1]
[5]	"S1"[1]
[6]	"S2"[3]
[8]	"S3"[2]

switchguid=0x0002c90000c00002
Switch	8 "L2"
[2]	"H2"[1]
[4]	"H3"[1]
[1]	"S1"[4]
[7]	"S2"[1]
[5]	"S3"[6]

switchguid=0x0002c90000c00003
Switch	8 "L3"
[1]	"H4"[1]
[2]	"H5"[1]
[6]	"S1"[7]
[3]	"S2"[5]
[4]	"S3"[9]

switchguid=0x0002c90000c00004
Switch	8 "L4"
[3]	"H6"[1]
[8]	"H7"[1]
[2]	"S1"[10]
[7]	"S2"[10]
[5]	"S3"[12]

switchguid=0x0002c90000c00005
Switch	8 "L5"
[4]	"H8"[1]
[7]	"H9"[1]
[1]	"S1"[12]
[2]	"S2"[8]
[6]	"S3"[3]
)";
}  // namespace

const fabric::Topology& irregular() {
  static const fabric::Topology t = [] {
    std::istringstream in(kNet);
    auto r = fabric::parseIbnetdiscover(in, "net");
    if (!r) throw std::runtime_error(r.status().toString());
    return std::move(r).value();
  }();
  return t;
}

const fabric::MinimalTree& irregularTree() {
  static const fabric::MinimalTree mt = fabric::MinimalTree::build(irregular()).value();
  return mt;
}

// OpenSM with ebb's event plugin (trap 128 reaches the daemon at once), or without.
IbsimFabric::Options fabricOptions(bool osmEvents) {
  IbsimFabric::Options o;
  if (osmEvents) {
    o.openSmConfig = {"event_plugin_name ebb_osm_events",
                      "event_plugin_options ebb_osm_events=osm-events.sock"};  // in OpenSM's cwd
    o.openSmEnv["LD_LIBRARY_PATH"] = std::string(EBB_BINARY_DIR) + "/opensm_plugin";
  }
  return o;
}

// The daemon at H1 (leaf L1) on kNet, given as a net file next to its config.
DaemonConfig onIrregular(IbsimFabric& fab, const std::string& fields, const std::string& name) {
  std::ofstream(fab.scratchDir() + "/fabric.net") << kNet;
  return {.topo = &irregular(),
          .fabric = R"(topology_file { path: "fabric.net" format: IBSIM_NET })",
          .agentFields = fmt::format("lock_file: \"{}.lock\" {}", name, fields),
          .name = name};
}

const char* irregularNet() {
  return kNet;
}

}  // namespace ebb::testing

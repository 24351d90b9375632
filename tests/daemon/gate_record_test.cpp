// The agent's state file (daemon/gate_record.h): what a run holds gated,
// written whole and read back by the next run; bad lines refused by place.
#include "daemon/gate_record.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "fabric/kary_tree.h"

namespace ebb::daemon {
namespace {

const fabric::Topology& gateTree() {
  static const fabric::Topology t = fabric::KAryNTree::make(4, 3).value().build();
  return t;
}

std::string gateScratch(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/ebb_gates_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string p = dir + "/" + name;
  std::filesystem::remove(p);
  return p;
}

// The first up port of the n-th switch that has up ports.
fabric::PortId gateUpPort(std::size_t n) {
  for (std::uint32_t i = 0; i < gateTree().numSwitches(); ++i) {
    const fabric::Switch& s = gateTree().sw(fabric::SwitchId(i));
    if (!s.upPorts.empty() && n-- == 0) return {fabric::SwitchId(i), s.upPorts.front()};
  }
  ADD_FAILURE() << "too few switches with up ports";
  return {};
}

TEST(GateRecord, WrittenGatesReadBackTheSameAndAnAbsentFileHoldsNothing) {
  const std::string path = gateScratch("agent.gates");
  auto none = GateRecord::read(path, gateTree());
  ASSERT_TRUE(none) << none.status().toString();
  EXPECT_TRUE(none->gates.empty());
  const std::vector<ib::HeldGate> gates = {{gateUpPort(0), false, 0}, {gateUpPort(9), true, 3}};
  const std::string text = GateRecord::render(gates, gateTree());
  ASSERT_TRUE(GateRecord::write(path, text).isOk());
  auto back = GateRecord::read(path, gateTree());
  ASSERT_TRUE(back) << back.status().toString();
  EXPECT_EQ(back->gates, gates);
  EXPECT_TRUE(back->skipped.empty());
  // Humans can read it: each line names its link.
  EXPECT_NE(text.find(gateTree().describeLink(
                gateTree().sw(gateUpPort(0).sw).ports[gateUpPort(0).index].link)),
            std::string::npos)
      << text;
  // Rewritten whole: no temporary file is left beside it.
  int files = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    files += e.path().filename().string().rfind("agent.gates", 0) == 0 ? 1 : 0;
  EXPECT_EQ(files, 1);
  ASSERT_TRUE(GateRecord::write(path, GateRecord::render({}, gateTree())).isOk());
  back = GateRecord::read(path, gateTree());
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->gates.empty());
}

TEST(GateRecord, BadLinesAreRefusedNamingTheFileTheLineAndTheRule) {
  const std::string path = gateScratch("bad.gates");
  const std::string guid = fmt::format("0x{:016x}", gateTree().sw(gateUpPort(0).sw).guid);
  const std::pair<std::string, std::string> cases[] = {
      {"unplug " + guid + " 5", "'unplug' is not a kind of gate"},
      {"disable " + guid, "disable takes 2 fields"},
      {"width " + guid + " 5", "width takes 3 fields"},
      {"disable 0xZZ 5", "'0xZZ' is not a GUID"},
      {"disable " + guid + " 0", "port '0' is not a switch port number from 1 to 254"},
      {"disable " + guid + " 5x", "port '5x' is not"},
      {"width " + guid + " 5 256", "width '256' is not a LinkWidthEnabled from 1 to 255"},
  };
  for (const auto& [line, rule] : cases) {
    std::ofstream(path) << "# a comment\n\n" << line << "  # trailing\n";
    auto r = GateRecord::read(path, gateTree());
    ASSERT_FALSE(r) << line;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    const std::string m = r.status().message();
    EXPECT_NE(m.find("agent.state_file " + path + " line 3: " + rule), std::string::npos) << m;
    EXPECT_NE(m.find("remove the file"), std::string::npos) << m;
  }
}

// A switch or port the topology does not have (it changed since): skipped
// and said, the rest kept.
TEST(GateRecord, LinesTheTopologyCannotPlaceAreSkippedNotFatal) {
  const std::string path = gateScratch("old.gates");
  const fabric::Switch& s0 = gateTree().sw(gateUpPort(0).sw);
  std::ofstream(path) << "disable 0x00000000deadbeef 1\n"
                      << fmt::format("disable 0x{:016x} {}\n", s0.guid, s0.ports.size() + 1)
                      << fmt::format("disable 0x{:016x} {}\n", s0.guid,
                                     gateUpPort(0).ibPortNumber());
  auto r = GateRecord::read(path, gateTree());
  ASSERT_TRUE(r) << r.status().toString();
  ASSERT_EQ(r->gates.size(), 1u);
  EXPECT_EQ(r->gates[0].end, gateUpPort(0));
  ASSERT_EQ(r->skipped.size(), 2u);
  EXPECT_NE(r->skipped[0].find("line 1"), std::string::npos) << r->skipped[0];
  EXPECT_NE(r->skipped[0].find("not a switch of the topology"), std::string::npos);
  EXPECT_NE(r->skipped[1].find("line 2"), std::string::npos) << r->skipped[1];
}

// A host's link is never ebb's to gate: a line naming one (a recabling, a
// hand edit) is skipped; a folder where the file should be is an error.
TEST(GateRecord, AHostsLinkIsSkippedAndAFolderIsRefused) {
  const std::string path = gateScratch("host.gates");
  const fabric::Host& h = gateTree().hosts().front();
  const fabric::PortId leafPort = gateTree().link(h.link).upper;
  std::ofstream(path) << fmt::format("disable 0x{:016x} {}\n", gateTree().sw(leafPort.sw).guid,
                                     leafPort.ibPortNumber());
  auto r = GateRecord::read(path, gateTree());
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_TRUE(r->gates.empty());
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_NE(r->skipped[0].find("a host's link"), std::string::npos) << r->skipped[0];
  const std::string folder = gateScratch("folder.gates");
  std::filesystem::create_directories(folder);
  auto f = GateRecord::read(folder, gateTree());
  ASSERT_FALSE(f);
  EXPECT_NE(f.status().message().find("agent.state_file " + folder + ": not a file"),
            std::string::npos)
      << f.status().toString();
}

TEST(GateRecord, AFileThatCannotBeWrittenFailsNamingIt) {
  const std::string path = gateScratch("missing") + "/sub/agent.gates";
  const Status st = GateRecord::write(path, "x");
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), ErrorCode::kIo);
  EXPECT_NE(st.message().find("agent.state_file: cannot create " + path), std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace ebb::daemon

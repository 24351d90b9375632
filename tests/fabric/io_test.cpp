#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <sstream>

#include "common/file_io.h"
#include "fabric/dot_export.h"
#include "fabric/ibnetdiscover.h"
#include "fabric/ibsim_netfile.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "fabric/topology_builder.h"
#include "tests/fabric/topology_compare.h"

namespace ebb::fabric {
namespace {

Result<Topology> parse(const std::string& text) {
  std::istringstream in(text);
  return parseIbnetdiscover(in, "t.txt");
}

// An endless line (/dev/zero as a topology) stops at the line bound.
TEST(Ibnetdiscover, AnEndlessLineIsRefusedAtTheLineBound) {
  const Result<Topology> t = parse("# ibnetdiscover\n" + std::string(kMaxTextLine + 1, '\0'));
  ASSERT_FALSE(t);
  EXPECT_EQ(t.status().code(), ErrorCode::kParse);
  EXPECT_NE(t.status().message().find("t.txt:2: line longer than 1048576 bytes: not a text "
                                      "topology file"),
            std::string::npos)
      << t.status().toString();
}

std::string netFile(int k, int n) {
  std::ostringstream out;
  EXPECT_TRUE(writeIbsimNetfile(KAryNTree::make(k, n).value().build(), out).isOk());
  return out.str();
}

class RoundTrip : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(RoundTrip, KAryTreeThroughAnIbsimNetFileIsTheSameFabric) {
  const auto [k, n] = GetParam();
  const Topology original = KAryNTree::make(k, n).value().build();
  auto back = parse(netFile(k, n));
  ASSERT_TRUE(back) << back.status().toString();
  testing::expectSameFabric(original, *back);
}

INSTANTIATE_TEST_SUITE_P(Shapes, RoundTrip,
                         ::testing::Values(std::pair{2, 1}, std::pair{2, 2}, std::pair{3, 3},
                                           std::pair{4, 3}, std::pair{4, 4}, std::pair{8, 2}),
                         [](const auto& tpi) {
                           return "k" + std::to_string(tpi.param.first) + "n" +
                                  std::to_string(tpi.param.second);
                         });

TEST(Ibnetdiscover, ReadsRealOutputWithDescriptionsGuidsAndExtPorts) {
  const std::string src = EBB_SOURCE_DIR;
  auto t = readIbnetdiscoverFile(src + "/tests/data/ibnetdiscover_small.txt");
  ASSERT_TRUE(t) << t.status().toString();
  EXPECT_EQ(t->numSwitches(), 4u);
  EXPECT_EQ(t->numHosts(), 4u);
  EXPECT_EQ(t->depth(), 2);
  const SwitchId leaf2 = t->findSwitch("leaf-2").value();
  EXPECT_EQ(t->sw(leaf2).level, 1);
  EXPECT_EQ(t->sw(leaf2).guid, 0x2c90300000300u);
  EXPECT_EQ(t->sw(leaf2).ports.size(), 36u);
  EXPECT_EQ((t->sw(leaf2).upPorts), (std::vector<std::uint16_t>{34, 35}));
  EXPECT_EQ((t->sw(leaf2).downPorts), (std::vector<std::uint16_t>{0, 2}));
  EXPECT_EQ(t->sw(t->findSwitch("spine-1").value()).level, 0);
  const HostId node04 = t->findHost("node04 HCA-1").value();
  EXPECT_EQ(t->host(node04).guid, 0x2c90300001031u);
  EXPECT_EQ(t->leafOf(node04), leaf2);
  const MinimalTree mt = MinimalTree::build(*t).value();
  EXPECT_EQ(t->sw(mt.root()).name, "spine-1");
  EXPECT_EQ(mt.numSwitches(), 3u);
  EXPECT_EQ(mt.upPort(leaf2), std::optional<std::uint16_t>(34));
}

TEST(IbsimNetfile, HostsFirstThenSwitchesEveryCableFromBothEnds) {
  const Topology t = KAryNTree::make(2, 2).value().build();
  const std::string net = netFile(2, 2);
  const auto firstNode = net.find("\ncaguid=");
  ASSERT_NE(firstNode, std::string::npos);
  const std::string firstHost =
      "caguid=0x0002c90100000001\nHca\t1 \"H0\"\n[1]\t\"S1_0\"[1]\t# lid 0 4xQDR\n";
  EXPECT_EQ(net.substr(firstNode + 1, firstHost.size()), firstHost);
  EXPECT_LT(net.rfind("Hca\t"), net.find("Switch\t"));
  EXPECT_NE(net.find("switchguid=0x0002c90000000001\nSwitch\t4 \"S0_0\"\n"
                     "[1]\t\"S1_0\"[3]\t# lid 0 4xQDR\n[2]\t\"S1_1\"[3]\t# lid 0 4xQDR\n"),
            std::string::npos)
      << net;
  std::size_t cableLines = 0;
  for (std::size_t p = 0; (p = net.find("# lid 0 4xQDR", p)) != std::string::npos; ++p)
    ++cableLines;
  EXPECT_EQ(cableLines, 2 * t.numLinks());
}

// Discovery lists switches in its own order; the minimal tree must not change.
// A net file numbers a node's ports in one byte: a switch with more is
// refused before anything is written, not exported for no reader to read.
TEST(IbsimNetfile, ASwitchWithMorePortsThanANetFileNumbersIsRefused) {
  const Topology t = KAryNTree::make(128, 2).value().build();  // 256-port switches
  std::ostringstream out;
  const Status s = writeIbsimNetfile(t, out);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("has 256 ports"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("at most 254"), std::string::npos) << s.message();
  EXPECT_TRUE(out.str().empty());
}

// A net file without GUID lines reads with GUID 0 ("none") on every node, and
// two such nodes are no duplicate. ibsim needs a unique, non-zero GUID per
// node ("node Ca guid 0 already exists"), so the export gives each a GUID in
// the generated style, past any GUID the fabric already has.
// Only ibnetdiscover's own ids ("S-" / "H-" / "R-" and 16 hex digits) carry
// a GUID: a node named "h-2" has none (not GUID 2).
TEST(Ibnetdiscover, ANameLikeAnIdIsNotAGuid) {
  std::istringstream in(
      "Hca 1 \"h-2\"\n[1] \"s\"[1]\nHca 1 \"H-0002c90000000042\"\n[1] \"s\"[2]\n"
      "Switch 2 \"s\"\n[1] \"h-2\"[1]\n[2] \"H-0002c90000000042\"[1]\n");
  const Topology t = parseIbnetdiscover(in, "t.txt").value();
  ASSERT_EQ(t.numHosts(), 2u);
  for (const Host& h : t.hosts())
    EXPECT_EQ(h.guid, h.name == "h-2" ? 0u : 0x0002c90000000042u) << h.name;
}

// switchguid=, caguid= and rtguid= as ibsim reads them: the GUID of the next
// node of that type, the ones after counting up. A caguid= line before a
// Switch header went to the switch, and a later line overwrote an earlier.
TEST(IbsimNetfile, GuidSettingsAreBasesPerNodeType) {
  std::istringstream in(
      "switchguid=0x200\ncaguid=0x100\n"
      "Switch 4 \"R\"\n[1] \"L1\"[3]\n[2] \"L2\"[3]\n"
      "Switch 4 \"L1\"\n[1] \"h1\"[1]\n[2] \"h2\"[1]\n[3] \"R\"[1]\n"
      "Switch 4 \"L2\"\n[1] \"h3\"[1]\n[3] \"R\"[2]\n"
      "Hca 1 \"h1\"\n[1] \"L1\"[1]\nHca 1 \"h2\"\n[1] \"L1\"[2]\n"
      "caguid=0x900\nHca 1 \"h3\"\n[1] \"L2\"[1]\n");
  const Topology t = parseIbnetdiscover(in, "b.net").value();
  EXPECT_EQ(t.sw(t.findSwitch("R").value()).guid, 0x200u);
  EXPECT_EQ(t.sw(t.findSwitch("L1").value()).guid, 0x201u);
  EXPECT_EQ(t.sw(t.findSwitch("L2").value()).guid, 0x202u);
  EXPECT_EQ(t.host(t.findHost("h1").value()).guid, 0x100u);
  EXPECT_EQ(t.host(t.findHost("h2").value()).guid, 0x101u);
  EXPECT_EQ(t.host(t.findHost("h3").value()).guid, 0x900u);
}

TEST(IbsimNetfile, NodesWithoutGuidsGetUniqueNonZeroGuids) {
  // h1's GUID is the one S's synthesized GUID would be, S2's the one h0's
  // would be: both are kept, and the synthesized ones move past them.
  const std::string text =
      "Switch 4 \"S\"\n[1] \"L0\"[3]\n[2] \"L1\"[3]\n\n"
      "Switch 4 \"L0\"\n[1] \"h0\"[1]\n[2] \"h1\"[1]\n[3] \"S\"[1]\n\n"
      "switchguid=0x0002c90100000001\n"
      "Switch 4 \"L1\"\n[1] \"h2\"[1]\n[3] \"S\"[2]\n\n"
      "caguid=0x0\nHca 1 \"h0\"\n[1] \"L0\"[1]\n\n"
      "caguid=0x0002c90000000001\nHca 1 \"h1\"\n[1] \"L0\"[2]\n\n"
      "caguid=0x0\nHca 1 \"h2\"\n[1] \"L1\"[1]\n";
  auto t = parse(text);
  ASSERT_TRUE(t) << t.status().toString();  // two nodes with GUID 0: no duplicate
  EXPECT_EQ(t->sw(t->findSwitch("S").value()).guid, 0u);
  EXPECT_EQ(t->host(t->findHost("h0").value()).guid, 0u);
  EXPECT_FALSE(t->findSwitchByGuid(0).has_value());  // 0 is no GUID, not S's

  std::ostringstream out;
  ASSERT_TRUE(writeIbsimNetfile(*t, out).isOk());
  const std::string net = out.str();
  EXPECT_EQ(net.find("guid=0x0000000000000000"), std::string::npos) << net;
  std::ostringstream again;
  ASSERT_TRUE(writeIbsimNetfile(*t, again).isOk());
  EXPECT_EQ(again.str(), net);  // deterministic

  auto back = parse(net);
  ASSERT_TRUE(back) << back.status().toString();  // the reader refuses duplicate GUIDs
  EXPECT_EQ(back->numSwitches(), t->numSwitches());
  EXPECT_EQ(back->numHosts(), t->numHosts());
  EXPECT_EQ(back->numLinks(), t->numLinks());
  std::set<std::uint64_t> guids;
  for (const Switch& sw : back->switches())
    guids.insert(sw.guid);
  for (const Host& h : back->hosts())
    guids.insert(h.guid);
  EXPECT_EQ(guids.size(), back->numSwitches() + back->numHosts());
  EXPECT_EQ(guids.count(0), 0u);
  // GUIDs the fabric has are kept; the others follow the generated style.
  EXPECT_EQ(back->sw(back->findSwitch("L1").value()).guid, kGeneratedHostGuidBase + 1);
  EXPECT_EQ(back->host(back->findHost("h1").value()).guid, kGeneratedSwitchGuidBase + 1);
  EXPECT_EQ(back->sw(back->findSwitch("S").value()).guid, kGeneratedSwitchGuidBase + 2);
  EXPECT_EQ(back->sw(back->findSwitch("L0").value()).guid, kGeneratedSwitchGuidBase + 3);
  EXPECT_EQ(back->host(back->findHost("h0").value()).guid, kGeneratedHostGuidBase + 2);
  EXPECT_EQ(back->host(back->findHost("h2").value()).guid, kGeneratedHostGuidBase + 3);
}

TEST(Ibnetdiscover, MinimalTreeDoesNotDependOnNodeOrder) {
  const std::string text = netFile(4, 3);
  std::vector<std::string> blocks;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find("\n\n", start);
    blocks.push_back(
        text.substr(start, end == std::string::npos ? std::string::npos : end - start + 2));
    if (end == std::string::npos) break;
    start = end + 2;
  }
  std::string reversed;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it)
    reversed += *it;
  auto back = parse(reversed);
  ASSERT_TRUE(back) << back.status().toString();
  EXPECT_NE(back->sw(SwitchId(0)).name, "S0_0_0");  // the order really changed
  testing::expectSameFabric(KAryNTree::make(4, 3).value().build(), *back);
}

struct BadCase {
  const char* name;
  std::string text;
  ErrorCode code;
  const char* expect;  // substring of the message, with the line
};

std::vector<BadCase> badCases() {
  const std::string good = netFile(2, 2);
  std::vector<BadCase> v;
  v.push_back({"PortBeforeNode", "[1]\t\"S\"[1]\n", ErrorCode::kParse,
               "t.txt:1: a port line before any node header"});
  v.push_back(
      {"UnknownNodeType", "Bridge 4 \"x\"\n", ErrorCode::kParse, "t.txt:1: expected a node"});
  v.push_back({"RouterWithoutPorts", "Rt x \"r\"\n", ErrorCode::kParse,
               "t.txt:1: a node header needs a port count"});
  v.push_back({"PeerPortOutOfRange", "Switch 4 \"a\"\n[1]\t\"b\"[9]\nSwitch 4 \"b\"\n",
               ErrorCode::kParse, "t.txt:2: peer port 9 is out of range: \"b\" has ports 1..4"});
  v.push_back({"PeerPortCabledTwice",
               "Switch 4 \"a\"\n[1]\t\"c\"[1]\nSwitch 4 \"b\"\n[1]\t\"c\"[1]\nSwitch 4 \"c\"\n",
               ErrorCode::kParse, "t.txt:4: port c[1] is cabled twice"});
  v.push_back({"HostWithTwoCables",
               "Hca 2 \"h\"\n[1]\t\"s\"[1]\n[2]\t\"s\"[2]\n"
               "Switch 4 \"s\"\n[1]\t\"h\"[1]\n[2]\t\"h\"[2]\n",
               ErrorCode::kNotFatTree, "t.txt: host h"});
  v.push_back({"EndsDisagreeOnThePort",
               "Hca 1 \"h\"\n[1]\t\"s\"[1]\nSwitch 4 \"s\"\n[2]\t\"h\"[1]\n", ErrorCode::kParse,
               "t.txt:4: the two ends disagree"});
  v.push_back({"MissingPeerQuotes", "Switch 4 \"s\"\n[1]\tt[1]\n", ErrorCode::kParse,
               "t.txt:2: a port line needs the quoted id of its peer node"});
  v.push_back({"NotATopology", "hello world\n", ErrorCode::kParse, "t.txt:1: expected a node"});
  v.push_back({"BadPortCount", "Switch x \"s\"\n", ErrorCode::kParse,
               "t.txt:1: a node header needs a port count"});
  v.push_back({"MissingQuotes", "Switch 4 s\n", ErrorCode::kParse,
               "t.txt:1: a node header needs a quoted"});
  v.push_back({"UnclosedQuote", "Switch 4 \"s\n", ErrorCode::kParse, "t.txt:1:"});
  v.push_back({"PortOutOfRange", "Switch 4 \"s\"\n[5]\t\"t\"[1]\n", ErrorCode::kParse,
               "t.txt:2: port 5 is out of range"});
  v.push_back(
      {"PortZero", "Switch 4 \"s\"\n[0]\t\"t\"[1]\n", ErrorCode::kParse, "t.txt:2: port 0"});
  v.push_back({"NoPeerPort", "Switch 4 \"s\"\n[1]\t\"t\"\n", ErrorCode::kParse,
               "t.txt:2: the peer node id must be followed"});
  v.push_back({"GarbledPort", "Switch 4 \"s\"\n[1\t\"t\"[1]\n", ErrorCode::kParse, "t.txt:2:"});
  v.push_back({"PortTwice", "Switch 4 \"s\"\n[1]\t\"t\"[1]\n[1]\t\"u\"[1]\n", ErrorCode::kParse,
               "t.txt:3: port 1 of \"s\" is listed twice"});
  v.push_back({"NodeTwice", "Switch 4 \"s\"\nSwitch 4 \"s\"\n", ErrorCode::kParse,
               "t.txt:2: node \"s\" is declared twice (first at line 1)"});
  v.push_back({"BadGuid", "switchguid=0xZZ\n", ErrorCode::kParse, "t.txt:1: switchguid must be"});
  v.push_back({"SwitchGuidTwice",
               "switchguid=0x2c90000000001\nSwitch 4 \"s\"\n\nswitchguid=0x2c90000000001\n"
               "Switch 4 \"t\"\n",
               ErrorCode::kParse,
               "t.txt:5: node \"t\" has GUID 0x0002c90000000001, already the GUID of \"s\" "
               "(line 2)"});
  v.push_back({"CaGuidTwice", "caguid=0x10\nCa 1 \"h1\"\ncaguid=0x10\nCa 1 \"h2\"\n",
               ErrorCode::kParse, "t.txt:4: node \"h2\" has GUID 0x0000000000000010"});
  v.push_back({"GuidFromIdTwice",
               "Switch 4 \"S-0000000000000abc\"\nswitchguid=0xabc\nSwitch 4 \"x\"\n",
               ErrorCode::kParse, "every node has its own GUID"});
  // Two ports with one GUID, in a net file and in real ibnetdiscover output
  // (node02's port GUID made node01's: both lines of leaf-1 name it).
  v.push_back({"PortGuidTwice",
               "Hca 1 \"h1\"\n[1](10)\t\"s\"[1]\nHca 1 \"h2\"\n[1](10)\t\"s\"[2]\n"
               "Switch 4 \"s\"\n[1]\t\"h1\"[1]\n[2]\t\"h2\"[1]\n",
               ErrorCode::kParse,
               "t.txt:4: port \"h2\"[1] has port GUID 0x0000000000000010, already the GUID of "
               "port \"h1\"[1] (line 2): every port has its own GUID"});
  {
    std::ifstream in(std::string(EBB_SOURCE_DIR) + "/tests/data/ibnetdiscover_small.txt");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (auto at = text.find("(2c90300001012)"); at != std::string::npos;
         at = text.find("(2c90300001012)"))
      text.replace(at, 15, "(2c90300001002)");
    v.push_back({"PortGuidTwiceInIbnetdiscoverOutput", text, ErrorCode::kParse,
                 "t.txt:28: port \"H-0002c90300001011\"[1] has port GUID 0x0002c90300001002, "
                 "already the GUID of port \"H-0002c90300001001\"[1] (line 27)"});
  }
  // A port number past 32 bits is out of range, not a syntax error.
  v.push_back({"PortBeyond32Bits", "Switch 4 \"s\"\n[4294967297]\t\"t\"[1]\n", ErrorCode::kParse,
               "t.txt:2: port 4294967297 is out of range: \"s\" has ports 1..4"});
  v.push_back({"PeerPortBeyond32Bits", "Switch 4 \"s\"\n[1]\t\"t\"[4294967297]\n",
               ErrorCode::kParse,
               "t.txt:2: peer port 4294967297 is out of range: a node has at most 254 ports"});
  // Ports count from 1: a peer's port 0 says so (not "must be followed by").
  v.push_back({"PeerPortZero", "Switch 4 \"s\"\n[1]\t\"t\"[0]\n", ErrorCode::kParse,
               "t.txt:2: peer port 0 of \"t\" is out of range: ports are numbered from 1"});
  // Port 255 is not a port: PortSelect 0xFF asks for all of a switch's ports.
  v.push_back({"PortCount255", "Switch 255 \"s\"\n[1]\t\"t\"[1]\n", ErrorCode::kParse,
               "t.txt:1: a node header needs a port count from 1 to 254"});
  v.push_back({"UnknownSetting", "colour=blue\n", ErrorCode::kParse, "t.txt:1: unknown setting"});
  v.push_back({"Empty", "", ErrorCode::kParse, "no nodes"});
  v.push_back(
      {"Nul", std::string("Switch 4 \"s\"\n\0\n", 15), ErrorCode::kParse, "t.txt:2: binary"});
  v.push_back({"PeerNeverDeclared", "Switch 4 \"s\"\n[1]\t\"ghost\"[1]\n", ErrorCode::kParse,
               "t.txt:2: peer \"ghost\" is never declared"});
  v.push_back({"EndsDisagree", "Switch 4 \"a\"\n[1]\t\"b\"[1]\nSwitch 4 \"b\"\n[1]\t\"a\"[2]\n",
               ErrorCode::kParse, "t.txt:2: the two ends disagree"});
  v.push_back({"HostToHost", "Hca 1 \"h1\"\n[1]\t\"h2\"[1]\nHca 1 \"h2\"\n[1]\t\"h1\"[1]\n",
               ErrorCode::kNotFatTree, "cabled directly"});
  // Truncation in the middle of the file: cut after the first 60% of lines.
  std::istringstream in(good);
  std::string line, cut;
  int lines = 0;
  for (std::string l; std::getline(in, l);)
    ++lines;
  std::istringstream in2(good);
  for (int i = 0; i < lines * 6 / 10 && std::getline(in2, line); ++i)
    cut += line + "\n";
  v.push_back({"Truncated", cut, ErrorCode::kParse, "never declared (truncated file?)"});
  // Same-level cycle: connect two leaves' free up ports... use two roots of a 2-ary 2-tree.
  v.push_back({"CycleWithinLevel",
               "Switch 2 \"r1\"\n[1]\t\"l\"[1]\n[2]\t\"r2\"[2]\n"
               "Switch 2 \"r2\"\n[1]\t\"l\"[2]\n[2]\t\"r1\"[2]\n"
               "Switch 3 \"l\"\n[1]\t\"r1\"[1]\n[2]\t\"r2\"[1]\n[3]\t\"h\"[1]\n"
               "Hca 1 \"h\"\n[1]\t\"l\"[3]\n",
               ErrorCode::kNotFatTree,
               "t.txt: cable r1[2] - r2[2] joins two switches of the same level (1 hop above "
               "the hosts: r1 by cable r1[1] - l[1], r2 by cable r2[1] - l[2])"});
  // A cable that skips a level (leaf straight to a root) makes a good cable
  // look lateral: the message names the cable each end's level came by.
  v.push_back({"SkipLevel",
               "Switch 2 \"top\"\n[1]\t\"mid\"[2]\n[2]\t\"l\"[3]\n"
               "Switch 2 \"mid\"\n[1]\t\"l\"[1]\n[2]\t\"top\"[1]\n"
               "Switch 3 \"l\"\n[1]\t\"mid\"[1]\n[2]\t\"h\"[1]\n[3]\t\"top\"[2]\n"
               "Hca 1 \"h\"\n[1]\t\"l\"[2]\n",
               ErrorCode::kNotFatTree, "top by cable top[2] - l[3]"});
  return v;
}

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, GivesAClearErrorNamingTheLine) {
  const BadCase& c = GetParam();
  auto r = parse(c.text);
  ASSERT_FALSE(r) << c.name;
  EXPECT_EQ(r.status().code(), c.code) << r.status().toString();
  EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().toString();
}

INSTANTIATE_TEST_SUITE_P(Cases, BadInput, ::testing::ValuesIn(badCases()),
                         [](const auto& tpi) { return std::string(tpi.param.name); });

// Routers are read, their cables checked, and both are left out of the tree.
// Names are unique: a description equal to another node's id is not used
// alone (the spine described "L0" is "L0 S0", the leaf with id "L0" stays
// "L0"), and a name that would still repeat is refused naming both lines.
TEST(Ibnetdiscover, ADescriptionEqualToAnotherIdDoesNotMergeTwoSwitches) {
  const std::string net =
      "Switch 4 \"S0\" # \"L0\"\n[1] \"L0\"[3]\n[2] \"L1\"[3]\n\n"
      "Switch 4 \"L0\"\n[1] \"h0\"[1]\n[3] \"S0\"[1]\n\n"
      "Switch 4 \"L1\"\n[1] \"h1\"[1]\n[3] \"S0\"[2]\n\n"
      "Hca 1 \"h0\"\n[1] \"L0\"[1]\n\nHca 1 \"h1\"\n[1] \"L1\"[1]\n";
  auto t = parse(net);
  ASSERT_TRUE(t) << t.status().toString();
  ASSERT_TRUE(t->findSwitch("L0 S0"));
  EXPECT_EQ(t->sw(*t->findSwitch("L0 S0")).level, 0);
  ASSERT_TRUE(t->findSwitch("L0"));
  EXPECT_EQ(t->sw(*t->findSwitch("L0")).level, 1);
  // A node whose id is that combined name: refused, naming both lines.
  auto r = parse(net + "\nHca 1 \"L0 S0\"\n");
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("two nodes would both be named \"L0 S0\""), std::string::npos)
      << r.status().toString();
}

TEST(Ibnetdiscover, RoutersAreLeftOutOfTheFatTree) {
  const std::string src = EBB_SOURCE_DIR;
  std::ifstream in(src + "/tests/data/ibnetdiscover_small.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  // spine-1 port 3 goes to a router.
  const std::string spineLine = "[2]\t\"S-0002c90300000300\"[35]\t\t# \"leaf-2\" lid 7 4xHDR\n";
  const auto at = text.find(spineLine);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + spineLine.size(),
              "[3]\t\"R-0002c90300002001\"[1](2c90300002002) \t\t# \"router-1\" lid 9 4xHDR\n");
  text +=
      "\nvendid=0x2c9\ndevid=0xcafe\nsysimgguid=0x2c90300002000\nrtguid=0x2c90300002001\n"
      "Rt\t2 \"R-0002c90300002001\"\t\t# \"router-1\"\n"
      "[1](2c90300002002) \t\"S-0002c90300000100\"[3]\t\t# lid 9 lmc 0 \"spine-1\" lid 5 4xHDR\n";
  auto t = parse(text);
  ASSERT_TRUE(t) << t.status().toString();
  EXPECT_EQ(t->numSwitches(), 4u);
  EXPECT_EQ(t->numHosts(), 4u);
  EXPECT_FALSE(t->findSwitch("router-1").has_value());
  EXPECT_FALSE(t->findHost("router-1").has_value());
  const Switch& spine = t->sw(t->findSwitch("spine-1").value());
  EXPECT_FALSE(spine.ports[2].link.valid());
  // A router cable that disagrees with its switch end is still an error.
  const std::string bad = text.substr(0, text.size() - 1) + "\n[2]\t\"S-0002c90300000100\"[1]\n";
  auto r = parse(bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("the two ends disagree"), std::string::npos)
      << r.status().toString();
}

// A file cut anywhere (at a line or in the middle of one) parses or fails
// cleanly with the source name first; nothing crashes.
TEST(Ibnetdiscover, EveryTruncationFailsCleanly) {
  const std::string src = EBB_SOURCE_DIR;
  std::ifstream in(src + "/tests/data/ibnetdiscover_small.txt");
  const std::string sample((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const std::string& text : {netFile(2, 2), sample}) {
    int failures = 0;
    for (std::size_t len = 0; len < text.size(); ++len) {
      auto r = parse(text.substr(0, len));
      if (r) continue;
      ++failures;
      const ErrorCode code = r.status().code();
      EXPECT_TRUE(code == ErrorCode::kParse || code == ErrorCode::kNotFatTree)
          << len << ": " << r.status().toString();
      EXPECT_EQ(r.status().message().rfind("t.txt", 0), 0u) << r.status().toString();
    }
    EXPECT_GT(failures, static_cast<int>(text.size() / 2));
  }
}

TEST(Ibnetdiscover, RandomBytesFailCleanly) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<std::size_t> length(0, 2000);
  const std::string alphabet = "[]\"#=\t\n SwitchCaHcaRt0123456789x-";
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  for (int trial = 0; trial < 300; ++trial) {
    std::string text(length(rng), '\0');
    for (char& c : text) {
      // Half the trials draw from the grammar's own characters, to get deeper.
      c = trial % 2 ? alphabet[pick(rng)] : static_cast<char>(byte(rng));
    }
    auto r = parse(text);
    if (!r) {
      EXPECT_EQ(r.status().message().rfind("t.txt", 0), 0u) << r.status().toString();
    }
  }
}

TEST(Ibnetdiscover, MissingFileIsAnIoError) {
  auto r = readIbnetdiscoverFile("/nonexistent/dir/fabric.txt");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), ErrorCode::kIo);
  EXPECT_NE(r.status().message().find("/nonexistent/dir/fabric.txt"), std::string::npos);
}

TEST(Ibnetdiscover, AFolderIsNotATopologyFile) {
  auto r = readIbnetdiscoverFile(EBB_SOURCE_DIR);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), ErrorCode::kIo);
  EXPECT_NE(r.status().message().find("is a folder, expected a file"), std::string::npos)
      << r.status().message();
}

// Random damage to a valid file never crashes; it parses or fails cleanly.
TEST(Ibnetdiscover, SurvivesRandomCorruption) {
  const std::string good = netFile(3, 2);
  std::mt19937 rng(7);
  int failures = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string text = good;
    std::uniform_int_distribution<std::size_t> pos(0, text.size() - 1);
    std::uniform_int_distribution<int> byte(0, 255);
    const int edits = 1 + trial % 8;
    for (int e = 0; e < edits; ++e) {
      if (trial % 3 == 0) {
        text.erase(pos(rng) % text.size(), 1 + static_cast<std::size_t>(e));
      } else {
        text[pos(rng) % text.size()] = static_cast<char>(byte(rng));
      }
    }
    auto r = parse(text);
    if (!r) {
      ++failures;
      EXPECT_FALSE(r.status().message().empty());
    }
  }
  EXPECT_GT(failures, 100);
}

TEST(DotExport, HighlightsExactlyTheMinimalTreeLinks) {
  const Topology t = KAryNTree::make(4, 3).value().build();
  const MinimalTree mt = MinimalTree::build(t).value();
  std::ostringstream out;
  writeDot(t, mt, out);
  const std::string dot = out.str();
  EXPECT_EQ(dot.rfind("graph fabric {", 0), 0u);
  std::size_t bold = 0, thin = 0;
  for (std::size_t p = 0; (p = dot.find("penwidth=3", p)) != std::string::npos; ++p)
    ++bold;
  for (std::size_t p = 0; (p = dot.find("penwidth=1", p)) != std::string::npos; ++p)
    ++thin;
  EXPECT_EQ(bold, mt.numLinks());
  EXPECT_EQ(bold + thin, t.numLinks());
  EXPECT_NE(dot.find("\"S0_0_0\" -- \"S1_0_0\" [penwidth=3"), std::string::npos);
}

// Names are DOT quoted strings: a quote, a backslash (a name ending in one
// would otherwise escape the closing quote) and a line break are escaped.
TEST(DotExport, EscapesQuotesBackslashesAndLineBreaksInNames) {
  TopologyBuilder b;
  const SwitchId sw = b.addSwitch("sw\\", 0, 4);
  const HostId h0 = b.addHost("h\"0", 0);
  const HostId h1 = b.addHost("h\n1\\\"", 0);
  ASSERT_TRUE(b.connectHost(h0, 0, {sw, 0}).isOk());
  ASSERT_TRUE(b.connectHost(h1, 0, {sw, 1}).isOk());
  const Topology t = b.build().value();
  const MinimalTree mt = MinimalTree::build(t).value();
  std::ostringstream out;
  writeDot(t, mt, out);
  const std::string dot = out.str();
  EXPECT_NE(dot.find("{ rank=same; \"sw\\\\\" }"), std::string::npos) << dot;
  EXPECT_NE(dot.find("  \"h\\\"0\" [shape=box];\n"), std::string::npos) << dot;
  EXPECT_NE(dot.find("  \"sw\\\\\" -- \"h\\n1\\\\\\\"\" [penwidth=3"), std::string::npos) << dot;
  // Every quoted string closes on its line: outside the escapes, quotes pair up.
  std::istringstream lines(dot);
  for (std::string line; std::getline(lines, line);) {
    int quotes = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\') {
        ++i;
      } else if (line[i] == '"') {
        ++quotes;
      }
    }
    EXPECT_EQ(quotes % 2, 0) << line;
  }
}

}  // namespace
}  // namespace ebb::fabric

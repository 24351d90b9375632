// Text inputs saved with a UTF-8 byte order mark (Windows editors) read as
// the same file without it: configs, traffic files, topology files and traces.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/file_io.h"
#include "configs/config_loader.h"
#include "fabric/ibnetdiscover.h"
#include "workload/mpi_trace.h"
#include "workload/simgrid_trace.h"
#include "workload/traffic_file.h"

namespace ebb {
namespace {

namespace fs = std::filesystem;

fs::path scratchDir() {
  const fs::path dir = fs::temp_directory_path() / ("ebb-bom-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kBom(kUtf8Bom);

TEST(TextBom, AStreamLosesTheMarkOnlyWhenItIsWhole) {
  for (const auto& [text, rest] : {std::pair<std::string, std::string>{kBom + "0 1", "0 1"},
                                   {"0 1", "0 1"},
                                   {"", ""},
                                   {"\xEF\xBB", ""},
                                   {"\xEFx", "x"}}) {
    std::istringstream in(text);
    skipUtf8Bom(in);
    std::string left((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(left, rest) << text;
  }
  EXPECT_EQ(withoutUtf8Bom(kBom + "a"), "a");
  EXPECT_EQ(withoutUtf8Bom("\xEF\xBB"), "\xEF\xBB");
}

TEST(TextBom, EveryTextInputReadsAsWithoutTheMark) {
  const fs::path dir = scratchDir();
  // A config whose first line is a field.
  write(dir / "c.textproto", kBom + "fabric { kary_n_tree { k: 2 n: 3 } }\n");
  Result<config::Config> cfg = config::loadConfigFile((dir / "c.textproto").string());
  ASSERT_TRUE(cfg) << cfg.status().toString();
  EXPECT_EQ(cfg->fabric().kary_n_tree().n(), 3);
  // A text traffic file whose first line is a comment.
  write(dir / "t.txt", kBom + "# two messages\n0 0 1 64\n5 1 0 128\n");
  auto reader = workload::TrafficReader::open((dir / "t.txt").string());
  ASSERT_TRUE(reader) << reader.status().toString();
  int messages = 0;
  while (true) {
    auto m = (*reader)->next();
    ASSERT_TRUE(m) << m.status().toString();
    if (!*m) break;
    ++messages;
  }
  EXPECT_EQ(messages, 2);
  // An ibnetdiscover file.
  const std::string topo = slurp(fs::path(EBB_SOURCE_DIR) / "tests/data/ibnetdiscover_small.txt");
  write(dir / "plain.topo", topo);
  write(dir / "bom.topo", kBom + topo);
  Result<fabric::Topology> plain = fabric::readIbnetdiscoverFile((dir / "plain.topo").string());
  Result<fabric::Topology> marked = fabric::readIbnetdiscoverFile((dir / "bom.topo").string());
  ASSERT_TRUE(plain) << plain.status().toString();
  ASSERT_TRUE(marked) << marked.status().toString();
  EXPECT_EQ(marked->numHosts(), plain->numHosts());
  EXPECT_EQ(marked->numLinks(), plain->numLinks());
  // An AMG2013-style CSV trace and a SimGrid time-independent trace.
  write(dir / "amg.csv", kBom + "0,isend,0.1,0.2,1,64,0,1\n1,irecv,0.1,0.2,0,64,0,1\n");
  auto amg = workload::readAmgCsv((dir / "amg.csv").string());
  ASSERT_TRUE(amg) << amg.status().toString();
  EXPECT_EQ(amg->sends, 1u);
  fs::create_directories(dir / "ti");
  write(dir / "ti" / "ti_trace0.txt", kBom + "0 init\n0 send 1 64\n");
  write(dir / "ti" / "ti_trace1.txt", kBom + "1 init\n1 recv 0 64\n");
  auto ti = workload::readSimgridTrace((dir / "ti").string(), 1e9);
  ASSERT_TRUE(ti) << ti.status().toString();
  EXPECT_EQ(ti->sends, 1u);
  fs::remove_all(dir);
}

// Endless input (a character device, a file that is no text) is refused
// with the rule, not read into memory until it runs out; a huge bad token is
// not echoed whole.
TEST(TextBom, EndlessOrHugeInputIsRefusedNotReadWhole) {
  Result<config::Config> zero = config::loadConfigFile("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.status().message().find("/dev/zero: larger than 64 MiB: not a config file"),
            std::string::npos)
      << zero.status().message();
  auto reader = workload::TrafficReader::open("/dev/zero");
  ASSERT_TRUE(reader) << reader.status().toString();
  auto m = (*reader)->next();
  ASSERT_FALSE(m);
  EXPECT_NE(m.status().message().find("/dev/zero:1: line longer than 1048576 bytes"),
            std::string::npos)
      << m.status().message();
  const fs::path dir = scratchDir();
  write(dir / "long.textproto", std::string(200000, '1') + "\n");
  Result<config::Config> longLine = config::loadConfigFile((dir / "long.textproto").string());
  ASSERT_FALSE(longLine);
  EXPECT_LT(longLine.status().message().size(), 1000u);
  EXPECT_NE(longLine.status().message().find("long.textproto:1:1:"), std::string::npos)
      << longLine.status().message();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ebb

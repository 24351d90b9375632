#include "configs/config_loader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace ebb::config {
namespace {

TEST(ConfigLoader, ParsesAKAryTree) {
  auto cfg = parseTextConfig("fabric { kary_n_tree { k: 4 n: 3 } }", "inline");
  ASSERT_TRUE(cfg) << cfg.status().toString();
  EXPECT_EQ(cfg->fabric().kary_n_tree().k(), 4u);
  EXPECT_EQ(cfg->fabric().kary_n_tree().n(), 3u);
}

TEST(ConfigLoader, UnknownFieldNamesLineAndColumn) {
  auto cfg = parseTextConfig("fabric {\n  kary_n_tree { k: 4 arity: 3 }\n}\n", "my.textproto");
  ASSERT_FALSE(cfg);
  EXPECT_EQ(cfg.status().code(), ErrorCode::kParse);
  EXPECT_NE(cfg.status().message().find("my.textproto:2:"), std::string::npos)
      << cfg.status().message();
  EXPECT_NE(cfg.status().message().find("arity"), std::string::npos);
}

TEST(ConfigLoader, TruncatedAndWronglyTypedInputFail) {
  EXPECT_FALSE(parseTextConfig("fabric { kary_n_tree { k: 4", "t"));
  EXPECT_FALSE(parseTextConfig("fabric { kary_n_tree { k: -4 } }", "t"));
  EXPECT_FALSE(parseTextConfig("fabric { kary_n_tree { k: \"four\" } }", "t"));
  EXPECT_FALSE(parseTextConfig("\x01\x02garbage{{{", "t"));
}

TEST(ConfigLoader, MissingFileIsAnIoErrorNamingThePath) {
  auto cfg = loadConfigFile("/nonexistent/ebb/config.textproto");
  ASSERT_FALSE(cfg);
  EXPECT_EQ(cfg.status().code(), ErrorCode::kIo);
  EXPECT_NE(cfg.status().message().find("/nonexistent/ebb/config.textproto"), std::string::npos);
}

// Every example config shipped in configs/ parses.
TEST(ConfigLoader, ShippedExamplesParse) {
  const std::string src = EBB_SOURCE_DIR;
  int seen = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::filesystem::path(src) / "configs")) {
    if (entry.path().extension() != ".textproto") continue;
    // tune_*.textproto are `ebb tune` specs (TuneSpec.ShippedExamplesLoad).
    if (entry.path().filename().string().starts_with("tune_")) continue;
    auto cfg = loadConfigFile(entry.path().string());
    EXPECT_TRUE(cfg) << cfg.status().toString();
    ++seen;
  }
  EXPECT_GT(seen, 0);
}

}  // namespace
}  // namespace ebb::config

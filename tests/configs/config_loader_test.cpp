#include "configs/config_loader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "configs/proto/tune.pb.h"  // generated

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

// A string that is not UTF-8 (proto3 strings are) was accepted and then
// dropped from report.json with a libprotobuf error on stderr: refused,
// naming the place, the field and the byte. UTF-8 itself reads.
TEST(ConfigLoader, StringsThatAreNotUtf8AreRefused) {
  for (const char* bad : {"\xff\xfe", "ok \xc3", "\xc0\x80", "\xed\xa0\x80"}) {
    auto cfg = parseTextConfig(
        std::string("workload {\n  hotspot { host: \"H1\" host: \"") + bad + "\" } }",
        "u.textproto");
    ASSERT_FALSE(cfg) << bad;
    EXPECT_EQ(cfg.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(cfg.status().message().find("u.textproto:2:"), std::string::npos)
        << cfg.status().message();
    EXPECT_NE(cfg.status().message().find("workload.hotspot.host[1]: not valid UTF-8 (byte 0x"),
              std::string::npos)
        << cfg.status().message();
  }
  auto ok = parseTextConfig("name: \"Lüftung – 電源\"", "u.textproto");
  ASSERT_TRUE(ok) << ok.status().toString();
  EXPECT_EQ(ok->name(), "Lüftung – 電源");
  EXPECT_EQ(firstInvalidUtf8("ab\xf4\x90\x80\x80"), 2u);  // past U+10FFFF
  EXPECT_EQ(firstInvalidUtf8("\xf0\x9f\x98\x80"), std::string_view::npos);
}

// protobuf's text format reads 010 as octal and 0x10 as hexadecimal; ebb's
// numbers are decimal, so both are refused naming the place and the rule.
// Zero itself, decimals below 1, strings and comments are untouched.
TEST(ConfigLoader, WholeNumbersWithALeadingZeroAreRefused) {
  for (const char* text :
       {"fabric { kary_n_tree { k: 4\n n: 010 } }", "fabric { kary_n_tree { k: 4\n n: 0x3 } }"}) {
    auto cfg = parseTextConfig(text, "z.textproto");
    ASSERT_FALSE(cfg) << text;
    EXPECT_EQ(cfg.status().code(), ErrorCode::kParse);
    EXPECT_NE(cfg.status().message().find("z.textproto:2:5:"), std::string::npos)
        << cfg.status().message();
    EXPECT_NE(cfg.status().message().find("numbers are decimal"), std::string::npos)
        << cfg.status().message();
  }
  auto ok = parseTextConfig(
      "# k: 010 in a comment\nname: \"run 007\" seed: 0 "
      "workload { uniform { rate: 0.05 duration_cycles: 10 } }",
      "z.textproto");
  ASSERT_TRUE(ok) << ok.status().toString();
  EXPECT_EQ(ok->name(), "run 007");
}

// proto3 enums are open: the text parser keeps numbers no value has. Every
// input refuses them, at any depth, naming the place, the field and the names.
TEST(ConfigLoader, EnumNumbersWithoutADefinitionAreRefused) {
  struct Case {
    const char* text;
    const char* expect;
  };
  const Case cases[] = {
      {"gating { policy: 42 }",
       "t:1:10: gating.policy: unknown value 42 (expected one of DYNAMIC, STATIC, ALL_ON, "
       "PROPORTIONAL)"},
      {"lpi { mode: 99 }", "lpi.mode: unknown value 99 (expected one of "},
      {"emulator { up_routing: 99 }", "emulator.up_routing: unknown value 99"},
      {"emulator { switch_model: 99 }", "emulator.switch_model: unknown value 99"},
      {"emulator {\n  link_preset: 99\n}", "t:2:3: emulator.link_preset: unknown value 99"},
      {"gating { start: 7 }", "gating.start: unknown value 7"},
      {"workload { arrivals: 9 }", "workload.arrivals: unknown value 9"},
      {"agent { gating_action: 9 }", "agent.gating_action: unknown value 9"},
      {"faults { event { action: FAIL } event { scope: 12 } }",
       "faults.event[1].scope: unknown value 12 (expected one of LINK, UP_DIRECTION, "
       "DOWN_DIRECTION, SWITCH)"},
  };
  for (const Case& c : cases) {
    auto cfg = parseTextConfig(c.text, "t");
    ASSERT_FALSE(cfg) << c.text;
    EXPECT_EQ(cfg.status().code(), ErrorCode::kInvalidArgument) << c.text;
    EXPECT_NE(cfg.status().message().find(c.expect), std::string::npos) << cfg.status().message();
  }
  // Defined values, by name or by number, are kept.
  auto ok = parseTextConfig("gating { policy: 2 } lpi { mode: DEEP_SLEEP }", "t");
  ASSERT_TRUE(ok) << ok.status().toString();
  EXPECT_EQ(ok->gating().policy(), GatingSpec::STATIC);
  // Any message, e.g. the tune spec's.
  TuneSpec spec;
  Status s = parseTextMessage("search { strategy: 9 }", "spec", spec);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("spec:1:10: search.strategy: unknown value 9 (expected one of GRID, "
                             "HALVING, COORDINATE)"),
            std::string::npos)
      << s.message();
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

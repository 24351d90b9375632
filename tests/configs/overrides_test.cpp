#include "configs/overrides.h"

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "configs/config_loader.h"

namespace ebb::config {
namespace {

TEST(Overrides, SetsNestedScalarsAndSelectsOneofs) {
  Config cfg;
  ASSERT_TRUE(applyOverride(cfg, "fabric.kary_n_tree.k=8").isOk());
  ASSERT_TRUE(applyOverride(cfg, "fabric.kary_n_tree.n=2").isOk());
  EXPECT_EQ(cfg.fabric().kary_n_tree().k(), 8u);
  EXPECT_EQ(cfg.fabric().kary_n_tree().n(), 2u);
  ASSERT_TRUE(applyOverride(cfg, "fabric.topology_file.path=net.txt").isOk());
  EXPECT_EQ(cfg.fabric().topology_case(), FabricConfig::kTopologyFile);
  ASSERT_TRUE(applyOverride(cfg, "fabric.topology_file.format=IBSIM_NET").isOk());
  EXPECT_EQ(cfg.fabric().topology_file().format(), TopologyFileSpec::IBSIM_NET);
}

// Switching a oneof by override is allowed, never silent: the note names
// what the config had and what replaces it. Within the chosen member, or
// where the config chose none, there is nothing to say.
TEST(Overrides, SwitchingAOneofIsNamed) {
  Config cfg;
  EXPECT_EQ(oneofSwitchNote(cfg, "workload.uniform.rate=0.1"), "");
  ASSERT_TRUE(applyOverride(cfg, "workload.uniform.rate=0.1").isOk());
  EXPECT_EQ(oneofSwitchNote(cfg, "workload.uniform.duration_cycles=5"), "");
  EXPECT_EQ(oneofSwitchNote(cfg, "workload.alonso_ramp.time_scale=0.05"),
            "override workload.alonso_ramp.time_scale=0.05 replaces workload 'uniform' of the "
            "config with 'alonso_ramp' (its other fields at their defaults)");
  ASSERT_TRUE(applyOverride(cfg, "fabric.kary_n_tree.k=4").isOk());
  EXPECT_EQ(oneofSwitchNote(cfg, "fabric.topology_file.path=x.net"),
            "override fabric.topology_file.path=x.net replaces fabric 'kary_n_tree' of the config "
            "with 'topology_file' (its other fields at their defaults)");
  EXPECT_EQ(oneofSwitchNote(cfg, "fabric.nonsense.k=1"), "");  // applyOverride names that
}

TEST(Overrides, ErrorsNameTheFieldAndLeaveTheConfigUnchanged) {
  Config cfg;
  ASSERT_TRUE(applyOverride(cfg, "fabric.kary_n_tree.k=4").isOk());
  const std::string before = cfg.DebugString();
  Status s = applyOverride(cfg, "fabric.kary_n_tree.arity=3");
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no field 'arity'"), std::string::npos);
  s = applyOverride(cfg, "fabric.kary_n_tree.k=-1");
  EXPECT_NE(s.message().find("unsigned"), std::string::npos);
  s = applyOverride(cfg, "fabric.kary_n_tree.k=4x");
  EXPECT_FALSE(s.isOk());
  for (const char* notDecimal : {"gating.u_on=0x1p-2", "gating.u_on=inf", "gating.u_on= 0.5"}) {
    s = applyOverride(cfg, notDecimal);
    EXPECT_NE(s.message().find("the value is not a decimal number"), std::string::npos)
        << notDecimal;
  }
  // An empty value (an unset "$VAR") is refused, for strings too.
  for (const char* empty : {"lpi.link_speed=", "gating.u_on=", "name="}) {
    s = applyOverride(cfg, empty);
    EXPECT_NE(s.message().find("the value is empty (leave the override out for the default)"),
              std::string::npos)
        << empty << ": " << s.message();
  }
  // Decimal numbers a double cannot hold are out of range, not "not decimal".
  s = applyOverride(cfg, "gating.u_on=1e-320");
  EXPECT_NE(s.message().find("override gating.u_on=1e-320: the value is out of range: too small "
                             "for a double"),
            std::string::npos)
      << s.message();
  s = applyOverride(cfg, "gating.u_on=-1e400");
  EXPECT_NE(s.message().find("the value is out of range: too large for a double"),
            std::string::npos)
      << s.message();
  s = applyOverride(cfg, "fabric.topology_file.format=XML");
  EXPECT_NE(s.message().find("the value is not one of IBNETDISCOVER, IBSIM_NET"),
            std::string::npos);
  s = applyOverride(cfg, "fabric=3");
  EXPECT_NE(s.message().find("is a message"), std::string::npos);
  s = applyOverride(cfg, "novalue");
  EXPECT_NE(s.message().find("key=value"), std::string::npos);
  s = applyOverride(cfg, "fabric.kary_n_tree.k.x=1");
  EXPECT_NE(s.message().find("not a message"), std::string::npos);
  EXPECT_EQ(cfg.DebugString(), before);
}

// Every singular enum field reachable from `d`, by override path.
void enumPaths(const google::protobuf::Descriptor& d, const std::string& prefix, int depth,
               std::vector<std::pair<std::string, const google::protobuf::EnumDescriptor*>>& out) {
  using google::protobuf::FieldDescriptor;
  if (depth > 6) return;  // recursive messages
  for (int i = 0; i < d.field_count(); ++i) {
    const FieldDescriptor* f = d.field(i);
    if (f->is_repeated()) continue;
    const std::string path = prefix + f->name();
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) out.emplace_back(path, f->enum_type());
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      enumPaths(*f->message_type(), path + ".", depth + 1, out);
    }
  }
}

// The *_UNSPECIFIED placeholder is "not given", like the number 0: as an
// explicit value it is refused for every enum, listing the real names.
TEST(Overrides, AnUnspecifiedEnumNameIsRefusedForEveryEnum) {
  std::vector<std::pair<std::string, const google::protobuf::EnumDescriptor*>> paths;
  enumPaths(*Config::descriptor(), "", 0, paths);
  ASSERT_GE(paths.size(), 5u);
  int checked = 0;
  for (const auto& [path, e] : paths) {
    const std::string placeholder = e->FindValueByNumber(0)->name();
    if (placeholder.find("UNSPECIFIED") == std::string::npos) continue;
    Config cfg;
    const Status s = applyOverride(cfg, path + "=" + placeholder);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << path;
    EXPECT_NE(s.message().find("the value is not one of " + enumValueNames(*e)), std::string::npos)
        << s.message();
    ++checked;
  }
  EXPECT_GE(checked, 5);
  Config cfg;
  const Status s = applyOverride(cfg, "emulator.allocator=ALLOCATOR_UNSPECIFIED");
  EXPECT_EQ(s.message(),
            "override emulator.allocator=ALLOCATOR_UNSPECIFIED: the value is not one of ISLIP, "
            "ROUND_ROBIN");
}

TEST(Overrides, AStringThatIsNotUtf8IsRefused) {
  Config cfg;
  const Status s = applyOverride(cfg, "name=\xff\xfe");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("the value is not valid UTF-8"), std::string::npos) << s.message();
  EXPECT_TRUE(cfg.name().empty());
}

// Two overrides in different members of one choice: the later dropped the
// earlier (and the config's own fields of that choice) with a note blaming
// the config. Refused naming both; the same member twice is fine.
TEST(Overrides, TwoMembersOfOneChoiceOnTheCommandLineAreRefused) {
  Config cfg;
  ASSERT_TRUE(
      parseTextMessage("workload { uniform { rate: 0.05 duration_cycles: 20000 } }", "c", cfg)
          .isOk());
  const Config before = cfg;
  std::vector<std::string> notes;
  Status s = applyCommandLineOverrides(
      cfg, {"workload.alonso_ramp.low=0.01", "workload.uniform.rate=0.05"}, notes);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("workload.uniform.rate=0.05"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("workload.alonso_ramp.low=0.01"), std::string::npos) << s.message();
  Config other;
  s = applyCommandLineOverrides(other, {"fabric.kary_n_tree.k=2", "fabric.xgft.ports=8"}, notes);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("'xgft' of fabric"), std::string::npos) << s.message();
  notes.clear();
  Config same = before;
  ASSERT_TRUE(applyCommandLineOverrides(
                  same, {"workload.uniform.rate=0.1", "workload.uniform.duration_cycles=5"}, notes)
                  .isOk());
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(same.workload().uniform().duration_cycles(), 5);
}

// An inline config laid over a file's (ebb tune's base): what it sets
// replaces, lists whole (MergeFrom appended: xgft m: [2, 2] over m: [4, 4]
// ran a four-level tree), a oneof member replaces another, nested messages
// are laid over field by field, and what it leaves unset stays.
TEST(Overrides, MergeReplacingReplacesListsWholeAndKeepsWhatIsUnset) {
  Config file, over;
  ASSERT_TRUE(parseTextMessage("name: \"file\" fabric { xgft { m: 4 m: 4 w: 1 w: 4 } } "
                               "gating { turn_on_cycles: 500 turn_off_cycles: 700 } "
                               "workload { uniform { rate: 0.1 duration_cycles: 100 } }",
                               "file", file)
                  .isOk());
  ASSERT_TRUE(parseTextMessage("fabric { xgft { m: 2 m: 2 w: 1 w: 2 } } "
                               "gating { turn_on_cycles: 1000 } "
                               "workload { alonso_ramp { time_scale: 0.5 } }",
                               "inline", over)
                  .isOk());
  mergeReplacing(over, file);
  EXPECT_EQ(file.name(), "file");
  ASSERT_EQ(file.fabric().xgft().m_size(), 2);
  EXPECT_EQ(file.fabric().xgft().m(0), 2u);
  EXPECT_EQ(file.fabric().xgft().m(1), 2u);
  ASSERT_EQ(file.fabric().xgft().w_size(), 2);
  EXPECT_EQ(file.fabric().xgft().w(1), 2u);
  EXPECT_EQ(file.gating().turn_on_cycles(), 1000);
  EXPECT_EQ(file.gating().turn_off_cycles(), 700);
  EXPECT_TRUE(file.workload().has_alonso_ramp());
  EXPECT_FALSE(file.workload().has_uniform());
}

}  // namespace
}  // namespace ebb::config

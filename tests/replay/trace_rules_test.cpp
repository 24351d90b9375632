// Bad traces and traffic files (issue 17): what can be found when reading is
// found then, naming the file and line; a message too big to replay is refused
// before any memory is taken; a deadlock is reported at the first check
// period at which no rank can move, naming the ranks and their trace lines.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "configs/config_loader.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "replay/run_spec.h"
#include "replay/runner.h"

namespace ebb::replay {
namespace {

namespace fs = std::filesystem;

const std::string kHeader = "rank,op,t_enter_s,t_exit_s,peer,bytes,tag,request\n";

class TraceRules : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ebb-trace-rules-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string file(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  // The whole path a user takes: the config, the spec, then the run.
  Status replay(const std::string& workload) {
    Result<config::Config> cfg = config::parseTextConfig(workload, "t");
    if (!cfg) return cfg.status();
    Result<RunSpec> spec = buildRunSpec(*cfg);
    if (!spec) return spec.status();
    const fabric::Topology topo = fabric::KAryNTree::make(4, 2).value().build();
    const fabric::MinimalTree mt = fabric::MinimalTree::build(topo).value();
    Result<RunOutput> out = runEmulation(*spec, topo, mt, true, {});
    return out ? Status::ok() : out.status();
  }

  Status amg(const std::string& rows, const std::string& extra = "") {
    const std::string path = file("t.csv", kHeader + rows);
    return replay("workload { trace { path: \"" + path + "\" " + extra + " } }");
  }

  fs::path dir_;
};

struct BadTrace {
  const char* rows;
  const char* says;  // after "<file>:"
};

TEST_F(TraceRules, ReadingFindsWhatCanBeFoundAndNamesTheLine) {
  const BadTrace cases[] = {
      // A peer outside the trace (was: no line, and a million empty ranks).
      {"0,isend,0,0.1,99,64,1,0\n1,irecv,0,0.1,0,64,1,0\n",
       "t.csv:2: peer 99 is not a rank of the trace (it has 2 ranks, 0..1)"},
      // Rank ids with a gap: the range alone would contain the peer.
      {"0,send,0,0.1,1,64,1,0\n1000,recv,0,0.1,0,64,1,0\n",
       "t.csv:2: peer 1 is not a rank of the trace (it has 2 ranks, ids in 0..1000, and no "
       "line of rank 1)"},
      {"0,isend,0,0.1,0,64,1,0\n", "t.csv:2: rank 0 names itself as its peer"},
      // Per-rank times running backwards (was: replayed, exit 0).
      {"0,isend,0.5,0.6,1,64,1,0\n0,waitall,0.1,0.2,0,0,0,1\n1,irecv,0,0.1,0,64,1,0\n",
       "t.csv:3: rank 0 enters this call at 0.1 s, before its previous call (line 2) ended at "
       "0.6 s"},
      {"0,isend,0.5,0.4,1,64,1,0\n1,irecv,0,0.1,0,64,1,0\n",
       "t.csv:2: t_exit_s '0.4' is not a time at or after t_enter_s"},
      // A truncated trace: sends without their receives, or the other way.
      {"0,isend,0,0.1,1,64,1,0\n0,isend,0.1,0.2,1,64,1,0\n0,waitall,0.2,0.3,0,0,0,2\n"
       "1,irecv,0,0.1,0,64,1,0\n1,waitall,0.1,0.2,0,0,0,1\n",
       "t.csv:3: this send from rank 0 to rank 1 (tag 1) and 0 after it have no matching "
       "receive on rank 1"},
      {"0,irecv,0,0.1,1,64,3,0\n0,waitall,0.1,0.2,0,0,0,1\n1,isend,0,0.1,2,64,3,0\n"
       "2,irecv,0,0.1,1,64,3,0\n",
       "t.csv:2: this receive on rank 0 from rank 1 (tag 3) and 0 after it have no matching "
       "send"},
      // A line cut mid-way.
      {"0,isend,0,0.1,1,64,1,0\n1,irecv,0,0.1,0,6", "t.csv:3: 6 fields"},
      // A message too big to make into packets (was: std::bad_alloc).
      {"0,isend,0,0.1,1,1099511627776,1,0\n1,irecv,0,0.1,0,1099511627776,1,0\n",
       "t.csv:2: a message of 1099511627776 bytes is 17179869184 packets of 64 bytes, over the "
       "limit of 1048576 packets per message"},
  };
  for (const BadTrace& c : cases) {
    const Status s = amg(c.rows);
    ASSERT_FALSE(s.isOk()) << c.rows;
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.rows << "\n-> " << s.message();
  }
}

TEST_F(TraceRules, SizeScaleAndTheLimitAreCheckedTogether) {
  const std::string rows = "0,isend,0,0.1,1,1048576,1,0\n1,irecv,0,0.1,0,1048576,1,0\n";
  const Status s = amg(rows, "size_scale: 1e15");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("t.csv:2: 1048576 bytes x size_scale 1e+15"), std::string::npos)
      << s.message();
  // Raising the limit deliberately lets a big message through.
  const std::string big = "0,isend,0,0.1,1,200000,1,0\n1,irecv,0,0.1,0,200000,1,0\n";
  EXPECT_TRUE(amg(big).isOk()) << "3125 packets are within the default limit";
  const std::string path = file("b.csv", kHeader + big);
  EXPECT_FALSE(
      replay("workload { trace { path: \"" + path + "\" } max_message_packets: 100 }").isOk());
  EXPECT_TRUE(
      replay("workload { trace { path: \"" + path + "\" } max_message_packets: 4000 }").isOk());
}

TEST_F(TraceRules, ADeadlockIsReportedAtOnceNamingRanksAndLines) {
  // Both ranks receive first: matched in count, but neither can ever move.
  const Status s =
      amg("0,recv,0,0.1,1,64,1,0\n0,send,0.1,0.2,1,64,2,0\n1,recv,0,0.1,0,64,2,0\n"
          "1,send,0.1,0.2,0,64,1,0\n");
  ASSERT_FALSE(s.isOk());
  const std::string& m = s.message();
  EXPECT_NE(m.find("deadlock: all 2 unfinished ranks wait and no message is on its way"),
            std::string::npos)
      << m;
  EXPECT_NE(
      m.find("rank 0 waits in recv from rank 1 (tag 1) (" + (dir_ / "t.csv").string() + ":2)"),
      std::string::npos)
      << m;
  EXPECT_NE(m.find("rank 1 waits in recv from rank 0 (tag 2)"), std::string::npos) << m;
  // At the first check period (2 us), not after the virtual-time bound.
  EXPECT_NE(m.find("at 2.0 us"), std::string::npos) << m;
}

TEST_F(TraceRules, TrafficFilesAndFoldersAreCheckedBeforeTheRun) {
  const std::string big = file("big.txt", "0 0 1 64\n1 2 3 1099511627776\n");
  Status s = replay("workload { traffic_file: \"" + big + "\" }");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("big.txt:2: a message of 1099511627776 bytes"), std::string::npos)
      << s.message();
  s = replay("workload { traffic_file: \"" + dir_.string() + "\" }");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("is a folder, expected a file"), std::string::npos) << s.message();
  s = replay("workload { trace { path: \"" + dir_.string() + "\" } }");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("is a folder, expected a file"), std::string::npos) << s.message();
  // Synthetic sizes and arrivals with a pattern that brings its own are refused.
  const std::string small = file("small.txt", "0 0 1 64\n");
  for (const char* field :
       {"message_bytes: 128", "message_bytes_min: 8 message_bytes_max: 64", "arrivals: POISSON"}) {
    s = replay("workload { traffic_file: \"" + small + "\" " + field + " }");
    ASSERT_FALSE(s.isOk()) << field;
    EXPECT_NE(s.message().find(": applies to synthetic traffic only (alonso_ramp, uniform, "
                               "rate_points), not to a traffic file"),
              std::string::npos)
        << s.message();
  }
  s = replay("workload { collective { op: \"alltoall\" bytes: 64 } message_bytes: 64 }");
  EXPECT_NE(s.message().find("workload.message_bytes: applies to synthetic traffic only"),
            std::string::npos)
      << s.message();
  // The synthetic sizes of the config too.
  s = replay("workload { message_bytes: 1099511627776 }");
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("workload.message_bytes: a message of 1099511627776 bytes"),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace ebb::replay

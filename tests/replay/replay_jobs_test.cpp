// Closed-loop workloads of `ebb replay`: traces of every format from the
// config or the command line, generated collective loops, and multi-job
// mixes on disjoint hosts with per-job runtime and slowdown.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "configs/config_loader.h"
#include "fabric/kary_tree.h"
#include "fabric/minimal_tree.h"
#include "replay/jobs.h"
#include "replay/run_spec.h"
#include "replay/runner.h"
#include "workload/collectives.h"
#include "workload/traffic_file.h"

namespace ebb::replay {
namespace {

const std::string kTraces = EBB_TRACES_DIR;
const std::string kAmg = kTraces + "/amg2013-27/amg27_events.csv";

struct Fixture {
  Fixture() : topo(fabric::KAryNTree::make(4, 3).value().build()), mt(build(topo)) {}
  static fabric::MinimalTree build(const fabric::Topology& t) {
    return fabric::MinimalTree::build(t).value();
  }
  fabric::Topology topo;
  fabric::MinimalTree mt;
};

Result<RunSpec> specOf(const std::string& text) {
  auto cfg = config::parseTextConfig(text, "test");
  if (!cfg) return cfg.status();
  return buildRunSpec(*cfg);
}

RunSpec spec(const std::string& text) {
  Result<RunSpec> s = specOf(text);
  EXPECT_TRUE(s) << s.status().toString();
  return s ? *s : RunSpec{};
}

const results::JobResult* job(const results::RunSummary& s, const std::string& name) {
  for (const auto& j : s.jobs()) {
    if (j.name() == name) return &j;
  }
  return nullptr;
}

// The bytes a program sends, counted from its ops.
std::uint64_t programBytes(const workload::MpiTrace& t) {
  std::uint64_t b = 0;
  for (const auto& ops : t.ranks) {
    for (const auto& op : ops) {
      if (op.kind == workload::MpiOpKind::kIsend || op.kind == workload::MpiOpKind::kSend) {
        b += static_cast<std::uint64_t>(op.bytes);
      }
    }
  }
  return b;
}

const char* kMix = R"(
  gating { policy: DYNAMIC u_on: 0.15 }
  workload { mix {
    jobs { name: "amg" trace { path: ")" EBB_TRACES_DIR R"(/amg2013-27/amg27_events.csv" } }
    jobs { name: "a2a" collective { op: "alltoall" bytes: 4096 ranks: 16 iterations: 20
                                    compute_us: 200 } }
    jobs { name: "ar" collective { op: "allreduce" algorithm: "ring" bytes: 65536 ranks: 8
                                   iterations: 3 compute_us: 100 } start_us: 1000 }
  } }
)";

TEST(ReplayJobs, MixRunsEveryJobOnItsOwnHostsWithItsOwnTotals) {
  Fixture f;
  const RunSpec s = spec(kMix);
  ASSERT_EQ(s.jobs.jobs.size(), 3u);
  Result<std::vector<LoadedJob>> loaded = loadJobs(s.jobs, 64, 1);
  ASSERT_TRUE(loaded) << loaded.status().toString();
  const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
  ASSERT_EQ(out.summary.jobs_size(), 3);
  EXPECT_EQ(out.summary.ranks(), 27u + 16u + 8u);
  std::set<std::uint32_t> used;
  std::uint64_t messages = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const results::JobResult& r = out.summary.jobs(static_cast<int>(i));
    const LoadedJob& l = (*loaded)[i];
    EXPECT_EQ(r.name(), l.def.name);
    EXPECT_EQ(r.runs(), 1u) << r.name();
    EXPECT_GT(r.runtime_us(), 0.0) << r.name();
    // Every message of the job's program, and nothing else, was sent.
    EXPECT_EQ(r.messages(), l.program.sends) << r.name();
    EXPECT_EQ(r.bytes(), programBytes(l.program)) << r.name();
    messages += r.messages();
    ASSERT_EQ(r.hosts_size(), static_cast<int>(l.program.ranks.size()));
    for (std::uint32_t h : r.hosts()) {
      EXPECT_TRUE(used.insert(h).second) << "host " << h << " given twice";
    }
  }
  // Linear blocks in job order.
  EXPECT_EQ(out.summary.jobs(0).hosts(0), 0u);
  EXPECT_EQ(out.summary.jobs(1).hosts(0), 27u);
  EXPECT_EQ(out.summary.jobs(2).hosts(0), 43u);
  EXPECT_EQ(out.summary.messages_delivered(), messages);
  // The AMG job alone: 15 524 sends, as in the trace.
  EXPECT_EQ(job(out.summary, "amg")->messages(), 15524u);
  // The delayed job's runtime counts from its start.
  EXPECT_DOUBLE_EQ(job(out.summary, "ar")->start_us(), 1000.0);
  EXPECT_LT(job(out.summary, "ar")->runtime_us(), out.summary.app_runtime_us());
  // 20 iterations of 200 us compute at least.
  EXPECT_GT(job(out.summary, "a2a")->runtime_us(), 20 * 200.0);
}

TEST(ReplayJobs, EachJobGetsItsSlowdownAgainstAllLinksOn) {
  Fixture f;
  // Deep sleep with no hold: every message that finds a link asleep waits for
  // it, so each job's runtime grows.
  const RunSpec s = spec(std::string(kMix) + " lpi { mode: DEEP_SLEEP }");
  const RunOutput run = runEmulation(s, f.topo, f.mt, true, {}).value();
  const RunOutput base = runEmulation(s, f.topo, f.mt, false, {}).value();
  double worst = -1;
  const auto cmp = compareJobs(run.summary, base.summary, &worst);
  ASSERT_EQ(cmp.size(), 3u);
  double maxSeen = cmp[0].slowdown();
  for (const auto& c : cmp) {
    EXPECT_GT(c.baseline_runtime_us(), 0.0) << c.name();
    EXPECT_DOUBLE_EQ(c.slowdown(), c.runtime_us() / c.baseline_runtime_us() - 1.0);
    EXPECT_GT(c.slowdown(), 0.0) << c.name() << ": deep sleep costs every job something";
    maxSeen = std::max(maxSeen, c.slowdown());
  }
  EXPECT_DOUBLE_EQ(worst, maxSeen);
}

// Names are the report's keys: names given stay as given, and a name taken
// from a file or collective that meets any name takes the next free #N. A
// job named "a#2" was renamed "a#2#2" (and reported under another name).
TEST(ReplayJobs, GivenNamesStayAndDerivedNamesGoAroundThem) {
  const RunSpec s = spec(R"(workload { mix {
      jobs { collective { op: "barrier" ranks: 2 } }
      jobs { name: "barrier-2x0B" collective { op: "barrier" ranks: 2 } }
      jobs { name: "barrier-2x0B#2" collective { op: "barrier" ranks: 2 } }
      jobs { collective { op: "barrier" ranks: 2 } } } })");
  ASSERT_EQ(s.jobs.jobs.size(), 4u);
  EXPECT_EQ(s.jobs.jobs[1].name, "barrier-2x0B");
  EXPECT_EQ(s.jobs.jobs[2].name, "barrier-2x0B#2");
  EXPECT_EQ(s.jobs.jobs[0].name, "barrier-2x0B#3");
  EXPECT_EQ(s.jobs.jobs[3].name, "barrier-2x0B#4");
}

// A generated program's message past the packet limit names the field, the
// job and the rank ("E_INVALID: : rank 0" before): Bruck's alltoall combines
// blocks into messages larger than `bytes`, which is within the limit.
TEST(ReplayJobs, AGeneratedMessagePastThePacketLimitNamesTheField) {
  const Result<std::vector<LoadedJob>> big =
      loadJobs(spec("workload { collective { op: \"alltoall\" algorithm: \"bruck\" ranks: 27 "
                    "bytes: 67108864 } }")
                   .jobs,
               27, 1);
  ASSERT_FALSE(big);
  EXPECT_NE(big.status().message().find("workload.collective ('"), std::string::npos)
      << big.status().message();
  EXPECT_NE(big.status().message().find("'): rank 0 (as the algorithm sends it): a message of"),
            std::string::npos)
      << big.status().message();
}

TEST(ReplayJobs, ShortJobRepeatsUntilTheLongJobEnds) {
  Fixture f;
  const RunSpec s = spec(R"(
    gating { policy: ALL_ON }
    workload { mix {
      jobs { name: "long" collective { op: "alltoall" bytes: 1024 ranks: 16 iterations: 10
                                       compute_us: 100 } }
      jobs { name: "short" collective { op: "bcast" bytes: 4096 ranks: 8 iterations: 1
                                        compute_us: 50 } repeat: true }
    } })");
  const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
  const results::JobResult* longJob = job(out.summary, "long");
  const results::JobResult* shortJob = job(out.summary, "short");
  ASSERT_NE(longJob, nullptr);
  ASSERT_NE(shortJob, nullptr);
  EXPECT_EQ(longJob->runs(), 1u);
  // 1000 us of the long job against about 50 us runs of the short one.
  EXPECT_GE(shortJob->runs(), 10u);
  EXPECT_LE(static_cast<double>(shortJob->runs()) * shortJob->runtime_us(),
            longJob->runtime_us() + 1e-6);
  // Each run sends the whole bcast: 7 messages per binomial bcast of 8 ranks.
  EXPECT_GE(shortJob->messages(), 7 * shortJob->runs());
  EXPECT_LT(shortJob->messages(), 7 * (shortJob->runs() + 1));
  // The run ends with the job that does not repeat.
  EXPECT_DOUBLE_EQ(out.summary.app_runtime_us(), longJob->runtime_us());
  EXPECT_EQ(out.summary.messages_delivered(), out.summary.messages_generated());
}

// A repeating job longer than the run: no run completes, and the report says
// so with how long its run had been going (a lower bound), not a zero.
TEST(ReplayJobs, RepeatingJobThatNeverCompletesIsReportedAsABound) {
  Fixture f;
  const RunSpec s = spec(R"(
    gating { policy: ALL_ON }
    workload { mix {
      jobs { name: "short" collective { op: "bcast" bytes: 64 ranks: 4 compute_us: 10 } }
      jobs { name: "long" collective { op: "alltoall" bytes: 1024 ranks: 16 iterations: 50
                                       compute_us: 100 } repeat: true }
    } })");
  const RunOutput out = runEmulation(s, f.topo, f.mt, true, {}).value();
  const results::JobResult* longJob = job(out.summary, "long");
  ASSERT_NE(longJob, nullptr);
  EXPECT_EQ(longJob->runs(), 0u);
  EXPECT_TRUE(longJob->incomplete());
  EXPECT_DOUBLE_EQ(longJob->runtime_us(), out.summary.app_runtime_us());
  double worst = 0;
  results::RunSummary base = out.summary;
  base.mutable_jobs(1)->set_incomplete(false);
  base.mutable_jobs(1)->set_runtime_us(longJob->runtime_us() / 2);
  const auto cmp = compareJobs(out.summary, base, &worst);
  ASSERT_EQ(cmp.size(), 2u);
  EXPECT_TRUE(cmp[1].lower_bound());
  EXPECT_DOUBLE_EQ(cmp[1].slowdown(), 1.0);
  EXPECT_FALSE(cmp[0].lower_bound());
  EXPECT_DOUBLE_EQ(worst, 1.0);
  // The baseline unfinished too: nothing bounds the slowdown. Not measured,
  // and the worst job's slowdown is the measured jobs' alone.
  const auto unmeasured = compareJobs(out.summary, out.summary, &worst);
  ASSERT_EQ(unmeasured.size(), 2u);
  EXPECT_TRUE(unmeasured[1].not_measured());
  EXPECT_FALSE(unmeasured[0].not_measured());
  EXPECT_DOUBLE_EQ(worst, unmeasured[0].slowdown());
}

TEST(ReplayJobs, DelayedStartShiftsTheJobNotItsRuntime) {
  Fixture f;
  const std::string body =
      R"(collective { op: "allreduce" bytes: 8192 ranks: 16 iterations: 4 compute_us: 20 } )";
  const RunSpec now = spec("gating { policy: ALL_ON } workload { mix { jobs { " + body + "} } }");
  const RunSpec later =
      spec("gating { policy: ALL_ON } workload { mix { jobs { " + body + "start_us: 300 } } }");
  const RunOutput a = runEmulation(now, f.topo, f.mt, true, {}).value();
  const RunOutput b = runEmulation(later, f.topo, f.mt, true, {}).value();
  ASSERT_EQ(a.summary.jobs_size(), 1);
  ASSERT_EQ(b.summary.jobs_size(), 1);
  // An idle fabric with every link on: the same job takes the same time.
  EXPECT_DOUBLE_EQ(a.summary.jobs(0).runtime_us(), b.summary.jobs(0).runtime_us());
  EXPECT_DOUBLE_EQ(b.summary.app_runtime_us(), 300 + a.summary.app_runtime_us());
}

TEST(ReplayJobs, RandomHostBlocksAreDisjointAndSeeded) {
  JobsDef def;
  JobDef a;
  a.source = JobDef::Source::kCollective;
  a.op = "alltoall";
  a.bytes = 8;
  a.ranks = 20;
  a.field = "a";
  JobDef b = a;
  b.ranks = 30;
  def.jobs = {a, b};
  def.randomHosts = true;
  auto one = loadJobs(def, 64, 7);
  auto same = loadJobs(def, 64, 7);
  auto other = loadJobs(def, 64, 8);
  ASSERT_TRUE(one && same && other);
  std::set<std::uint32_t> hosts;
  bool linear = true;
  for (const LoadedJob& j : *one) {
    for (std::size_t r = 0; r < j.hosts.size(); ++r) {
      EXPECT_TRUE(hosts.insert(j.hosts[r].value()).second);
      EXPECT_LT(j.hosts[r].value(), 64u);
    }
  }
  for (std::size_t r = 0; r < 20; ++r)
    linear = linear && (*one)[0].hosts[r].value() == r;
  EXPECT_FALSE(linear);
  EXPECT_EQ(hosts.size(), 50u);
  EXPECT_EQ((*one)[1].hosts, (*same)[1].hosts);
  EXPECT_NE((*one)[1].hosts, (*other)[1].hosts);
}

TEST(ReplayJobs, CollectiveLoopIsTheAlgorithmRepeatedWithComputeGaps) {
  JobDef j;
  j.source = JobDef::Source::kCollective;
  j.op = "alltoall";
  j.bytes = 1000;
  j.ranks = 8;
  j.iterations = 3;
  j.computePs = 5'000'000;
  auto t = collectiveLoopProgram(j);
  ASSERT_TRUE(t) << t.status().toString();
  // Pairwise: each iteration every rank sends `bytes` to each of the 7 others.
  EXPECT_EQ(t->sends, 3u * 8u * 7u);
  EXPECT_EQ(t->sendBytes, 3u * 8u * 7u * 1000u);
  for (const auto& ops : t->ranks) {
    int computes = 0;
    for (const auto& op : ops) {
      if (op.kind == workload::MpiOpKind::kCompute) {
        ++computes;
        EXPECT_EQ(op.duration, 5'000'000);
      }
    }
    EXPECT_EQ(computes, 3);
  }
}

// An all-pairs collective on tens of thousands of ranks is refused before
// its first instance is built (a billion operations would fill the memory);
// a tree-shaped one on as many ranks is built.
TEST(ReplayJobs, ACollectiveTooBigToBuildIsRefusedBeforeItIsBuilt) {
  JobDef j;
  j.source = JobDef::Source::kCollective;
  j.field = "workload.collective";
  j.op = "alltoall";
  j.bytes = 64;
  j.ranks = 32768;
  j.iterations = 1;
  const auto big = collectiveLoopProgram(j);
  ASSERT_FALSE(big);
  EXPECT_NE(big.status().message().find("workload.collective.iterations: 1 iterations of alltoall "
                                        "on 32768 ranks are at least 2.15e+09 MPI operations"),
            std::string::npos)
      << big.status().message();
  j.op = "bcast";
  const auto tree = collectiveLoopProgram(j);
  ASSERT_TRUE(tree) << tree.status().toString();
  EXPECT_EQ(tree->sends, 32767u);
}

struct BadWorkload {
  std::string text;
  const char* expect;
};

TEST(ReplayJobs, BadWorkloadsAreRejectedNamingTheRule) {
  const std::string amg = "path: \"" + kAmg + "\"";
  const BadWorkload cases[] = {
      {"workload { mix { } }", "workload.mix.jobs: a mix needs at least one job"},
      {"workload { mix { jobs { name: \"x\" } } }", "workload.mix.jobs[0]: needs a trace"},
      {"workload { mix { jobs { name: \"a\" collective { op: \"bcast\" ranks: 4 } } "
       "jobs { name: \"a\" collective { op: \"alltoall\" ranks: 4 } } } }",
       "workload.mix.jobs[1].name: \"a\" is already the name of jobs[0]"},
      {"workload { mix { jobs { collective { op: \"alltoall\" ranks: 4 } repeat: true } } }",
       "at least one job must not repeat"},
      {"workload { collective { op: \"scan\" ranks: 4 } }", "unknown collective 'scan'"},
      {"workload { collective { op: \"barrier\" bytes: 64 ranks: 4 } }",
       "workload.collective.bytes: a barrier carries no payload"},
      {"workload { collective { op: \"bcast\" algorithm: \"magic\" ranks: 4 } }",
       "workload.collective.algorithm"},
      {"workload { collective { op: \"bcast\" ranks: 1 } }", "workload.collective.ranks"},
      {"workload { collective { op: \"bcast\" ranks: 4 iterations: 0 } }",
       "workload.collective.iterations: must be in [1, 1000000] (is 0)"},
      {"workload { collective { op: \"bcast\" ranks: 4 iterations: 4000000000 } }",
       "workload.collective.iterations: must be in [1, 1000000] (is 4000000000)"},
      {"workload { motif { name: \"halo3d\" ranks: 8 iterations: 4000000000 } }",
       "workload.motif.iterations: must be in [1, 1000000] (is 4000000000)"},
      {"workload { collective { op: \"bcast\" ranks: 4 compute_us: -1 } }", "compute_us"},
      {"workload { trace { " + amg + " format: SIMGRID_TI flops_per_s: -5 } }",
       "workload.trace.flops_per_s: must be > 0 (is -5)"},
      {"workload { trace { " + amg + " size_scale: -1 } }", "workload.trace.size_scale"},
      {"workload { trace { " + amg + " format: OTF2 collectives: \"alltoall=fast\" } }",
       "workload.trace.collectives: unknown alltoall algorithm 'fast'"},
      // What a format or a motif does not read is refused, not ignored.
      {"workload { trace { " + amg + " flops_per_s: 5 } }",
       "workload.trace.flops_per_s: applies to simgrid-ti traces only"},
      {"workload { trace { " + amg + " format: OTF2 flops_per_s: 5 } }", "this trace is otf2"},
      {"workload { trace { " + amg + " collectives: \"allreduce=ring\" } }",
       "workload.trace.collectives: applies to simgrid-ti and otf2 traces only"},
      {"workload { motif { name: \"halo3d\" ranks: 8 levels: 3 } }",
       "workload.motif.levels: applies to the multigrid motif only (this is halo3d)"},
      {"workload { motif { name: \"fft3d\" ranks: 8 z_blocks: 7 } }",
       "workload.motif.z_blocks: applies to the sweep3d motif only"},
      {"workload { motif { name: \"multigrid\" ranks: 8 octants_in_flight: 3 } }",
       "workload.motif.octants_in_flight: applies to the sweep3d motif only"},
      {"workload { motif { name: \"sweep3d\" ranks: 8 migrate_every: 5 } }",
       "workload.motif.migrate_every: applies to the particles motif only"},
      {"workload { trace { } }", "workload.trace.path: must name a trace"},
      {"workload { mix { jobs { trace { " + amg + " } start_us: -2 } } }",
       "workload.mix.jobs[0].start_us"},
      {"workload { motif { name: \"lulesh\" ranks: 8 } }",
       "workload.motif.name: unknown motif 'lulesh' (halo3d, halo3d26,"},
      {"workload { motif { name: \"halo3d\" ranks: 1 } }", "workload.motif.ranks: must be in [2,"},
      {"workload { motif { name: \"halo3d\" ranks: 8 cells: 0 } }",
       "workload.motif.cells: must be in [1, 4096] (is 0)"},
      {"workload { motif { name: \"halo3d\" ranks: 8 cells: 5000 } }",
       "workload.motif.cells: must be in [1, 4096] (is 5000)"},
      {"workload { motif { name: \"sweep3d\" ranks: 8 octants_in_flight: 0 } }",
       "workload.motif.octants_in_flight"},
      {"workload { motif { name: \"halo3d\" ranks: 8 bytes_per_cell: 0 } }",
       "workload.motif.bytes_per_cell: must be in [1,"},
      {"workload { motif { name: \"halo3d\" ranks: 8 compute_us: -3 } }",
       "workload.motif.compute_us"},
      {"workload { motif { name: \"halo3d\" ranks: 8 flops_per_s: 0 } }",
       "workload.motif.flops_per_s: must be > 0"},
      {"workload { motif { name: \"fft3d\" ranks: 8 collectives: \"alltoall=fast\" } }",
       "workload.motif.collectives"},
      {"workload { mix { jobs { motif { name: \"x\" ranks: 8 } } } }",
       "workload.mix.jobs[0].motif.name"},
      {"workload { mix { fill { hosts: 64 } jobs { motif { name: \"halo3d\" ranks: 8 } } } }",
       "workload.mix: give jobs or fill, not both"},
      {"workload { mix { fill { job_sizes: [8] } } }", "workload.mix.fill.hosts: must be in [1,"},
      {"workload { mix { fill { hosts: 4000000000 } } }", "(is 4000000000)"},
      // Within the hosts' range, but millions of jobs: refused before any is made.
      {"workload { mix { fill { hosts: 16777216 job_sizes: [2] } } }",
       "make up to 8388608 jobs, more than the 65536 a fill may make"},
      {"workload { motif { name: \"halo3d\" ranks: 8 flops_per_cell: 1e13 } }",
       "workload.motif.flops_per_cell"},
      {"workload { mix { fill { hosts: 64 job_sizes: [1] } } }", "job_sizes: 1 is below 2"},
      {"workload { mix { fill { hosts: 4 job_sizes: [8] } } }", "no job size fits in 4 hosts"},
      {"workload { mix { fill { hosts: 64 job_sizes: [8] motifs: [\"lulesh\"] } } }",
       "workload.mix.fill.motifs: unknown motif 'lulesh'"},
      {"workload { mix { fill { hosts: 64 job_sizes: [8] compute_us: -1 } } }",
       "workload.mix.fill.compute_us: must be >= 0 (is -1)"},
      {"workload { mix { fill { hosts: 64 job_sizes: [8] compute_us: nan } } }",
       "workload.mix.fill.compute_us: must be >= 0"},
  };
  for (const BadWorkload& c : cases) {
    Result<RunSpec> s = specOf(c.text);
    ASSERT_FALSE(s) << c.text;
    EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument) << c.text;
    EXPECT_NE(s.status().message().find(c.expect), std::string::npos) << s.status().message();
  }
}

// A generated program too big to build is refused before it is built (not an
// allocation failure): counted from one iteration, times the iterations.
TEST(ReplayJobs, ProgramsBeyondTheOperationLimitAreRefusedBeforeTheyAreBuilt) {
  JobDef j;
  j.field = "workload.collective";
  j.source = JobDef::Source::kCollective;
  j.op = "alltoall";
  j.bytes = 64;
  j.ranks = 64;
  j.iterations = 1'000'000;
  Result<workload::MpiTrace> t = collectiveLoopProgram(j);
  ASSERT_FALSE(t);
  EXPECT_NE(t.status().message().find("workload.collective.iterations: 1000000 iterations of "
                                      "alltoall on 64 ranks are at least "),
            std::string::npos)
      << t.status().message();
  // Where the bound before the first instance is low (a tree's P - 1 for
  // recursive doubling's P log P), the first instance counts exactly.
  j.op = "allreduce";
  j.iterations = 500'000;
  Result<workload::MpiTrace> counted = collectiveLoopProgram(j);
  ASSERT_FALSE(counted);
  EXPECT_NE(
      counted.status().message().find("500000 iterations of allreduce on 64 ranks are about "),
      std::string::npos)
      << counted.status().message();
  j.op = "alltoall";
  EXPECT_NE(t.status().message().find("MPI operations, more than the 100000000 ebb builds for "
                                      "one job"),
            std::string::npos)
      << t.status().message();
  j.iterations = 4'000'000'000u;  // beyond the tags of int32, checked here too
  EXPECT_FALSE(collectiveLoopProgram(j));
  Result<RunSpec> m =
      specOf("workload { motif { name: \"halo3d\" ranks: 64 iterations: 1000000 cells: 2 } }");
  ASSERT_TRUE(m) << m.status().toString();
  Result<std::vector<LoadedJob>> loaded = loadJobs(m->jobs, 64, 1);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.status().message().find("workload.motif.iterations: 1000000 iterations on 64 "
                                           "ranks are about"),
            std::string::npos)
      << loaded.status().message();
}

// A motif runs closed-loop like a trace: its messages are the generated
// program's, seeded by the config, and a mix of motifs gives each its own
// hosts and slowdown.
// A job whose compute alone runs past the end of virtual time (2^63 ps) is
// refused naming the job, before it runs (no bound wraps around); one that
// fits, however long, runs to its end.
TEST(ReplayJobs, AJobBeyondTheEndOfVirtualTimeIsRefusedAndALongOneRuns) {
  Fixture f;
  const Result<RunOutput> beyond = runEmulation(
      spec("gating { policy: ALL_ON } workload { collective { op: \"barrier\" ranks: 2 "
           "compute_us: 9e12 iterations: 5 } }"),
      f.topo, f.mt, true, {});
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.status().message().find("workload.collective"), std::string::npos)
      << beyond.status().message();
  EXPECT_NE(beyond.status().message().find("more than virtual time can hold"), std::string::npos)
      << beyond.status().message();
  // 3 x 1e11 us = 3.5 days of compute: 100 times that, the deadlock bound,
  // does not fit in 2^63 ps either, and must not wrap.
  const Result<RunOutput> days = runEmulation(
      spec("gating { policy: ALL_ON } workload { collective { op: \"barrier\" ranks: 2 "
           "compute_us: 1e11 iterations: 3 } }"),
      f.topo, f.mt, true, {});
  ASSERT_TRUE(days) << days.status().toString();
  EXPECT_GE(days->summary.app_runtime_us(), 3e11);
}

TEST(ReplayJobs, MotifsRunClosedLoopAloneAndInAMix) {
  Fixture f;
  const RunSpec one = spec(
      "workload { motif { name: \"halo3d\" ranks: 27 iterations: 3 cells: 8 compute_us: 5 } }");
  ASSERT_EQ(one.jobs.jobs.size(), 1u);
  EXPECT_EQ(one.jobs.jobs[0].name, "halo3d-27");
  const Result<std::vector<LoadedJob>> loaded = loadJobs(one.jobs, 64, 1);
  ASSERT_TRUE(loaded) << loaded.status().toString();
  const RunOutput out = runEmulation(one, f.topo, f.mt, true, {}).value();
  const results::RunSummary& s = out.summary;
  ASSERT_EQ(s.jobs_size(), 1);
  EXPECT_EQ(s.messages_delivered(), s.messages_generated());
  EXPECT_EQ(static_cast<std::uint64_t>(s.messages_generated()), (*loaded)[0].program.sends);
  EXPECT_GT(s.jobs(0).runtime_us(), 3 * 5.0);  // three compute phases and the messages
  const RunSpec mix = spec(R"(workload { mix { placement: RANDOM
      jobs { motif { name: "sweep3d" ranks: 16 iterations: 2 cells: 8 } }
      jobs { motif { name: "fft3d" ranks: 16 iterations: 2 cells: 8 } }
      jobs { motif { name: "particles" ranks: 16 iterations: 4 cells: 8 migrate_every: 2 } }
      jobs { motif { name: "multigrid" ranks: 16 iterations: 2 cells: 8 levels: 3 } } } })");
  const RunOutput m = runEmulation(mix, f.topo, f.mt, true, {}).value();
  ASSERT_EQ(m.summary.jobs_size(), 4);
  std::set<std::uint32_t> hosts;
  for (const auto& j : m.summary.jobs()) {
    EXPECT_GT(j.runtime_us(), 0) << j.name();
    EXPECT_GT(j.messages(), 0u) << j.name();
    EXPECT_FALSE(j.incomplete()) << j.name();
    hosts.insert(j.hosts().begin(), j.hosts().end());
  }
  EXPECT_EQ(hosts.size(), 64u);  // four disjoint blocks of 16
  EXPECT_EQ(m.summary.messages_delivered(), m.summary.messages_generated());
}

// A generated mix fills the machine with jobs of the given sizes and motifs,
// drawn by its seed; each job runs its iterations once (equal work in every
// mode) and gets its own slowdown.
TEST(ReplayJobs, AFilledMixTakesEveryHostWithDrawnJobs) {
  const auto jobsOf = [](const std::string& fill) {
    return spec("workload { mix { fill { " + fill + " } } }").jobs.jobs;
  };
  const auto a = jobsOf("hosts: 64 job_sizes: [8, 16, 32] iterations: 2 cells: 8 seed: 3");
  std::uint32_t ranks = 0;
  std::set<std::string> motifs;
  for (const JobDef& j : a) {
    ranks += j.ranks;
    EXPECT_TRUE(j.ranks == 8 || j.ranks == 16 || j.ranks == 32) << j.name;
    EXPECT_EQ(j.source, JobDef::Source::kMotif);
    EXPECT_EQ(j.motif.iterations, 2u);
    EXPECT_FALSE(j.repeat);
    motifs.insert(workload::motifName(j.motif.motif));
  }
  EXPECT_EQ(ranks, 64u);
  EXPECT_GT(a.size(), 2u);
  const auto b = jobsOf("hosts: 64 job_sizes: [8, 16, 32] iterations: 2 cells: 8 seed: 3");
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i].name, b[i].name);  // the same draw
  const auto c = jobsOf("hosts: 64 job_sizes: [8, 16, 32] iterations: 2 cells: 8 seed: 4");
  std::string namesA, namesC;
  for (const JobDef& j : a)
    namesA += j.name;
  for (const JobDef& j : c)
    namesC += j.name;
  EXPECT_NE(namesA, namesC);
  // More hosts than the fabric's: said on the field before any program is
  // built, whatever the draw (jobs of 3 drawn into 10 hosts fit in 9 and ran).
  const Result<std::vector<LoadedJob>> big =
      loadJobs(spec("workload { mix { fill { hosts: 4096 } } }").jobs, 64, 1);
  ASSERT_FALSE(big);
  EXPECT_NE(big.status().message().find(
                "workload.mix.fill.hosts: 4096 is more than the fabric's 64 hosts"),
            std::string::npos)
      << big.status().message();
  const Result<std::vector<LoadedJob>> oneMore = loadJobs(
      spec("workload { mix { fill { hosts: 10 job_sizes: [3] iterations: 1 cells: 4 } } }").jobs, 9,
      1);
  ASSERT_FALSE(oneMore);
  EXPECT_NE(oneMore.status().message().find("10 is more than the fabric's 9 hosts"),
            std::string::npos)
      << oneMore.status().message();
  for (const JobDef& j : jobsOf("hosts: 64 job_sizes: [16] compute_us: 2500"))
    EXPECT_EQ(j.motif.computePerIteration, 2500 * kPsPerUs) << j.name;  // every job's
  for (const JobDef& j : a)
    EXPECT_LT(j.motif.computePerIteration, 0) << j.name;  // the flops model's
  const auto only = jobsOf("hosts: 40 job_sizes: [16] motifs: [\"fft3d\"]");
  ASSERT_EQ(only.size(), 2u);  // 8 hosts left over: no size fits
  EXPECT_EQ(only[0].motif.motif, workload::Motif::kFft3d);
  Fixture f;
  const RunSpec run = spec(
      "workload { mix { placement: RANDOM fill { hosts: 64 job_sizes: [16, 32] iterations: 2 "
      "cells: 6 } } }");
  const RunOutput out = runEmulation(run, f.topo, f.mt, true, {}).value();
  EXPECT_EQ(out.summary.messages_delivered(), out.summary.messages_generated());
  for (const auto& j : out.summary.jobs())
    EXPECT_EQ(j.runs(), 1u) << j.name();
}

TEST(ReplayJobs, TooFewHostsOrRanksBeyondThePlacementAreErrors) {
  Fixture f;
  const auto errorOf = [&](const RunSpec& s) {
    const Result<RunOutput> r = runEmulation(s, f.topo, f.mt, true, {});
    EXPECT_FALSE(r) << "no error";
    return r ? std::string() : r.status().message();
  };
  // 27 ranks but only 16 placed.
  const std::string narrow =
      errorOf(spec("workload { trace { path: \"" + kAmg + "\" ranks: 16 } }"));
  EXPECT_NE(narrow.find("has 27 ranks, beyond the 16 placed"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("amg27_events.csv"), std::string::npos) << narrow;
  // 27 + 40 hosts on a 64-host fabric.
  const std::string big = errorOf(spec(R"(workload { mix {
      jobs { trace { path: ")" + kAmg + R"(" } }
      jobs { collective { op: "alltoall" bytes: 8 ranks: 40 } } } })"));
  EXPECT_NE(big.find("the jobs need 67 hosts"), std::string::npos) << big;
  EXPECT_NE(big.find("the fabric has only 64"), std::string::npos) << big;
  // Hosts asked for beyond the trace's ranks: the field that asked, in a
  // single trace and in a mix.
  const std::string wide = errorOf(spec("workload { trace { path: \"" + kAmg + "\" ranks: 70 } }"));
  EXPECT_NE(wide.find("70 by workload.trace.ranks) but the fabric has only 64"), std::string::npos)
      << wide;
  const std::string wideMix = errorOf(spec(R"(workload { mix {
      jobs { trace { path: ")" + kAmg + R"(" ranks: 60 } }
      jobs { collective { op: "alltoall" bytes: 8 ranks: 8 } } } })"));
  EXPECT_NE(wideMix.find("60 by workload.mix.jobs[0].trace.ranks"), std::string::npos) << wideMix;
  // Ranks fields adding up past 32 bits: counted in full (they wrapped to 1,
  // passed, and the placement read past the end of the hosts).
  const std::string wrapped = errorOf(spec(R"(workload { mix {
      jobs { trace { path: ")" + kAmg + R"(" ranks: 4294967295 } }
      jobs { trace { path: ")" + kAmg + R"(" ranks: 27 } } } })"));
  EXPECT_NE(wrapped.find("the jobs need 4294967322 hosts"), std::string::npos) << wrapped;
  // A missing trace: an I/O error naming it.
  const std::string missing = errorOf(spec("workload { trace { path: \"/nonexistent/x.csv\" } }"));
  EXPECT_NE(missing.find("/nonexistent/x.csv"), std::string::npos) << missing;
}

}  // namespace
}  // namespace ebb::replay

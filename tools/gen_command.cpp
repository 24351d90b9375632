#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <ostream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "agent/virtual_scheduler.h"
#include "common/file_io.h"
#include "common/units.h"
#include "fabric/kary_tree.h"
#include "replay/jobs.h"
#include "sim_backend/fabric_emulator.h"
#include "tools/cli_checks.h"
#include "tools/command.h"
#include "workload/message_limit.h"
#include "workload/motifs.h"
#include "workload/traffic_gen.h"

namespace ebb::tools {

using namespace ebb::replay;  // NOLINT(google-build-using-namespace): the library this command
                              // shells

namespace {

struct GenOptions {
  std::string pattern = "uniform";
  int k = 4;
  int n = 4;
  std::uint64_t maxSwitches = fabric::KAryNTree::kDefaultMaxSwitches;
  double rate = 0.1;
  std::int64_t cycles = 100'000;
  bool ramp = false;
  double timeScale = 1.0;
  std::int64_t messageBytes = 64;
  std::int64_t cyclePs = 1000;
  std::int64_t flitBytes = 4;
  std::uint64_t seed = 1;
  std::uint64_t maxMessages = 100'000'000;
  std::uint32_t hotspotHost = 0;
  double hotspotFraction = 0.2;
  std::uint32_t incastSenders = 8;
  std::int64_t incastPeriodCycles = 10'000;
  std::string collective = "alltoall";
  std::string algorithm;
  std::uint32_t ranks = 0;
  std::uint32_t iterations = 10;
  double computeUs = 10;
  bool computeGiven = false;  // --compute-us on the command line
  std::string motif = "halo3d";
  std::uint32_t cells = 32;
  std::string collectives;
  std::string out;
  bool binary = false;
  std::vector<std::string> given;  // the options on the command line, e.g. "--rate"
};

// Options that only some patterns read, and those patterns: given with
// another pattern they would be ignored silently, so they are refused.
Status checkOptionsApply(const GenOptions& o) {
  static const std::map<std::string, std::vector<std::string>> kOnlyFor = {
      {"--rate", {"uniform", "permutation", "hotspot"}},
      {"--cycles", {"uniform", "permutation", "hotspot", "incast"}},
      {"--time-scale", {"ramp"}},
      {"--hotspot-host", {"hotspot", "incast"}},
      {"--hotspot-fraction", {"hotspot"}},
      {"--incast-senders", {"incast"}},
      {"--incast-period-cycles", {"incast"}},
      {"--collective", {"collective"}},
      {"--algorithm", {"collective"}},
      {"--motif", {"motif"}},
      {"--cells", {"motif"}},
      {"--collectives", {"motif"}},
      {"--ranks", {"collective", "motif"}},
      {"--iterations", {"collective", "motif"}},
      {"--compute-us", {"collective", "motif"}},
      // A motif's sizes come from --cells and its bytes per cell.
      {"--message-bytes", {"uniform", "permutation", "hotspot", "incast", "ramp", "collective"}}};
  for (const std::string& name : o.given) {
    const auto it = kOnlyFor.find(name);
    if (it == kOnlyFor.end()) continue;
    const std::vector<std::string>& patterns = it->second;
    if (std::find(patterns.begin(), patterns.end(), o.pattern) != patterns.end()) continue;
    return invalidArgument(fmt::format("{}: applies to --pattern {} only, not {}", name,
                                       fmt::join(patterns, " or "), o.pattern));
  }
  return Status::ok();
}

// The workload fields gen fills from its options, named as the user gave
// them: "workload.collective.op: unknown collective" -> "--collective: ...".
Status asGenOptions(const Status& s) {
  static const std::pair<const char*, const char*> kFields[] = {
      {"workload.collective.op", "--collective"},
      {"workload.collective.algorithm", "--algorithm"},
      {"workload.collective.bytes", "--message-bytes"},
      {"workload.collective.ranks", "--ranks"},
      {"workload.collective.iterations", "--iterations"},
      {"workload.collective.compute_us", "--compute-us"},
      {"workload.motif.name", "--motif"},
      {"workload.motif.ranks", "--ranks"},
      {"workload.motif.iterations", "--iterations"},
      {"workload.motif.cells", "--cells"},
      {"workload.motif.collectives", "--collectives"},
      {"workload.motif.compute_us", "--compute-us"},
      // A rule over several fields: the options that set them.
      {"workload.collective", "--collective/--algorithm/--ranks"},
      {"workload.motif", "--motif/--ranks"}};
  std::string message = s.message();
  for (const auto& [field, option] : kFields) {
    const std::string f(field);
    if (message.rfind(f, 0) == 0 && (message.size() == f.size() || message[f.size()] == ':')) {
      message = option + message.substr(f.size());
      break;
    }
  }
  return {s.code(), message};
}

// A collective loop or a motif: the program replayed closed-loop on the
// emulator with every link on, and each message written at the time it was
// sent there, so the file carries the algorithm's steps and the compute gaps
// at realistic times (open loop from then on).
int runClosedLoopGen(const GenOptions& o, const fabric::KAryNTree& tree, std::ostream& out,
                     std::ostream& err) {
  if (o.iterations == 0 || o.iterations > workload::kMaxIterations) {
    err << "ebb gen: "
        << invalidArgument(fmt::format("--iterations: must be in [1, {}] (is {})",
                                       workload::kMaxIterations, o.iterations))
               .toString()
        << "\n";
    return kExitError;
  }
  config::WorkloadSpec w;
  // --ranks left out: every host. Given, it is checked like the config's
  // ranks, so --ranks 0 is refused ("must be >= 2"), not read as "all hosts".
  const bool ranksGiven = std::find(o.given.begin(), o.given.end(), "--ranks") != o.given.end();
  const auto ranks = ranksGiven ? o.ranks : static_cast<std::uint32_t>(tree.numHosts());
  std::string what;
  // The cost before the work: a file of `count` messages ("60", "at least
  // 6.87e+11") past --max-messages is refused.
  const auto tooMany = [&o, &err](const std::string& count) {
    err << "ebb gen: "
        << invalidArgument(fmt::format("the file would hold {} messages, more than the limit of "
                                       "{}: lower --iterations or --ranks, or raise the limit "
                                       "deliberately with --max-messages",
                                       count, o.maxMessages))
               .toString()
        << "\n";
    return kExitError;
  };
  if (o.pattern == "motif") {
    auto* m = w.mutable_motif();
    m->set_name(o.motif);
    m->set_ranks(ranks);
    m->set_iterations(o.iterations);
    m->set_cells(o.cells);
    m->set_collectives(o.collectives);
    if (o.computeGiven) m->set_compute_us(o.computeUs);
    what = fmt::format("{} x motif {}", o.iterations, o.motif);
  } else {
    auto* c = w.mutable_collective();
    c->set_op(o.collective);
    c->set_algorithm(o.algorithm);
    // A barrier has no size: its default is left out, a given one refused.
    const bool sizeGiven =
        std::find(o.given.begin(), o.given.end(), "--message-bytes") != o.given.end();
    if (o.collective != "barrier" || sizeGiven) c->set_bytes(o.messageBytes);
    c->set_ranks(ranks);
    c->set_iterations(o.iterations);
    c->set_compute_us(o.computeUs);
    what = fmt::format("{} x {}{}", o.iterations, o.collective,
                       o.algorithm.empty() ? "" : " (" + o.algorithm + ")");
    // The cost before the work, before the program is built: at least this
    // many messages (a bad algorithm name is refused below, by the job).
    workload::CollectiveAlgos algos;
    if (o.algorithm.empty() || workload::setAlgorithm(algos, o.collective, o.algorithm).isOk()) {
      const double least =
          static_cast<double>(workload::collectiveMessagesAtLeast(algos, o.collective, ranks)) *
          o.iterations;
      if (least > static_cast<double>(o.maxMessages))
        return tooMany(fmt::format("at least {:.3g}", least));
    }
  }
  Result<JobsDef> jobs = jobsFromWorkload(w, "");
  if (!jobs) {
    err << "ebb gen: " << asGenOptions(jobs.status()).toString() << "\n";
    return kExitError;
  }
  Result<std::vector<LoadedJob>> loaded =
      loadJobs(*jobs, static_cast<std::uint32_t>(tree.numHosts()), o.seed);
  if (!loaded) {
    err << "ebb gen: " << asGenOptions(loaded.status()).toString() << "\n";
    return kExitError;
  }
  // Compute past the end of time would be dropped by the run (saturated),
  // writing a shorter program than asked: refused as `ebb replay` does.
  if (Result<TimePs> h = jobsHorizon(*loaded, 0); !h) {
    err << "ebb gen: "
        << Status(h.status().code(),
                  fmt::format("the {}'s compute (--compute-us x --iterations) runs past the "
                              "end of virtual time: {}",
                              o.pattern, h.status().message()))
               .toString()
        << "\n";
    return kExitError;
  }
  // Exactly, once built: every send of the program is one message of the file.
  std::uint64_t messages = 0;
  for (const LoadedJob& l : *loaded)
    messages += l.program.sends;
  if (messages > o.maxMessages) return tooMany(std::to_string(messages));
  const fabric::Topology topo = tree.build();
  agent::VirtualScheduler sched;
  sim::EmulatorConfig cfg;
  cfg.cyclePs = o.cyclePs;
  cfg.flitBytes = o.flitBytes;
  cfg.seed = o.seed;
  if (Status s = cfg.validate(); !s.isOk()) {
    err << "ebb gen: " << s.toString() << "\n";
    return kExitError;
  }
  sim::FabricEmulator emu(topo, cfg, sched);
  JobRunner runner(emu, *loaded);
  std::vector<workload::TrafficMessage> sent;
  emu.onDelivery([&](const sim::Delivery& d) {
    runner.onDelivery(d);
    sent.push_back({d.created, d.src.value(), d.dst.value(), d.bytes, 0});
  });
  runner.start();
  sched.runAll();
  if (!runner.done()) {
    err << "ebb gen: the " << o.pattern << " did not finish: " << runner.describeUnfinished()
        << "\n";
    return kExitError;
  }
  if (sent.size() > o.maxMessages) {  // a guard: the count above is exact
    err << "ebb gen: "
        << Status(ErrorCode::kInternal,
                  fmt::format("the run sent {} messages, more than the {} counted (--max-messages "
                              "{}); nothing written",
                              sent.size(), messages, o.maxMessages))
               .toString()
        << "\n";
    return kExitError;
  }
  std::stable_sort(sent.begin(), sent.end(),
                   [](const auto& a, const auto& b) { return a.time < b.time; });
  auto writer = workload::TrafficWriter::create(o.out, o.binary);
  if (!writer) {
    err << "ebb gen: " << writer.status().toString() << "\n";
    return kExitError;
  }
  Status st;
  for (const auto& m : sent) {
    if (st = (*writer)->write(m); !st.isOk()) break;
  }
  // A message refused: the partial file is dropped, not committed.
  Status closed = st.isOk() ? (*writer)->close() : Status::ok();
  if (!st.isOk() || !closed.isOk()) {
    err << "ebb gen: " << (st.isOk() ? closed : st).toString() << "\n";
    return kExitError;
  }
  out << fmt::format("wrote {} messages ({}, {} ranks, {:.1f} us with all links on) to {}\n",
                     sent.size(), what, ranks, toMicroseconds(runner.makespan()), o.out);
  return kExitOk;
}

int runGen(const GenOptions& o, std::ostream& out, std::ostream& err) {
  if (Status s = checkOptionsApply(o); !s.isOk()) {
    err << "ebb gen: " << s.toString() << "\n";
    return kExitError;
  }
  auto tree = fabric::KAryNTree::make(o.k, o.n, o.maxSwitches, "--max-switches");
  if (!tree) {
    err << "ebb gen: --k/--n: " << tree.status().toString() << "\n";
    return kExitError;
  }
  // Before any work: a closed-loop pattern runs the emulator first, and its
  // run must not be lost to a path that cannot be written.
  if (Status s = checkOutputFile(o.out, "--out", {}); !s.isOk()) {
    err << "ebb gen: " << s.toString() << "\n";
    return kExitError;
  }
  // A file ebb replay would refuse for its per-message limit is not written.
  if (const workload::MessageLimit limit; o.messageBytes > limit.maxBytes()) {
    err << "ebb gen: "
        << invalidArgument(
               fmt::format("--message-bytes: {} bytes is more than the {} bytes ({} packets of "
                           "{} bytes) that ebb replay takes in one message by default "
                           "(workload.max_message_packets; docs/traffic.md, \"Limits\")",
                           o.messageBytes, limit.maxBytes(), limit.maxPackets, limit.packetBytes))
               .toString()
        << "\n";
    return kExitError;
  }
  if (o.pattern == "collective" || o.pattern == "motif")
    return runClosedLoopGen(o, *tree, out, err);
  static const std::map<std::string, workload::GenPattern> patterns = {
      {"uniform", workload::GenPattern::kUniform},
      {"ramp", workload::GenPattern::kUniform},
      {"permutation", workload::GenPattern::kPermutation},
      {"hotspot", workload::GenPattern::kHotspot},
      {"incast", workload::GenPattern::kIncast}};
  workload::GenSpec spec;
  spec.pattern = patterns.at(o.pattern);
  spec.hosts = tree->numHosts();
  spec.cyclePs = o.cyclePs;
  spec.flitBytes = o.flitBytes;
  spec.messageBytes = o.messageBytes;
  spec.seed = o.seed;
  spec.hotspotHost = o.hotspotHost;
  spec.hotspotFraction = o.hotspotFraction;
  spec.incastSenders = o.incastSenders;
  // Each option on its own, named, with its rule; products never wrap.
  const auto bad = [&](const Status& s) {
    err << "ebb gen: " << s.toString() << "\n";
    return kExitError;
  };
  if (Status st = workload::checkOfferedLoad("--rate", o.rate); !st.isOk()) return bad(st);
  if (o.cycles <= 0)
    return bad(invalidArgument(fmt::format("--cycles: must be > 0 (is {})", o.cycles)));
  if (!(o.timeScale > 0) || !std::isfinite(o.timeScale))
    return bad(invalidArgument(fmt::format("--time-scale: must be > 0 (is {})", o.timeScale)));
  if (o.cyclePs <= 0)
    return bad(invalidArgument(fmt::format("--cycle-ps: must be > 0 (is {})", o.cyclePs)));
  const std::string cycleUnit = fmt::format("cycles of --cycle-ps = {} ps", o.cyclePs);
  if (spec.pattern == workload::GenPattern::kIncast) {  // read by incast only
    if (o.incastPeriodCycles <= 0) {
      return bad(invalidArgument(
          fmt::format("--incast-period-cycles: must be > 0 (is {})", o.incastPeriodCycles)));
    }
    Result<TimePs> incast =
        scaleToPs("--incast-period-cycles", o.incastPeriodCycles, o.cyclePs, cycleUnit);
    if (!incast) return bad(incast.status());
    spec.incastPeriodPs = *incast;
  }
  Result<TimePs> endPs = scaleToPs("--cycles", o.cycles, o.cyclePs, cycleUnit);
  if (!endPs) return bad(endPs.status());
  spec.endPs = *endPs;
  if (o.pattern == "ramp" && 420'000 * o.timeScale * static_cast<double>(o.cyclePs) > 9.2e18) {
    return bad(invalidArgument(
        fmt::format("--time-scale: {} x 420000 {} is beyond the time range of about 106 days",
                    o.timeScale, cycleUnit)));
  }
  spec.rate = o.pattern == "ramp" ? workload::RateProfile::alonsoRamp(o.cyclePs, o.timeScale)
                                  : workload::RateProfile::constant(o.rate, spec.endPs);
  if (Status s = spec.validate(); !s.isOk()) return bad(s);
  // The cost before the work: messages the file would hold at the peak rate
  // (incast: exactly; its rounds ignore --rate).
  const bool incastPattern = spec.pattern == workload::GenPattern::kIncast;
  const TimePs span = o.pattern == "ramp" ? spec.rate.end() : spec.endPs;
  const double messages =
      incastPattern
          ? static_cast<double>(spec.incastRounds()) * static_cast<double>(spec.incastSenders)
          : spec.rate.max() * static_cast<double>(span / o.cyclePs) *
                static_cast<double>(spec.hosts) / static_cast<double>(spec.flitsPerMessage());
  // The options that set how many messages the pattern makes, as it reads
  // them: the ramp has its own rates and length (--time-scale), an incast
  // ignores --rate.
  const bool rampPattern = o.pattern == "ramp";
  if (messages > static_cast<double>(o.maxMessages)) {
    return bad(invalidArgument(fmt::format(
        "the file would hold about {:.3g} messages, more than the limit of {}: {}, or raise the "
        "limit deliberately with --max-messages",
        messages, o.maxMessages,
        rampPattern     ? "lower --time-scale"
        : incastPattern ? "shorten --cycles, lengthen --incast-period-cycles"
                        : "shorten --cycles, lower --rate")));
  }
  auto writer = workload::TrafficWriter::create(o.out, o.binary);
  if (!writer) {
    err << "ebb gen: " << writer.status().toString() << "\n";
    return kExitError;
  }
  Result<std::uint64_t> n = workload::generateTraffic(spec, **writer);
  if (n && *n == 0) {  // not written: ebb replay refuses an empty traffic file
    const std::string read =
        rampPattern ? fmt::format("--time-scale {}", o.timeScale)
        : incastPattern
            ? fmt::format("--incast-period-cycles {}, --cycles {}", o.incastPeriodCycles, o.cycles)
            : fmt::format("--rate {}, --cycles {}", o.rate, o.cycles);
    return bad(invalidArgument(fmt::format(
        "the {} pattern gave no message ({}): nothing written to {}", o.pattern, read, o.out)));
  }
  Status closed = n ? (*writer)->close() : Status::ok();  // a failed write: dropped
  if (!n || !closed.isOk()) {
    err << "ebb gen: " << (n ? closed : n.status()).toString() << "\n";
    return kExitError;
  }
  out << fmt::format("wrote {} messages ({} pattern, {} hosts) to {}\n", *n, o.pattern, spec.hosts,
                     o.out);
  return kExitOk;
}

}  // namespace

void addGenCommand(CLI::App& app, CommandAction& action) {
  auto o = std::make_shared<GenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "gen",
      "Write a native traffic file (docs/traffic.md) of a synthetic pattern for a k-ary n-tree: "
      "uniform, ramp (the alonso-ramp), permutation, hotspot, incast, a collective loop "
      "(an MPI collective by a named algorithm, repeated with compute gaps) or a motif (an "
      "application's communication skeleton: halo3d, halo3d26, sweep3d, multigrid, fft3d, "
      "particles); the last two timed by a closed-loop run with every link on. Replay it with "
      "'ebb replay --traffic FILE'; for closed-loop replay use workload.motif or "
      "workload.collective in a config (docs/traffic.md).");
  cmd->add_option("--pattern", o->pattern, "Traffic pattern")
      ->check(CLI::IsMember(
          {"uniform", "ramp", "permutation", "hotspot", "incast", "collective", "motif"}))
      ->capture_default_str();
  cmd->add_option("--k", o->k, "Arity of the k-ary n-tree")->capture_default_str();
  cmd->add_option("--n", o->n, "Levels of the k-ary n-tree")->capture_default_str();
  cmd->add_option("--max-switches", o->maxSwitches,
                  "Largest k-ary n-tree to build, in switches (about 1 KB of memory each); it also "
                  "bounds the ports, 32 per switch of the limit")
      ->check(wholeNumberAboveZero())
      ->capture_default_str();
  cmd->add_option("--rate", o->rate, "Offered load, flits/cycle/node")->capture_default_str();
  cmd->add_option("--cycles", o->cycles, "Duration in cycles")->capture_default_str();
  cmd->add_option("--time-scale", o->timeScale, "ramp: 1 = the paper's 420 000 cycles")
      ->capture_default_str();
  cmd->add_option("--message-bytes", o->messageBytes,
                  "Message size in bytes (at most 67108864, the largest message ebb replay takes "
                  "by default)")
      ->capture_default_str();
  cmd->add_option("--cycle-ps", o->cyclePs, "One cycle in picoseconds")->capture_default_str();
  cmd->add_option("--flit-bytes", o->flitBytes, "Bytes per flit (one flit per cycle per link)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Random seed")->check(wholeNumber())->capture_default_str();
  cmd->add_option("--max-messages", o->maxMessages,
                  "Refuse to write more messages than this (estimated before writing at the "
                  "peak rate); raise it deliberately for a big file")
      ->check(wholeNumberAboveZero())
      ->capture_default_str();
  cmd->add_option("--hotspot-host", o->hotspotHost, "hotspot/incast: the destination host")
      ->capture_default_str();
  cmd->add_option("--hotspot-fraction", o->hotspotFraction,
                  "hotspot: share of messages sent to the hot spot")
      ->capture_default_str();
  cmd->add_option("--incast-senders", o->incastSenders, "incast: senders per round")
      ->capture_default_str();
  cmd->add_option("--incast-period-cycles", o->incastPeriodCycles, "incast: cycles between rounds")
      ->capture_default_str();
  cmd->add_option("--collective", o->collective,
                  "collective: alltoall, alltoallv, allgather, reduce_scatter, bcast, gather, "
                  "scatter, reduce, allreduce or barrier (--message-bytes is its size)")
      ->capture_default_str();
  cmd->add_option("--algorithm", o->algorithm,
                  "collective: the algorithm, e.g. pairwise, socket-phased, bruck, binomial, "
                  "scatter-allgather, linear, segmented, ring, recursive-doubling, "
                  "recursive-halving, reduce-scatter-allgather, ggas-read, ggas-write, "
                  "ggas-allgather, ggas-work-share (docs/traffic.md)");
  cmd->add_option("--motif", o->motif,
                  "motif: halo3d, halo3d26, sweep3d, multigrid, fft3d or particles "
                  "(docs/traffic.md, \"Motifs\")")
      ->capture_default_str();
  cmd->add_option("--cells", o->cells, "motif: edge of each rank's cube of grid cells")
      ->capture_default_str();
  cmd->add_option("--collectives", o->collectives,
                  "motif: collective algorithms, \"op=name,...\" (e.g. allreduce=ring)");
  cmd->add_option("--ranks", o->ranks,
                  "collective, motif: ranks on hosts 0..ranks-1, at least 2 (default: all hosts)");
  cmd->add_option("--iterations", o->iterations, "collective, motif: how many times")
      ->capture_default_str();
  cmd->add_option("--compute-us", o->computeUs,
                  "collective: compute before each iteration (default 10); motif: per "
                  "iteration (default: its flops model)")
      ->each([o](const std::string&) { o->computeGiven = true; });
  cmd->add_option("--out", o->out, "The traffic file to write")->required();
  cmd->add_flag("--binary", o->binary,
                "Write the compact binary form (length-delimited protobuf records)");
  cmd->callback([o, cmd, &action] {
    for (const CLI::Option* opt : cmd->get_options()) {
      if (opt->count() > 0) o->given.push_back(opt->get_name());
    }
    action = [o](std::ostream& out, std::ostream& err) { return runGen(*o, out, err); };
  });
}

}  // namespace ebb::tools

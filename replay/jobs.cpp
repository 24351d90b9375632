#include "replay/jobs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "common/units.h"
#include "replay/motif_jobs.h"
#include "workload/motifs.h"
#include "workload/otf2_trace.h"
#include "workload/simgrid_trace.h"

namespace ebb::replay {

namespace {

const char* formatName(config::TraceSpec::Format f) {
  switch (f) {
    case config::TraceSpec::SIMGRID_TI:
      return "simgrid-ti";
    case config::TraceSpec::OTF2:
      return "otf2";
    default:
      return "amg-csv";
  }
}

Result<JobDef> jobFromTrace(const config::TraceSpec& t, const std::string& baseDir,
                            const std::string& field) {
  JobDef j;
  j.field = field;
  j.source = JobDef::Source::kTrace;
  if (t.path().empty()) return invalidArgument(field + ".path: must name a trace");
  std::filesystem::path p(t.path());
  if (p.is_relative() && !baseDir.empty()) p = std::filesystem::path(baseDir) / p;
  j.path = p.string();
  j.format =
      t.format() == config::TraceSpec::FORMAT_UNSPECIFIED ? config::TraceSpec::AMG_CSV : t.format();
  j.randomRanks = t.placement() == config::TraceSpec::RANDOM;
  if (t.has_ranks() && t.ranks() == 0) {
    return invalidArgument(fmt::format(
        "{}.ranks: must be > 0 (is 0); leave it out to give the job as many hosts as the trace "
        "has ranks",
        field));
  }
  j.ranks = t.ranks();
  // What a format does not read is refused, not ignored.
  if (t.has_flops_per_s() && j.format != config::TraceSpec::SIMGRID_TI) {
    return invalidArgument(fmt::format(
        "{}.flops_per_s: applies to simgrid-ti traces only (their compute is in flops; this "
        "trace is {}, its compute is in time)",
        field, formatName(j.format)));
  }
  if (!t.collectives().empty() && j.format == config::TraceSpec::AMG_CSV) {
    return invalidArgument(fmt::format(
        "{}.collectives: applies to simgrid-ti and otf2 traces only (an amg-csv trace lists "
        "point-to-point messages)",
        field));
  }
  if (t.has_flops_per_s()) {
    if (!(t.flops_per_s() > 0) || !std::isfinite(t.flops_per_s())) {
      return invalidArgument(
          fmt::format("{}.flops_per_s: must be > 0 (is {})", field, t.flops_per_s()));
    }
    j.flopsPerS = t.flops_per_s();
  }
  if (t.has_size_scale()) {
    if (!(t.size_scale() > 0) || !std::isfinite(t.size_scale())) {
      return invalidArgument(
          fmt::format("{}.size_scale: must be > 0 (is {})", field, t.size_scale()));
    }
    j.sizeScale = t.size_scale();
  }
  if (!t.collectives().empty()) {
    if (Status s = workload::parseAlgorithms(j.algos, t.collectives()); !s.isOk()) {
      return invalidArgument(field + ".collectives: " + s.message());
    }
  }
  j.name = p.filename().string();
  if (j.name == "traces.otf2" || j.format == config::TraceSpec::SIMGRID_TI) {
    // Folders and OTF2 anchors are named by their folder.
    std::error_code ec;  // a path that cannot be read is refused when it is opened
    j.name = (std::filesystem::is_directory(p, ec) ? p : p.parent_path()).filename().string();
  }
  return j;
}

Result<JobDef> jobFromCollective(const config::CollectiveLoopSpec& c, const std::string& field) {
  JobDef j;
  j.field = field;
  j.source = JobDef::Source::kCollective;
  static const char* kOps[] = {"alltoall", "alltoallv", "allgather", "reduce_scatter", "bcast",
                               "gather",   "scatter",   "reduce",    "allreduce",      "barrier"};
  if (std::find(std::begin(kOps), std::end(kOps), c.op()) == std::end(kOps)) {
    return invalidArgument(fmt::format(
        "{}.op: unknown collective '{}' (alltoall, alltoallv, allgather, reduce_scatter, bcast, "
        "gather, scatter, reduce, allreduce, barrier)",
        field, c.op()));
  }
  j.op = c.op();
  if (!c.algorithm().empty()) {
    if (Status s = workload::setAlgorithm(j.algos, c.op(), c.algorithm()); !s.isOk()) {
      return invalidArgument(field + ".algorithm: " + s.message());
    }
  }
  if (c.bytes() < 0)
    return invalidArgument(fmt::format("{}.bytes: must be >= 0 (is {})", field, c.bytes()));
  if (c.op() == "barrier" && c.bytes() != 0) {
    return invalidArgument(fmt::format(
        "{}.bytes: a barrier carries no payload (its messages are 1 byte): leave it out "
        "(is {})",
        field, c.bytes()));
  }
  j.bytes = c.bytes();
  if (c.ranks() < 2)
    return invalidArgument(fmt::format("{}.ranks: must be >= 2 (is {})", field, c.ranks()));
  j.ranks = c.ranks();
  if (c.has_iterations() && (c.iterations() == 0 || c.iterations() > workload::kMaxIterations)) {
    return invalidArgument(fmt::format("{}.iterations: must be in [1, {}] (is {})", field,
                                       workload::kMaxIterations, c.iterations()));
  }
  j.iterations = c.has_iterations() ? c.iterations() : 1;
  Result<TimePs> compute = usToPs(field + ".compute_us", c.compute_us());
  if (!compute) return compute.status();
  j.computePs = *compute;
  j.name = fmt::format("{}-{}x{}B", j.op, j.ranks, j.bytes);
  return j;
}

Status applyJobFields(JobDef& j, const config::JobSpec& s) {
  if (!s.name().empty()) j.name = s.name();
  Result<TimePs> start = usToPs(j.field + ".start_us", s.start_us());
  if (!start) return start.status();
  j.startPs = *start;
  j.repeat = s.repeat();
  return Status::ok();
}

// Every message size times `scale` (at least one byte where there was one),
// each checked against `limit`: E_INVALID naming the file and line.
Status scaleAndCheckSizes(workload::MpiTrace& t, double scale, const workload::MessageLimit& limit,
                          const JobDef& j) {
  for (std::size_t rank = 0; rank < t.ranks.size(); ++rank) {
    for (auto& op : t.ranks[rank]) {
      if (op.bytes <= 0) continue;
      // A generated program (a collective, a motif) has no file: its field,
      // its name and the rank (an algorithm may combine blocks into one
      // message larger than `bytes`).
      const auto where = [&] {
        if (op.line > 0) return fmt::format("{}:{}", t.fileOf(rank, j.path), op.line);
        if (j.path.empty())
          return fmt::format("{} ('{}'): rank {} (as the algorithm sends it)", j.field, j.name,
                             rank);
        return fmt::format("{}: rank {}", j.path, rank);
      };
      if (scale != 1.0) {
        const double scaled = static_cast<double>(op.bytes) * scale;
        if (scaled > static_cast<double>(limit.maxBytes())) {
          return invalidArgument(fmt::format(
              "{}: {} bytes x size_scale {:g} is {:.4g} bytes, over the largest message of {} "
              "bytes "
              "({} packets of {} bytes; raise workload.max_message_packets deliberately)",
              where(), op.bytes, scale, scaled, limit.maxBytes(), limit.maxPackets,
              limit.packetBytes));
        }
        op.bytes = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(scaled)));
      }
      if (Status s = limit.check(op.bytes, where()); !s.isOk()) return s;
    }
  }
  t.countOps();
  return Status::ok();
}

Result<workload::MpiTrace> readTrace(const JobDef& j) {
  switch (j.format) {
    case config::TraceSpec::SIMGRID_TI: {
      workload::SimgridOptions o;
      o.flopsPerS = j.flopsPerS;
      o.algos = j.algos;
      return workload::readSimgridTrace(j.path, o);
    }
    case config::TraceSpec::OTF2:
      return workload::readOtf2Trace(j.path, j.algos);
    default:
      return workload::readAmgCsv(j.path);
  }
}

}  // namespace

Result<JobsDef> jobsFromWorkload(const config::WorkloadSpec& w, const std::string& baseDir) {
  JobsDef out;
  switch (w.pattern_case()) {
    case config::WorkloadSpec::kTrace: {
      Result<JobDef> j = jobFromTrace(w.trace(), baseDir, "workload.trace");
      if (!j) return j.status();
      out.jobs.push_back(std::move(*j));
      break;
    }
    case config::WorkloadSpec::kCollective: {
      Result<JobDef> j = jobFromCollective(w.collective(), "workload.collective");
      if (!j) return j.status();
      out.jobs.push_back(std::move(*j));
      break;
    }
    case config::WorkloadSpec::kMotif: {
      Result<JobDef> j = jobFromMotif(w.motif(), "workload.motif");
      if (!j) return j.status();
      out.jobs.push_back(std::move(*j));
      break;
    }
    case config::WorkloadSpec::kMix: {
      config::JobMixSpec mix = w.mix();
      if (mix.has_fill()) {
        if (!mix.jobs().empty()) {
          return invalidArgument("workload.mix: give jobs or fill, not both");
        }
        Status s = fillMix(mix.fill(), mix);
        if (!s.isOk()) return s;
        out.fillHosts = mix.fill().hosts();
      }
      if (mix.jobs().empty())
        return invalidArgument("workload.mix.jobs: a mix needs at least one job");
      out.randomHosts = mix.placement() == config::TraceSpec::RANDOM;
      bool anyOnce = false;
      for (int i = 0; i < mix.jobs_size(); ++i) {
        const config::JobSpec& s = mix.jobs(i);
        const std::string field = fmt::format("workload.mix.jobs[{}]", i);
        Result<JobDef> j =
            s.has_trace()        ? jobFromTrace(s.trace(), baseDir, field + ".trace")
            : s.has_collective() ? jobFromCollective(s.collective(), field + ".collective")
            : s.has_motif()      ? jobFromMotif(s.motif(), field + ".motif")
                                 : Result<JobDef>(invalidArgument(
                                       field + ": needs a trace, a collective or a motif"));
        if (!j) return j.status();
        j->field = field;
        if (Status st = applyJobFields(*j, s); !st.isOk()) return st;
        anyOnce = anyOnce || !j->repeat;
        out.jobs.push_back(std::move(*j));
      }
      if (!anyOnce) {
        return invalidArgument(
            "workload.mix.jobs: every job repeats, so the run would never end; "
            "at least one job must not repeat");
      }
      // A name given twice is a mistake (the report keys jobs by name);
      // names derived from files are made unique below.
      for (int i = 0; i < mix.jobs_size(); ++i) {
        for (int k = 0; k < i; ++k) {
          if (!mix.jobs(i).name().empty() && mix.jobs(i).name() == mix.jobs(k).name()) {
            return invalidArgument(
                fmt::format("workload.mix.jobs[{}].name: \"{}\" is already the name of jobs[{}]", i,
                            mix.jobs(i).name(), k));
          }
        }
      }
      // Names are the report's keys: make them unique. Names given stay as
      // given; a derived one that meets any name takes the next free #N (a
      // job named "a.csv" once became "a.csv#2", another job's results).
      std::vector<std::string> names;
      for (const config::JobSpec& j : mix.jobs())
        if (!j.name().empty()) names.push_back(j.name());
      for (std::size_t i = 0; i < out.jobs.size(); ++i) {
        if (!mix.jobs(static_cast<int>(i)).name().empty()) continue;
        JobDef& j = out.jobs[i];
        std::string name = j.name;
        for (int n = 2; std::find(names.begin(), names.end(), name) != names.end(); ++n)
          name = fmt::format("{}#{}", j.name, n);
        j.name = name;
        names.push_back(name);
      }
      break;
    }
    default:
      break;
  }
  return out;
}

Result<workload::MpiTrace> collectiveLoopProgram(const JobDef& job) {
  workload::MpiTrace t;
  t.ranks.resize(job.ranks);
  static_assert(workload::kMaxIterations < std::numeric_limits<std::int32_t>::max(),
                "each iteration's tag -(it + 1) is an int32");
  if (job.iterations > workload::kMaxIterations) {
    return invalidArgument(fmt::format("{}.iterations: must be in [1, {}] (is {})", job.field,
                                       workload::kMaxIterations, job.iterations));
  }
  // The cost before the work: `ops` for every iteration ("at least" or
  // "about"), refused past what ebb builds for one job.
  const auto tooMany = [&job](double ops, const char* how) -> Status {
    if (ops <= static_cast<double>(workload::kMaxProgramOps)) return Status::ok();
    return invalidArgument(fmt::format(
        "{}.iterations: {} iterations of {} on {} ranks are {} {:.3g} MPI operations, more than "
        "the {} ebb builds for one job: fewer iterations or ranks",
        job.field, job.iterations, job.op, job.ranks, how, ops, workload::kMaxProgramOps));
  };
  // Before the first instance is built (an all-pairs algorithm on tens of
  // thousands of ranks would fill the memory): each message is a send and
  // a receive.
  if (Status s = tooMany(2.0 *
                             static_cast<double>(workload::collectiveMessagesAtLeast(
                                 job.algos, job.op, job.ranks)) *
                             job.iterations,
                         "at least");
      !s.isOk()) {
    return s;
  }
  for (std::uint32_t it = 0; it < job.iterations; ++it) {
    // Then exactly: the first iteration, times how many.
    if (it == 1) {
      if (Status s = tooMany(static_cast<double>(workload::opCount(t)) * job.iterations, "about");
          !s.isOk()) {
        return s;
      }
    }
    if (job.computePs > 0) {
      for (auto& ops : t.ranks) {
        workload::MpiOp op;
        op.kind = workload::MpiOpKind::kCompute;
        op.duration = job.computePs;
        ops.push_back(op);
      }
    }
    // Negative tags: one per iteration, never matching another's messages.
    const auto tag = -static_cast<std::int32_t>(it + 1);
    if (Status s = workload::expandCollective(t.ranks, job.algos, job.op, job.bytes, tag);
        !s.isOk()) {
      return invalidArgument(job.field + ": " + s.message());
    }
  }
  t.countOps();
  return t;
}

Result<std::vector<LoadedJob>> loadJobs(const JobsDef& def, std::uint32_t fabricHosts,
                                        std::uint64_t seed) {
  std::vector<LoadedJob> out;
  // Checked on the field, whatever the draw (jobs that happened to fit in
  // fewer hosts ran before).
  if (def.fillHosts > fabricHosts) {
    return invalidArgument(
        fmt::format("workload.mix.fill.hosts: {} is more than the fabric's {} "
                    "hosts",
                    def.fillHosts, fabricHosts));
  }
  std::uint64_t known = 0;  // generated jobs' ranks, known before any program is built
  for (const JobDef& j : def.jobs)
    known += j.source == JobDef::Source::kTrace ? 0 : j.ranks;
  if (known > fabricHosts) {
    return invalidArgument(fmt::format(
        "the generated jobs need {} hosts but the fabric has only {}", known, fabricHosts));
  }
  // 64 bits: two traces' ranks fields of 2^32 - 1 and 2 wrapped to 1 and
  // passed, and the placement read past the hosts.
  std::uint64_t needed = 0;
  std::string what;  // each job and its hosts, for the error below
  for (const JobDef& j : def.jobs) {
    LoadedJob l;
    l.def = j;
    Result<workload::MpiTrace> prog = j.source == JobDef::Source::kTrace ? readTrace(j)
                                      : j.source == JobDef::Source::kMotif
                                          ? motifProgram(j, seed)
                                          : collectiveLoopProgram(j);
    if (!prog) return prog.status();
    l.program = std::move(*prog);
    if (l.program.ranks.empty()) {
      return invalidArgument(fmt::format("{}: {} has no ranks", j.field, j.path));
    }
    if (Status s = scaleAndCheckSizes(l.program, j.sizeScale, def.messageLimit, j); !s.isOk())
      return s;
    const auto ranks = static_cast<std::uint32_t>(l.program.ranks.size());
    if (j.ranks != 0 && ranks > j.ranks) {
      return invalidArgument(
          fmt::format("{}: {} ({}) has {} ranks, beyond the {} placed (ranks): rank {} has no host",
                      j.field, j.path, formatName(j.format), ranks, j.ranks, j.ranks));
    }
    l.def.ranks = std::max(ranks, j.ranks);
    needed += l.def.ranks;
    // More hosts than the program has ranks: the field that asked for them.
    // (Only a trace's ranks field can; a mix names its job, not the trace.)
    const bool traceField =
        j.field.size() >= 6 && j.field.compare(j.field.size() - 6, 6, ".trace") == 0;
    what += fmt::format(
        "{}{} {}{}", what.empty() ? "" : ", ", l.def.name, l.def.ranks,
        j.ranks > ranks ? fmt::format(" by {}{}.ranks", j.field, traceField ? "" : ".trace") : "");
    out.push_back(std::move(l));
  }
  if (needed > fabricHosts) {
    return invalidArgument(fmt::format("the jobs need {} hosts ({}) but the fabric has only {}",
                                       needed, what, fabricHosts));
  }
  std::vector<fabric::HostId> hosts;
  for (std::uint32_t h = 0; h < fabricHosts; ++h)
    hosts.push_back(fabric::HostId(h));
  std::mt19937_64 rng(seed);
  if (def.randomHosts) std::shuffle(hosts.begin(), hosts.end(), rng);
  std::size_t next = 0;
  for (auto& l : out) {
    std::vector<fabric::HostId> block(
        hosts.begin() + static_cast<std::ptrdiff_t>(next),
        hosts.begin() + static_cast<std::ptrdiff_t>(next + l.def.ranks));
    next += l.def.ranks;
    if (l.def.randomRanks) std::shuffle(block.begin(), block.end(), rng);
    block.resize(l.program.ranks.size());
    l.hosts = std::move(block);
  }
  return out;
}

Result<TimePs> jobsHorizon(const std::vector<LoadedJob>& jobs, TimePs atLeast) {
  TimePs end = atLeast;
  for (const LoadedJob& j : jobs) {
    if (j.def.repeat) continue;
    for (std::size_t r = 0; r < j.program.ranks.size(); ++r) {
      TimePs c = j.def.startPs;
      for (const auto& op : j.program.ranks[r])
        c = saturatingAdd(c, op.kind == workload::MpiOpKind::kCompute ? op.duration : 0);
      if (c == kEndOfTime) {
        return invalidArgument(fmt::format(
            "{} ('{}'): rank {}'s start and compute add up to more than virtual time can hold "
            "(2^63 ps, about 106 days)",
            j.def.field, j.def.name, r));
      }
      end = std::max(end, c);
    }
  }
  return end;
}

}  // namespace ebb::replay

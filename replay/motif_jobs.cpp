// Motif jobs: one from its config, a machine-filling mix of them, and the
// program of one (docs/traffic.md, "Motifs").
#include "replay/motif_jobs.h"

#include <algorithm>
#include <iterator>
#include <random>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "common/units.h"
#include "fabric/kary_tree.h"
#include "workload/motifs.h"

namespace ebb::replay {

Result<JobDef> jobFromMotif(const config::MotifSpec& m, const std::string& field) {
  JobDef j;
  j.field = field;
  j.source = JobDef::Source::kMotif;
  Result<workload::Motif> motif = workload::parseMotif(m.name());
  if (!motif) return invalidArgument(field + ".name: " + motif.status().message());
  workload::MotifParams& p = j.motif;
  p.motif = *motif;
  p.ranks = m.ranks();
  if (m.has_iterations()) p.iterations = m.iterations();
  if (m.has_cells()) p.cells = m.cells();
  if (m.has_bytes_per_cell()) {
    if (m.bytes_per_cell() == 0 || m.bytes_per_cell() > (std::uint64_t{1} << 30)) {
      return invalidArgument(fmt::format("{}.bytes_per_cell: must be in [1, {}] (is {})", field,
                                         std::uint64_t{1} << 30, m.bytes_per_cell()));
    }
    p.bytesPerCell = static_cast<std::int64_t>(m.bytes_per_cell());
  }
  if (m.has_compute_us()) {
    Result<TimePs> c = usToPs(field + ".compute_us", m.compute_us());
    if (!c) return c.status();
    p.computePerIteration = *c;
  }
  if (m.has_flops_per_cell()) p.flopsPerCell = m.flops_per_cell();
  if (m.has_flops_per_s()) p.flopsPerS = m.flops_per_s();
  // A motif's own parameters on another motif would be ignored: refused.
  using workload::Motif;
  for (const auto& [present, name, owner, owners] :
       {std::tuple{m.has_levels(), "levels", Motif::kMultigrid, "multigrid"},
        std::tuple{m.has_z_blocks(), "z_blocks", Motif::kSweep3d, "sweep3d"},
        std::tuple{m.has_octants_in_flight(), "octants_in_flight", Motif::kSweep3d, "sweep3d"},
        std::tuple{m.has_migrate_every(), "migrate_every", Motif::kParticles, "particles"}}) {
    if (present && p.motif != owner) {
      return invalidArgument(fmt::format("{}.{}: applies to the {} motif only (this is {})", field,
                                         name, owners, m.name()));
    }
  }
  if (m.has_levels()) p.levels = m.levels();
  if (m.has_z_blocks()) p.zBlocks = m.z_blocks();
  if (m.has_octants_in_flight()) p.octantsInFlight = m.octants_in_flight();
  if (m.has_migrate_every()) p.migrateEvery = m.migrate_every();
  if (!m.collectives().empty()) {
    if (Status s = workload::parseAlgorithms(j.algos, m.collectives()); !s.isOk()) {
      return invalidArgument(field + ".collectives: " + s.message());
    }
  }
  j.randomRanks = m.placement() == config::TraceSpec::RANDOM;
  j.ranks = m.ranks();
  j.path = field;  // messages are named by the config field
  // Checked now, so that a bad parameter fails before any run.
  if (Status s = workload::checkMotif(p); !s.isOk()) {
    return invalidArgument(field + "." + s.message());
  }
  j.name = fmt::format("{}-{}", workload::motifName(p.motif), p.ranks);
  return j;
}

Status fillMix(const config::MixFillSpec& fill, config::JobMixSpec& mix) {
  const std::string field = "workload.mix.fill";
  if (fill.hosts() == 0 || fill.hosts() > fabric::KAryNTree::kMaxHosts) {
    return invalidArgument(fmt::format("{}.hosts: must be in [1, {}] (is {})", field,
                                       fabric::KAryNTree::kMaxHosts, fill.hosts()));
  }
  static const std::uint32_t kSeedSizes[] = {256, 512, 1024};  // seed 004's job sizes
  std::vector<std::uint32_t> sizes;
  for (std::uint32_t s : fill.job_sizes())
    sizes.push_back(s);
  if (sizes.empty()) sizes.assign(std::begin(kSeedSizes), std::end(kSeedSizes));
  for (std::uint32_t s : sizes) {
    if (s < 2) return invalidArgument(fmt::format("{}.job_sizes: {} is below 2 ranks", field, s));
  }
  std::vector<std::string> motifs(fill.motifs().begin(), fill.motifs().end());
  if (motifs.empty()) {
    motifs = {"halo3d", "halo3d26", "sweep3d", "multigrid", "fft3d", "particles"};
  }
  for (const std::string& m : motifs) {
    if (Result<workload::Motif> r = workload::parseMotif(m); !r) {
      return invalidArgument(field + ".motifs: " + r.status().message());
    }
  }
  if (fill.has_compute_us()) {
    if (Result<TimePs> c = usToPs(field + ".compute_us", fill.compute_us()); !c) return c.status();
  }
  const std::uint32_t smallest = *std::min_element(sizes.begin(), sizes.end());
  if (smallest > fill.hosts()) {
    return invalidArgument(fmt::format("{}: no job size fits in {} hosts (smallest {})", field,
                                       fill.hosts(), smallest));
  }
  // Checked before any job is made: 2^24 hosts in jobs of 2 made 8 million
  // job specs (gigabytes) before the fabric's hosts were counted.
  if (const std::uint32_t most = fill.hosts() / smallest; most > kMaxFillJobs) {
    return invalidArgument(fmt::format(
        "{}: {} hosts in jobs of {} ranks make up to {} jobs, more than the {} a fill may make "
        "(fewer hosts, at most the fabric's, or larger job_sizes)",
        field, fill.hosts(), smallest, most, kMaxFillJobs));
  }
  std::mt19937_64 rng(fill.has_seed() ? fill.seed() : 1);
  std::uint32_t left = fill.hosts();
  for (int n = 0; left >= smallest; ++n) {
    std::vector<std::uint32_t> fit;
    for (std::uint32_t s : sizes)
      if (s <= left) fit.push_back(s);
    const std::uint32_t size =
        fit[std::uniform_int_distribution<std::size_t>(0, fit.size() - 1)(rng)];
    const std::string& motif =
        motifs[std::uniform_int_distribution<std::size_t>(0, motifs.size() - 1)(rng)];
    config::JobSpec* j = mix.add_jobs();
    j->set_name(fmt::format("{}-{}-{}", n, motif, size));
    config::MotifSpec* m = j->mutable_motif();
    m->set_name(motif);
    m->set_ranks(size);
    m->set_iterations(fill.has_iterations() ? fill.iterations() : 10);
    m->set_cells(fill.has_cells() ? fill.cells() : 32);
    if (fill.has_compute_us()) m->set_compute_us(fill.compute_us());
    left -= size;
  }
  return Status::ok();
}

Result<workload::MpiTrace> motifProgram(const JobDef& job, std::uint64_t seed) {
  workload::MotifParams p = job.motif;
  p.seed = seed;
  p.algos = job.algos;
  Result<workload::MpiTrace> t = workload::generateMotif(p);
  if (!t) return invalidArgument(job.field + "." + t.status().message());
  return t;
}

}  // namespace ebb::replay

#include "tune/cache.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include "common/file_io.h"
#include "common/fs_util.h"
#include "configs/config_loader.h"
#include "configs/proto/tune.pb.h"  // generated

namespace ebb::tune {

namespace fs = std::filesystem;

namespace {

// Bumped when a change to ebb changes what a run computes, so that old
// cached results are not reused.
constexpr const char* kKeyVersion = "ebb-tune-run-v1";

constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

std::uint64_t fnv1a(const char* data, std::size_t n, std::uint64_t h) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= kFnvPrime;
  }
  return h;
}

// Two FNV-1a streams with different offset bases, as 128 bits.
struct Hash128 {
  std::uint64_t a = 0xcbf29ce484222325ULL;
  std::uint64_t b = 0x84222325cbf29ce4ULL;
  void add(const char* data, std::size_t n) {
    a = fnv1a(data, n, a);
    b = fnv1a(data, n, b);
  }
  std::string hex() const { return fmt::format("{:016x}{:016x}", a, b); }
};

}  // namespace

std::string hashHex(const std::string& data) {
  Hash128 h;
  h.add(data.data(), data.size());
  return h.hex();
}

Result<std::string> FileDigests::of(const std::string& path) {
  {
    std::lock_guard lock(mu_);
    if (auto it = byPath_.find(path); it != byPath_.end()) return it->second;
  }
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  // A run is keyed by its files' contents, read whole before the run: a
  // device or a pipe (/dev/zero, a FIFO) would be read forever, or once.
  if (!ec && !fs::is_directory(st) && !fs::is_regular_file(st)) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("{}: not a regular file (ebb tune keys each run by its input "
                              "files' contents, so it reads them whole first)",
                              path));
  }
  if (fs::is_directory(st)) {
    // A trace folder (SimGrid per-rank files): every file's name and digest.
    Result<std::vector<fs::path>> listed = listRegularFiles(path, true);
    if (!listed) return listed.status();
    // Sorted as strings, as keys of earlier versions were.
    std::vector<std::string> files;
    for (const fs::path& f : *listed)
      files.push_back(f.string());
    std::sort(files.begin(), files.end());
    std::string all;
    for (const std::string& f : files) {
      Result<std::string> d = of(f);
      if (!d) return d.status();
      const fs::path rel = fs::relative(f, path, ec);
      if (ec) return Status(ErrorCode::kIo, fmt::format("cannot read {}: {}", f, ec.message()));
      all += rel.string() + "=" + *d + ";";
    }
    const std::string hex = hashHex(all);
    std::lock_guard lock(mu_);
    byPath_[path] = hex;
    return hex;
  }
  if (fs::path(path).extension() == ".otf2") {
    // An OTF2 anchor: the events and definitions live beside it.
    const fs::path stem = fs::path(path).parent_path() / fs::path(path).stem();
    std::string all = "otf2";
    for (const fs::path& p : {fs::path(stem.string() + ".def"), stem}) {
      if (!fs::exists(p, ec)) continue;
      Result<std::string> d = of(p.string());
      if (!d) return d.status();
      all += ";" + p.filename().string() + "=" + *d;
    }
    std::ifstream anchor(path, std::ios::binary);
    if (!anchor) return Status(ErrorCode::kIo, fmt::format("cannot open {}", path));
    std::string text((std::istreambuf_iterator<char>(anchor)), std::istreambuf_iterator<char>());
    all += ";content=" + hashHex(text);
    const std::string hex = hashHex(all);
    std::lock_guard lock(mu_);
    byPath_[path] = hex;
    return hex;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(ErrorCode::kIo, fmt::format("cannot open {}", path));
  Hash128 h;
  std::string buf(1 << 16, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.add(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return Status(ErrorCode::kIo, fmt::format("error reading {}", path));
  std::lock_guard lock(mu_);
  byPath_[path] = h.hex();
  return h.hex();
}

Result<RunKey> runKey(const config::Config& resolved, bool gated, FileDigests& digests) {
  config::Config c = resolved;
  // Fields that do not change what a run computes; of the report's, only the
  // latency warm-up does (kept when set, so other keys stay as they were).
  const std::int64_t warmup = c.report().latency_warmup_cycles();
  c.clear_name();
  c.clear_report();
  if (warmup != 0) c.mutable_report()->set_latency_warmup_cycles(warmup);
  c.clear_agent();
  const auto digest = [&](std::string* path) -> Status {
    if (path->empty()) return Status::ok();
    Result<std::string> d = digests.of(*path);
    if (!d) return d.status();
    *path = "content:" + *d;
    return Status::ok();
  };
  auto* w = c.mutable_workload();
  if (w->pattern_case() == config::WorkloadSpec::kTrafficFile) {
    if (Status s = digest(w->mutable_traffic_file()); !s.isOk()) return s;
  }
  if (w->pattern_case() == config::WorkloadSpec::kTrace) {
    if (Status s = digest(w->mutable_trace()->mutable_path()); !s.isOk()) return s;
  }
  if (w->pattern_case() == config::WorkloadSpec::kMix) {
    for (auto& job : *w->mutable_mix()->mutable_jobs()) {
      if (!job.has_trace()) continue;
      if (Status s = digest(job.mutable_trace()->mutable_path()); !s.isOk()) return s;
    }
  }
  if (c.fabric().has_topology_file()) {
    if (Status s = digest(c.mutable_fabric()->mutable_topology_file()->mutable_path()); !s.isOk()) {
      return s;
    }
  }
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  printer.PrintToString(c, &text);
  RunKey key;
  key.text = fmt::format("{} {} {}", kKeyVersion, gated ? "gated" : "all-on", text);
  key.hash = hashHex(key.text);
  return key;
}

namespace {

// The cached run in `file`, or why it is not one: unreadable, not the JSON
// of a cached run (half written), or not the run its name (the hash of its
// key) says.
Result<config::CachedRun> readEntry(const fs::path& file) {
  Result<std::string> text = config::readFile(file.string());
  if (!text) return text.status();
  config::CachedRun cached;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = true;
  if (auto st = google::protobuf::util::JsonStringToMessage(*text, &cached, opts); !st.ok()) {
    return Status(ErrorCode::kParse, fmt::format("{}: corrupt cached run (not its JSON: {})",
                                                 file.string(), std::string(st.message())));
  }
  if (hashHex(cached.key()) != file.stem().string()) {
    return Status(
        ErrorCode::kParse,
        fmt::format("{}: corrupt cached run (its key does not hash to its name)", file.string()));
  }
  return cached;
}

}  // namespace

std::optional<RunOutcome> RunCache::load(const RunKey& key) const {
  Result<config::CachedRun> cached = readEntry(fs::path(dir_) / (key.hash + ".json"));
  if (!cached || cached->key() != key.text) return std::nullopt;
  return RunOutcome{cached->summary(), cached->failure()};
}

std::string RunCache::corruption(const RunKey& key) const {
  const fs::path file = fs::path(dir_) / (key.hash + ".json");
  std::error_code ec;
  if (!fs::exists(file, ec)) return {};
  Result<config::CachedRun> cached = readEntry(file);
  if (!cached) return cached.status().message();
  if (cached->key() != key.text) {
    return fmt::format("{}: a cached run of another key with the same hash", file.string());
  }
  return {};
}

Status RunCache::store(const RunKey& key, const RunOutcome& outcome) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return {ErrorCode::kIo, fmt::format("cannot create {}: {}", dir_, ec.message())};
  config::CachedRun cached;
  cached.set_key(key.text);
  *cached.mutable_summary() = outcome.summary;
  cached.set_failure(outcome.failure);
  std::string json;
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  if (!google::protobuf::util::MessageToJsonString(cached, &json, opts).ok()) {
    return {ErrorCode::kInternal, "cannot render a cached run"};
  }
  return writeFile(fs::path(dir_) / (key.hash + ".json"), json + "\n");
}

Result<std::size_t> RunCache::importFrom(const std::string& otherDir,
                                         std::vector<std::string>* corrupt) const {
  std::error_code ec;
  if (!fs::is_directory(otherDir, ec)) {
    return Status(ErrorCode::kIo, fmt::format("{}: not a folder of cached runs", otherDir));
  }
  fs::create_directories(dir_, ec);
  if (ec) return Status(ErrorCode::kIo, fmt::format("cannot create {}: {}", dir_, ec.message()));
  std::size_t copied = 0;
  // Cached runs only: <32 hexadecimal digits>.json, the name a run's key gives
  // it. A shard's other files (report.json of a replay, say) are no runs.
  const auto isEntry = [](const fs::path& p) {
    const std::string stem = p.stem().string();
    return p.extension() == ".json" && stem.size() == 32 &&
           std::all_of(stem.begin(), stem.end(),
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
  };
  Result<std::vector<fs::path>> listed = listRegularFiles(otherDir, false, isEntry);
  if (!listed) return listed.status();
  for (const fs::path& src : *listed) {
    const fs::path dst = fs::path(dir_) / src.filename();
    if (fs::exists(dst, ec) && readEntry(dst)) continue;  // a good copy is kept
    // Checked before it is copied: a corrupt entry must not shadow a good
    // copy another folder may hold; a good one replaces a corrupt one.
    if (Result<config::CachedRun> e = readEntry(src); !e) {
      if (e.status().code() == ErrorCode::kIo) return e.status();
      if (corrupt) corrupt->push_back(e.status().message());
      continue;
    }
    Result<std::string> text = config::readFile(src.string());
    if (!text) return text.status();
    if (Status s = writeFile(dst, *text); !s.isOk()) return s;  // atomic: no half file
    ++copied;
  }
  return copied;
}

}  // namespace ebb::tune

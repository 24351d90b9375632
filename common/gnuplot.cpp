#include "common/gnuplot.h"

#include <chrono>
#include <exception>
#include <filesystem>

#include <fmt/format.h>

#include "common/child_process.h"
#include "common/file_io.h"

namespace ebb {

Status renderGnuplot(const std::string& dir, const std::string& scriptName, int width, int height,
                     const GnuplotScript& script) {
  const std::string text = script(fmt::format("pngcairo size {},{}", width, height), "png") +
                           script(fmt::format("svg size {},{}", width, height), "svg");
  if (Status s = writeFile(std::filesystem::path(dir) / scriptName, text); !s.isOk()) {
    return s;
  }
  ChildProcess::Spec spec;
  spec.argv = {"gnuplot", scriptName};
  spec.cwd = dir;
  CommandResult r;
  try {
    r = runCommand(spec, std::chrono::seconds(60));
  } catch (const std::exception& e) {
    return {ErrorCode::kUnavailable, fmt::format("plots: {} (install gnuplot)", e.what())};
  }
  if (r.timedOut) return {ErrorCode::kUnavailable, "plots: gnuplot ran over 60 s"};
  if (r.exitCode != 0) {
    return {ErrorCode::kUnavailable,
            fmt::format("plots: gnuplot failed ({}){}",
                        r.exitCode < 0 ? "killed" : fmt::format("exit status {}", r.exitCode),
                        r.err.empty() ? "" : ": " + r.err)};
  }
  return Status::ok();
}

}  // namespace ebb

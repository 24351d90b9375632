#include <filesystem>
#include <memory>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "configs/config_loader.h"
#include "fabric/dot_export.h"
#include "fabric/ibnetdiscover.h"
#include "fabric/ibsim_netfile.h"
#include "fabric/kary_tree.h"
#include "fabric/xgft.h"
#include "replay/fabric_from_config.h"
#include "tools/cli_checks.h"
#include "tools/command.h"
#include "tools/topo_summary.h"

namespace ebb::tools {

using namespace ebb::replay;  // NOLINT(google-build-using-namespace): the library this command
                              // shells

namespace {

struct TopoOptions {
  int k = 4;
  int n = 4;
  std::uint64_t maxSwitches = fabric::KAryNTree::kDefaultMaxSwitches;
  std::string configPath;
  std::string ibnetdiscoverPath;
  std::vector<std::string> roots;  // with ibnetdiscoverPath
  std::string xgft;
  std::uint32_t ports = 0;
  bool portsGiven = false;
  bool maxSwitchesGiven = false;
  std::string exportFormat;
  bool json = false;
};

Result<fabric::Topology> loadTopology(const TopoOptions& o) {
  // A fabric read from a file is as given: the options that shape or bound a
  // fabric to build are refused, not ignored.
  if (!o.ibnetdiscoverPath.empty() || !o.configPath.empty()) {
    const bool config = !o.configPath.empty();
    const char* from = config ? "--config" : "--from-ibnetdiscover";
    if (o.portsGiven) {
      return invalidArgument(fmt::format("--ports: does not apply with {} ({})", from,
                                         config ? "the config's fabric.xgft.ports sets them"
                                                : "the file gives every switch's ports"));
    }
    if (o.maxSwitchesGiven) {
      return invalidArgument(fmt::format(
          "--max-switches: does not apply with {} ({})", from,
          config ? "the config's fabric.kary_n_tree.max_switches or fabric.xgft.max_switches "
                   "sets the limit"
                 : "the fabric is as big as the file"));
    }
  }
  if (!o.ibnetdiscoverPath.empty()) {
    // Split here, not by the parser: it would drop an empty name ("a,,b").
    std::vector<std::string> roots;
    for (const std::string& given : o.roots) {
      std::size_t from = 0;
      for (std::size_t comma; (comma = given.find(',', from)) != std::string::npos;
           from = comma + 1)
        roots.push_back(given.substr(from, comma - from));
      roots.push_back(given.substr(from));
    }
    return fabric::readIbnetdiscoverFile(o.ibnetdiscoverPath, roots, "--roots");
  }
  if (!o.configPath.empty()) {
    Result<config::Config> cfg = config::loadConfigFile(o.configPath);
    if (!cfg) return cfg.status();
    const std::string dir = std::filesystem::path(o.configPath).parent_path().string();
    return topologyFromConfig(cfg->fabric(), dir);
  }
  if (!o.xgft.empty()) {
    if (o.portsGiven && o.ports == 0) {
      return invalidArgument("--ports: must be > 0 (leave it out for the most any level needs)");
    }
    auto x = fabric::Xgft::parse(o.xgft, o.ports, o.maxSwitches, "--max-switches");
    if (!x) return {x.status().code(), "--xgft: " + x.status().message()};
    return x->build();
  }
  if (o.portsGiven) return invalidArgument("--ports: applies to --xgft only");
  auto tree = fabric::KAryNTree::make(o.k, o.n, o.maxSwitches, "--max-switches");
  if (!tree) return {tree.status().code(), "--k/--n: " + tree.status().message()};
  return tree->build();
}

int runTopo(const TopoOptions& o, std::ostream& out, std::ostream& err) {
  Result<fabric::Topology> topo = loadTopology(o);
  if (!topo) {
    err << "ebb topo: " << topo.status().toString() << "\n";
    return kExitError;
  }
  Result<fabric::MinimalTree> mt = fabric::MinimalTree::build(*topo);
  if (!mt) {
    const std::string source = !o.ibnetdiscoverPath.empty() ? o.ibnetdiscoverPath
                               : !o.configPath.empty()      ? o.configPath
                               : !o.xgft.empty()            ? "--xgft " + o.xgft
                                                            : "--k/--n";
    err << "ebb topo: " << source << ": " << mt.status().toString() << "\n";
    return kExitError;
  }
  if (o.exportFormat == "ibsim") {
    std::ostringstream net;
    if (Status s = fabric::writeIbsimNetfile(*topo, net); !s.isOk()) {
      err << "ebb topo: --export ibsim: " << s.toString() << "\n";
      return kExitError;
    }
    out << net.str();
  } else if (o.exportFormat == "dot") {
    fabric::writeDot(*topo, *mt, out);
  } else {
    const TopoSummary s = summarize(*topo, *mt);
    out << (o.json ? formatJson(s) : formatText(s));
  }
  return kExitOk;
}

}  // namespace

void addTopoCommand(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<TopoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "topo",
      "Build or read a fat tree (a k-ary n-tree, an extended generalised fat tree, or a real "
      "fabric) and print its summary (hosts, switches per level, links, minimal tree), or export "
      "it as an ibsim net file or Graphviz dot.");
  auto* k =
      cmd->add_option("--k", opts->k, "Arity of the k-ary n-tree (>= 2)")->capture_default_str();
  auto* n =
      cmd->add_option("--n", opts->n, "Levels of the k-ary n-tree (>= 1)")->capture_default_str();
  auto* xgft = cmd->add_option(
      "--xgft", opts->xgft,
      "An extended generalised fat tree H:m1,...,mH:w1,...,wH (level 1 = the leaves: m_i "
      "children and w_(i+1) parents per switch, w1 = 1), e.g. 3:24,24,8:1,24,24 "
      "(docs/fabric.md)");
  auto* ports = cmd->add_option(
      "--ports", opts->ports, "--xgft: ports of every switch (default: the most any level needs)");
  auto* maxSwitches =
      cmd->add_option("--max-switches", opts->maxSwitches,
                      "Largest k-ary n-tree or XGFT to build, in switches (about 1 KB of memory "
                      "each); it also bounds the ports, 32 per switch of the limit")
          ->check(wholeNumberAboveZero())
          ->capture_default_str();
  auto* config = cmd->add_option("--config", opts->configPath,
                                 "An ebb config file (text protobuf); its fabric section is used");
  auto* ibnd =
      cmd->add_option("--from-ibnetdiscover", opts->ibnetdiscoverPath,
                      "Read a real fabric from ibnetdiscover output (or an ibsim net file)");
  cmd->add_option("--roots", opts->roots,
                  "--from-ibnetdiscover: the top-level switches by name or GUID (0x...), "
                  "comma-separated, when the hosts cannot tell (a leaf switch without hosts); "
                  "default: levels count up from the switches with hosts")
      ->needs(ibnd);
  config->excludes(k)->excludes(n)->excludes(ibnd)->excludes(xgft);
  ibnd->excludes(k)->excludes(n)->excludes(xgft);
  xgft->excludes(k)->excludes(n);
  auto* exportAs =
      cmd->add_option("--export", opts->exportFormat,
                      "Write the topology to stdout instead of the summary: ibsim (net file) or "
                      "dot (Graphviz, minimal tree highlighted)")
          ->check(CLI::IsMember({"ibsim", "dot"}));
  // An export prints no summary: --json with it would be ignored.
  cmd->add_flag("--json", opts->json, "Print the summary as JSON")->excludes(exportAs);
  cmd->callback([opts, ports, maxSwitches, &action] {
    opts->portsGiven = ports->count() > 0;
    opts->maxSwitchesGiven = maxSwitches->count() > 0;
    action = [opts](std::ostream& out, std::ostream& err) { return runTopo(*opts, out, err); };
  });
}

}  // namespace ebb::tools

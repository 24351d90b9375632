// The agent's state file: what it holds gated, so a run after a crash takes
// back what a killed run left (docs/ib_agent.md, "Crash and restart").
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "daemon/agent_daemon.h"
#include "daemon/gate_record.h"
#include "daemon/instance_lock.h"

namespace ebb::daemon {

namespace {
std::string describeGates(const std::vector<ib::HeldGate>& gates, const fabric::Topology& topo) {
  std::vector<std::string> names;
  for (const ib::HeldGate& g : gates) {
    const fabric::LinkId l = topo.sw(g.end.sw).ports[g.end.index].link;
    names.push_back(fmt::format("{} ({} at {})", topo.describeLink(l),
                                g.narrowed ? "narrowed" : "Disabled", topo.describePort(g.end)));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}
}  // namespace

bool AgentDaemon::readState() {
  statePath_ = stateFileFor(s_.port, s_.stateFile);
  Result<GateRecord::Read> r = GateRecord::read(statePath_, topo_);
  if (!r) {
    err_ << "ebb agent: cannot start: " << r.status().toString() << "\n";
    return false;
  }
  for (const std::string& s : r->skipped) {
    err_ << fmt::format(
        "ebb agent: warning: agent.state_file {} {}: skipped (the topology changed "
        "since it was written?)\n",
        statePath_, s);
  }
  previousGates_ = std::move(r->gates);
  return true;
}

bool AgentDaemon::adoptState() {
  if (!writesState()) {
    if (!previousGates_.empty()) {
      out_ << fmt::format(
                  "ebb agent: the state file {} lists {} gate(s) a previous run left: this run "
                  "sets nothing, so it leaves them and the file alone\n",
                  statePath_, previousGates_.size())
           << std::flush;
    }
    return true;
  }
  const std::vector<ib::HeldGate> taken = backend_->adoptGates(previousGates_);
  if (!taken.empty()) {
    out_ << fmt::format(
                "ebb agent: took back {} gate(s) a previous run left (state file {}), restored "
                "on exit as this run's: {}\n",
                taken.size(), statePath_, describeGates(taken, topo_))
         << std::flush;
  }
  // The rest: dropped where the port reads ungated; kept in the file where
  // it could not be read or is not this run's to restore (a switch out of
  // reach or off the allow-list, another gating action, a link not
  // verified), so no run forgets a port that may still be gated.
  std::size_t dropped = 0;
  for (const ib::HeldGate& g : previousGates_) {
    if (std::find(taken.begin(), taken.end(), g) != taken.end()) continue;
    if (backend_->readsUngated(g)) {
      ++dropped;
    } else {
      carried_.push_back(g);
    }
  }
  if (dropped > 0) {
    out_ << fmt::format(
                "ebb agent: {} gate(s) in the state file no longer read gated (brought back "
                "since, or never landed): dropped\n",
                dropped)
         << std::flush;
  }
  if (!carried_.empty()) {
    err_ << fmt::format(
                "ebb agent: warning: {} gate(s) in the state file this run cannot take back (out "
                "of reach, not allow-listed, or gated another way): kept in the file, not "
                "restored on exit: {}\n",
                carried_.size(), describeGates(carried_, topo_))
         << std::flush;
  }
  // Written now, so a file that cannot be written stops the start, not the
  // first turn-off.
  if (!writeState().isOk()) {
    err_ << "ebb agent: cannot start: " << stateError_ << "\n";
    return false;
  }
  backend_->setHeldObserver([this] { return writeState(); });
  return true;
}

// A failure refuses the Set about to go (the backend's hold), said once until
// a write succeeds again.
Status AgentDaemon::writeState() {
  std::set<ib::HeldGate> gates(carried_.begin(), carried_.end());
  for (const ib::HeldGate& g : backend_->heldGates())
    gates.insert(g);
  const std::string text = GateRecord::render({gates.begin(), gates.end()}, topo_);
  if (text == stateText_ && stateError_.empty()) return Status::ok();
  Status st = GateRecord::write(statePath_, text);
  if (!st.isOk()) {
    const Status refused(ErrorCode::kUnavailable,
                         st.message() + " (no port is gated that the state file cannot record)");
    if (stateError_ != st.toString()) {
      stateError_ = st.toString();
      if (!stateText_.empty()) err_ << "ebb agent: " << refused.toString() << "\n" << std::flush;
    }
    return refused;
  }
  if (!stateError_.empty()) {
    err_ << fmt::format("ebb agent: the state file {} is written again\n", statePath_)
         << std::flush;
    stateError_.clear();
  }
  stateText_ = text;
  return Status::ok();
}

}  // namespace ebb::daemon

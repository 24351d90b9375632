#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>

#include "agent/backend.h"
#include "common/status.h"
#include "common/time.h"
#include "fabric/ids.h"

namespace ebb::ib {

// One restoreAll() in progress, shared by the strategies it runs in turn.
// It ends at `deadline` (a scheduler task) whatever is still on the wire.
struct RestoreRun {
  std::function<void(Status)> done;
  std::function<void(fabric::LinkId, fabric::PortId)> onSet;  // every Set sent
  TimePs deadline = 0;
  std::set<fabric::LinkId> inFlight;    // links with a Set on the wire
  std::set<fabric::LinkId> awaitingUp;  // set Polling: back once they read LinkUp
  // Why a link is not back yet (the last failure), by link.
  std::map<fabric::LinkId, std::string> why;
  Status firstError;  // the first Set that failed
  Status gaveUp;      // not OK: links left at the deadline (the final word)
  bool over = false;  // finished or past the deadline: nothing more is sent
};

// How a link is taken out of use and brought back (docs/mechanisms.md §6):
// disabling the port (DisablePortGating) or reducing its width
// (ReduceWidthGating). IbBackend picks one per link (strategyFor) and keeps
// the shortcuts common to both: nothing is sent for a link already in the
// state asked for, nor in a dry run.
class GatingStrategy {
 public:
  template <class T>
  using Done = std::function<void(Result<T>)>;
  virtual ~GatingStrategy() = default;

  // The link is off in this strategy's sense (down / at reduced width).
  virtual bool readsOff(fabric::LinkId l) const = 0;
  // Not OK while a change to `l` is still on the wire: refused, not queued.
  virtual Status busy(fabric::LinkId) const { return Status::ok(); }
  virtual void turnOff(fabric::LinkId l, Done<agent::LinkPowerState> done) = 0;
  virtual void turnOn(fabric::LinkId l, Done<agent::LinkPowerState> done) = 0;
  // Brings back every link this run gated this way, then calls `then`
  // (errors go to run->firstError and run->why). Stops sending once
  // run->over; `then` may then never be called.
  virtual void restore(std::shared_ptr<RestoreRun> run, std::function<void()> then) = 0;
};

}  // namespace ebb::ib

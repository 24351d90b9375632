#include "daemon/event_log.h"

#include <fmt/format.h>

#include "common/json.h"

namespace ebb::daemon {
namespace {

// A JSON array of already-rendered elements.
std::string jsonArray(const std::vector<std::string>& elements) {
  std::string out = "[";
  for (const std::string& e : elements) {
    if (out.size() > 1) out += ',';
    out += e;
  }
  return out + "]";
}

}  // namespace

Status EventLog::open(const std::string& path) {
  file_.open(path, std::ios::app);
  if (!file_) return {ErrorCode::kIo, "cannot write the decision log " + path};
  out_ = &file_;
  return Status::ok();
}

void EventLog::write(const std::string& line) {
  if (out_ != nullptr) *out_ << line << "\n" << std::flush;
}

void EventLog::decision(const agent::DecisionRecord& d, const std::string& switchName,
                        std::string_view gatingAction) {
  if (enabled()) write(decisionLine(d, switchName, gatingAction));
}

void EventLog::portSet(TimePs now, const ib::PortSetEvent& e, const std::string& switchName) {
  if (enabled()) write(portSetLine(now, e, switchName));
}

void EventLog::osmEvent(TimePs now, const OsmEvent& ev,
                        const std::vector<std::string>& rereadSwitches) {
  if (enabled()) write(osmEventLine(now, ev, rereadSwitches));
}

void EventLog::portReread(TimePs now, fabric::SwitchId sw, const std::string& switchName,
                          const std::string& cause, double sinceReportedMs,
                          const std::vector<ib::PortChange>& changes) {
  if (enabled()) write(portRereadLine(now, sw, switchName, cause, sinceReportedMs, changes));
}

void EventLog::topologyMismatch(TimePs now, const ib::TopologyDifference& d) {
  if (enabled()) write(topologyMismatchLine(now, d));
}

void EventLog::rehome(TimePs now, const std::string& cause, bool treeChanged,
                      const std::vector<std::string>& restoredLinks,
                      const std::vector<std::string>& cutOffHosts) {
  if (enabled()) write(rehomeLine(now, cause, treeChanged, restoredLinks, cutOffHosts));
}

std::string EventLog::rehomeLine(TimePs now, const std::string& cause, bool treeChanged,
                                 const std::vector<std::string>& restoredLinks,
                                 const std::vector<std::string>& cutOffHosts) {
  const auto list = [](const std::vector<std::string>& v) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
      out += (i ? "," : "") + jsonQuote(v[i]);
    return out + "]";
  };
  return JsonObject()
      .add("time_ps", now)
      .add("event", "rehome")
      .add("cause", cause)
      .add("tree_changed", treeChanged)
      .addRaw("restored", list(restoredLinks))
      .addRaw("cut_off", list(cutOffHosts))
      .str();
}

void EventLog::recovery(TimePs now, const std::string& cause, RecoveryOutcome outcome,
                        double afterMs, const std::vector<std::string>& links) {
  const bool complete = outcome == RecoveryOutcome::kComplete;
  if (!enabled()) return;
  std::string list = "[";
  for (std::size_t i = 0; i < links.size(); ++i)
    list += (i ? "," : "") + jsonQuote(links[i]);
  write(JsonObject()
            .add("time_ps", now)
            .add("event", complete                                ? "recovered"
                          : outcome == RecoveryOutcome::kTimedOut ? "recovery_incomplete"
                                                                  : "recovery_superseded")
            .add("cause", cause)
            .addRaw("after_ms", fmt::format("{:.3f}", afterMs))
            .addRaw(complete ? "links" : "not_up", list + "]")
            .str());
}

void EventLog::reenable(TimePs now, const ib::ReenableEvent& e, const std::string& link) {
  if (!enabled()) return;
  const char* event = e.kind == ib::ReenableEvent::Kind::kPending     ? "reenable_pending"
                      : e.kind == ib::ReenableEvent::Kind::kDelivered ? "reenable_delivered"
                                                                      : "reenable_confirmed_up";
  write(JsonObject()
            .add("time_ps", now)
            .add("event", event)
            .add("link", link)
            .add("attempts", static_cast<std::int64_t>(e.attempts))
            .addRaw("pending_ms", fmt::format("{:.3f}", toMilliseconds(e.pendingPs)))
            .add("why", e.why.message())
            .str());
}

void EventLog::notice(TimePs now, const std::string& event, const std::string& detail) {
  if (!enabled()) return;
  write(JsonObject().add("time_ps", now).add("event", event).add("detail", detail).str());
}

std::string EventLog::decisionLine(const agent::DecisionRecord& d, const std::string& switchName,
                                   std::string_view gatingAction) {
  // The agent's record (shared with `ebb replay`), plus how the decision is
  // carried out.
  std::string line = agent::toJsonLine(d, switchName);
  if (!line.empty() && line.back() == '}') {
    line.pop_back();
    line += ",\"gating_action\":" + jsonQuote(gatingAction) + "}";
  }
  return line;
}

std::string EventLog::portSetLine(TimePs now, const ib::PortSetEvent& e,
                                  const std::string& switchName) {
  JsonObject o;
  o.add("time_ps", now)
      .add("event", "port_set")
      .add("switch", e.port.sw.value())
      .add("switch_name", switchName)
      .add("port", e.port.ibPortNumber());
  if (e.isWidth()) {
    const bool reduce = ib::widestLanes(e.widthEnabled) < ib::widestLanes(e.widthBefore);
    o.add("action", reduce ? "reduce_width" : "restore_width")
        .add("link_width_enabled", e.widthEnabled)
        .add("link_width_enabled_before", e.widthBefore)
        .add("width", ib::linkWidthName(e.widthEnabled))
        .add("width_before", ib::linkWidthName(e.widthBefore));
  } else {
    o.add("action", e.phys == ib::PhysState::kDisabled ? "disable_port" : "enable_port")
        .add("phys_state", ib::physStateName(e.phys));
  }
  return o.str();
}

std::string EventLog::osmEventLine(TimePs now, const OsmEvent& ev,
                                   const std::vector<std::string>& rereadSwitches) {
  std::vector<std::string> names;
  for (const std::string& n : rereadSwitches)
    names.push_back(jsonQuote(n));
  return JsonObject()
      .add("time_ps", now)
      .add("event", "osm_event")
      .add("osm_event", ev.event)
      .add("trap", ev.trap)
      .add("lid", ev.lid)
      .add("seq", ev.seq)
      .addRaw("reread", jsonArray(names))
      .str();
}

std::string EventLog::portRereadLine(TimePs now, fabric::SwitchId sw, const std::string& switchName,
                                     const std::string& cause, double sinceReportedMs,
                                     const std::vector<ib::PortChange>& changes) {
  std::vector<std::string> found;
  for (const ib::PortChange& c : changes)
    found.push_back(JsonObject().add("port", c.port.ibPortNumber()).add("state", c.what).str());
  return JsonObject()
      .add("time_ps", now)
      .add("event", "port_reread")
      .add("switch", sw.value())
      .add("switch_name", switchName)
      .add("cause", cause)
      .addFixed("since_reported_ms", sinceReportedMs, 3)
      .addRaw("changes", jsonArray(found))
      .str();
}

std::string EventLog::topologyMismatchLine(TimePs now, const ib::TopologyDifference& d) {
  return JsonObject()
      .add("time_ps", now)
      .add("event", "topology_mismatch")
      .add("kind", ib::differenceKindName(d.kind))
      .add("cable", d.text)
      .str();
}

}  // namespace ebb::daemon

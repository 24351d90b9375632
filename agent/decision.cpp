#include "agent/decision.h"

#include <fmt/format.h>

#include "common/json.h"

namespace ebb::agent {

std::string toJsonLine(const DecisionRecord& d, const std::string& switchName) {
  const std::string name =
      switchName.empty() ? "" : fmt::format(",\"switch_name\":\"{}\"", jsonEscape(switchName));
  return fmt::format(
      "{{\"time_ps\":{},\"switch\":{}{},\"port\":{},\"direction\":\"{}\",\"action\":\"{}\","
      "\"source\":\"{}\",\"rule\":\"{}\",\"measured\":{:.6f},\"threshold\":{:.6f},"
      "\"effective_threshold\":{:.6f},\"links_on\":{},\"refused\":\"{}\"{}}}",
      d.time, d.port.sw.value(), name, d.port.ibPortNumber(), d.up ? "up" : "down",
      d.turnOn ? "on" : "off", d.source, policies::toString(d.rule), d.measured, d.threshold,
      d.effectiveThreshold, d.linksOn, jsonEscape(d.refused),
      d.note.empty() ? "" : fmt::format(",\"note\":\"{}\"", jsonEscape(d.note)));
}

}  // namespace ebb::agent

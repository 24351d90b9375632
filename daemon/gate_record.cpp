#include "daemon/gate_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/file_io.h"
#include "common/guid.h"

namespace ebb::daemon {
namespace {

constexpr const char* kHeader =
    "# ebb agent: the ports this agent holds gated (Disabled, or narrowed with the\n"
    "# LinkWidthEnabled that restores them). Written before each Set; read at start\n"
    "# so that a run after a crash takes them back (docs/ib_agent.md, \"Crash and\n"
    "# restart\"). Fields: disable <switch GUID> <port> | width <switch GUID> <port> <width>\n";

// The fields of a line, comments cut off.
std::vector<std::string> fieldsOf(const std::string& line) {
  std::istringstream in(line.substr(0, line.find('#')));
  std::vector<std::string> out;
  for (std::string f; in >> f;)
    out.push_back(f);
  return out;
}

std::optional<int> parseInt(const std::string& s, int lo, int hi) {
  int v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

Status errnoStatus(const std::string& what, const std::string& path) {
  return Status(ErrorCode::kIo, fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

}  // namespace

Result<GateRecord::Read> GateRecord::read(const std::string& path, const fabric::Topology& topo) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) return Read{};
  if (ec) {
    return Status(ErrorCode::kIo,
                  fmt::format("agent.state_file {}: cannot be read: {}", path, ec.message()));
  }
  if (!fs::is_regular_file(st)) {
    return Status(ErrorCode::kIo, fmt::format("agent.state_file {}: not a file", path));
  }
  std::ifstream in(path);
  if (!in) {
    return Status(ErrorCode::kIo, fmt::format("agent.state_file {}: cannot be read", path));
  }
  Read out;
  std::string line;
  bool tooLong = false;
  for (int n = 1;; ++n) {
    const auto bad = [&](const std::string& rule) {
      return invalidArgument(fmt::format(
          "agent.state_file {} line {}: {} (the file lists the ports a killed run left gated; "
          "mend the line, or remove the file and re-enable those ports by hand)",
          path, n, rule));
    };
    if (!readBoundedLine(in, line, tooLong)) {
      if (tooLong) return bad(lineTooLongRule("state file"));
      break;
    }
    const std::vector<std::string> f = fieldsOf(line);
    if (f.empty()) continue;
    const bool narrowed = f[0] == "width";
    if (f[0] != "disable" && !narrowed) {
      return bad(fmt::format("'{}' is not a kind of gate: disable or width", f[0]));
    }
    const std::size_t want = narrowed ? 4 : 3;
    if (f.size() != want) {
      return bad(fmt::format("{} takes {} fields ({}), found {}", f[0], want - 1,
                             narrowed ? "switch GUID, port, width" : "switch GUID, port",
                             f.size() - 1));
    }
    const std::optional<std::uint64_t> guid = parseGuid(f[1]);
    if (!guid) return bad(fmt::format("'{}' is not a GUID (hexadecimal, e.g. 0x0002c903)", f[1]));
    const std::optional<int> port = parseInt(f[2], 1, 254);
    if (!port) return bad(fmt::format("port '{}' is not a switch port number from 1 to 254", f[2]));
    std::optional<int> width;
    if (narrowed) {
      width = parseInt(f[3], 1, 255);
      if (!width)
        return bad(fmt::format("width '{}' is not a LinkWidthEnabled from 1 to 255", f[3]));
    }
    const std::optional<fabric::SwitchId> sw = topo.findSwitchByGuid(*guid);
    const auto index = static_cast<std::uint16_t>(*port - 1);
    if (!sw || index >= topo.sw(*sw).ports.size() || !topo.sw(*sw).ports[index].link.valid()) {
      out.skipped.push_back(fmt::format(
          "line {}: {} port {} is {}", n, f[1], *port,
          sw ? "not a cabled port of " + topo.sw(*sw).name : "not a switch of the topology"));
      continue;
    }
    if (topo.link(topo.sw(*sw).ports[index].link).lowerIsHost) {
      out.skipped.push_back(
          fmt::format("line {}: {} port {} is a host's link (ebb gates only "
                      "switch links)",
                      n, f[1], *port));
      continue;
    }
    out.gates.push_back(
        {fabric::PortId{*sw, index}, narrowed, static_cast<std::uint8_t>(width.value_or(0))});
  }
  if (in.bad()) return Status(ErrorCode::kIo, fmt::format("agent.state_file {}: read error", path));
  return out;
}

std::string GateRecord::render(const std::vector<ib::HeldGate>& gates,
                               const fabric::Topology& topo) {
  std::string text = kHeader;
  for (const ib::HeldGate& g : gates) {
    const fabric::Switch& s = topo.sw(g.end.sw);
    const fabric::LinkId l = s.ports[g.end.index].link;
    const std::string where = l.valid() ? topo.describeLink(l) : topo.describePort(g.end);
    if (g.narrowed) {
      text += fmt::format("width 0x{:016x} {} {}  # {}\n", s.guid, g.end.ibPortNumber(),
                          g.restoreWidth, where);
    } else {
      text += fmt::format("disable 0x{:016x} {}  # {}\n", s.guid, g.end.ibPortNumber(), where);
    }
  }
  return text;
}

Status GateRecord::write(const std::string& path, const std::string& text) {
  const std::string tmp = fmt::format("{}.tmp-{}", path, ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errnoStatus("agent.state_file: cannot create", tmp);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status st = errnoStatus("agent.state_file: cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return st;
    }
    done += static_cast<std::size_t>(n);
  }
  // On disk before it replaces the old file: a power loss leaves one whole.
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    Status st = errnoStatus("agent.state_file: cannot write", tmp);
    ::unlink(tmp.c_str());
    return st;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status st = errnoStatus("agent.state_file: cannot replace", path);
    ::unlink(tmp.c_str());
    return st;
  }
  // The rename itself on disk too (best effort: some file systems refuse).
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (const int d = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      d >= 0) {
    static_cast<void>(::fsync(d));
    ::close(d);
  }
  return Status::ok();
}

}  // namespace ebb::daemon

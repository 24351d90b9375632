#include "daemon/osm_event_intake.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>

namespace ebb::daemon {
namespace {

// The raw text of `"key":value` in a flat JSON object: a string's contents or
// a number's digits.
std::optional<std::string_view> rawField(std::string_view line, std::string_view key) {
  const std::string pat = fmt::format("\"{}\":", key);
  const auto at = line.find(pat);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + pat.size());
  if (!rest.empty() && rest.front() == '"') {
    rest.remove_prefix(1);
    const auto end = rest.find('"');
    if (end == std::string_view::npos) return std::nullopt;
    return rest.substr(0, end);
  }
  const auto end = rest.find_first_of(",}");
  if (end == std::string_view::npos) return std::nullopt;
  return rest.substr(0, end);
}

template <class T>
std::optional<T> numberField(std::string_view line, std::string_view key) {
  const auto raw = rawField(line, key);
  if (!raw) return std::nullopt;
  T v{};
  const auto [p, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), v);
  if (ec != std::errc() || p != raw->data() + raw->size()) return std::nullopt;
  return v;
}

}  // namespace

Result<OsmEvent> parseOsmEvent(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == '\0'))
    line.remove_suffix(1);
  auto bad = [&](const char* why) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("OpenSM event: {}: '{}'", why, line.substr(0, 120)));
  };
  if (line.size() < 2 || line.front() != '{' || line.back() != '}') return bad("not a JSON object");
  if (rawField(line, "source") != std::optional<std::string_view>("opensm")) {
    return bad("no \"source\":\"opensm\"");
  }
  OsmEvent e;
  const auto ev = rawField(line, "event");
  if (!ev || ev->empty()) return bad("no event");
  e.event = std::string(*ev);
  e.line = std::string(line);
  e.seq = numberField<std::uint64_t>(line, "seq").value_or(0);
  e.timeNs = numberField<std::int64_t>(line, "time_ns").value_or(0);
  if (e.event == "trap") {
    // Found by fuzz/osm_event_fuzz.cpp: a trap without a readable number
    // (and a port past 255) were taken as trap -1 and handed on.
    const auto trap = numberField<int>(line, "trap");
    if (!trap || *trap < 0 || *trap > 0xFFFF) return bad("a trap event needs its trap number");
    e.trap = *trap;
    auto lid = numberField<std::uint16_t>(line, "lid");
    if (!lid) lid = numberField<std::uint16_t>(line, "issuer_lid");
    e.lid = lid.value_or(0);
    if (rawField(line, "port")) {
      const auto port = numberField<int>(line, "port");
      if (!port || *port < 0 || *port > 255) return bad("port must be 0..255");
      e.port = *port;
    }
  }
  return e;
}

OsmEventListener::OsmEventListener(boost::asio::io_context& io, std::string path, Handler handler)
    : socket_(io), path_(std::move(path)), handler_(std::move(handler)) {}

Result<std::unique_ptr<OsmEventListener>> OsmEventListener::start(boost::asio::io_context& io,
                                                                  const std::string& path,
                                                                  Handler handler) {
  if (path.empty() || path.size() >= sizeof(sockaddr_un::sun_path)) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("OpenSM event socket '{}': a Unix socket path has 1 to {} characters",
                              path, sizeof(sockaddr_un::sun_path) - 1));
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("OpenSM event socket {}: exists and is not a socket", path));
    }
    ::unlink(path.c_str());  // left by an earlier run
  }
  std::unique_ptr<OsmEventListener> l(new OsmEventListener(io, path, std::move(handler)));
  boost::system::error_code ec;
  l->socket_.open(boost::asio::local::datagram_protocol(), ec);
  if (!ec) l->socket_.bind(boost::asio::local::datagram_protocol::endpoint(path), ec);
  if (ec) {
    return Status(ErrorCode::kIo,
                  fmt::format("OpenSM event socket {}: cannot bind: {}", path, ec.message()));
  }
  l->receive();
  return l;
}

OsmEventListener::~OsmEventListener() {
  stop();
}

void OsmEventListener::stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ec;
  socket_.close(ec);
  ::unlink(path_.c_str());
}

void OsmEventListener::receive() {
  socket_.async_receive(boost::asio::buffer(buf_),
                        [this](const boost::system::error_code& ec, std::size_t n) {
                          if (ec == boost::asio::error::operation_aborted || stopped_) return;
                          if (!ec) {
                            ++received_;
                            auto e = parseOsmEvent(std::string_view(buf_.data(), n));
                            if (e) {
                              handler_(*e);
                            } else {
                              ++malformed_;
                            }
                          }
                          receive();
                        });
}

}  // namespace ebb::daemon

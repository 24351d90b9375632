#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/datagram_protocol.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace ebb::daemon {

// One line from ebb's OpenSM event plugin (opensm_plugin/ebb_osm_events.c):
// {"source":"opensm","seq":7,"time_ns":...,"event":"trap","trap":128,"issuer_lid":5,"lid":5}
struct OsmEvent {
  std::string event;        // trap, subnet_up, heavy_sweep_start, heavy_sweep_done, ...
  int trap = -1;            // event "trap": the generic trap number
  std::uint16_t lid = 0;    // event "trap": the LID it names ("lid", else "issuer_lid")
  int port = -1;            // traps 129-131: the port
  std::int64_t timeNs = 0;  // when OpenSM reported it (CLOCK_REALTIME), 0 if absent
  std::uint64_t seq = 0;
  std::string line;  // as received, without the newline
};

// E_INVALID naming what is wrong for anything that is not such a line.
Result<OsmEvent> parseOsmEvent(std::string_view line);

// Receives the plugin's datagrams on a Unix datagram socket bound at `path`
// (a stale socket file there is replaced; any other file is an error) on the
// daemon's io_context. Removes the socket file when destroyed.
class OsmEventListener {
 public:
  using Handler = std::function<void(const OsmEvent&)>;
  static Result<std::unique_ptr<OsmEventListener>> start(boost::asio::io_context& io,
                                                         const std::string& path, Handler handler);
  ~OsmEventListener();
  OsmEventListener(const OsmEventListener&) = delete;
  OsmEventListener& operator=(const OsmEventListener&) = delete;
  void stop();
  std::uint64_t received() const { return received_; }
  std::uint64_t malformed() const { return malformed_; }
  const std::string& path() const { return path_; }

 private:
  OsmEventListener(boost::asio::io_context& io, std::string path, Handler handler);
  void receive();

  boost::asio::local::datagram_protocol::socket socket_;
  std::string path_;
  Handler handler_;
  std::array<char, 2048> buf_{};
  std::uint64_t received_ = 0;
  std::uint64_t malformed_ = 0;
  bool stopped_ = false;
};

}  // namespace ebb::daemon

#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <string>

#include "common/status.h"

namespace ebb::daemon {

// metrics_listen's "host:port": an IP address and a port in 0..65535.
struct ListenAddress {
  boost::asio::ip::address address;
  unsigned short port = 0;
};
// E_INVALID "'<listen>': <rule>" when `listen` is not one (checked by the
// settings before anything is opened, and again by start()).
Result<ListenAddress> parseListenAddress(const std::string& listen);

// A minimal HTTP/1.0 endpoint for Prometheus: every GET gets the text that
// `render` returns (exposition format 0.0.4), then the connection closes.
// Runs on the daemon's io_context; one request at a time is plenty for a
// scraper every few seconds.
class MetricsServer {
 public:
  using Render = std::function<std::string()>;
  // `listen` is "host:port" (port 0 picks a free one). E_INVALID for a bad
  // address, E_UNAVAILABLE when the port cannot be bound.
  static Result<std::unique_ptr<MetricsServer>> start(boost::asio::io_context& io,
                                                      const std::string& listen, Render render);
  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  void stop();

 private:
  MetricsServer(boost::asio::io_context& io, Render render);
  void accept();

  boost::asio::ip::tcp::acceptor acceptor_;
  Render render_;
};

}  // namespace ebb::daemon

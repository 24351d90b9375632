#include "daemon/metrics_server.h"

#include <fmt/format.h>

#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <memory>

namespace ebb::daemon {

namespace asio = boost::asio;
using asio::ip::tcp;

MetricsServer::MetricsServer(asio::io_context& io, Render render)
    : acceptor_(io), render_(std::move(render)) {}

Result<ListenAddress> parseListenAddress(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("'{}': expected host:port, e.g. 127.0.0.1:9464", listen));
  }
  boost::system::error_code ec;
  // An IPv6 address is written in brackets, as in a URL: [::1]:9464.
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const auto addr = asio::ip::make_address(host, ec);
  if (ec) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("'{}': '{}' is not an IP address", listen, listen.substr(0, colon)));
  }
  int port = -1;
  try {
    std::size_t used = 0;
    port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) port = -1;
  } catch (const std::exception&) {
    port = -1;
  }
  if (port < 0 || port > 65535) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("'{}': the port must be 0..65535", listen));
  }
  return ListenAddress{addr, static_cast<unsigned short>(port)};
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(asio::io_context& io,
                                                            const std::string& listen,
                                                            Render render) {
  Result<ListenAddress> where = parseListenAddress(listen);
  if (!where) {
    return Status(ErrorCode::kInvalidArgument, "metrics_listen " + where.status().message());
  }
  boost::system::error_code ec;
  std::unique_ptr<MetricsServer> s(new MetricsServer(io, std::move(render)));
  const tcp::endpoint ep(where->address, where->port);
  s->acceptor_.open(ep.protocol(), ec);
  if (!ec) s->acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) s->acceptor_.bind(ep, ec);
  if (!ec) s->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status(ErrorCode::kUnavailable,
                  fmt::format("metrics_listen '{}': {}", listen, ec.message()));
  }
  s->accept();
  return s;
}

void MetricsServer::stop() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

void MetricsServer::accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec) return;  // closed
    auto sock = std::make_shared<tcp::socket>(std::move(socket));
    auto buf = std::make_shared<asio::streambuf>(8192);
    asio::async_read_until(
        *sock, *buf, "\r\n\r\n",
        [this, sock, buf](const boost::system::error_code& rec, std::size_t) {
          if (rec) return;
          std::istream in(buf.get());
          std::string method;
          in >> method;
          std::string body = method == "GET" ? render_() : "only GET is served\n";
          auto text = std::make_shared<std::string>(fmt::format(
              "HTTP/1.0 {}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: "
              "{}\r\nConnection: close\r\n\r\n{}",
              method == "GET" ? "200 OK" : "405 Method Not Allowed", body.size(), body));
          asio::async_write(*sock, asio::buffer(*text),
                            [sock, text](const boost::system::error_code&, std::size_t) {
                              boost::system::error_code ignored;
                              sock->shutdown(tcp::socket::shutdown_both, ignored);
                            });
        });
    accept();
  });
}

}  // namespace ebb::daemon

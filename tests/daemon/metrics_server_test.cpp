// The metrics endpoint as Prometheus sees it: a real HTTP request over a
// loopback TCP socket to a MetricsServer on Boost.Asio.
#include "daemon/metrics_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

namespace ebb::daemon {
namespace {

// Sends `request` to 127.0.0.1:port and returns everything the server sends
// back until it closes the connection ("" with a test failure on an error).
std::string exchange(unsigned short port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  if (fd < 0) return "";
  timeval tv{10, 0};  // a broken server fails the test instead of hanging it
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ADD_FAILURE() << "connect: " << std::strerror(errno);
  } else if (::write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    ADD_FAILURE() << "write: " << std::strerror(errno);
  } else {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) ADD_FAILURE() << "read: " << std::strerror(errno);
      if (n <= 0) break;
      reply.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return reply;
}

// A MetricsServer on an ephemeral loopback port, its io_context on a thread.
class Served : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = MetricsServer::start(io_, "127.0.0.1:0", [this] {
      ++renders_;
      return std::string("# TYPE ebb_agents gauge\nebb_agents 3\n");
    });
    ASSERT_TRUE(s) << s.status().toString();
    server_ = std::move(*s);
    port_ = server_->port();
    ASSERT_NE(port_, 0);
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    if (!thread_.joinable()) return;
    boost::asio::post(io_, [this] { server_->stop(); });
    thread_.join();  // returns once nothing is left to do
  }

  boost::asio::io_context io_;
  std::unique_ptr<MetricsServer> server_;
  unsigned short port_ = 0;
  std::thread thread_;
  std::atomic<int> renders_{0};
};

TEST_F(Served, GetMetricsReturnsTheRenderedText) {
  const std::string reply = exchange(port_, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string body = "# TYPE ebb_agents gauge\nebb_agents 3\n";
  EXPECT_EQ(reply,
            "HTTP/1.0 200 OK\r\n"
            "Content-Type: text/plain; version=0.0.4\r\n"
            "Content-Length: " +
                std::to_string(body.size()) +
                "\r\n"
                "Connection: close\r\n\r\n" +
                body);
  EXPECT_EQ(renders_.load(), 1);
  // The next scrape renders again.
  EXPECT_EQ(exchange(port_, "GET /metrics HTTP/1.0\r\n\r\n").rfind("HTTP/1.0 200 OK\r\n", 0), 0u);
  EXPECT_EQ(renders_.load(), 2);
}

TEST_F(Served, OtherMethodsAreRefused) {
  const std::string reply = exchange(port_, "POST /metrics HTTP/1.0\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.0 405 Method Not Allowed\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("\r\n\r\nonly GET is served\n"), std::string::npos) << reply;
  EXPECT_EQ(renders_.load(), 0);
}

// An IPv6 address in brackets, as in a URL, is an address (not "not an IP
// address"); without brackets its colons are ambiguous with the port's.
TEST(MetricsServer, AnIpv6AddressIsWrittenInBrackets) {
  const Result<ListenAddress> v6 = parseListenAddress("[::1]:9464");
  ASSERT_TRUE(v6) << v6.status().toString();
  EXPECT_TRUE(v6->address.is_v6());
  EXPECT_EQ(v6->port, 9464);
  EXPECT_FALSE(parseListenAddress("[::1]"));
  EXPECT_FALSE(parseListenAddress("[]:9464"));
}

TEST(MetricsServer, BadListenAddressesAreRefusedByName) {
  boost::asio::io_context io;
  for (const char* listen : {"9464", "localhost:9464", "127.0.0.1:70000", "127.0.0.1:x"}) {
    auto s = MetricsServer::start(io, listen, [] { return std::string(); });
    ASSERT_FALSE(s) << listen;
    EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument) << listen;
    EXPECT_NE(s.status().message().find(listen), std::string::npos) << s.status().toString();
  }
}

}  // namespace
}  // namespace ebb::daemon

// The daemon's side of the OpenSM event plugin: the line format and the Unix
// datagram socket it listens on (the plugin itself runs inside OpenSM in
// agent_daemon_test).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "daemon/osm_event_intake.h"

namespace ebb::daemon {
namespace {

TEST(OsmEvents, ParsesThePluginsLines) {
  auto e = parseOsmEvent(
      R"({"source":"opensm","seq":5,"time_ns":1763890899789152000,"event":"trap","trap":128,"issuer_lid":64,"lid":64})"
      "\n");
  ASSERT_TRUE(e) << e.status().toString();
  EXPECT_EQ(e->event, "trap");
  EXPECT_EQ(e->trap, 128);
  EXPECT_EQ(e->lid, 64);
  EXPECT_EQ(e->seq, 5u);
  EXPECT_EQ(e->timeNs, 1763890899789152000);
  EXPECT_EQ(e->port, -1);
  e = parseOsmEvent(
      R"({"source":"opensm","seq":6,"time_ns":1,"event":"trap","trap":129,"issuer_lid":3,"lid":9,"port":4})");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->lid, 9);
  EXPECT_EQ(e->port, 4);
  // Without "lid" the issuer names the switch.
  e = parseOsmEvent(R"({"source":"opensm","seq":7,"event":"trap","trap":300,"issuer_lid":12})");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->lid, 12);
  e = parseOsmEvent(R"({"source":"opensm","seq":8,"time_ns":2,"event":"heavy_sweep_done"})");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->event, "heavy_sweep_done");
  EXPECT_EQ(e->trap, -1);
}

TEST(OsmEvents, RefusesWhatIsNotAnEventLine) {
  for (const char* bad :
       {"", "{}", "garbage", R"({"source":"other","event":"trap"})", R"({"source":"opensm"})",
        R"({"source":"opensm","event":""})", R"({"source":"opensm","event":"trap")",
        // Found by fuzz/osm_event_fuzz.cpp: a trap needs its number, a port is 0..255.
        R"({"source":"opensm","event":"trap","lid":5})",
        R"({"source":"opensm","event":"trap","trap":"x","lid":5})",
        R"({"source":"opensm","event":"trap","trap":70000,"lid":5})",
        R"({"source":"opensm","event":"trap","trap":129,"lid":5,"port":999})",
        R"({"source":"opensm","event":"trap","trap":129,"lid":5,"port":-2})"}) {
    const auto e = parseOsmEvent(bad);
    EXPECT_FALSE(e) << bad;
    if (!e) {
      EXPECT_EQ(e.status().code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(e.status().message().find("OpenSM event"), std::string::npos);
    }
  }
  // A LID that does not fit 16 bits is no LID.
  const auto e = parseOsmEvent(R"({"source":"opensm","event":"trap","trap":128,"lid":70000})");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->lid, 0);
}

// Sends datagrams as the plugin does (unbound AF_UNIX SOCK_DGRAM, sendto).
void sendTo(const std::string& path, const std::string& line) {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un to{};
  to.sun_family = AF_UNIX;
  std::memcpy(to.sun_path, path.c_str(), path.size() + 1);
  const auto n =
      ::sendto(fd, line.data(), line.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  EXPECT_EQ(n, static_cast<ssize_t>(line.size())) << std::strerror(errno);
  ::close(fd);
}

TEST(OsmEvents, ListenerReceivesDatagramsCountsBadOnesAndCleansUp) {
  std::string dir = (std::filesystem::temp_directory_path() / "ebb-osm-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/events.sock";
  boost::asio::io_context io;
  std::vector<OsmEvent> got;
  {
    // A stale socket file from an earlier run is replaced.
    auto first = OsmEventListener::start(io, path, [](const OsmEvent&) {});
    ASSERT_TRUE(first) << first.status().toString();
    (*first)->stop();
    EXPECT_FALSE(std::filesystem::exists(path));
  }
  {
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    ::close(fd);  // leaves the socket file behind
  }
  auto l = OsmEventListener::start(io, path, [&](const OsmEvent& e) { got.push_back(e); });
  ASSERT_TRUE(l) << l.status().toString();
  sendTo(path, R"({"source":"opensm","seq":1,"event":"subnet_up"})"
               "\n");
  sendTo(path, "not json");
  sendTo(path, R"({"source":"opensm","seq":2,"event":"trap","trap":128,"lid":7})");
  for (int i = 0; i < 100 && (*l)->received() < 3; ++i)
    io.run_one_for(std::chrono::milliseconds(100));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].event, "subnet_up");
  EXPECT_EQ(got[1].lid, 7);
  EXPECT_EQ((*l)->received(), 3u);
  EXPECT_EQ((*l)->malformed(), 1u);
  (*l)->stop();
  EXPECT_FALSE(std::filesystem::exists(path));
  // A regular file in the way is not replaced; a path too long is refused.
  std::ofstream(path) << "data";
  auto refused = OsmEventListener::start(io, path, [](const OsmEvent&) {});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.status().message().find("is not a socket"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(path));
  auto tooLong = OsmEventListener::start(io, dir + "/" + std::string(200, 'x'), nullptr);
  ASSERT_FALSE(tooLong);
  EXPECT_NE(tooLong.status().message().find("a Unix socket path has"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ebb::daemon

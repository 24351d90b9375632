// libibverbs device enumeration: the default umad port is the first active
// InfiniBand port; no device (no hardware, or ibsim) is a clear sentence.
#include <gtest/gtest.h>

#include <filesystem>

#include "ib_backend/verbs_devices.h"

namespace ebb::ib {
namespace {

VerbsDevice device(std::string name, std::vector<VerbsPort> ports) {
  VerbsDevice d;
  d.name = std::move(name);
  d.nodeType = "channel adapter";
  d.nodeGuid = 0x0002c90300001234ULL;
  d.ports = std::move(ports);
  return d;
}

VerbsPort port(int n, bool active, bool ib, std::uint16_t lid = 0) {
  VerbsPort p;
  p.number = n;
  p.active = active;
  p.infiniband = ib;
  p.state = active ? "PORT_ACTIVE" : "PORT_DOWN";
  p.physState = active ? 5 : 3;
  p.lid = lid;
  p.linkLayer = ib ? "InfiniBand" : "Ethernet";
  return p;
}

TEST(VerbsDevices, TheDefaultPortIsTheFirstActiveInfiniBandPort) {
  const std::vector<VerbsDevice> devices = {
      device("mlx5_0", {port(1, false, true)}),                           // down
      device("mlx5_1", {port(1, true, false)}),                           // RoCE
      device("mlx5_2", {port(1, false, true), port(2, true, true, 17)}),  // the one
      device("mlx5_3", {port(1, true, true, 18)})};
  const auto pick = pickDefaultPort(devices);
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->ca, "mlx5_2");
  EXPECT_EQ(pick->port, 2);
  const std::string text = describeDevices(devices);
  EXPECT_NE(text.find("libibverbs: 4 RDMA devices"), std::string::npos) << text;
  EXPECT_NE(text.find("port 2: PORT_ACTIVE, phys state 5, LID 17"), std::string::npos) << text;
  EXPECT_NE(text.find("link layer Ethernet"), std::string::npos) << text;
  EXPECT_NE(text.find("default umad port: mlx5_2 port 2"), std::string::npos) << text;
}

TEST(VerbsDevices, NoActiveInfiniBandPortLeavesTheChoiceToUmad) {
  const std::vector<VerbsDevice> devices = {device("mlx5_1", {port(1, true, false)})};
  EXPECT_FALSE(pickDefaultPort(devices).has_value());
  EXPECT_NE(describeDevices(devices).find("no active InfiniBand port"), std::string::npos);
  EXPECT_FALSE(pickDefaultPort({}).has_value());
  EXPECT_NE(describeDevices({}).find("libibverbs: no RDMA devices"), std::string::npos);
}

// The real libibverbs on this machine: it lists what the kernel exposes in
// /sys/class/infiniband_verbs — nothing without RDMA hardware (CI), and it
// says so instead of failing.
TEST(VerbsDevices, ListsWhatTheKernelHasAndZeroIsNotAnError) {
  std::size_t uverbs = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/class/infiniband_verbs", ec)) {
    uverbs += e.path().filename().string().starts_with("uverbs") ? 1u : 0u;
  }
  const auto devices = listVerbsDevices();
  ASSERT_TRUE(devices) << devices.status().toString();
  EXPECT_EQ(devices->size(), uverbs);
  if (uverbs == 0) {
    EXPECT_NE(describeDevices(*devices).find("no RDMA devices"), std::string::npos);
  }
}

}  // namespace
}  // namespace ebb::ib

#include "ib_backend/verbs_devices.h"

#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <endian.h>
#include <cerrno>
#include <cstring>

namespace ebb::ib {
namespace {

std::string linkLayerName(std::uint8_t l) {
  switch (l) {
    case IBV_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
      return "Ethernet";
    default:
      return "unspecified";
  }
}

}  // namespace

Result<std::vector<VerbsDevice>> listVerbsDevices() {
  int n = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) {
    const int e = errno;
    if (e == 0 || e == ENOSYS || e == ENOENT) return std::vector<VerbsDevice>{};
    return Status(ErrorCode::kUnavailable,
                  fmt::format("libibverbs: ibv_get_device_list failed: {}", std::strerror(e)));
  }
  std::vector<VerbsDevice> out;
  for (int i = 0; i < n; ++i) {
    ibv_device* dev = list[i];
    VerbsDevice d;
    d.name = ibv_get_device_name(dev);
    d.nodeType = ibv_node_type_str(dev->node_type);
    d.nodeGuid = be64toh(ibv_get_device_guid(dev));
    ibv_context* ctx = ibv_open_device(dev);
    if (ctx == nullptr) {
      d.error = fmt::format("cannot open: {}", std::strerror(errno));
      out.push_back(std::move(d));
      continue;
    }
    ibv_device_attr attr{};
    if (const int rc = ibv_query_device(ctx, &attr); rc != 0) {
      d.error = fmt::format("ibv_query_device: {}", std::strerror(rc));
    } else {
      for (int p = 1; p <= attr.phys_port_cnt; ++p) {
        ibv_port_attr pa{};
        VerbsPort vp;
        vp.number = p;
        if (const int qrc = ibv_query_port(ctx, static_cast<std::uint8_t>(p), &pa); qrc != 0) {
          vp.state = fmt::format("query failed: {}", std::strerror(qrc));
        } else {
          vp.state = ibv_port_state_str(pa.state);
          vp.physState = pa.phys_state;
          vp.lid = pa.lid;
          vp.smLid = pa.sm_lid;
          vp.linkLayer = linkLayerName(pa.link_layer);
          vp.active = pa.state == IBV_PORT_ACTIVE;
          // Older kernels report 0 (unspecified) for InfiniBand.
          vp.infiniband = pa.link_layer == IBV_LINK_LAYER_INFINIBAND ||
                          pa.link_layer == IBV_LINK_LAYER_UNSPECIFIED;
        }
        d.ports.push_back(std::move(vp));
      }
    }
    ibv_close_device(ctx);
    out.push_back(std::move(d));
  }
  ibv_free_device_list(list);
  return out;
}

std::optional<DevicePort> pickDefaultPort(const std::vector<VerbsDevice>& devices) {
  for (const VerbsDevice& d : devices) {
    for (const VerbsPort& p : d.ports) {
      if (p.active && p.infiniband) return DevicePort{d.name, p.number};
    }
  }
  return std::nullopt;
}

std::string describeDevices(const std::vector<VerbsDevice>& devices) {
  if (devices.empty()) {
    return "libibverbs: no RDMA devices. With no InfiniBand hardware, or under ibsim (which "
           "simulates libibumad only, not verbs), ebb talks through libibumad: its first CA "
           "unless agent.ca / --ca says otherwise.\n";
  }
  std::string s =
      fmt::format("libibverbs: {} RDMA device{}\n", devices.size(), devices.size() == 1 ? "" : "s");
  for (const VerbsDevice& d : devices) {
    s += fmt::format("  {} ({}, node GUID 0x{:016x}){}\n", d.name, d.nodeType, d.nodeGuid,
                     d.error.empty() ? "" : ": " + d.error);
    for (const VerbsPort& p : d.ports) {
      s += fmt::format("    port {}: {}, phys state {}, LID {}, SM LID {}, link layer {}\n",
                       p.number, p.state, p.physState, p.lid, p.smLid,
                       p.linkLayer.empty() ? "?" : p.linkLayer);
    }
  }
  if (const auto pick = pickDefaultPort(devices)) {
    s += fmt::format("  default umad port: {} port {} (the first active InfiniBand port)\n",
                     pick->ca, pick->port);
  } else {
    s += "  no active InfiniBand port: libibumad picks the CA (set agent.ca / --ca)\n";
  }
  return s;
}

}  // namespace ebb::ib

#include "fabric/kary_tree.h"

#include <algorithm>

#include <fmt/format.h>

#include "fabric/topology_builder.h"

namespace ebb::fabric {

Result<KAryNTree> KAryNTree::make(int k, int n, std::uint64_t maxSwitches,
                                  std::string_view raiseWith) {
  if (k < 2)
    return {ErrorCode::kInvalidArgument, fmt::format("k = {}: a k-ary n-tree needs k >= 2", k)};
  if (n < 1)
    return {ErrorCode::kInvalidArgument, fmt::format("n = {}: a k-ary n-tree needs n >= 1", n)};
  if (2 * static_cast<std::uint64_t>(k) > 0xFFFF) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("k = {}: switches would need {} ports, more than 65535", k,
                        2 * std::uint64_t(k))};
  }
  std::uint64_t hosts = 1;
  for (int i = 0; i < n; ++i) {
    hosts *= static_cast<std::uint64_t>(k);
    if (hosts > kMaxHosts) {
      return {ErrorCode::kInvalidArgument,
              fmt::format("k = {}, n = {}: k^n exceeds the limit of {} hosts", k, n, kMaxHosts)};
    }
  }
  // n * k^(n-1) <= n * kMaxHosts / 2 fits 32 bits for n within the host limit (n <= 24).
  const std::uint64_t switches =
      static_cast<std::uint64_t>(n) * (hosts / static_cast<std::uint64_t>(k));
  if (switches > maxSwitches) {
    return {ErrorCode::kInvalidArgument,
            fmt::format("k = {}, n = {}: {} switches (about {:.1f} GB to build) exceed the limit "
                        "of {} switches; raise the limit deliberately to build it{}{}",
                        k, n, switches, static_cast<double>(switches) * 1000.0 / 1e9, maxSwitches,
                        raiseWith.empty() ? "" : " with ", raiseWith)};
  }
  if (Status st = checkPorts(fmt::format("k = {}, n = {}", k, n), switches,
                             2 * static_cast<std::uint64_t>(k), maxSwitches, raiseWith);
      !st.isOk()) {
    return st;
  }
  return KAryNTree(k, n);
}

Status KAryNTree::checkPorts(std::string_view what, std::uint64_t switches, std::uint64_t ports,
                             std::uint64_t maxSwitches, std::string_view raiseWith) {
  // Both within 2^32 and 2^16: the products never wrap.
  const std::uint64_t total = switches * ports;
  const std::uint64_t budget = std::min<std::uint64_t>(maxSwitches, 0xFFFFFFFFu) * kPortsPerSwitch;
  if (total <= budget) return Status::ok();
  return {ErrorCode::kInvalidArgument,
          fmt::format(
              "{}: {} switches of {} ports = {} ports (about {:.1f} GB to build) exceed "
              "the limit of {} ports ({} per switch of the limit of {} switches); use "
              "fewer ports, or raise the limit deliberately to build it{}{}",
              what, switches, ports, total,
              (static_cast<double>(switches) * 1000.0 + static_cast<double>(total) * 24.0) / 1e9,
              budget, kPortsPerSwitch, maxSwitches, raiseWith.empty() ? "" : " with ", raiseWith)};
}

std::uint32_t KAryNTree::pow(int e) const {
  std::uint32_t r = 1;
  for (int i = 0; i < e; ++i)
    r *= static_cast<std::uint32_t>(k_);
  return r;
}

SwitchId KAryNTree::switchId(int level, const std::vector<int>& w) const {
  std::uint32_t idx = 0;
  for (int d : w)
    idx = idx * static_cast<std::uint32_t>(k_) + static_cast<std::uint32_t>(d);
  return SwitchId(static_cast<std::uint32_t>(level) * switchesPerLevel() + idx);
}

HostId KAryNTree::hostId(const std::vector<int>& p) const {
  std::uint32_t idx = 0;
  for (int d : p)
    idx = idx * static_cast<std::uint32_t>(k_) + static_cast<std::uint32_t>(d);
  return HostId(idx);
}

std::vector<int> KAryNTree::hostDigits(HostId h) const {
  std::vector<int> p(static_cast<std::size_t>(n_));
  std::uint32_t v = h.value();
  for (int i = n_ - 1; i >= 0; --i) {
    p[static_cast<std::size_t>(i)] = static_cast<int>(v % static_cast<std::uint32_t>(k_));
    v /= static_cast<std::uint32_t>(k_);
  }
  return p;
}

KAryLabel KAryNTree::label(SwitchId s) const {
  KAryLabel lab;
  lab.level = static_cast<int>(s.value() / switchesPerLevel());
  std::uint32_t v = s.value() % switchesPerLevel();
  lab.w.assign(static_cast<std::size_t>(n_ - 1), 0);
  for (int i = n_ - 2; i >= 0; --i) {
    lab.w[static_cast<std::size_t>(i)] = static_cast<int>(v % static_cast<std::uint32_t>(k_));
    v /= static_cast<std::uint32_t>(k_);
  }
  return lab;
}

Topology KAryNTree::build() const {
  TopologyBuilder b;
  std::vector<KAryLabel> labels;
  labels.reserve(numSwitches());
  for (std::uint32_t s = 0; s < numSwitches(); ++s) {
    KAryLabel lab = label(SwitchId(s));
    std::string name = fmt::format("S{}", lab.level);
    for (int d : lab.w)
      name += fmt::format("_{}", d);
    b.addSwitch(std::move(name), kGeneratedSwitchGuidBase + s + 1, 2 * k_);
    labels.push_back(std::move(lab));
  }
  for (std::uint32_t h = 0; h < numHosts(); ++h) {
    b.addHost(fmt::format("H{}", h), kGeneratedHostGuidBase + h + 1);
  }
  const auto k16 = static_cast<std::uint16_t>(k_);
  // Switch (w, l) -- (w', l+1) iff w_i = w'_i for i != l: down port w'_l on the
  // upper switch, up port k + w_l on the lower one.
  for (int l = 0; l + 1 < n_; ++l) {
    for (std::uint32_t s = 0; s < switchesPerLevel(); ++s) {
      const SwitchId upper(static_cast<std::uint32_t>(l) * switchesPerLevel() + s);
      const KAryLabel& lab = labels[upper.value()];
      for (int j = 0; j < k_; ++j) {
        std::vector<int> wc = lab.w;
        wc[static_cast<std::size_t>(l)] = j;
        const SwitchId lower = switchId(l + 1, wc);
        const auto upPort = static_cast<std::uint16_t>(k16 + lab.w[static_cast<std::size_t>(l)]);
        Status st = b.connectSwitches({upper, static_cast<std::uint16_t>(j)}, {lower, upPort});
        if (!st.isOk()) throw Error(ErrorCode::kInternal, st.message());
      }
    }
  }
  // Host p hangs off leaf (p_0 .. p_{n-2}, n-1) at down port p_{n-1}.
  for (std::uint32_t h = 0; h < numHosts(); ++h) {
    const std::vector<int> p = hostDigits(HostId(h));
    const std::vector<int> w(p.begin(), p.end() - 1);
    const PortId port{switchId(n_ - 1, w), static_cast<std::uint16_t>(p.back())};
    Status st = b.connectHost(HostId(h), 0, port);
    if (!st.isOk()) throw Error(ErrorCode::kInternal, st.message());
  }
  b.setKAry(k_, n_, std::move(labels));
  Result<Topology> t = b.build();
  if (!t)
    throw Error(ErrorCode::kInternal, "k-ary n-tree failed validation: " + t.status().message());
  return std::move(t).value();
}

}  // namespace ebb::fabric

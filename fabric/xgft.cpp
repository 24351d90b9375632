#include "fabric/xgft.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabric/kary_tree.h"
#include "fabric/topology_builder.h"

namespace ebb::fabric {

namespace {

Result<std::vector<std::uint32_t>> parseList(std::string_view text, const char* what) {
  std::vector<std::uint32_t> out;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    std::uint32_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size()) {
      return invalidArgument(
          fmt::format("{}: '{}' is not a whole number (a list like 4,4,8)", what, item));
    }
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}
}  // namespace

Result<Xgft> Xgft::make(std::vector<std::uint32_t> m, std::vector<std::uint32_t> w,
                        std::uint32_t ports, std::uint64_t maxSwitches,
                        std::string_view raiseWith) {
  const std::size_t h = m.size();
  if (h < 1) return invalidArgument("xgft: needs at least one level (m has no entries)");
  // Each switch's name and label grow with the levels (memory ~ h^2): 20 000
  // levels of m = 1 took 1.6 GB for 2 hosts. 2^24 hosts fill 24 levels of 2.
  if (h > kMaxLevels) {
    return invalidArgument(
        fmt::format("xgft: h = {} levels (entries of m), more than the {} "
                    "ebb builds",
                    h, kMaxLevels));
  }
  if (w.size() != h) {
    return invalidArgument(fmt::format(
        "xgft: m has {} entries and w {}; both need one per level (h = {})", h, w.size(), h));
  }
  for (std::size_t i = 0; i < h; ++i) {
    if (m[i] == 0 || w[i] == 0) {
      return invalidArgument(
          fmt::format("xgft: m_{} = {}, w_{} = {}: each must be >= 1", i + 1, m[i], i + 1, w[i]));
    }
  }
  if (w[0] != 1) {
    return invalidArgument(fmt::format(
        "xgft: w_1 = {}: a host has one link to one leaf switch in ebb, so w_1 must be 1", w[0]));
  }
  std::uint64_t hosts = 1;
  for (std::uint32_t v : m) {
    hosts *= v;
    if (hosts > KAryNTree::kMaxHosts) {
      return invalidArgument(
          fmt::format("xgft: m_1 x .. x m_h exceeds the limit of {} hosts", KAryNTree::kMaxHosts));
    }
  }
  if (hosts < 2) {
    return invalidArgument(
        "xgft: m_1 x .. x m_h = 1: a fat tree needs at least 2 hosts (some m_i >= 2)");
  }
  std::uint32_t widest = 0;
  for (std::size_t i = 0; i < h; ++i) {
    const std::uint64_t need = std::uint64_t{m[i]} + (i + 1 < h ? w[i + 1] : 0);
    if (need > 0xFFFF) {
      return invalidArgument(
          fmt::format("xgft: level {} switches need {} ports, more than 65535", i + 1, need));
    }
    widest = std::max(widest, static_cast<std::uint32_t>(need));
  }
  if (ports == 0) ports = widest;
  maxSwitches = std::min<std::uint64_t>(maxSwitches, 0xFFFFFFFFu);  // switch ids are 32-bit
  if (ports < widest || ports > 0xFFFF) {
    return invalidArgument(fmt::format(
        "xgft: ports = {}: every switch needs at least {} (m_i down + w_(i+1) up at the widest "
        "level) and at most 65535",
        ports, widest));
  }
  Xgft x(std::move(m), std::move(w), ports);
  // Counted with saturation: the w_i are not bounded by the host limit.
  std::uint64_t switches = 0;
  for (std::uint32_t level = 1; level <= h && switches <= maxSwitches; ++level) {
    std::uint64_t n = 1;
    for (std::uint32_t j = 2; j <= h && n <= maxSwitches; ++j)
      n *= x.radix(level, j);
    switches += n;
  }
  if (switches > maxSwitches) {
    return invalidArgument(fmt::format(
        "xgft: more than {} switches (about 1 KB of memory each); raise the limit deliberately "
        "to build it{}{}",
        maxSwitches, raiseWith.empty() ? "" : " with ", raiseWith));
  }
  if (Status st = KAryNTree::checkPorts("xgft", switches, x.ports(), maxSwitches, raiseWith);
      !st.isOk()) {
    return st;
  }
  return x;
}

Result<Xgft> Xgft::parse(std::string_view spec, std::uint32_t ports, std::uint64_t maxSwitches,
                         std::string_view raiseWith) {
  const std::size_t a = spec.find(':');
  const std::size_t b = a == std::string_view::npos ? a : spec.find(':', a + 1);
  if (b == std::string_view::npos || spec.find(':', b + 1) != std::string_view::npos) {
    return invalidArgument(
        fmt::format("xgft '{}': the form is H:m1,...,mH:w1,...,wH (e.g. 3:24,24,8:1,24,24)", spec));
  }
  std::uint32_t h = 0;
  const std::string_view hs = spec.substr(0, a);
  const auto [end, ec] = std::from_chars(hs.data(), hs.data() + hs.size(), h);
  if (hs.empty() || ec != std::errc() || end != hs.data() + hs.size() || h == 0) {
    return invalidArgument(fmt::format("xgft '{}': H = '{}' is not a level count >= 1", spec, hs));
  }
  auto m = parseList(spec.substr(a + 1, b - a - 1), "xgft m");
  if (!m) return m.status();
  auto w = parseList(spec.substr(b + 1), "xgft w");
  if (!w) return w.status();
  if (m->size() != h || w->size() != h) {
    return invalidArgument(fmt::format("xgft '{}': H = {} but m has {} entries and w {}", spec, h,
                                       m->size(), w->size()));
  }
  return make(std::move(*m), std::move(*w), ports, maxSwitches, raiseWith);
}

std::uint64_t Xgft::numHosts() const {
  std::uint64_t n = 1;
  for (std::uint32_t v : m_)
    n *= v;
  return n;
}

std::uint64_t Xgft::switchesAt(std::uint32_t level) const {
  std::uint64_t n = 1;
  for (std::uint32_t j = 2; j <= height(); ++j)
    n *= radix(level, j);
  return n;
}

std::uint64_t Xgft::numSwitches() const {
  std::uint64_t n = 0;
  for (std::uint32_t level = 1; level <= height(); ++level)
    n += switchesAt(level);
  return n;
}

std::string Xgft::describe() const {
  return fmt::format("XGFT({}; {}; {})", height(), fmt::join(m_, ","), fmt::join(w_, ","));
}

Topology Xgft::build() const {
  const std::uint32_t h = height();
  // First switch id of each XGFT level (the roots first).
  std::vector<std::uint64_t> first(h + 2, 0);
  for (std::uint32_t level = h, id = 0; level >= 1; --level) {
    first[level] = id;
    id += static_cast<std::uint32_t>(switchesAt(level));
  }
  // Digits (positions 1..h, index j - 1) of switch `index` of `level`.
  const auto digitsOf = [&](std::uint32_t level, std::uint64_t index) {
    std::vector<std::uint32_t> d(h, 0);
    for (std::uint32_t j = 2; j <= h; ++j) {
      const std::uint32_t r = radix(level, j);
      d[j - 1] = static_cast<std::uint32_t>(index % r);
      index /= r;
    }
    return d;
  };
  const auto indexOf = [&](std::uint32_t level, const std::vector<std::uint32_t>& d) {
    std::uint64_t index = 0;
    for (std::uint32_t j = h; j >= 2; --j)
      index = index * radix(level, j) + d[j - 1];
    return index;
  };
  TopologyBuilder b;
  for (std::uint32_t level = h; level >= 1; --level) {
    for (std::uint64_t s = 0; s < switchesAt(level); ++s) {
      const std::vector<std::uint32_t> d = digitsOf(level, s);
      std::string name = fmt::format("S{}", h - level);
      for (std::uint32_t j = h; j >= 2; --j)
        name += fmt::format("_{}", d[j - 1]);
      b.addSwitch(std::move(name), kGeneratedSwitchGuidBase + first[level] + s + 1,
                  static_cast<int>(ports_));
    }
  }
  const std::uint64_t hosts = numHosts();
  for (std::uint64_t host = 0; host < hosts; ++host)
    b.addHost(fmt::format("H{}", host), kGeneratedHostGuidBase + host + 1);
  const auto fail = [](const Status& st) {
    if (!st.isOk()) throw Error(ErrorCode::kInternal, st.message());
  };
  // Upper switch (level i) and each of its m_i children, top levels first:
  // the child has the upper's digits but digit i = x.
  for (std::uint32_t level = h; level >= 2; --level) {
    for (std::uint64_t s = 0; s < switchesAt(level); ++s) {
      const std::vector<std::uint32_t> d = digitsOf(level, s);
      const SwitchId upper(static_cast<std::uint32_t>(first[level] + s));
      const std::uint32_t y = d[level - 1];
      for (std::uint32_t x = 0; x < m_[level - 1]; ++x) {
        std::vector<std::uint32_t> c = d;
        c[level - 1] = x;
        const SwitchId lower(static_cast<std::uint32_t>(first[level - 1] + indexOf(level - 1, c)));
        fail(b.connectSwitches({upper, static_cast<std::uint16_t>(x)},
                               {lower, static_cast<std::uint16_t>(m_[level - 2] + y)}));
      }
    }
  }
  // Host (digits h..1 over m) on the leaf with its digits h..2, port x_1.
  for (std::uint64_t host = 0; host < hosts; ++host) {
    std::vector<std::uint32_t> d(h, 0);
    std::uint64_t v = host;
    for (std::uint32_t j = 1; j <= h; ++j) {
      d[j - 1] = static_cast<std::uint32_t>(v % m_[j - 1]);
      v /= m_[j - 1];
    }
    const std::uint32_t port = d[0];
    d[0] = 0;
    const SwitchId leaf(static_cast<std::uint32_t>(first[1] + indexOf(1, d)));
    fail(b.connectHost(HostId(static_cast<std::uint32_t>(host)), 0,
                       {leaf, static_cast<std::uint16_t>(port)}));
  }
  // A k-ary n-tree keeps its labels (w_0 .. w_{n-2} are digits n..2).
  const std::uint32_t k = m_[0];
  bool kary = ports_ == 2 * k && w_[0] == 1;
  for (std::uint32_t j = 1; j <= h; ++j)
    kary = kary && m_[j - 1] == k && (j == 1 || w_[j - 1] == k);
  if (kary) {
    std::vector<KAryLabel> labels;
    for (std::uint32_t level = h; level >= 1; --level) {
      for (std::uint64_t s = 0; s < switchesAt(level); ++s) {
        const std::vector<std::uint32_t> d = digitsOf(level, s);
        KAryLabel lab;
        lab.level = static_cast<int>(h - level);
        for (std::uint32_t j = h; j >= 2; --j)
          lab.w.push_back(static_cast<int>(d[j - 1]));
        labels.push_back(std::move(lab));
      }
    }
    b.setKAry(static_cast<int>(k), static_cast<int>(h), std::move(labels));
  }
  b.setShape(describe());
  Result<Topology> t = b.build();
  if (!t) throw Error(ErrorCode::kInternal, "XGFT failed validation: " + t.status().message());
  return std::move(t).value();
}

}  // namespace ebb::fabric

#include "sim_backend/link_preset.h"

namespace ebb::sim {

std::span<const LinkPreset> linkPresets() {
  // Data rates after line coding: EDR 25.78125 GBd NRZ 64b/66b = 25 Gb/s per
  // lane, HDR 53.125 GBd PAM4 = 50 Gb/s, NDR 106.25 GBd PAM4 = 100 Gb/s, all
  // 4x; 100GBASE-R is 4 x 25 Gb/s (IEEE 802.3 clause 82). A flit of 64 bytes
  // at 100 Gb/s is 5.12 ns. InfiniBand has no EEE: its presets take the
  // 100GBASE-R row of Table I, the same 4 x 25G SerDes class as EDR and the
  // nearest published figures for HDR and NDR (an assumption, docs/emulator.md).
  static constexpr LinkPreset kPresets[] = {
      {"PAPER", 0, 0, 4, 1000, 64, "100GBASE-R",
       "Alonso et al. (seed 001): 1 flit of 4 B per 1 ns cycle, 16-flit packets; Table VI "
       "wake-up times (seed 004), as ebb's default"},
      {"IB_EDR_2K", 4, 25, 64, 5120, 2048, "100GBASE-R", "IBTA EDR 4x, 2 KB MTU"},
      {"IB_EDR_4K", 4, 25, 64, 5120, 4096, "100GBASE-R", "IBTA EDR 4x, 4 KB MTU"},
      {"IB_HDR_2K", 4, 50, 64, 2560, 2048, "100GBASE-R", "IBTA HDR 4x, 2 KB MTU"},
      {"IB_HDR_4K", 4, 50, 64, 2560, 4096, "100GBASE-R", "IBTA HDR 4x, 4 KB MTU"},
      {"IB_NDR_2K", 4, 100, 64, 1280, 2048, "100GBASE-R", "IBTA NDR 4x, 2 KB MTU"},
      {"IB_NDR_4K", 4, 100, 64, 1280, 4096, "100GBASE-R", "IBTA NDR 4x, 4 KB MTU"},
      {"ETH_100GBASE_R", 4, 25, 4, 320, 1500, "100GBASE-R",
       "IEEE 802.3 100GBASE-R, 1500-byte MTU; seed 004 Tables I and VI"},
  };
  return kPresets;
}

const LinkPreset* findLinkPreset(std::string_view name) {
  for (const LinkPreset& p : linkPresets()) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

void applyLinkPreset(const LinkPreset& preset, EmulatorConfig& cfg) {
  cfg.cyclePs = preset.cyclePs;
  cfg.flitBytes = preset.flitBytes;
  cfg.packetBytes = preset.packetBytes;
  cfg.vcBufferBytes = preset.packetBytes;
  // Every preset names a row of the table: this cannot fail.
  (void)cfg.lpi.setLinkSpeed(preset.lpiSpeed);
}

}  // namespace ebb::sim

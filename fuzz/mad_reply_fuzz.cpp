// libFuzzer target: MAD replies as the fabric returns them (network input):
// the first byte picks the request ebb sent (NodeInfo, NodeDesc, PortInfo,
// PortCounters, PortCountersExtended, SMInfo), the rest is the reply. ib::checkReply
// must refuse anything that does not answer the request, naming the field;
// what it accepts must parse (PortInfo's data rate: a rate or E_INVALID).
// Never a crash, a sanitizer report or an exception.
#include <algorithm>
#include <cmath>
#include <iterator>

#include "fuzz/fuzz_util.h"
#include "ib_backend/mad.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ebb;
  using namespace ebb::ib;
  if (size < 1) return 0;
  static const Attr kAttrs[] = {Attr::kNodeInfo,     Attr::kNodeDesc,        Attr::kPortInfo,
                                Attr::kPortCounters, Attr::kPortCountersExt, Attr::kSmInfo};
  const Attr attr = kAttrs[data[0] % std::size(kAttrs)];
  const bool pma = attr == Attr::kPortCounters || attr == Attr::kPortCountersExt;
  MadAddress to;
  to.mgmtClass = pma ? MgmtClass::kPerf : MgmtClass::kSmiDirect;
  to.path.hops = {0, 1, static_cast<std::uint8_t>(data[0] >> 3)};
  to.lid = 7;
  const MadBytes request = buildRequest(to, Method::kGet, attr, pma ? 0 : data[0] >> 4);
  const std::span<const std::uint8_t> reply(data + 1, size - 1);
  const Status s = checkReply(request, reply);
  if (!s.isOk()) {
    EBB_FUZZ_CHECK(s.code() == ErrorCode::kInvalidArgument, s.toString());
    EBB_FUZZ_CHECK(!s.message().empty(), "a refusal without a message");
    return 0;
  }
  EBB_FUZZ_CHECK(reply.size() >= kMadBytes, "a short reply accepted");
  MadBytes mad{};
  std::copy_n(reply.begin(), kMadBytes, mad.begin());
  switch (attr) {
    case Attr::kNodeInfo:
      (void)parseNodeInfo(mad);
      break;
    case Attr::kNodeDesc:
      EBB_FUZZ_CHECK(parseNodeDesc(mad).size() <= 64, "a node description over 64 bytes");
      break;
    case Attr::kPortInfo: {
      const PortInfo p = parsePortInfo(mad);
      (void)linkWidthName(p.widthActive);
      for (bool ext : {false, true}) {
        Result<double> gbps = p.dataGbps(ext);
        if (gbps) {
          EBB_FUZZ_CHECK(std::isfinite(*gbps) && *gbps > 0,
                         "a data rate of " + std::to_string(*gbps));
        } else {
          EBB_FUZZ_CHECK(gbps.status().code() == ErrorCode::kInvalidArgument,
                         gbps.status().toString());
        }
      }
      (void)buildPortInfoSet(to, 1, mad, PhysState::kPolling, p.widthSupported);
      break;
    }
    case Attr::kPortCounters:
      (void)parsePortXmitWait(mad);
      break;
    case Attr::kPortCountersExt:
      (void)parsePortCountersExt(mad);
      break;
    case Attr::kSmInfo:
      EBB_FUZZ_CHECK(parseSmState(mad) <= 15, "an SMState wider than its 4 bits");
      break;
  }
  return 0;
}

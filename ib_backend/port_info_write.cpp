#include "ib_backend/port_info_write.h"

#include <fmt/format.h>

#include <memory>

namespace ebb::ib {

std::string PortInfoEdit::describe() const {
  if (widthEnabled != 0) return "LinkWidthEnabled " + linkWidthName(widthEnabled);
  return physStateName(phys);
}

void writePortInfo(PortInfoWrite w, std::function<void(Result<PortInfoChange>)> done) {
  auto write = std::make_shared<PortInfoWrite>(std::move(w));
  const std::uint8_t port = write->portNumber;
  const std::uint64_t mKey = write->mKey;
  write->send(
      [port, mKey](const MadAddress& to) {
        return buildRequest(to, Method::kGet, Attr::kPortInfo, port, mKey);
      },
      [write, port, mKey, done = std::move(done)](Result<MadBytes> r) {
        const std::string& where = write->where;
        if (!r) return done(Status(r.status().code(), where + ": " + r.status().message()));
        const PortInfo before = parsePortInfo(*r);
        Result<PortInfoEdit> edit = write->modify(before);
        if (!edit)
          return done(Status(edit.status().code(), where + ": " + edit.status().message()));
        const PortInfoEdit e = *edit;
        // An edit that changes nothing is not sent.
        if (e.phys == PhysState::kNoChange && e.widthEnabled == 0)
          return done(PortInfoChange{before, e, before});
        if (write->onSet) write->onSet();
        const MadBytes current = *r;
        write->send(
            [port, mKey, current, e](const MadAddress& to) {
              return buildPortInfoSet(to, port, current, e.phys, e.widthEnabled, mKey);
            },
            [write, before, e, done](Result<MadBytes> sr) {
              if (!sr) {
                return done(
                    Status(sr.status().code(), fmt::format("setting {} {}: {}", write->where,
                                                           e.describe(), sr.status().message())));
              }
              done(PortInfoChange{before, e, parsePortInfo(*sr)});
            });
      });
}

}  // namespace ebb::ib

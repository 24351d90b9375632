// Restore: every link this run gated comes back, the reduced widths first
// (they stay up: no waves needed), then the disabled links in waves.
#include "ib_backend/gating_disable_port.h"
#include "ib_backend/gating_reduce_width.h"
#include "ib_backend/ib_backend.h"

namespace ebb::ib {

void IbBackend::restoreAll(std::function<void(Status)> done, RestoreObserver onSet) {
  auto r = std::make_shared<RestoreRun>();
  r->done = std::move(done);
  r->onSet = std::move(onSet);
  r->deadline = sched_.now() + opts_.restoreTimeoutPs;
  width_->restore(r, [this, r] {
    disable_->restore(r, [r] {
      if (!r->gaveUp.isOk()) return r->done(r->gaveUp);
      if (!r->firstError.isOk()) {
        return r->done(Status(r->firstError.code(),
                              "could not restore every link: " + r->firstError.message()));
      }
      r->done(Status::ok());
    });
  });
}

}  // namespace ebb::ib

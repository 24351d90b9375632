#pragma once

#include <ostream>

#include <boost/asio/io_context.hpp>

#include "fabric/topology.h"
#include "ib_backend/ib_backend.h"

namespace ebb::daemon {

// `ebb agent --sweep N`: reads PortCountersExtended of every cabled port of
// every reachable switch, all switches at once (the transport keeps at most
// agent.max_outstanding MADs in flight), N times, and prints the wall time of
// each sweep and their median. Sends no Set. Returns the exit code (1 if a
// read failed).
int runCounterSweeps(ib::IbBackend& backend, boost::asio::io_context& io,
                     const fabric::Topology& topo, int sweeps, int maxOutstanding,
                     std::ostream& out, std::ostream& err);

}  // namespace ebb::daemon

// Per-interval core load for StreamLoad: the backend's counters are cumulative, the report's `load` is
// busy/total cycles over exactly the interval between two consecutive reports of one stream.
#pragma once

#include "metron/agent/v1/agent.pb.h"

namespace metron {

// Sets cur->cores[i].load from the cycle deltas against the same core in `prev`; cores absent from `prev` or
// whose counters did not advance keep the backend's value.
void SetIntervalLoad(const ::metron::agent::v1::Stats& prev, ::metron::agent::v1::Stats* cur);

}  // namespace metron

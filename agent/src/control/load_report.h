// Per-interval core load for StreamLoad: the backend's counters are cumulative, the report's `load` is
// busy/total cycles over exactly the interval between two consecutive reports of one stream.
#pragma once

#include "metron/agent/v1/agent.pb.h"

namespace metron {

// The busy share of core `c` over the interval since `p` (the same core, earlier), or -1 when its counters did
// not advance (a restarted counter carries no interval information). less_waits: busy less the cycles its thread
// waited for a CPU (CoreStats.unscheduled_cycles), which a preemption inside a batch counts busy (the overload
// alert's load: a short window holding one read overloaded); 0 on a dedicated core.
double CoreLoad(const ::metron::agent::v1::CoreStats& p, const ::metron::agent::v1::CoreStats& c, bool less_waits);

// Sets cur->cores[i].load from the cycle deltas against the same core in `prev`; cores absent from `prev` or
// whose counters did not advance keep the backend's value.
void SetIntervalLoad(const ::metron::agent::v1::Stats& prev, ::metron::agent::v1::Stats* cur);

}  // namespace metron

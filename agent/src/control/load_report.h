// Per-interval core load for StreamLoad: the backend's counters are cumulative, the report's `load` is
// busy/total cycles over exactly the interval between two consecutive reports of one stream.
#pragma once

#include <cstdint>

#include "metron/agent/v1/agent.pb.h"

namespace metron {

// The busy share of core `c` over the interval since `p` (the same core, earlier), or -1 when its counters did
// not advance (a restarted counter carries no interval information). less_waits: busy less the cycles its thread
// waited for a CPU (CoreStats.unscheduled_cycles), which a preemption inside a batch counts busy (the overload
// alert's load: a short window holding one read overloaded); 0 on a dedicated core.
double CoreLoad(const ::metron::agent::v1::CoreStats& p, const ::metron::agent::v1::CoreStats& c, bool less_waits);

// Whether some core of `now` reached `alert` (CoreLoad with less_waits) since the same core in `prev`, judging
// only windows its counters cover for at least `min_cycles`. A worker adds a batch's cycles when the batch ends,
// so the counters may cover much less than the wall-clock time since `prev`: a report taken inside a 4 ms batch,
// then a worker preempted in its next batch, left a 4 ms window of one batch reading 100 % busy, an alert
// the policy splits on. 0: every window that advanced is judged.
bool AlertLoadReached(const ::metron::agent::v1::Stats& prev, const ::metron::agent::v1::Stats& now, double alert,
                      uint64_t min_cycles);

// Sets cur->cores[i].load from the cycle deltas against the same core in `prev`; cores absent from `prev` or
// whose counters did not advance keep the backend's value.
void SetIntervalLoad(const ::metron::agent::v1::Stats& prev, ::metron::agent::v1::Stats* cur);

}  // namespace metron

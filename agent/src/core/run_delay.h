// How long a worker's thread waited, runnable, for a CPU. On CPUs shared with other processes (emulated servers, a
// loaded machine) the kernel preempts a busy-polling worker for a scheduler slice (milliseconds), possibly in the
// middle of a batch, whose rdtsc interval then counts the wait as busy: a 10 ms window read as overloaded raised a
// StreamLoad alert, and the policy splits on one such report. The kernel keeps each thread's run delay
// (/proc/<pid>/task/<tid>/schedstat, second field, ns; sched_info, there without schedstats enabled).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace metron {

// The run delay of thread `tid` of this process, in ns; 0 when the kernel does not say (no sched_info).
uint64_t thread_run_delay_ns(pid_t tid);

}  // namespace metron

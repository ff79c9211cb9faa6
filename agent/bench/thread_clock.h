// Time for the latency benches, in TSC cycles: the wall clock (the TSC) or this thread's CPU time (arrivals and
// latencies as a dedicated core would see them: a shared machine's descheduling neither delays nor drops packets).
// The CPU clock is a system call: it is read at most every 50 us (resync) and extended by the TSC in between, so
// polling costs about what it would on a dedicated core (a deschedule inside such a window still counts; the clock
// may then step back at the next read, which the callers tolerate).
#pragma once

#include <rte_cycles.h>
#include <time.h>

#include <cstdint>

namespace metron::bench {

inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

class ThreadClock {
 public:
  // After the EAL is up (the TSC's rate). cpu: this thread's CPU time; otherwise the wall clock.
  void use(bool cpu) {
    hz_ = rte_get_tsc_hz();
    cpu_ = cpu;
    resync(true);
  }
  bool cpu_time() const { return cpu_; }
  // Reads the CPU clock again if 50 us of TSC passed since (after a deschedule the TSC has run ahead of it).
  void resync(bool force = false) {
    if (!cpu_) return;
    const uint64_t tsc = rte_rdtsc();
    if (!force && tsc - base_tsc_ < hz_ / 20000) return;
    base_tsc_ = tsc;
    base_cpu_ = static_cast<uint64_t>(thread_cpu_seconds() * static_cast<double>(hz_));
  }
  uint64_t now() const { return cpu_ ? base_cpu_ + (rte_rdtsc() - base_tsc_) : rte_rdtsc(); }

 private:
  bool cpu_ = false;
  uint64_t hz_ = 1;
  uint64_t base_cpu_ = 0, base_tsc_ = 0;
};

}  // namespace metron::bench

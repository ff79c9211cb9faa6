#include "control/load_report.h"

#include <unordered_map>

namespace metron {

double CoreLoad(const ::metron::agent::v1::CoreStats& p, const ::metron::agent::v1::CoreStats& c, bool less_waits) {
  if (c.total_cycles() <= p.total_cycles() || c.busy_cycles() < p.busy_cycles()) return -1;
  uint64_t busy = c.busy_cycles() - p.busy_cycles();
  if (less_waits && c.unscheduled_cycles() > p.unscheduled_cycles()) {
    const uint64_t waited = c.unscheduled_cycles() - p.unscheduled_cycles();
    busy = busy > waited ? busy - waited : 0;
  }
  const double load = static_cast<double>(busy) / static_cast<double>(c.total_cycles() - p.total_cycles());
  return load > 1.0 ? 1.0 : load;
}

bool AlertLoadReached(const ::metron::agent::v1::Stats& prev, const ::metron::agent::v1::Stats& now, double alert,
                      uint64_t min_cycles) {
  for (const auto& c : now.cores())
    for (const auto& p : prev.cores()) {
      if (p.core() != c.core() || c.total_cycles() < p.total_cycles() + min_cycles) continue;
      // A load the thread's waits for a CPU may explain raises no alert; the regular report, over the whole
      // interval, still carries it (a real overload on a shared CPU is seen one interval later at most).
      if (CoreLoad(p, c, true) >= alert) return true;
    }
  return false;
}

void SetIntervalLoad(const ::metron::agent::v1::Stats& prev, ::metron::agent::v1::Stats* cur) {
  std::unordered_map<uint32_t, const ::metron::agent::v1::CoreStats*> before;
  for (const auto& c : prev.cores()) before[c.core()] = &c;
  for (auto& c : *cur->mutable_cores()) {
    auto it = before.find(c.core());
    if (it == before.end()) continue;
    const double load = CoreLoad(*it->second, c, false);
    if (load >= 0) c.set_load(load);
  }
}

}  // namespace metron

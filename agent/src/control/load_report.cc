#include "control/load_report.h"

#include <unordered_map>

namespace metron {

void SetIntervalLoad(const ::metron::agent::v1::Stats& prev, ::metron::agent::v1::Stats* cur) {
  std::unordered_map<uint32_t, const ::metron::agent::v1::CoreStats*> before;
  for (const auto& c : prev.cores()) before[c.core()] = &c;
  for (auto& c : *cur->mutable_cores()) {
    auto it = before.find(c.core());
    if (it == before.end()) continue;
    const auto& p = *it->second;
    // A restarted counter (smaller than before) carries no interval information.
    if (c.total_cycles() <= p.total_cycles() || c.busy_cycles() < p.busy_cycles()) continue;
    const double load = static_cast<double>(c.busy_cycles() - p.busy_cycles()) /
                        static_cast<double>(c.total_cycles() - p.total_cycles());
    c.set_load(load > 1.0 ? 1.0 : load);
  }
}

}  // namespace metron

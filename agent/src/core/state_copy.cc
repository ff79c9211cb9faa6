#include "core/state_copy.h"

#include <rte_cycles.h>

#include <algorithm>
#include <ctime>

namespace metron {

namespace {

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::vector<const Element*> stateful(const GroupRuntime& g, Snapshot* out) {
  std::vector<const Element*> els;
  for (const auto& e : g.graph().elements()) {
    if (!e->has_state()) continue;
    els.push_back(e.get());
    out->emplace_back();
    out->back().set_element(e->name());
    out->back().set_kind(e->class_name());
  }
  return els;
}

}  // namespace

Snapshot snapshot_of(const GroupRuntime& g) {
  Snapshot out;
  const auto els = stateful(g, &out);
  for (size_t k = 0; k < els.size(); ++k) els[k]->export_state(&out[k]);
  return out;
}

Snapshot sliced_snapshot_of(Engine& engine, const GroupRuntime& g, uint64_t slice_us, SliceStats* stats) {
  Snapshot out;
  const auto els = stateful(g, &out);
  const uint64_t budget = rte_get_tsc_hz() / 1000000 * slice_us;
  size_t k = 0;
  uint64_t at = 0;
  while (k < els.size()) {
    uint64_t held = 0, cpu = 0;
    engine.between_batches(g.spec().core, [&] {
      const uint64_t cpu0 = stats != nullptr ? thread_cpu_ns() : 0;
      const uint64_t start = rte_rdtsc();
      const uint64_t deadline = start + budget;
      // Next table in the same slice while time is left: small tables do not cost a handoff each.
      while (k < els.size()) {
        at = els[k]->export_state_slice(&out[k], at, deadline);
        if (at != Element::kExportDone) break;
        ++k, at = 0;
        if (rte_rdtsc() >= deadline) break;
      }
      held = rte_rdtsc() - start;
      if (stats != nullptr) cpu = thread_cpu_ns() - cpu0;
    });
    if (stats != nullptr) {
      ++stats->slices;
      stats->longest_cycles = std::max(stats->longest_cycles, held);
      stats->longest_cpu_ns = std::max(stats->longest_cpu_ns, cpu);
    }
  }
  return out;
}

bool swap_state(GroupRuntime& a, GroupRuntime& b) {
  if (a.spec().click != b.spec().click) return false;
  std::vector<std::pair<Element*, Element*>> done;
  for (const auto& e : a.graph().elements()) {
    if (!e->has_state()) continue;
    Element* other = b.graph().find(e->name());
    if (other != nullptr && e->swap_state(*other)) {
      done.emplace_back(e.get(), other);
      continue;
    }
    for (auto& [x, y] : done) x->swap_state(*y);
    return false;
  }
  return true;
}

agent::v1::StateTable filtered(const agent::v1::StateTable& t, PortBits bits) {
  agent::v1::StateTable out;
  out.set_element(t.element());
  out.set_kind(t.kind());
  out.set_allocator_state(t.allocator_state());
  for (const agent::v1::FlowEntry& f : t.entries())
    if (bits.matches(f.key().src_port())) *out.add_entries() = f;
  return out;
}

grpc::Status copy_state(GroupRuntime& dst, const std::vector<const Snapshot*>& from,
                        const std::vector<std::string>& names, const std::string& where, uint64_t* imported) {
  const PortBits bits = dst.spec().state_filter;
  for (size_t k = 0; k < from.size(); ++k) {
    for (const agent::v1::StateTable& t : *from[k]) {
      Element* e = dst.graph().find(t.element());
      if (e == nullptr || !e->has_state() || t.kind() != e->class_name()) continue;
      try {
        const uint64_t n = bits.mask == 0 ? e->import_state(t, /*merge=*/k > 0)
                                          : e->import_state(filtered(t, bits), /*merge=*/k > 0);
        if (imported != nullptr) *imported += n;
      } catch (const std::exception& err) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, where + ": " + names[k] + "/" + t.element() + ": " + err.what());
      }
    }
  }
  return grpc::Status::OK;
}

}  // namespace metron

// StageProfile: where a graph's cycles go, stage by stage (standalone `--profile`, the benchmarks' per-stage
// rows). The clock is read at every element boundary of a batch and at the sub-stages elements mark inside their
// push (IPFilter: keys, classify; SynthRewriter: keys, lookup), never per packet, and each interval is charged to
// the element (or sub-stage) running then, exclusive of what it pushed downstream. A graph built without it pays
// one predictable branch per batch per element.
#pragma once

#include <rte_cycles.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace metron {

class StageProfile {
 public:
  StageProfile() { slots_.push_back({"loop"}); }  // slot 0: the worker's own loop, between polls

  int add_slot(std::string name) {
    slots_.push_back({std::move(name)});
    stack_.push_back(0);
    return static_cast<int>(slots_.size() - 1);
  }
  // Element `id` starts on a batch of `packets`: the time since the last mark was the caller's.
  void enter(int id, unsigned packets) {
    charge(stack_[depth_ - 1]);
    slots_[id].packets += packets;
    ++slots_[id].batches;
    stack_[depth_++] = id;
  }
  void leave() { charge(stack_[--depth_]); }
  // The running element finished sub-stage `id` (a slot of its own): the time since the last mark was that stage's.
  void mark(int id) { charge(id); }

  // Forgets what was charged so far (a bench's warm-up): counts start again at the next mark. Not while the graph
  // runs.
  void reset() {
    for (Slot& s : slots_) s.cycles = s.batches = s.packets = 0;
    last_ = 0;
  }

  // f(name, cycles, packets) per slot, slot 0 ("loop": the time outside the graph's elements) first.
  template <typename F>
  void each(F f) const {
    for (const Slot& s : slots_) f(s.name, s.cycles, s.packets);
  }

  // "profile.NAME cycles batches packets" per slot.
  void report(std::ostream& os) const {
    for (const Slot& s : slots_)
      os << "profile." << s.name << " " << s.cycles << " " << s.batches << " " << s.packets << "\n";
  }

 private:
  struct Slot {
    std::string name;
    uint64_t cycles = 0, batches = 0, packets = 0;
  };
  void charge(int id) {
    const uint64_t now = rte_rdtsc();
    if (last_ != 0) slots_[id].cycles += now - last_;
    last_ = now;
  }
  std::vector<Slot> slots_;
  std::vector<int> stack_{0};  // push paths are acyclic: at most one frame per slot
  int depth_ = 1;
  uint64_t last_ = 0;
};

}  // namespace metron

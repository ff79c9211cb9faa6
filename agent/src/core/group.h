// GroupRuntime: one traffic-class group's graph on its core, with the group's counters and its egress.
// Created off the data path (the graph is built in the constructor), then referenced by a WorkerPlan. The
// worker is the only writer of the counters; other threads read them with relaxed loads.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/class_count.h"
#include "core/element.h"
#include "core/graph.h"

namespace metron {

class Port;
class TxBuffer;

// Where `[k]output` goes: a port, with the next hop's MAC and VLAN written on the way out.
struct EgressTarget {
  Port* port = nullptr;
  bool set_dst_mac = false;
  uint8_t dst_mac[6] = {};
  uint16_t vlan = 0;  // 0 = untagged
};

enum class TagKind : uint8_t { kMac = 1, kVlan = 2 };

// Dispatch key of a group: what the worker compares a frame's tag against.
inline uint32_t tag_key(TagKind kind, uint32_t value) { return static_cast<uint32_t>(kind) << 16 | value; }

// port & mask == value: a slice of a class by source-port bits, or the flows a split's new half takes.
struct PortBits {
  uint16_t mask = 0;
  uint16_t value = 0;
  bool matches(uint32_t port) const { return (port & mask) == value; }
};

class GroupRuntime final : public EgressSink {
 public:
  struct Spec {
    std::string pipeline_id;
    std::string group_id;
    std::string click;
    TagKind tag_kind = TagKind::kMac;
    uint32_t tag = 0;
    unsigned core = 0;  // lcore id
    unsigned slot = 0;  // the core's dense slot = rx/tx queue
    unsigned slots = 1;
    int socket_id = 0;
    Port* ingress = nullptr;
    std::vector<EgressTarget> egress;
    std::vector<uint32_t> class_ids;
    PortBits state_filter;  // GroupSpec.state_filter: which of its sources' flows it imports
    // Its share of the rewriters' port ranges (GraphEnv::port_share) when the controller assigned one
    // (GroupSpec.port_share, times the slots under RSS); otherwise the rewriters divide the range by slot.
    bool port_share_assigned = false;
    unsigned port_share = 0;
    unsigned port_shares = 1;
    uint32_t assigned_index = 0, assigned_count = 0;  // GroupSpec.port_share as given (reported back)
    // Benchmarks: build the graph with a StageProfile (GraphEnv::profile), cycles charged per element and sub-stage.
    bool profile = false;
  };
  // Builds the graph; throws ClickError on a bad configuration.
  explicit GroupRuntime(Spec spec);

  const Spec& spec() const { return spec_; }
  uint32_t key() const { return tag_key(spec_.tag_kind, spec_.tag); }
  Graph& graph() { return *graph_; }
  const Graph& graph() const { return *graph_; }

  // Data path: counts per class (core/class_count.h: here, or in the pass over the headers of the element `input`
  // feeds when it takes the count) and runs the graph. Frames arrive with the VLAN tag already popped. What the
  // graph sends out is queued in `tx` (the core's), which the caller flushes; without one it is sent at once.
  // `received_now`: every frame of b came in this core's rx burst just before or the one before that (nothing held
  // longer, Engine::loop), so its mbuf and header lines are still in L1 and are not asked for again.
  void process(PacketBatch& b, TxBuffer* tx = nullptr, bool received_now = false);
  // Data path: polls the graph's sources (BlackBoxNF: packets its NF passed back), queueing what leaves in `tx`.
  // Returns packets handled. Only for groups whose graph has sources (WorkerPlan::polled).
  unsigned poll_sources(TxBuffer* tx);
  void egress(int k, PacketBatch& b) override;
  // Of this group's frames a port was handed: `sent` it took, `refused` it did not (freed).
  void count_tx(uint16_t sent, uint16_t refused) {
    tx_.add(sent);
    if (refused) tx_dropped_.add(refused);
  }
  int egress_count() const override { return static_cast<int>(spec_.egress.size()); }

  // Counters (any thread).
  uint64_t packets() const { return packets_.get(); }
  uint64_t bytes() const { return bytes_.get(); }
  uint64_t drops() const;
  uint64_t tx_packets() const { return tx_.get(); }
  uint64_t busy_cycles() const { return busy_.get(); }
  // Per class id (same order as spec().class_ids), plus packets whose class is not in the group.
  uint64_t class_packets(size_t i) const { return classes_[i].packets.get(); }
  uint64_t class_bytes(size_t i) const { return classes_[i].bytes.get(); }
  uint64_t unknown_class_packets() const { return unknown_class_.get(); }
  uint64_t class_l4_packets(size_t i) const { return classes_[i].l4.get(); }
  uint64_t class_sport_ones(size_t i, int bit) const { return classes_[i].sport_ones[bit].get(); }

 private:
  Spec spec_;
  std::unique_ptr<Graph> graph_;
  int telemetry_slot_ = 0;  // Spec::profile: the StageProfile slot process()'s count is charged to
  std::vector<uint32_t> sorted_classes_;  // sorted class ids ...
  std::vector<uint32_t> sorted_index_;    // ... and their index in spec_.class_ids
  std::unique_ptr<ClassCounters[]> classes_;
  ClassTable class_table_;
  // The element `input` feeds counts each batch in its own pass over the headers when it takes the count
  // (Element::take_group_count): process() points it at the batch's ClassCount here while the graph runs.
  bool count_taken_ = false;
  ClassCount* count_here_ = nullptr;
  TxBuffer* tx_buffer_ = nullptr;  // during process(): where egress queues frames
  alignas(64) RelaxedCounter packets_;
  RelaxedCounter bytes_;
  RelaxedCounter tx_;
  RelaxedCounter tx_dropped_;
  RelaxedCounter busy_;
  RelaxedCounter unknown_class_;
};

}  // namespace metron

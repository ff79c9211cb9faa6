#include "core/group.h"

#include <rte_cycles.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/port.h"
#include "core/tx_buffer.h"
#include "utils/checksum.h"

namespace metron {

GroupRuntime::GroupRuntime(Spec spec) : spec_(std::move(spec)) {
  GraphEnv env;
  env.socket_id = spec_.socket_id;
  env.slot = spec_.slot;
  env.slots = spec_.slots;
  env.port_share = spec_.port_share;
  env.port_shares = spec_.port_shares;
  env.port_share_assigned = spec_.port_share_assigned;
  env.egress = this;
  env.instance = spec_.pipeline_id + "/" + spec_.group_id;
  env.profile = spec_.profile;
  graph_ = Graph::build(spec_.click, env);
  if (StageProfile* p = graph_->profile()) telemetry_slot_ = p->add_slot("telemetry");
  std::vector<uint32_t> idx(spec_.class_ids.size());
  std::iota(idx.begin(), idx.end(), 0u);
  std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return spec_.class_ids[a] < spec_.class_ids[b]; });
  for (uint32_t i : idx) {
    sorted_classes_.push_back(spec_.class_ids[i]);
    sorted_index_.push_back(i);
  }
  classes_.reset(new ClassCounters[std::max<size_t>(1, spec_.class_ids.size())]);
  class_table_ = ClassTable{sorted_classes_.data(), sorted_index_.data(), static_cast<uint32_t>(sorted_classes_.size()),
                            classes_.get()};
  if (const Graph::Target t = graph_->input_target(); t.e != nullptr) count_taken_ = t.e->take_group_count(t.port, &count_here_);
}

uint16_t sport_past_options(const uint8_t* p, uint32_t len, unsigned* l4) {
  *l4 = 0;
  if (len < 14 + 20 + 2 || load16(p + 12) != 0x0800 || (p[14] >> 4) != 4) return 0;
  const uint32_t ihl = (p[14] & 0x0f) * 4u;
  const uint8_t* ip = p + 14;
  if (ihl < 20 || len < 14 + ihl + 2 || !tcp_or_udp(ip[9]) || (load16(ip + 6) & 0x1fff) != 0) return 0;
  *l4 = 1;
  uint16_t sport_wire;
  std::memcpy(&sport_wire, ip + ihl, 2);
  return sport_wire;
}

// The batch's count (core/class_count.h): by the element `input` feeds, in its first pass over the headers, when
// that element took it, else here in a walk of its own. A batch held longer than a burst (many groups sharing the
// core) has its lines asked for first (prefetch_held); a batch received just now (or one burst before) skips that
// (its lines are in L1).
void GroupRuntime::process(PacketBatch& b, TxBuffer* tx, bool received_now) {
  const uint64_t t0 = rte_rdtsc();
  StageProfile* const profile = graph_->profile();
  ClassTallies tallies;
  ClassCount count(&class_table_, &tallies);
  const unsigned n = b.n;
  const bool by_graph = count_taken_;
  if (!received_now) prefetch_held(b);
  if (!by_graph) {
    if (__builtin_expect(profile != nullptr, 0)) profile->enter(telemetry_slot_, b.n);
    for (unsigned i = 0; i < n; ++i) count.frame(i, b.pkts[i]);
    if (__builtin_expect(profile != nullptr, 0)) profile->leave();
  }
  count_here_ = by_graph ? &count : nullptr;
  tx_buffer_ = tx;
  graph_->push_input(b);
  tx_buffer_ = nullptr;
  count_here_ = nullptr;
  uint64_t unknown = 0;
  const uint64_t bytes = count.end(n, &unknown);
  if (unknown) unknown_class_.add(unknown);
  packets_.add(n);
  bytes_.add(bytes);
  busy_.add(rte_rdtsc() - t0);
}

unsigned GroupRuntime::poll_sources(TxBuffer* tx) {
  const uint64_t t0 = rte_rdtsc();
  tx_buffer_ = tx;
  const unsigned n = graph_->run_sources();
  tx_buffer_ = nullptr;
  if (n) busy_.add(rte_rdtsc() - t0);
  return n;
}

void GroupRuntime::egress(int k, PacketBatch& b) {
  const EgressTarget& e = spec_.egress[k];
  // The target's settings in locals: the frame stores below could alias them, and each would be loaded again.
  const uint16_t vlan = e.vlan;
  const bool set_mac = e.set_dst_mac;
  uint8_t mac[6];
  std::memcpy(mac, e.dst_mac, sizeof mac);
  if (vlan) {
    for (uint16_t i = 0; i < b.n; ++i) {
      rte_mbuf* m = b.pkts[i];
      uint8_t* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, 4));
      if (p != nullptr) {
        std::memmove(p, p + 4, 12);
        store16(p + 12, 0x8100);
        store16(p + 14, vlan);
      }
      if (set_mac) std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), mac, sizeof mac);
    }
  } else if (set_mac) {
    for (uint16_t i = 0; i < b.n; ++i) std::memcpy(rte_pktmbuf_mtod(b.pkts[i], uint8_t*), mac, sizeof mac);
  }
  const uint16_t q = static_cast<uint16_t>(spec_.slot % e.port->tx_queues());
  if (tx_buffer_ != nullptr) {
    tx_buffer_->add(e.port, q, this, b.pkts, b.n);
  } else {
    const uint16_t sent = e.port->tx_burst(q, b.pkts, b.n);
    if (sent < b.n) rte_pktmbuf_free_bulk(b.pkts + sent, b.n - sent);
    count_tx(sent, static_cast<uint16_t>(b.n - sent));
  }
  b.n = 0;
}

uint64_t GroupRuntime::drops() const {
  return __atomic_load_n(&graph_->counters().drops, __ATOMIC_RELAXED) + tx_dropped_.get();
}

}  // namespace metron

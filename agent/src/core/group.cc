#include "core/group.h"

#include <rte_cycles.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/port.h"
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
  graph_ = Graph::build(spec_.click, env);
  std::vector<uint32_t> idx(spec_.class_ids.size());
  std::iota(idx.begin(), idx.end(), 0u);
  std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return spec_.class_ids[a] < spec_.class_ids[b]; });
  for (uint32_t i : idx) {
    sorted_classes_.push_back(spec_.class_ids[i]);
    sorted_index_.push_back(i);
  }
  classes_.reset(new ClassCounters[std::max<size_t>(1, spec_.class_ids.size())]);
}

namespace {

// Counts the source-port bits of an IPv4 TCP/UDP frame that carries its L4 header (not a later fragment): 16
// single-writer adds on the worker's own counters, no branch per bit.
inline void count_sport(ClassCounters& c, const rte_mbuf* m) {
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t len = rte_pktmbuf_data_len(m);
  if (len < 14 + 20 || load16(p + 12) != 0x0800) return;
  const uint8_t* ip = p + 14;
  const uint32_t ihl = (ip[0] & 0x0f) * 4u;
  if (ihl < 20 || (ip[9] != 6 && ip[9] != 17) || (load16(ip + 6) & 0x1fff) != 0 || len < 14 + ihl + 2) return;
  const uint32_t sport = load16(ip + ihl);
  c.l4.add(1);
  for (int k = 0; k < kSportBits; ++k) c.sport_ones[k].add((sport >> k) & 1u);
}

}  // namespace

void GroupRuntime::process(PacketBatch& b) {
  const uint64_t t0 = rte_rdtsc();
  uint64_t bytes = 0;
  const size_t nc = sorted_classes_.size();
  for (uint16_t i = 0; i < b.n; ++i) {
    rte_mbuf* m = b.pkts[i];
    const uint32_t len = rte_pktmbuf_pkt_len(m);
    bytes += len;
    // Class id = dst MAC bytes 4-5 (docs/contracts.md#tags); the dispatcher guaranteed >= 14 bytes.
    const uint32_t cls = load16(rte_pktmbuf_mtod(m, const uint8_t*) + 4);
    const auto it = std::lower_bound(sorted_classes_.begin(), sorted_classes_.end(), cls);
    if (it != sorted_classes_.end() && *it == cls && nc) {
      ClassCounters& c = classes_[sorted_index_[it - sorted_classes_.begin()]];
      c.packets.add(1);
      c.bytes.add(len);
      count_sport(c, m);
    } else {
      unknown_class_.add(1);
    }
  }
  packets_.add(b.n);
  bytes_.add(bytes);
  graph_->push_input(b);
  busy_.add(rte_rdtsc() - t0);
}

void GroupRuntime::egress(int k, PacketBatch& b) {
  const EgressTarget& e = spec_.egress[k];
  if (e.set_dst_mac || e.vlan) {
    for (uint16_t i = 0; i < b.n; ++i) {
      rte_mbuf* m = b.pkts[i];
      if (e.vlan) {
        uint8_t* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, 4));
        if (p != nullptr) {
          std::memmove(p, p + 4, 12);
          store16(p + 12, 0x8100);
          store16(p + 14, e.vlan);
        }
      }
      if (e.set_dst_mac) std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), e.dst_mac, 6);
    }
  }
  const uint16_t q = static_cast<uint16_t>(spec_.slot % e.port->tx_queues());
  const uint16_t sent = e.port->tx_burst(q, b.pkts, b.n);
  tx_.add(sent);
  if (sent < b.n) {
    tx_dropped_.add(b.n - sent);
    rte_pktmbuf_free_bulk(b.pkts + sent, b.n - sent);
  }
  b.n = 0;
}

uint64_t GroupRuntime::drops() const {
  return __atomic_load_n(&graph_->counters().drops, __ATOMIC_RELAXED) + tx_dropped_.get();
}

}  // namespace metron

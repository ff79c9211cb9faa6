// A burst of packets moving through an element graph together (FastClick-style batching): elements process a
// whole batch per call, so the virtual call and the branch on the graph edge are paid once per burst.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

namespace metron {

constexpr uint16_t kBurst = 32;

struct PacketBatch {
  uint16_t n = 0;
  rte_mbuf* pkts[kBurst];

  void push_back(rte_mbuf* m) { pkts[n++] = m; }
  void free_all() {
    if (n) rte_pktmbuf_free_bulk(pkts, n);
    n = 0;
  }
};

// A batch held across bursts (Engine::set_group_hold: many groups sharing a core, each batch filling over many
// bursts) is out of L1 when its graph runs. Its lines are asked for before the graph's first reader starts, so the
// misses overlap instead of that reader and each element after it waiting in turn: both mbuf lines of every frame,
// then every frame's header line, where the first mbuf line says it is (that first read waits for one miss, the
// others have come meanwhile).
inline void prefetch_held(const PacketBatch& b) {
  for (unsigned i = 0; i < b.n; ++i) {
    rte_prefetch0(b.pkts[i]);
    rte_prefetch0(RTE_PTR_ADD(b.pkts[i], RTE_CACHE_LINE_SIZE));
  }
  for (unsigned i = 0; i < b.n; ++i) rte_prefetch0(rte_pktmbuf_mtod(b.pkts[i], const void*));
}

}  // namespace metron

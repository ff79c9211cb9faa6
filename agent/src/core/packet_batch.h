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

}  // namespace metron

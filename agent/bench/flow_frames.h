// The flow tables of the memory and state benchmarks: the DPDK memory they take, and filling one with `flows`
// 64-byte UDP frames, each a flow of its own (source address and port, and one of 65,536 destinations, as real NAPT
// traffic has), pushed through `graph`.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>

#include "core/annotations.h"
#include "core/eal.h"
#include "core/graph.h"
#include "elements/flow_table.h"
#include "utils/checksum.h"

namespace metron::bench {

// The EAL memory (MB) of a bench that holds `tables` declared IPv4 NAPT tables of `flows` each at once and a
// packed pool of `pool_mbufs`: what they take (eal_memory_mb_for), or METRON_EAL_MEMORY_MB when the user sets it.
// 1M flows in three tables take 669 MB, more than the 512 MB default.
inline unsigned TablesEalMb(unsigned tables, uint32_t flows, unsigned pool_mbufs) {
  const size_t bytes = tables * FlowTable::reserve_bytes(flows, false) + packed_pool_bytes(pool_mbufs);
  return eal_memory_mb(eal_memory_mb_for(bytes));
}

inline void PushDistinctFlows(Graph& graph, rte_mempool* pool, uint32_t flows) {
  uint8_t frame[60] = {0x02, 0x4d, 0, 1, 0, 0, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17};
  store16(frame + 34 + 2, 80);
  store16(frame + 34 + 4, 26);
  for (uint32_t done = 0; done < flows;) {
    PacketBatch b;
    for (; b.n < kBurst && done < flows; ++done) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool);
      uint8_t* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, sizeof frame));
      std::memcpy(d, frame, sizeof frame);
      store32(d + 14 + 12, 0x0a000000 | (done >> 6));
      store16(d + 34, static_cast<uint16_t>(1024 + (done & 63)));
      store32(d + 14 + 16, 0xc0a80000 | (done & 0xffff));
      clear_anno(m);
      b.push_back(m);
    }
    graph.push_input(b);
  }
}

}  // namespace metron::bench

// Test helper: how many frames one rx burst of a port's queue brings (freed at once): whether frames land there.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "core/port.h"

namespace metron::test {

inline uint16_t Received(Port& p, uint16_t q) {
  rte_mbuf* pkts[32];
  const uint16_t n = p.rx_burst(q, pkts, 32);
  rte_pktmbuf_free_bulk(pkts, n);
  return n;
}

}  // namespace metron::test

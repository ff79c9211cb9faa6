// A DpdkPort over two rte_rings the test owns (rte_eth_from_rings): the test enqueues frames the port will
// receive and dequeues the frames the port sent. Real ethdev, real mbufs, no threads of its own.
#pragma once

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "drivers/dpdk_port.h"
#include "packets.h"
#include "test_env.h"

namespace metron::test {

struct RingPort {
  explicit RingPort(const std::string& name, unsigned size = 4096) {
    pool();  // brings the EAL up
    rx = rte_ring_create((name + "_rx").c_str(), size, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
    tx = rte_ring_create((name + "_tx").c_str(), size, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (rx == nullptr || tx == nullptr) throw std::runtime_error("ring create " + name);
    const int id = rte_eth_from_rings(name.c_str(), &rx, 1, &tx, 1, 0);
    char dev[RTE_ETH_NAME_MAX_LEN];
    if (id < 0 || rte_eth_dev_get_name_by_port(static_cast<uint16_t>(id), dev) != 0)
      throw std::runtime_error("eth_from_rings " + name);
    port = DpdkPort::open(dev, 1, 1, pool());
  }
  // Frames the port will receive.
  void inject(const std::vector<uint8_t>& f) {
    rte_mbuf* m = mbuf_of(f);
    while (rte_ring_enqueue(rx, m) != 0) {
    }
  }
  // Frames the port will receive, enqueued at once (all or none), so a worker polling the port receives them in
  // full bursts.
  void inject_all(const std::vector<std::vector<uint8_t>>& frames) {
    std::vector<void*> ms;
    for (const auto& f : frames) ms.push_back(mbuf_of(f));
    while (rte_ring_enqueue_bulk(rx, ms.data(), static_cast<unsigned>(ms.size()), nullptr) == 0) {
    }
  }
  // Frames the port sent so far.
  std::vector<std::vector<uint8_t>> drain() {
    std::vector<std::vector<uint8_t>> out;
    void* objs[64];
    unsigned n;
    while ((n = rte_ring_dequeue_burst(tx, objs, 64, nullptr)) > 0)
      for (unsigned i = 0; i < n; ++i) {
        out.push_back(bytes_of(static_cast<rte_mbuf*>(objs[i])));
        rte_pktmbuf_free(static_cast<rte_mbuf*>(objs[i]));
      }
    return out;
  }
  rte_ring* rx = nullptr;
  rte_ring* tx = nullptr;
  std::unique_ptr<DpdkPort> port;
};

}  // namespace metron::test

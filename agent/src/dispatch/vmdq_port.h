// A DPDK port put into VMDq MAC-pool dispatch (agent --vmdq PORT): configured with RTE_ETH_MQ_RX_VMDQ_ONLY (one
// pool per worker slot, drivers/vmdq_conf.h), its workers polling the first queue of their pool, and a
// VmdqDispatcher whose MAC table calls go to the ethdev.
#pragma once

#include <rte_ethdev.h>

#include <cstdint>
#include <memory>
#include <string>

#include "dispatch/vmdq_dispatcher.h"
#include "drivers/dpdk_port.h"
#include "drivers/vmdq_conf.h"

namespace metron {

// VmdqMacOps over the ethdev: rte_eth_dev_mac_addr_add into the slot's pool, rte_eth_dev_mac_addr_remove,
// rte_eth_rx_queue_count of the slot's queue.
class EthdevMacOps final : public VmdqMacOps {
 public:
  EthdevMacOps(uint16_t port_id, const VmdqLayout& layout) : port_id_(port_id), layout_(layout) {}
  int add(const MacAddr& mac, uint16_t slot) override;
  int remove(const MacAddr& mac) override;
  int backlog(uint16_t slot) override;

 private:
  const uint16_t port_id_;
  const VmdqLayout layout_;
};

// Puts the started, not yet polled `port` (its driver's `info`) into VMDq mode with one pool per each of `workers`
// slots, checks with VmdqDispatcher::probe that the NIC takes pool MACs, and hands out the port's dispatcher.
// FAILED_PRECONDITION naming the port and the reason (no VMDq pools, a step the driver refused, the probe) when it
// cannot; the port then runs in its previous configuration again.
grpc::Status EnableVmdq(DpdkPort* port, const rte_eth_dev_info& info, uint16_t workers,
                        std::unique_ptr<VmdqDispatcher>* out);

// Mbufs the ethdev `port` will hold in the rx queues no worker polls once EnableVmdq configured it for `workers`
// (DpdkPort::kIdleRxDesc each), for sizing the packet pool before the port is opened; 0 for a port that is not
// there or has no VMDq (EnableVmdq then refuses it).
unsigned VmdqIdleMbufs(const std::string& port, uint16_t workers);

}  // namespace metron

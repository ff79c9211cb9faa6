// How a DPDK port is configured for VMDq MAC-pool dispatch (RTE_ETH_MQ_RX_VMDQ_ONLY, agent --vmdq), worked out
// from what its driver reports in rte_eth_dev_info. Pure: no DPDK call, so every NIC's numbers can be tested
// without the NIC.
//
// One pool per worker slot: the NIC delivers a frame whose dst MAC was added to pool p (rte_eth_dev_mac_addr_add
// with pool_base + p) to the first queue of that pool (no RSS inside a pool), which worker slot p polls:
// queue_base + p * queues_per_pool. queues_per_pool is the driver's fixed split (vmdq_queue_num / max_vmdq_pools:
// 2 on an 82599, whose 128 queues form 64 pools whatever number of pools is asked for), as DPDK's vmdq example
// computes it. Frames matching no pool MAC (the port's own address, broadcasts) go to the default pool 0.
#pragma once

#include <rte_ethdev.h>

#include <cstdint>
#include <string>

#include <grpcpp/support/status.h>

namespace metron {

struct VmdqLayout {
  uint16_t pools = 0;            // nb_queue_pools asked of the NIC: the worker count rounded up to 8/16/32/64
  uint16_t used_pools = 0;       // pools 0..used_pools-1 are the workers' (= worker slots)
  uint16_t pool_base = 0;        // the NIC's id of pool 0 (i40e: 1, its pool 0 being the PF's own VSI)
  uint16_t queue_base = 0;       // first rx queue of the VMDq pools (queues below are the PF's, i40e)
  uint16_t queues_per_pool = 0;
  uint16_t rx_queues = 0;        // rx queues to configure: the PF's plus every configured pool's
  uint32_t mac_entries = 0;      // MAC table entries for class MACs (max_mac_addrs minus the port's own)

  // The rx queue worker slot `slot` polls: the first queue of its pool.
  uint16_t rx_queue_of(uint16_t slot) const { return static_cast<uint16_t>(queue_base + slot * queues_per_pool); }
  // Rx queues set up that no worker polls: the PF's, each pool's others, the pools beyond the workers.
  uint16_t idle_rx_queues() const { return static_cast<uint16_t>(rx_queues - used_pools); }
  // The pool id rte_eth_dev_mac_addr_add takes for worker slot `slot`.
  uint32_t nic_pool_of(uint16_t slot) const { return static_cast<uint32_t>(pool_base) + slot; }
};

// The configuration of port `port` (its driver's `info`) for VMDq with one pool per each of `workers` worker slots,
// starting from its current configuration `current` (tx settings, offloads kept). FAILED_PRECONDITION naming the
// port and the missing capability when its driver reports no VMDq pools, fewer than `workers` rounded up to a
// pool count VMDq has, queue numbers that do not add up, or no MAC table entry beyond its own address; *conf and
// *layout are untouched then.
grpc::Status VmdqPortConf(const std::string& port, const rte_eth_dev_info& info, const rte_eth_conf& current,
                          uint16_t workers, rte_eth_conf* conf, VmdqLayout* layout);

}  // namespace metron

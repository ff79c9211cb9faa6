#include "drivers/vmdq_conf.h"

#include <algorithm>

namespace metron {

namespace {

grpc::Status Refused(const std::string& port, const std::string& why) {
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "port " + port + " " + why);
}

}  // namespace

grpc::Status VmdqPortConf(const std::string& port, const rte_eth_dev_info& info, const rte_eth_conf& current,
                          uint16_t workers, rte_eth_conf* conf, VmdqLayout* layout) {
  if (info.max_vmdq_pools == 0)
    return Refused(port, "has no VMDq (its driver reports max_vmdq_pools 0): dispatch it with --rte-flow instead");
  // VMDq-only mode knows these pool counts only (enum rte_eth_nb_pools).
  uint16_t pools = 0;
  for (uint16_t n : {RTE_ETH_8_POOLS, RTE_ETH_16_POOLS, RTE_ETH_32_POOLS, RTE_ETH_64_POOLS})
    if (pools == 0 && n >= workers) pools = n;
  if (pools == 0 || pools > info.max_vmdq_pools)
    return Refused(port, "has " + std::to_string(info.max_vmdq_pools) + " VMDq pools but " + std::to_string(workers) +
                             " worker cores need " + (pools ? std::to_string(pools) : std::string("more than 64")) +
                             " (one pool each; VMDq configures 8, 16, 32 or 64)");
  if (info.vmdq_queue_num < info.max_vmdq_pools)
    return Refused(port, "reports " + std::to_string(info.vmdq_queue_num) + " VMDq queues for " +
                             std::to_string(info.max_vmdq_pools) + " pools: not one queue per pool");
  const uint16_t per_pool = info.vmdq_queue_num / info.max_vmdq_pools;
  // Queues below the pools belong to the PF (i40e); the port is configured with those and every pool's.
  const uint16_t pf_queues = info.max_rx_queues > info.vmdq_queue_num ? info.max_rx_queues - info.vmdq_queue_num : 0;
  const uint32_t rx_queues = std::max<uint32_t>(pf_queues, info.vmdq_queue_base) + uint32_t{pools} * per_pool;
  if (rx_queues > info.max_rx_queues)
    return Refused(port, "needs " + std::to_string(rx_queues) + " rx queues for " + std::to_string(pools) +
                             " VMDq pools of " + std::to_string(per_pool) + " from queue " +
                             std::to_string(info.vmdq_queue_base) + ", but has " + std::to_string(info.max_rx_queues));
  if (info.max_mac_addrs <= 1)
    return Refused(port, "has no MAC table entry beyond its own address (max_mac_addrs " +
                             std::to_string(info.max_mac_addrs) + "): no class MAC can be added to a pool");

  rte_eth_conf c = current;
  c.rxmode.mq_mode = RTE_ETH_MQ_RX_VMDQ_ONLY;
  c.rx_adv_conf.vmdq_rx_conf = {};
  auto& v = c.rx_adv_conf.vmdq_rx_conf;
  v.nb_queue_pools = static_cast<rte_eth_nb_pools>(pools);
  // Frames of no class MAC (the port's own address, ARP) still reach a worker: slot 0's pool.
  v.enable_default_pool = 1;
  v.default_pool = static_cast<uint8_t>(info.vmdq_pool_base);
  // No VLAN pool maps: MAC tags only, and frames carry no VLAN, so pools must accept untagged frames.
  v.nb_pool_maps = 0;
  v.rx_mode = RTE_ETH_VMDQ_ACCEPT_UNTAG;
  *conf = c;
  *layout = VmdqLayout{pools,
                       workers,
                       info.vmdq_pool_base,
                       info.vmdq_queue_base,
                       per_pool,
                       static_cast<uint16_t>(rx_queues),
                       info.max_mac_addrs - 1};
  return grpc::Status::OK;
}

}  // namespace metron

// RSS compatibility mode on a DPDK port (DISPATCH_RSS, agent --rss PORT): the NIC spreads frames over the worker
// rx queues by a hash of their IP addresses and ports (RTE_ETH_MQ_RX_RSS), as stock FastClick/DPDK applications
// configure it. No tag affinity: the agent runs every group of a pipeline entering there on every worker core
// (EngineBackend::add_rss_nic).
#pragma once

#include <cstdint>
#include <string>

#include <grpcpp/support/status.h>

namespace metron {

// The hash functions asked of a NIC that offers `offered` (rte_eth_dev_info.flow_type_rss_offloads): IP, TCP and
// UDP, as far as it has them; 0 when it has none of them.
uint64_t RssHashFunctions(uint64_t offered);
// Why port `name`, whose driver offers `offered`, cannot run RSS (for a port with RssHashFunctions(offered) == 0).
std::string RssMissing(const std::string& name, uint64_t offered);

// Reconfigures the started, not yet polled DPDK port `port_id` (named `name`, `rxq`/`txq` queues already set up)
// for RSS and starts it again. FAILED_PRECONDITION naming the port when the NIC offers no IP/TCP/UDP hash;
// INTERNAL naming the step that failed otherwise (the port is then started again with its previous
// configuration when possible).
grpc::Status EnableRss(const std::string& name, uint16_t port_id, uint16_t rxq, uint16_t txq);

}  // namespace metron

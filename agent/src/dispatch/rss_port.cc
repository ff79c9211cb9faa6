#include "dispatch/rss_port.h"

#include <rte_errno.h>
#include <rte_ethdev.h>

#include <cstdio>

namespace metron {

uint64_t RssHashFunctions(uint64_t offered) {
  return offered & (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP);
}

std::string RssMissing(const std::string& name, uint64_t offered) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(offered));
  return "port " + name + " has no RSS over IP/TCP/UDP (its driver offers hash functions " + hex + ")";
}

grpc::Status EnableRss(const std::string& name, uint16_t port_id, uint16_t rxq, uint16_t txq) {
  rte_eth_dev_info info{};
  int rc = rte_eth_dev_info_get(port_id, &info);
  auto failed = [&](const std::string& step) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        "port " + name + ": " + step + " failed: " + rte_strerror(rc < 0 ? -rc : rc));
  };
  if (rc != 0) return failed("info");
  const uint64_t hf = RssHashFunctions(info.flow_type_rss_offloads);
  if (hf == 0) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, RssMissing(name, info.flow_type_rss_offloads));
  rte_eth_conf previous{};
  if ((rc = rte_eth_dev_conf_get(port_id, &previous)) != 0) return failed("reading its configuration");
  rte_eth_conf conf = previous;
  conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
  conf.rx_adv_conf.rss_conf.rss_key = nullptr;  // the driver's default key
  conf.rx_adv_conf.rss_conf.rss_hf = hf;
  // A stopped port keeps the queues it has set up across a configure with the same queue counts.
  if ((rc = rte_eth_dev_stop(port_id)) != 0) return failed("stop");
  if ((rc = rte_eth_dev_configure(port_id, rxq, txq, &conf)) != 0) {
    const grpc::Status s = failed("configure with RSS");
    if (rte_eth_dev_configure(port_id, rxq, txq, &previous) == 0) rte_eth_dev_start(port_id);
    return s;
  }
  if ((rc = rte_eth_dev_start(port_id)) != 0) return failed("start with RSS");
  return grpc::Status::OK;
}

}  // namespace metron

#include "dispatch/vmdq_port.h"

#include <cstring>
#include <stdexcept>

namespace metron {

namespace {

rte_ether_addr EtherAddr(const MacAddr& mac) {
  rte_ether_addr a{};
  std::memcpy(a.addr_bytes, mac.data(), mac.size());
  return a;
}

grpc::Status Refused(const std::string& what) { return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, what); }

}  // namespace

int EthdevMacOps::add(const MacAddr& mac, uint16_t slot) {
  rte_ether_addr a = EtherAddr(mac);
  return rte_eth_dev_mac_addr_add(port_id_, &a, layout_.nic_pool_of(slot));
}

int EthdevMacOps::remove(const MacAddr& mac) {
  rte_ether_addr a = EtherAddr(mac);
  return rte_eth_dev_mac_addr_remove(port_id_, &a);
}

int EthdevMacOps::backlog(uint16_t slot) { return rte_eth_rx_queue_count(port_id_, layout_.rx_queue_of(slot)); }

unsigned VmdqIdleMbufs(const std::string& port, uint16_t workers) {
  uint16_t pid;
  rte_eth_dev_info info{};
  if (rte_eth_dev_get_port_by_name(port.c_str(), &pid) != 0 || rte_eth_dev_info_get(pid, &info) != 0) return 0;
  rte_eth_conf conf{};
  VmdqLayout layout;
  if (!VmdqPortConf(port, info, conf, workers, &conf, &layout).ok()) return 0;
  return unsigned{layout.idle_rx_queues()} * DpdkPort::kIdleRxDesc;
}

grpc::Status EnableVmdq(DpdkPort* port, const rte_eth_dev_info& info, uint16_t workers,
                        std::unique_ptr<VmdqDispatcher>* out) {
  rte_eth_conf previous{};
  if (int rc = rte_eth_dev_conf_get(port->port_id(), &previous); rc != 0)
    return Refused("port " + port->name() + ": reading its configuration failed: " + rte_strerror(-rc));
  rte_eth_conf conf{};
  VmdqLayout layout;
  grpc::Status s = VmdqPortConf(port->name(), info, previous, workers, &conf, &layout);
  if (!s.ok()) return s;
  const DpdkPort::RxQueueMap previous_map = port->rx_queue_map();
  try {
    port->reconfigure(conf, {layout.rx_queues, layout.queue_base, layout.queues_per_pool});
  } catch (const std::exception& e) {
    return Refused(e.what());
  }
  auto d = std::make_unique<VmdqDispatcher>(port->name(), workers, layout.mac_entries,
                                            std::make_unique<EthdevMacOps>(port->port_id(), layout));
  if (s = d->probe(); !s.ok()) {
    try {
      port->reconfigure(previous, previous_map);
    } catch (const std::exception& e) {
      return Refused(s.error_message() + "; going back to its previous mode failed: " + e.what());
    }
    return Refused(s.error_message() + " (the port is back in its previous mode)");
  }
  *out = std::move(d);
  return grpc::Status::OK;
}

}  // namespace metron

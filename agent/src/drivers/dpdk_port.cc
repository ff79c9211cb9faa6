#include "drivers/dpdk_port.h"

#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include <algorithm>
#include <stdexcept>

#include "core/eal.h"
#include "core/engine.h"
#include "core/packet_batch.h"

namespace metron {

namespace {
[[noreturn]] void fail(const std::string& dev, const std::string& step, int rc) {
  throw std::runtime_error("port " + dev + ": " + step + " failed: " + rte_strerror(rc < 0 ? -rc : rc));
}
}  // namespace

std::unique_ptr<DpdkPort> DpdkPort::open(const std::string& spec, uint16_t rxq, uint16_t txq, rte_mempool* pool,
                                         PortDescriptors desc) {
  const std::string name = spec.substr(0, spec.find(','));
  if (name.empty()) throw std::runtime_error("port spec '" + spec + "': empty device name");
  if (rxq == 0 || txq == 0) throw std::runtime_error("port " + name + ": needs at least one rx and tx queue");
  uint16_t pid = 0;
  bool probed = false;
  if (rte_eth_dev_get_port_by_name(name.c_str(), &pid) != 0) {
    const std::string args = spec.size() > name.size() ? spec.substr(name.size() + 1) : "";
    int rc = rte_vdev_init(name.c_str(), args.c_str());
    if (rc != 0) fail(spec, "probe", rc);
    probed = true;
    if (rte_eth_dev_get_port_by_name(name.c_str(), &pid) != 0) fail(name, "lookup after probe", ENODEV);
  }
  std::unique_ptr<DpdkPort> port(new DpdkPort(name, pid, rxq, txq, probed, pool, desc));
  rte_eth_dev_info info{};
  int rc = rte_eth_dev_info_get(pid, &info);
  if (rc != 0) fail(name, "info", rc);
  if (rxq > info.max_rx_queues || txq > info.max_tx_queues) {
    throw std::runtime_error("port " + name + ": asked for " + std::to_string(rxq) + " rx/" + std::to_string(txq) +
                             " tx queues, device has " + std::to_string(info.max_rx_queues) + "/" +
                             std::to_string(info.max_tx_queues));
  }
  std::string step;
  if ((rc = port->configure(rte_eth_conf{}, port->rx_map_, &step)) != 0) fail(name, step, rc);
  rte_eth_promiscuous_enable(pid);  // vdevs without promiscuous support just refuse; not an error
  return port;
}

int DpdkPort::configure(const rte_eth_conf& conf, const RxQueueMap& map, std::string* step) {
  auto failed = [step](int rc, std::string what) {
    *step = std::move(what);
    return rc;
  };
  int rc;
  rte_eth_conf c = conf;
  // The IPv4 header checksum checked by the device where it can (every NIC's receive path does; net_tap in
  // software): its verdict in each mbuf spares CheckIPHeader the sum (check_ip_header.h).
  rte_eth_dev_info info{};
  if ((rc = rte_eth_dev_info_get(port_id_, &info)) != 0) return failed(rc, "info");
  c.rxmode.offloads |= info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
  ip_verdicts_ = (c.rxmode.offloads & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM) != 0;
  if ((rc = rte_eth_dev_configure(port_id_, map.hw_queues, txq_, &c)) != 0) return failed(rc, "configure");
  uint16_t nrx = desc_.rx, ntx = desc_.tx, idle = kIdleRxDesc, unused = desc_.tx;
  rte_eth_dev_adjust_nb_rx_tx_desc(port_id_, &nrx, &ntx);
  rte_eth_dev_adjust_nb_rx_tx_desc(port_id_, &idle, &unused);
  const int socket = std::max(rte_eth_dev_socket_id(port_id_), 0);
  for (uint16_t q = 0; q < map.hw_queues; ++q) {
    const bool polled = q >= map.first && (q - map.first) % map.stride == 0 && (q - map.first) / map.stride < rxq_;
    if ((rc = rte_eth_rx_queue_setup(port_id_, q, polled ? nrx : idle, socket, nullptr, pool_)) != 0)
      return failed(rc, "rx queue " + std::to_string(q) + " setup (pool of " + std::to_string(pool_->size) + " mbufs)");
  }
  for (uint16_t q = 0; q < txq_; ++q)
    if ((rc = rte_eth_tx_queue_setup(port_id_, q, ntx, socket, nullptr)) != 0)
      return failed(rc, "tx queue " + std::to_string(q) + " setup");
  if ((rc = rte_eth_dev_start(port_id_)) != 0) return failed(rc, "start");
  rx_map_ = map;
  return 0;
}

void DpdkPort::reconfigure(const rte_eth_conf& conf, const RxQueueMap& map) {
  rte_eth_conf previous{};
  int rc = rte_eth_dev_conf_get(port_id_, &previous);
  if (rc != 0) fail(name_, "reading its configuration", rc);
  const RxQueueMap previous_map = rx_map_;
  if ((rc = rte_eth_dev_stop(port_id_)) != 0) fail(name_, "stop", rc);
  std::string step;
  if ((rc = configure(conf, map, &step)) == 0) return;
  const std::string error = "port " + name_ + ": " + step + " failed: " + rte_strerror(rc < 0 ? -rc : rc);
  std::string again;
  rte_eth_dev_stop(port_id_);  // in case only the start failed
  if (configure(previous, previous_map, &again) != 0)
    throw std::runtime_error(error + "; restoring its previous configuration failed too (" + again + ")");
  throw std::runtime_error(error + " (its previous configuration is back)");
}

unsigned pool_mbufs_for(unsigned ports, unsigned queues, unsigned lcores, PortDescriptors desc) {
  constexpr unsigned kSlack = 4096;
  return ports * queues * (desc.rx + desc.tx + kMaxHeldFrames) + lcores * (kPoolCache + 4 * kBurst) + kSlack;
}

DpdkPort::~DpdkPort() {
  rte_eth_dev_stop(port_id_);
  rte_eth_dev_close(port_id_);
  if (probed_) rte_vdev_uninit(name_.c_str());
}

uint16_t DpdkPort::rx_burst(uint16_t q, rte_mbuf** pkts, uint16_t n) {
  const uint16_t got = rte_eth_rx_burst(port_id_, hw_rx_queue(q), pkts, n);
  if (!ip_verdicts_)
    for (uint16_t i = 0; i < got; ++i) pkts[i]->ol_flags &= ~RTE_MBUF_F_RX_IP_CKSUM_MASK;
  return got;
}

uint16_t DpdkPort::tx_burst(uint16_t q, rte_mbuf** pkts, uint16_t n) {
  return rte_eth_tx_burst(port_id_, q, pkts, n);
}

PortCounters DpdkPort::counters() const {
  rte_eth_stats st{};
  PortCounters c;
  if (rte_eth_stats_get(port_id_, &st) != 0) return c;
  c.rx_packets = st.ipackets;
  c.rx_bytes = st.ibytes;
  c.tx_packets = st.opackets;
  c.tx_bytes = st.obytes;
  c.rx_dropped = st.imissed + st.rx_nombuf + st.ierrors;
  c.tx_dropped = st.oerrors;
  return c;
}

std::string DpdkPort::mac() const {
  rte_ether_addr a{};
  if (rte_eth_macaddr_get(port_id_, &a) != 0) return {};
  char buf[RTE_ETHER_ADDR_FMT_SIZE];
  rte_ether_format_addr(buf, sizeof buf, &a);
  for (char* p = buf; *p; ++p) *p = static_cast<char>(tolower(*p));
  return buf;
}

uint64_t DpdkPort::speed_mbps() const {
  rte_eth_link l{};
  return rte_eth_link_get_nowait(port_id_, &l) == 0 ? l.link_speed : 0;
}

bool DpdkPort::link_up() const {
  rte_eth_link l{};
  return rte_eth_link_get_nowait(port_id_, &l) == 0 && l.link_status == RTE_ETH_LINK_UP;
}

}  // namespace metron

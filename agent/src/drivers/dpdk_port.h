// DpdkPort: a metron::Port over a DPDK ethdev (a NIC or a vdev such as net_null, net_pcap, net_ring, net_tap,
// net_af_packet, net_af_xdp, net_memif).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/port.h"

struct rte_mempool;

namespace metron {

class DpdkPort final : public Port {
 public:
  // Descriptors per rx and per tx queue (fewer if the device allows less).
  static constexpr uint16_t kRxDesc = 1024;
  static constexpr uint16_t kTxDesc = 1024;

  // Opens `spec`: an ethdev name already known to the EAL ("net_null0", "0000:01:00.0", from --vdev/-a) or a
  // vdev devargs string ("net_pcap0,rx_pcap=in.pcap") probed now. Configures rxq/txq queues with mbufs from
  // pool and starts the port. Throws std::runtime_error naming the device and the failing step.
  static std::unique_ptr<DpdkPort> open(const std::string& spec, uint16_t rxq, uint16_t txq, rte_mempool* pool);
  ~DpdkPort() override;

  const std::string& name() const override { return name_; }
  uint16_t rx_queues() const override { return rxq_; }
  uint16_t tx_queues() const override { return txq_; }
  uint16_t rx_burst(uint16_t q, rte_mbuf** pkts, uint16_t n) override;
  uint16_t tx_burst(uint16_t q, rte_mbuf** pkts, uint16_t n) override;
  PortCounters counters() const override;
  std::string mac() const override;
  uint64_t speed_mbps() const override;
  bool link_up() const override;

  uint16_t port_id() const { return port_id_; }

 private:
  DpdkPort(std::string name, uint16_t port_id, uint16_t rxq, uint16_t txq, bool probed)
      : name_(std::move(name)), port_id_(port_id), rxq_(rxq), txq_(txq), probed_(probed) {}
  std::string name_;
  uint16_t port_id_;
  uint16_t rxq_;
  uint16_t txq_;
  bool probed_;  // we hot-plugged it, so we unplug it on close
};

// Mbufs a packet pool needs when `ports` DPDK ports with `queues` rx/tx queues each are polled by `lcores`
// lcores: every rx and tx descriptor holding one, each lcore's mempool cache full, and slack for bursts in
// flight, kernel (fanout) ports and replies. Sizing the pool from the ports instead of one large default keeps
// a small agent small: each mbuf is 2.4 KB of resident memory. (An in-memory pcap vdev holds its whole trace
// in mbufs on top of this: give --mbufs.)
unsigned pool_mbufs_for(unsigned ports, unsigned queues, unsigned lcores);

}  // namespace metron

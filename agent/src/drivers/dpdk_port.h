// DpdkPort: a metron::Port over a DPDK ethdev (a NIC or a vdev such as net_null, net_pcap, net_ring, net_tap,
// net_af_packet, net_af_xdp, net_memif).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/port.h"

struct rte_eth_conf;
struct rte_mempool;

namespace metron {

// Descriptors per polled rx and per tx queue of a DpdkPort (testpmd's --rxd/--txd; fewer if the device allows
// less). What a port holds while its worker is off the CPU is its rx descriptors, not its ring: a virtio PMD posts
// only as many buffers as asked for, whatever the ring's size (net_virtio_user queue_size).
struct PortDescriptors {
  uint16_t rx = 1024;
  uint16_t tx = 1024;
};

class DpdkPort final : public Port {
 public:
  // Descriptors of an rx queue no worker polls (the driver needs it set up to start; VMDq ports have many).
  static constexpr uint16_t kIdleRxDesc = 64;

  // Opens `spec`: an ethdev name already known to the EAL ("net_null0", "0000:01:00.0", from --vdev/-a) or a
  // vdev devargs string ("net_pcap0,rx_pcap=in.pcap") probed now. Configures rxq/txq queues with mbufs from
  // pool and starts the port. Throws std::runtime_error naming the device and the failing step.
  static std::unique_ptr<DpdkPort> open(const std::string& spec, uint16_t rxq, uint16_t txq, rte_mempool* pool,
                                        PortDescriptors desc = {});
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

  // Which ethdev rx queue worker slot q polls: first + q * stride (VMDq: the first queue of pool q).
  struct RxQueueMap {
    uint16_t hw_queues = 0;  // rx queues the ethdev is configured with; those no slot polls get few descriptors
    uint16_t first = 0;
    uint16_t stride = 1;
  };
  // Stops the port, configures it with `conf` and `map.hw_queues` rx queues (tx queues unchanged), sets every
  // queue up and starts it; worker slot q then polls rx queue map.first + q * map.stride. Only before the workers
  // poll (Engine::start). On failure the port is configured and started again as it was, and std::runtime_error
  // names the port, the step and the driver's reason.
  void reconfigure(const rte_eth_conf& conf, const RxQueueMap& map);
  const RxQueueMap& rx_queue_map() const { return rx_map_; }
  // The ethdev rx queue worker slot q polls.
  uint16_t hw_rx_queue(uint16_t q) const { return static_cast<uint16_t>(rx_map_.first + q * rx_map_.stride); }

 private:
  DpdkPort(std::string name, uint16_t port_id, uint16_t rxq, uint16_t txq, bool probed, rte_mempool* pool,
           PortDescriptors desc)
      : name_(std::move(name)), port_id_(port_id), rxq_(rxq), txq_(txq), probed_(probed), pool_(pool),
        desc_(desc), rx_map_{rxq, 0, 1} {}
  // Configures the stopped (or never started) port with `conf` and `map`, sets the queues up and starts it; 0 or
  // the failing step's errno, *step naming it.
  int configure(const rte_eth_conf& conf, const RxQueueMap& map, std::string* step);
  std::string name_;
  uint16_t port_id_;
  uint16_t rxq_;  // worker slots (rx queues as the engine sees them)
  uint16_t txq_;
  bool probed_;  // we hot-plugged it, so we unplug it on close
  rte_mempool* pool_;
  PortDescriptors desc_;
  RxQueueMap rx_map_;
  // Whether the device writes its own IPv4 checksum verdicts (the offload is on). A device that does not may hand
  // out mbufs whose ol_flags still hold another port's (net_ring passes the sender's mbufs on as they are): those
  // are cleared on rx, so no check takes a verdict about a header as it was before a graph rewrote it.
  bool ip_verdicts_ = false;
};

// Mbufs a packet pool needs when `ports` DPDK ports with `queues` rx/tx queues each are polled by `lcores`
// lcores: every rx and tx descriptor holding one, each lcore's mempool cache full, and slack for bursts in
// flight, kernel (fanout) ports and replies. Sizing the pool from the ports instead of one large default keeps
// a small agent small: each mbuf is 2.4 KB of resident memory. (An in-memory pcap vdev holds its whole trace
// in mbufs on top of this: give --mbufs.)
unsigned pool_mbufs_for(unsigned ports, unsigned queues, unsigned lcores, PortDescriptors desc = {});

}  // namespace metron

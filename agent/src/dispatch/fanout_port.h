// FanoutPort: a Port over a kernel interface (veth, tap, any netdev) whose rx queues are filled by the kernel's
// own dispatch, outside the worker cores: by group tag (DISPATCH_FANOUT_CBPF) or, in RSS compatibility mode, by
// flow hash (DISPATCH_RSS).
//
// One AF_PACKET socket per queue, each with an mmap'ed TPACKET_V2 rx ring and tx ring. All sockets join one
// fanout group of type PACKET_FANOUT_CBPF; the group's classic BPF program (cbpf_program.h), regenerated on
// every apply(), returns the queue each frame belongs to, so a frame carrying tag X is only ever seen by the
// worker polling X's queue. Drop rules are enforced by a socket filter on every socket. With `hash`, the group is
// of type PACKET_FANOUT_HASH instead: the kernel spreads frames by their flow hash, as a NIC's RSS does, so a flow
// stays on one queue but tags have no affinity, and there are no rules (check/apply refuse any).
//
// Frames are copied into mbufs of the given DPDK mempool. A VLAN tag the kernel took out of the frame is
// reported as DPDK NICs do with VLAN stripping: mbuf->vlan_tci and RTE_MBUF_F_RX_VLAN(_STRIPPED). On tx, an
// mbuf with RTE_MBUF_F_TX_VLAN gets its vlan_tci inserted.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/port.h"
#include "dispatch/dispatcher.h"

struct rte_mempool;

namespace metron {

struct FanoutPortOptions {
  std::string ifname;          // kernel interface in the caller's network namespace
  uint16_t queues = 1;         // rx and tx queues (= sockets)
  // Frames in each socket's (queue's) receive ring, a multiple of 32: what holds a worker's backlog while it does
  // not run. 1024 frames are 13.6 ms at 75 kpps (a NIC's rx descriptors, as DPDK's --rxd); workers that share
  // their CPUs with other busy threads need more (agent --fanout-frames). Transmit rings hold 1024.
  uint32_t rx_frames = 1024;
  uint16_t default_queue = 0;  // where frames matching no rule go
  // apply() waits at most this long for readers to take the frames steered under the previous rules.
  uint32_t drain_timeout_ms = 200;
  bool hash = false;  // DISPATCH_RSS: PACKET_FANOUT_HASH, no steering rules
};

// The rx queues that switching from rules `prev` to `next` may take frames from (a rule steering to them is gone,
// or a rule now ahead of it may match the same frames): after a change, only their backlog is waited for.
std::vector<bool> QueuesLosingFrames(const std::vector<SteerRule>& prev, const std::vector<SteerRule>& next,
                                     uint16_t queues, uint16_t default_queue);

class FanoutPort final : public Port, public Dispatcher {
 public:
  // Throws std::runtime_error naming the interface and the failing step.
  static std::unique_ptr<FanoutPort> open(const FanoutPortOptions& options, rte_mempool* pool);
  ~FanoutPort() override;

  // Port
  const std::string& name() const override { return options_.ifname; }
  uint16_t rx_queues() const override { return options_.queues; }
  uint16_t tx_queues() const override { return options_.queues; }
  uint16_t rx_burst(uint16_t q, rte_mbuf** pkts, uint16_t n) override;
  uint16_t tx_burst(uint16_t q, rte_mbuf** pkts, uint16_t n) override;
  PortCounters counters() const override;
  std::string mac() const override;
  bool link_up() const override;

  // Dispatcher
  const std::string& nic() const override { return options_.ifname; }
  pb::DispatchMode mode() const override { return options_.hash ? pb::DISPATCH_RSS : pb::DISPATCH_FANOUT_CBPF; }
  uint16_t steerable_queues() const override { return options_.queues; }
  uint32_t max_rules() const override;
  grpc::Status check(const std::vector<SteerRule>& ordered_rules) const override;
  grpc::Status apply(const std::vector<SteerRule>& ordered_rules) override;

  // The fanout group id the kernel assigned (unique in this network namespace).
  uint16_t fanout_group() const { return fanout_id_; }

 private:
  struct Ring {
    uint8_t* base = nullptr;
    uint32_t frames = 0;
    uint32_t head = 0;
  };
  // Written only by the queue's worker; read by counters() from any thread.
  struct alignas(64) QueueCounters {
    std::atomic<uint64_t> rx_packets{0}, rx_bytes{0}, rx_dropped{0};
    std::atomic<uint64_t> tx_packets{0}, tx_bytes{0}, tx_dropped{0};
    std::atomic<uint64_t> rx_polls{0};  // tells drain_rings() whether anyone reads this queue
  };
  struct Queue {
    int fd = -1;
    uint8_t* map = nullptr;
    size_t map_len = 0;
    Ring rx;
    Ring tx;
    QueueCounters counters;
  };

  FanoutPort(FanoutPortOptions options, rte_mempool* pool);
  void open_queue(Queue& q, int ifindex);
  void join_fanout();
  grpc::Status install_programs(const std::vector<SteerRule>& ordered_rules);
  // Hash mode: OK for no rules, FAILED_PRECONDITION naming the NIC otherwise.
  grpc::Status hash_only(const std::vector<SteerRule>& ordered_rules) const;
  // Waits until every frame waiting now in the rx ring of a queue marked in `queues` has been released by the
  // queue's reader; queues nobody polls (no worker bound to them) are not waited for.
  void drain_rings(const std::vector<bool>& queues);

  FanoutPortOptions options_;
  rte_mempool* pool_;
  std::unique_ptr<Queue[]> queues_;
  uint16_t fanout_id_ = 0;
  std::mutex apply_mu_;
  bool socket_filter_ = false;
  std::vector<SteerRule> applied_;  // the rules in force, to tell which queues a change takes frames from
  // Kernel-side drops (ring full) are read-and-reset by PACKET_STATISTICS, so they accumulate here.
  mutable std::mutex stats_mu_;
  mutable uint64_t kernel_drops_ = 0;
};

}  // namespace metron

// ReplayPort: a memory-fed input for benchmarks and standalone runs, the agent's counterpart of FastClick's
// replay elements (FromDump + ReplayUnqueue): the frames of a pcap trace are loaded once into one packed buffer
// (DPDK memory, so hugepage-backed when the EAL has hugepages), and each rx burst takes fresh mbufs from the pool
// in bulk and copies the next frames in, looping over the trace. It stands for what a NIC delivers (a fresh mbuf
// with the frame written in) without a device: no rings, no per-frame allocation, no libpcap records, so rx costs
// a few cycles and what a benchmark measures is the data path. As a NIC with IPv4 checksum offload on (which
// DpdkPort turns on wherever a device offers it), each frame comes with the device's verdict on its IPv4 header
// checksum in ol_flags (RTE_MBUF_F_RX_IP_CKSUM_GOOD / _BAD, none for other frames), decided once when the trace
// is loaded, as the NIC's hardware decides it on the way in, at no cost per frame to the CPU. Packets sent to it
// go back to the pool as a NIC's tx returns them with fast free (a sink).
//
// The pcap vdev's infinite_rx, which this replaces in the benches, dequeues a stored mbuf per frame from an MP/MC
// ring, copies from it (one cache miss for its header, one for its data) and enqueues it back: about 100 cycles
// per frame on this machine (BENCHMARKS.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/port.h"

struct rte_mempool;

namespace metron {

class ReplayPort final : public Port {
 public:
  // `spec` is NAME=FILE[,FILE...]: one rx queue per pcap file (classic pcap, Ethernet frames), each replayed in a
  // loop from its first frame; `txq` tx queues that return what they are given to the pool. Throws
  // std::runtime_error naming the file and what is wrong with it.
  static std::unique_ptr<ReplayPort> open(const std::string& spec, uint16_t txq, rte_mempool* pool);
  ~ReplayPort() override;

  const std::string& name() const override { return name_; }
  uint16_t rx_queues() const override { return static_cast<uint16_t>(queues_.size()); }
  uint16_t tx_queues() const override { return txq_; }
  uint16_t rx_burst(uint16_t q, rte_mbuf** pkts, uint16_t n) override;
  uint16_t tx_burst(uint16_t q, rte_mbuf** pkts, uint16_t n) override;
  PortCounters counters() const override;

  // Frames held by rx queue q.
  uint32_t frames(uint16_t q) const { return queues_[q]->count; }

 private:
  // One rx queue: its frames at a fixed stride (the largest frame rounded up to a cache line) in one buffer, read
  // in order; counters written only by the worker polling it.
  struct alignas(64) Queue {
    uint8_t* data = nullptr;
    uint16_t* len = nullptr;
    uint64_t flags = 0;             // ol_flags of every frame: the checksum verdict, when all frames have one ...
    uint64_t* verdicts = nullptr;   // ... or each frame's
    uint32_t stride = 0;
    uint32_t count = 0;
    uint32_t next = 0;
    uint64_t rx_packets = 0;
    uint64_t rx_bytes = 0;
    uint64_t rx_dropped = 0;
    uint64_t tx_packets = 0;
  };

  ReplayPort(std::string name, uint16_t txq, rte_mempool* pool) : name_(std::move(name)), txq_(txq), pool_(pool) {}

  std::string name_;
  uint16_t txq_;
  rte_mempool* pool_;
  std::vector<std::unique_ptr<Queue>> queues_;
  std::vector<std::unique_ptr<Queue>> tx_;  // per tx queue counters (the same struct; only tx_packets used)
};

}  // namespace metron

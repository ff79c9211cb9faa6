// A packet port as the engine's workers see it: bursts of mbufs in and out of numbered queues.
//
// Queue convention (shared with dispatch, src/dispatch): the engine gives each worker core a dense slot
// 0..workers-1 (Engine::queue_of_core); a worker polls rx queue == its slot and transmits on tx queue == its
// slot (modulo the port's tx queue count). Dispatch that steers a tag to a core therefore steers it to the rx
// queue numbered by that core's slot. Implementations: DpdkPort (ethdev: NIC or vdev) and the dispatch side's
// FanoutPort (AF_PACKET fanout sockets, one per queue).
//
// rx_burst/tx_burst are called only by the worker owning the queue, so they need no locking; counters() may be
// called from any thread and must be safe against a concurrent burst (eventually consistent is fine).
#pragma once

#include <cstdint>
#include <string>

struct rte_mbuf;

namespace metron {

struct PortCounters {
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;
  uint64_t rx_dropped = 0;  // lost before the worker saw them (ring/queue full, no mbuf)
  uint64_t tx_dropped = 0;  // handed to tx_burst but not accepted (the caller frees them)
};

class Port {
 public:
  virtual ~Port() = default;
  Port() = default;
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  virtual const std::string& name() const = 0;
  virtual uint16_t rx_queues() const = 0;
  virtual uint16_t tx_queues() const = 0;
  // Receives up to n packets from queue q into pkts; returns how many.
  virtual uint16_t rx_burst(uint16_t q, rte_mbuf** pkts, uint16_t n) = 0;
  // Sends up to n packets; returns how many the port took ownership of. The caller frees the rest.
  virtual uint16_t tx_burst(uint16_t q, rte_mbuf** pkts, uint16_t n) = 0;
  virtual PortCounters counters() const = 0;
  // "aa:bb:cc:dd:ee:ff", or empty when the port has no address.
  virtual std::string mac() const { return {}; }
  virtual uint64_t speed_mbps() const { return 0; }
  virtual bool link_up() const { return true; }
};

}  // namespace metron

// TxBuffer: a worker's outgoing frames, gathered per (port, tx queue) and sent in one tx_burst each, as l3fwd's
// per-port tx buffers do. A burst spread over many groups, or a graph that splits a batch into small ones, still
// leaves in full bursts instead of one tx_burst per piece. The worker flushes after the graphs of an iteration
// ran (whatever batches a group held across bursts, Engine::set_group_hold, included): nothing stays queued
// across a batch boundary (a handoff or a plan swap finds it empty), no frame waits here longer than the
// iteration its graph ran in, and every frame a port refuses is freed and counted as its group's tx drop.
#pragma once

#include <cstdint>
#include <vector>

#include "core/packet_batch.h"

struct rte_mbuf;

namespace metron {

class GroupRuntime;
class Port;

class TxBuffer {
 public:
  // Frames queued per (port, queue) before they are sent whatever the flush: two bursts.
  static constexpr uint16_t kSize = 2 * kBurst;
  TxBuffer() { queues_.reserve(8); }
  // Queues n <= kBurst frames of `owner` for port/queue (sending what waits there first if they would not fit).
  void add(Port* port, uint16_t queue, GroupRuntime* owner, rte_mbuf* const* pkts, uint16_t n);
  // Sends everything queued; returns the frames the ports took since the previous flush.
  uint64_t flush();

 private:
  struct Run {  // consecutive frames of one group, to count what a port took or refused to the right group
    GroupRuntime* owner;
    uint16_t n;
  };
  struct Queue {
    Port* port;
    uint16_t queue;
    uint16_t n = 0;
    uint16_t runs = 0;
    rte_mbuf* pkts[kSize];
    Run run[kSize];
  };
  void send(Queue& q);

  std::vector<Queue> queues_;  // one per (port, queue) this core sent on: a few
  size_t last_ = 0;            // the queue the previous add() used
  uint64_t sent_ = 0;
};

}  // namespace metron

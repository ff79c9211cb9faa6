#include "core/tx_buffer.h"

#include <rte_mbuf.h>

#include <cstring>

#include "core/group.h"
#include "core/port.h"

namespace metron {

void TxBuffer::add(Port* port, uint16_t queue, GroupRuntime* owner, rte_mbuf* const* pkts, uint16_t n) {
  if (last_ >= queues_.size() || queues_[last_].port != port || queues_[last_].queue != queue) {
    last_ = 0;
    while (last_ < queues_.size() && (queues_[last_].port != port || queues_[last_].queue != queue)) ++last_;
    if (last_ == queues_.size()) {  // the first frames this core sends there
      queues_.emplace_back();
      queues_.back().port = port;
      queues_.back().queue = queue;
    }
  }
  Queue& q = queues_[last_];
  if (q.n + n > kSize) send(q);
  std::memcpy(q.pkts + q.n, pkts, n * sizeof *pkts);  // one copy (the loop's stores could alias q.n)
  q.n = static_cast<uint16_t>(q.n + n);
  if (q.runs > 0 && q.run[q.runs - 1].owner == owner) q.run[q.runs - 1].n = static_cast<uint16_t>(q.run[q.runs - 1].n + n);
  else q.run[q.runs++] = Run{owner, n};
}

void TxBuffer::send(Queue& q) {
  const uint16_t sent = q.port->tx_burst(q.queue, q.pkts, q.n);
  if (sent < q.n) rte_pktmbuf_free_bulk(q.pkts + sent, q.n - sent);
  // The port took the first `sent` frames: runs in order, each group's share of them.
  uint16_t left = sent;
  for (uint16_t r = 0; r < q.runs; ++r) {
    const uint16_t ok = q.run[r].n < left ? q.run[r].n : left;
    q.run[r].owner->count_tx(ok, static_cast<uint16_t>(q.run[r].n - ok));
    left = static_cast<uint16_t>(left - ok);
  }
  sent_ += sent;
  q.n = 0;
  q.runs = 0;
}

uint64_t TxBuffer::flush() {
  for (Queue& q : queues_)
    if (q.n) send(q);
  const uint64_t sent = sent_;
  sent_ = 0;
  return sent;
}

}  // namespace metron

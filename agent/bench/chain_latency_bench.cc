// Per-packet latency through a group graph (rx timestamp -> tx) at fractions of the core's maximum rate.
//   usage: chain_latency_bench CLICK_FILE PCAP SECONDS [LOAD...]   (LOAD: 0.1 0.5 0.9, fractions of the maximum)
// The graph runs as a group graph (`input -> ... -> [0]output`) on this thread, fed the trace's frames as a NIC
// queue would: frame i arrives at t0 + i / rate (open loop, whatever the core is doing), waits in an rx ring of
// 1024 descriptors (arrivals that find it full are dropped and counted, as a NIC does) until the core polls it, up
// to 32 per batch. Each frame is copied into a fresh mbuf when polled (what the pcap vdev's rx does) and stamped
// with its arrival time in DPDK's rx-timestamp field; the egress reads the clock and takes the difference. The
// maximum rate is measured first in the same process: every frame of the trace once (so every flow is in the
// table), then full batches back to back for SECONDS; without LOADs that is all (the closed-loop rate).
//   output: "max <mpps_wall> <mpps_cpu>", then per load "load <fraction> <offered_mpps> <p50_us> <p99_us> <dropped>"
//   with time on the thread's CPU clock (arrivals and latencies as a dedicated core would see them: a shared
//   machine's descheduling neither delays nor drops packets), then the same as "wall ..." on the wall clock (the
//   machine as it is: a descheduled core's backlog shows as latency and ring drops).
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/annotations.h"
#include "core/eal.h"
#include "core/graph.h"
#include "pcap_frames.h"
#include "thread_clock.h"

namespace {

int g_ts_offset = -1;
metron::bench::ThreadClock g_clock;
rte_mbuf_timestamp_t& stamp(rte_mbuf* m) { return *RTE_MBUF_DYNFIELD(m, g_ts_offset, rte_mbuf_timestamp_t*); }

class LatencySink final : public metron::EgressSink {
 public:
  void egress(int, metron::PacketBatch& b) override {
    g_clock.resync();
    const uint64_t now = g_clock.now();  // (the egress of a batch that crossed a deschedule may still count it)
    for (uint16_t i = 0; i < b.n; ++i) {
      const uint64_t t = stamp(b.pkts[i]);
      if (recording) samples.push_back(static_cast<uint32_t>(now > t ? std::min<uint64_t>(now - t, UINT32_MAX) : 0));
    }
    sent += b.n;
    b.free_all();
  }
  int egress_count() const override { return 1; }
  bool recording = false;
  uint64_t sent = 0;
  std::vector<uint32_t> samples;
};

struct Feeder {
  const std::vector<std::vector<uint8_t>>& frames;
  rte_mempool* pool;
  // Copies frames [first, first + n) of the trace into a batch stamped with arrival times t0 + i * period.
  void fill(metron::PacketBatch& b, uint64_t first, unsigned n, uint64_t t0, double period) {
    rte_pktmbuf_alloc_bulk(pool, b.pkts, n);
    b.n = static_cast<uint16_t>(n);
    for (unsigned k = 0; k < n; ++k) {
      const auto& f = frames[(first + k) % frames.size()];
      rte_mbuf* m = b.pkts[k];
      std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
      metron::clear_anno(m);
      stamp(m) = t0 + static_cast<uint64_t>(static_cast<double>(first + k) * period);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: chain_latency_bench CLICK_FILE PCAP SECONDS LOAD...\n");
    return 2;
  }
  metron::eal_init(metron::eal_default_args("lat", "0"));
  metron::register_annotations();
  uint64_t ts_flag = 0;
  if (rte_mbuf_dyn_rx_timestamp_register(&g_ts_offset, &ts_flag) != 0) {
    std::fprintf(stderr, "cannot register the rx timestamp field\n");
    return 1;
  }
  rte_mempool* pool = metron::packed_pktmbuf_pool("lat_pool", 8191);
  const auto frames = metron::bench::read_pcap(argv[2]);
  const double seconds = std::stod(argv[3]);
  std::ifstream in(argv[1]);
  std::stringstream click;
  click << in.rdbuf();
  LatencySink sink;
  metron::GraphEnv env;
  env.egress = &sink;
  auto graph = metron::Graph::build(click.str(), env);
  Feeder feed{frames, pool};
  const uint64_t hz = rte_get_tsc_hz();

  // Every flow of the trace once (the flow table holds them all before anything is timed), then the maximum
  // rate: full batches back to back.
  for (uint64_t at = 0; at < frames.size(); at += metron::kBurst) {
    metron::PacketBatch b;
    feed.fill(b, at, static_cast<unsigned>(std::min<uint64_t>(metron::kBurst, frames.size() - at)), 0, 0);
    graph->push_input(b);
  }
  uint64_t next = 0;
  const uint64_t t0 = rte_rdtsc();
  const double c0 = metron::bench::thread_cpu_seconds();
  while (rte_rdtsc() - t0 < seconds * hz) {
    metron::PacketBatch b;
    feed.fill(b, next, metron::kBurst, rte_rdtsc(), 0);
    next += metron::kBurst;
    graph->push_input(b);
  }
  const double wall = static_cast<double>(rte_rdtsc() - t0) / static_cast<double>(hz);
  const double max_wall = static_cast<double>(next) / wall, max_cpu = static_cast<double>(next) / (metron::bench::thread_cpu_seconds() - c0);
  std::printf("max %.3f %.3f\n", max_wall / 1e6, max_cpu / 1e6);

  constexpr uint64_t kRing = 1024;
  for (const bool cpu_clock : {true, false}) {
    g_clock.use(cpu_clock);
    for (int a = 4; a < argc; ++a) {
      const double load = std::stod(argv[a]);
      const double rate = load * (cpu_clock ? max_cpu : max_wall), period = static_cast<double>(hz) / rate;
      uint64_t served = 0, dropped = 0;
      sink.samples.clear();
      sink.samples.reserve(static_cast<size_t>(rate * seconds * 1.1));
      g_clock.resync(true);
      const uint64_t wall0 = rte_rdtsc(), start = g_clock.now();
      while (rte_rdtsc() - wall0 < seconds * hz) {
        g_clock.resync();  // after a deschedule the TSC has run ahead of the CPU clock: read the CPU clock again
        const uint64_t now = g_clock.now();
        const uint64_t arrived = now > start ? static_cast<uint64_t>(static_cast<double>(now - start) / period) : 0;
        if (arrived <= served) continue;
        if (arrived - served > kRing) dropped += arrived - served - kRing, served = arrived - kRing;
        const unsigned n = static_cast<unsigned>(std::min<uint64_t>(arrived - served, metron::kBurst));
        metron::PacketBatch b;
        feed.fill(b, served, n, start, period);
        served += n;
        sink.recording = true;
        g_clock.resync();
        graph->push_input(b);
      }
      sink.recording = false;
      std::vector<uint32_t>& s = sink.samples;
      auto pct = [&](double q) {
        if (s.empty()) return 0.0;
        auto at = s.begin() + static_cast<long>(q * static_cast<double>(s.size() - 1));
        std::nth_element(s.begin(), at, s.end());
        return static_cast<double>(*at) * 1e6 / static_cast<double>(hz);
      };
      const double p50 = pct(0.50), p99 = pct(0.99);
      std::printf("%s %.2f %.3f %.2f %.2f %lu\n", cpu_clock ? "load" : "wall", load, rate / 1e6, p50, p99,
                  static_cast<unsigned long>(dropped));
    }
  }
  graph->report(std::cerr);  // flows held, mapping failures, drops: what the figures were measured with
  return 0;
}

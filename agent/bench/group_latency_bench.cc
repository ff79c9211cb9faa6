// Per-packet latency through the dispatcher (an Engine worker: rx, tag dispatch, the groups' graphs, tx) with the
// group batching of Engine::set_group_hold on and off, at fractions of the maximum rate.
//   usage: group_latency_bench PCAP GROUPS SECONDS [LOAD...]   (LOAD: 0.1 0.5 0.9, fractions of the maximum)
// The trace is tagged as group_dispatch_bench tags it (frame i for group 1 + i % GROUPS, each group NAPT->LB as
// synthesized) and fed to the worker by a paced port, as a NIC queue would: frame i arrives at t0 + i / rate (open
// loop, whatever the core is doing) and waits in an rx ring of 1024 descriptors (arrivals that find it full are
// dropped and counted) until the worker polls it; each frame is copied into a fresh mbuf when polled and stamped
// with its arrival time (DPDK's rx-timestamp field); the port's tx reads the clock and takes the difference. Time
// is the worker thread's CPU clock (thread_clock.h: a dedicated core). The maximum is measured first in the same
// process with the hold on (the default): every frame once (every flow in its table), then full bursts back to
// back for SECONDS, with the hold on (the default) and off. The loads then run as fractions of the maximum with the
// hold on, with the hold off at the same offered rates, and with the hold off at fractions of its own maximum.
//   output: "max <on|off> <mpps_cpu>", then per series (on, off, off_own) and load
//   "load <series> <fraction> <offered_mpps> <p50_us> <p99_us> <dropped>"
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/eal.h"
#include "core/engine.h"
#include "drivers/dpdk_port.h"
#include "group_bench.h"
#include "pcap_frames.h"
#include "thread_clock.h"

namespace {

int g_ts_offset = -1;
rte_mbuf_timestamp_t& stamp(rte_mbuf* m) { return *RTE_MBUF_DYNFIELD(m, g_ts_offset, rte_mbuf_timestamp_t*); }

// One rx and one tx queue on the worker's thread: arrivals paced on its clock, latencies taken at tx.
class PacedPort final : public metron::Port {
 public:
  PacedPort(std::vector<std::vector<uint8_t>> frames, rte_mempool* pool) : frames_(std::move(frames)), pool_(pool) {}

  // period: TSC cycles between arrivals (0: closed loop, a full burst whenever polled). Call between runs.
  void pace(double period, bool cpu_clock) {
    clock_.use(cpu_clock);
    period_ = period;
    start_ = clock_.now();
    served_ = dropped_ = 0;
    samples_.clear();
    if (period > 0) samples_.reserve(1 << 22);
  }
  uint64_t served() const { return served_; }
  uint64_t dropped() const { return dropped_; }
  // The q-quantile of the recorded latencies, in microseconds.
  double quantile(double q) {
    if (samples_.empty()) return 0;
    auto at = samples_.begin() + static_cast<long>(q * static_cast<double>(samples_.size() - 1));
    std::nth_element(samples_.begin(), at, samples_.end());
    return static_cast<double>(*at) * 1e6 / static_cast<double>(rte_get_tsc_hz());
  }

  const std::string& name() const override { return name_; }
  uint16_t rx_queues() const override { return 1; }
  uint16_t tx_queues() const override { return 1; }
  uint16_t rx_burst(uint16_t, rte_mbuf** pkts, uint16_t n) override {
    clock_.resync();
    uint64_t k = n;
    if (period_ > 0) {
      const uint64_t now = clock_.now();
      const uint64_t arrived = now > start_ ? static_cast<uint64_t>(static_cast<double>(now - start_) / period_) : 0;
      if (arrived <= served_) return 0;
      if (arrived - served_ > kRing) dropped_ += arrived - served_ - kRing, served_ = arrived - kRing;
      k = std::min<uint64_t>(arrived - served_, n);
    }
    if (rte_pktmbuf_alloc_bulk(pool_, pkts, static_cast<unsigned>(k)) != 0) return 0;
    const uint64_t now = clock_.now();
    for (uint64_t j = 0; j < k; ++j) {
      const std::vector<uint8_t>& f = frames_[(served_ + j) % frames_.size()];
      std::memcpy(rte_pktmbuf_append(pkts[j], static_cast<uint16_t>(f.size())), f.data(), f.size());
      stamp(pkts[j]) = period_ > 0 ? start_ + static_cast<uint64_t>(static_cast<double>(served_ + j) * period_) : now;
    }
    served_ += k;
    return static_cast<uint16_t>(k);
  }
  uint16_t tx_burst(uint16_t, rte_mbuf** pkts, uint16_t n) override {
    clock_.resync();
    const uint64_t now = clock_.now();
    if (period_ > 0)
      for (uint16_t i = 0; i < n; ++i) {
        const uint64_t t = stamp(pkts[i]);
        samples_.push_back(static_cast<uint32_t>(now > t ? std::min<uint64_t>(now - t, UINT32_MAX) : 0));
      }
    rte_pktmbuf_free_bulk(pkts, n);
    return n;
  }
  metron::PortCounters counters() const override { return {}; }

 private:
  static constexpr uint64_t kRing = 1024;
  const std::string name_ = "paced0";
  std::vector<std::vector<uint8_t>> frames_;
  rte_mempool* pool_;
  metron::bench::ThreadClock clock_;
  double period_ = 0;
  uint64_t start_ = 0, served_ = 0, dropped_ = 0;
  std::vector<uint32_t> samples_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: group_latency_bench PCAP GROUPS SECONDS [LOAD...]\n");
    return 2;
  }
  const unsigned groups = static_cast<unsigned>(std::stoul(argv[2]));
  const double secs = std::stod(argv[3]);
  std::vector<double> loads;
  for (int a = 4; a < argc; ++a) loads.push_back(std::stod(argv[a]));
  if (loads.empty()) loads = {0.1, 0.5, 0.9};
  if (groups == 0 || groups > 4096) return std::fprintf(stderr, "GROUPS: 1..4096\n"), 2;
  std::vector<std::vector<uint8_t>> frames = metron::bench::read_pcap(argv[1]);
  const size_t trace_frames = frames.size();
  metron::bench::tag_frames(&frames, groups);
  const uint32_t capacity = metron::bench::group_capacity(frames.size(), groups);
  const std::string lb = "PATTERN 5.5.5.5 1024-65535 10.0.0.10 80, PATTERN 5.5.5.5 1024-65535 10.0.0.11 80, "
                         "PATTERN 5.5.5.5 1024-65535 10.0.0.12 80, PATTERN 5.5.5.5 1024-65535 10.0.0.13 80";
  const std::string click = "input -> Strip(14) -> CheckIPHeader -> SynthRewriter(" + lb + ", SELECT maglev, CAPACITY " +
                            std::to_string(capacity) + ") -> DecIPTTL -> Unstrip(14) -> [0]output;";

  metron::eal_init(metron::eal_default_args("glat", "0"));
  uint64_t ts_flag = 0;
  if (rte_mbuf_dyn_rx_timestamp_register(&g_ts_offset, &ts_flag) != 0)
    return std::fprintf(stderr, "cannot register the rx timestamp field\n"), 1;
  rte_mempool* pool = metron::packed_pktmbuf_pool("glat_pool", metron::pool_mbufs_for(1, 1, 1) + 8192);
  metron::Engine engine({0}, pool);
  auto* port = static_cast<PacedPort*>(engine.add_port(std::make_unique<PacedPort>(std::move(frames), pool)));
  auto plan = std::make_unique<metron::WorkerPlan>();
  metron::IngressBinding binding;
  binding.port = port;
  for (unsigned g = 0; g < groups; ++g) {
    auto gr = std::make_shared<metron::GroupRuntime>(metron::bench::group_spec(g, click, 0, 0, 1, port, port));
    binding.groups.push_back(gr.get());
    plan->groups.push_back(std::move(gr));
  }
  plan->ingress.push_back(binding);
  engine.publish(0, std::move(plan));

  auto run = [&](double s) { metron::bench::run_for(engine, s); };
  auto hold = [&](bool on) {
    engine.set_group_hold(on ? metron::Engine::kDefaultHoldFrames : 0, metron::Engine::kDefaultHoldUs);
  };
  // Closed loop: every flow in its table, then the maximum (per CPU-second of this thread) with each setting.
  port->pace(0, true);
  while (port->served() < trace_frames) run(0.2);
  double max_on = 0, max_off = 0;
  for (const bool on : {true, false}) {
    hold(on);
    port->pace(0, true);
    const double c0 = metron::bench::thread_cpu_seconds();
    run(secs);
    const double mpps = static_cast<double>(port->served()) / (metron::bench::thread_cpu_seconds() - c0) / 1e6;
    (on ? max_on : max_off) = mpps;
    std::printf("max %s %.3f\n", on ? "on" : "off", mpps);
  }
  // The same offered loads with each setting, then the hold off at fractions of its own maximum ("off_own").
  const double hz = static_cast<double>(rte_get_tsc_hz());
  for (const std::string series : {"on", "off", "off_own"}) {
    const bool on = series == "on";
    const double max = series == "off_own" ? max_off : max_on;
    hold(on);
    for (const double load : loads) {
      port->pace(hz / (load * max * 1e6), true);
      run(secs);
      std::printf("load %s %.2f %.3f %.2f %.2f %lu\n", series.c_str(), load, load * max, port->quantile(0.5),
                  port->quantile(0.99), static_cast<unsigned long>(port->dropped()));
    }
  }
  return 0;
}

// The offloaded chain's agent side: frames tagged by the switch (docs/contracts.md#tags: dst MAC bytes 2-3 the
// group tag, 4-5 the class id), read from a memory-fed port by an Engine worker that dispatches them by tag to
// the groups of its core, each running a group graph (the stateful part of its traffic class), sent out on a
// net_null port. What the agent does for every packet of a deployed chain, on one core.
//   usage: group_dispatch_bench PCAP GROUPS SECONDS [CLICK]
// The trace's frame i carries tag 1 + i % GROUPS and class id 1 + i % GROUPS (each flow of the 100k-flow trace
// has one frame, so the flows of a class are one group's), written to a copy of the trace next to it. CLICK
// (default: NAPT as run.sh's NAPT row) runs as every group's graph, "@CAPACITY@" in it replaced by twice a
// group's flows (rounded up to a power of two). The
// worker first runs one pass of the trace unmeasured (every flow in its group's table), then SECONDS measured.
//   output: "result <mpps_cpu> <mpps_wall> <busy_cycles_per_packet>"; exit 1 if a frame went missing or a
//   group's counters (packets, per class, TCP/UDP source-port bits) disagree with what it was sent
#include <rte_cycles.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/eal.h"
#include "core/engine.h"
#include "drivers/dpdk_port.h"
#include "drivers/replay_port.h"
#include "pcap_frames.h"

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The trace with frame i tagged for group 1 + i % groups (classic pcap, microsecond stamps).
std::string tagged_copy(const std::string& pcap, unsigned groups, std::vector<std::vector<uint8_t>>* frames) {
  *frames = metron::bench::read_pcap(pcap);
  const std::string out = pcap + ".tagged" + std::to_string(groups) + ".pcap";
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  const uint32_t header[6] = {0xa1b2c3d4u, 0x00040002u, 0, 0, 65535, 1};
  f.write(reinterpret_cast<const char*>(header), sizeof header);
  for (size_t i = 0; i < frames->size(); ++i) {
    std::vector<uint8_t>& fr = (*frames)[i];
    const uint16_t tag = static_cast<uint16_t>(1 + i % groups);
    fr[0] = 0x02, fr[1] = 0x4d, fr[2] = tag >> 8, fr[3] = tag & 0xff, fr[4] = tag >> 8, fr[5] = tag & 0xff;
    const uint32_t rec[4] = {0, 0, static_cast<uint32_t>(fr.size()), static_cast<uint32_t>(fr.size())};
    f.write(reinterpret_cast<const char*>(rec), sizeof rec);
    f.write(reinterpret_cast<const char*>(fr.data()), static_cast<std::streamsize>(fr.size()));
  }
  if (!f) throw std::runtime_error("cannot write " + out);
  return out;
}

// The source port of an IPv4 TCP/UDP first fragment, or -1 (what GroupRuntime counts bits of).
int sport_of(const std::vector<uint8_t>& f) {
  if (f.size() < 34 || f[12] != 0x08 || f[13] != 0x00) return -1;
  const size_t ihl = (f[14] & 0x0fu) * 4u;
  if (ihl < 20 || (f[23] != 6 && f[23] != 17) || ((f[20] << 8 | f[21]) & 0x1fff) != 0 || f.size() < 14 + ihl + 2)
    return -1;
  return f[14 + ihl] << 8 | f[15 + ihl];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: group_dispatch_bench PCAP GROUPS SECONDS [CLICK]\n");
    return 2;
  }
  const unsigned groups = static_cast<unsigned>(std::stoul(argv[2]));
  const double secs = std::stod(argv[3]);
  if (groups == 0 || groups > 4096) return std::fprintf(stderr, "GROUPS: 1..4096\n"), 2;
  std::vector<std::vector<uint8_t>> frames;
  const std::string trace = tagged_copy(argv[1], groups, &frames);
  uint32_t capacity = 1024;  // twice a group's flows, rounded up to a power of two
  while (capacity < 2 * frames.size() / groups) capacity *= 2;
  std::string click = argc > 4 ? argv[4]
                               : "input -> Strip(14) -> CheckIPHeader -> SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -, "
                                 "CAPACITY @CAPACITY@) -> Unstrip(14) -> [0]output;";
  for (size_t at; (at = click.find("@CAPACITY@")) != std::string::npos;)
    click.replace(at, 10, std::to_string(capacity));

  metron::eal_init(metron::eal_default_args("gdisp", "0"));
  rte_mempool* pool = metron::packed_pktmbuf_pool("gdisp_pool", metron::pool_mbufs_for(2, 1, 1) + 8192);
  metron::Engine engine({0}, pool);
  // GROUP_HOLD=FRAMES[,US]: the engine's group batching (Engine::set_group_hold; 0 = off), to compare settings
  // with one binary.
  if (const char* hold = std::getenv("GROUP_HOLD")) {
    const std::string h = hold;
    const size_t comma = h.find(',');
    engine.set_group_hold(static_cast<uint32_t>(std::stoul(h.substr(0, comma))),
                          comma == std::string::npos ? metron::Engine::kDefaultHoldUs
                                                     : static_cast<uint32_t>(std::stoul(h.substr(comma + 1))));
  }
  metron::Port* in = engine.add_port(metron::ReplayPort::open("replay0=" + trace, 1, pool));
  metron::Port* out = engine.add_port(metron::DpdkPort::open("net_null0", 1, 1, pool));

  auto plan = std::make_unique<metron::WorkerPlan>();
  metron::IngressBinding binding;
  binding.port = in;
  for (unsigned g = 0; g < groups; ++g) {
    metron::GroupRuntime::Spec spec;
    spec.pipeline_id = "bench";
    spec.group_id = "g" + std::to_string(g + 1);
    spec.click = click;
    spec.tag_kind = metron::TagKind::kMac;
    spec.tag = g + 1;
    spec.core = 0;
    spec.ingress = in;
    metron::EgressTarget e;
    e.port = out;
    e.set_dst_mac = true;
    std::memcpy(e.dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
    spec.egress.push_back(e);
    spec.class_ids = {g + 1};
    auto gr = std::make_shared<metron::GroupRuntime>(spec);
    binding.groups.push_back(gr.get());
    plan->groups.push_back(std::move(gr));
  }
  plan->ingress.push_back(binding);
  std::vector<std::shared_ptr<metron::GroupRuntime>> runtimes = plan->groups;
  engine.publish(0, std::move(plan));

  // The worker on this (main) lcore, stopped by a timer thread after `s` seconds.
  auto run = [&](double s) {
    engine.start();
    std::thread timer([&] {
      std::this_thread::sleep_for(std::chrono::duration<double>(s));
      engine.request_stop();
    });
    engine.run_main_worker();
    timer.join();
    engine.stop();
  };
  // Warm-up: at least one pass of the trace, so every flow is in its table.
  const uint64_t warm_rx_target = frames.size();
  while (engine.sample(0).rx < warm_rx_target) run(0.2);
  const metron::CoreSample s0 = engine.sample(0);
  const double c0 = thread_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  run(secs);
  const double cpu = thread_cpu_seconds() - c0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const metron::CoreSample s1 = engine.sample(0);
  const uint64_t n = s1.rx - s0.rx;

  // Every frame received was sent (no group drops any), and every group counted what it was sent: frame i went
  // to group i % groups, the replay port sent the trace in order from its start, s1.rx frames in all.
  int rc = 0;
  if (s1.tx != s1.rx || s1.drops != 0) {
    std::fprintf(stderr, "group_dispatch_bench: rx %lu, tx %lu, drops %lu\n", s1.rx, s1.tx, s1.drops);
    rc = 1;
  }
  std::vector<uint64_t> want(groups), l4(groups), ones(groups * 16);
  const uint64_t passes = s1.rx / frames.size(), rest = s1.rx % frames.size();
  for (size_t i = 0; i < frames.size(); ++i) {
    const uint64_t k = passes + (i < rest ? 1 : 0);
    want[i % groups] += k;
    const int sp = sport_of(frames[i]);
    if (sp < 0) continue;
    l4[i % groups] += k;
    for (int b = 0; b < 16; ++b) ones[(i % groups) * 16 + b] += ((sp >> b) & 1) * k;
  }
  for (unsigned g = 0; g < groups; ++g) {
    const metron::GroupRuntime& gr = *runtimes[g];
    bool ok = gr.packets() == want[g] && gr.class_packets(0) == want[g] && gr.unknown_class_packets() == 0 &&
              gr.class_l4_packets(0) == l4[g] && gr.tx_packets() == want[g] && gr.drops() == 0;
    for (int b = 0; b < 16; ++b) ok = ok && gr.class_sport_ones(0, b) == ones[g * 16 + b];
    if (!ok) {
      std::fprintf(stderr, "group_dispatch_bench: group %u counted %lu packets (class %lu, l4 %lu, tx %lu), sent %lu\n",
                   g + 1, gr.packets(), gr.class_packets(0), gr.class_l4_packets(0), gr.tx_packets(), want[g]);
      rc = 1;
    }
  }
  std::printf("result %.3f %.3f %.1f\n", static_cast<double>(n) / cpu / 1e6, static_cast<double>(n) / wall / 1e6,
              static_cast<double>(s1.busy_cycles - s0.busy_cycles) / static_cast<double>(n) * cpu / wall);
  runtimes.clear();
  return rc;
}

// The offloaded chain's agent side: frames tagged by the switch (docs/contracts.md#tags: dst MAC bytes 2-3 the
// group tag, 4-5 the class id), read from a memory-fed port by Engine workers that dispatch them by tag to the
// groups of their core, each running a group graph (the stateful part of its traffic class), sent back out on the
// memory-fed port (its tx returns mbufs to the pool as a NIC's fast-free tx does). What the agent does for every
// packet of a deployed chain.
//   usage: group_dispatch_bench PCAP GROUPS SECONDS [CLICK [LCORES]]
// The trace's frame i carries tag 1 + i % GROUPS and class id 1 + i % GROUPS (each flow of the 100k-flow trace
// has one frame, so the flows of a class are one group's). CLICK
// (default, or "-": NAPT as run.sh's NAPT row) runs as every group's graph, "@CAPACITY@" in it replaced by twice
// a group's flows (rounded up to a power of two). LCORES (an EAL lcore list, default "0") are the worker cores:
// group g runs on worker g % workers, and its frames arrive on that worker's rx queue of the replay port, in
// trace order (as the switch's rule for a tag steers it to its core's queue, EngineBackend::steer): each worker
// is fed from memory of its own. The workers first run one pass of their frames unmeasured (every flow in its
// group's table), then SECONDS measured, all at once.
//   output: "result <mpps_cpu> <mpps_wall> <busy_cycles_per_packet>", "packets <measured> <all, warm-up included>"
//   (to divide counts taken outside, e.g. callgrind's, by), then with several workers one line
//   "worker <lcore> <packets> <cpu_seconds> <mpps_cpu>" each and "per_cpu <packets / all workers' CPU seconds>".
//   GROUP_PROFILE=1: every group graph is built with a StageProfile (its cycles charged per element and sub-stage,
//   read at element boundaries, once per batch) and one more line per element or sub-stage follows:
//   "stage <name> <cycles per packet>", summed over the groups and scaled as busy_cycles_per_packet is, then
//   "stage outside_graphs <cycles>": the rest of the busy cycles (rx, dispatch by tag, the tx flush; the group
//   telemetry is a stage of its own, "telemetry", 0 for batches a rewriter counts in its key pass, whose stage
//   then holds it; the egress into the tx buffer is "output"). The profile's
//   clock reads cost a few cycles per packet: compare stage figures with each other, the throughput with an
//   unprofiled run.
//   mpps_cpu is the sum over workers of each one's packets per second of its own thread's CPU time (what the
//   workers sustain when each has its CPU), mpps_wall all packets over the wall time; exit 1 if a frame went
//   missing or a group's counters (packets, per class, TCP/UDP source-port bits) disagree with what it was sent
#include <pthread.h>
#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/eal.h"
#include "core/engine.h"
#include "core/graph.h"
#include "core/stage_profile.h"
#include "drivers/dpdk_port.h"  // pool_mbufs_for
#include "drivers/replay_port.h"
#include "group_bench.h"
#include "pcap_frames.h"

namespace {

// "0", "0-1", "0,2": the lcores of an EAL list, in order.
std::vector<unsigned> parse_lcores(const std::string& list) {
  std::vector<unsigned> v;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string part = list.substr(at, comma - at);
    const size_t dash = part.find('-');
    const unsigned lo = static_cast<unsigned>(std::stoul(part.substr(0, dash)));
    const unsigned hi = dash == std::string::npos ? lo : static_cast<unsigned>(std::stoul(part.substr(dash + 1)));
    for (unsigned c = lo; c <= hi; ++c) v.push_back(c);
    at = comma + 1;
  }
  return v;
}

// The source port of an IPv4 TCP/UDP first fragment, or -1 (what GroupRuntime counts bits of).
int sport_of(const std::vector<uint8_t>& f) {
  if (f.size() < 34 || f[12] != 0x08 || f[13] != 0x00) return -1;
  const size_t ihl = (f[14] & 0x0fu) * 4u;
  if (ihl < 20 || (f[23] != 6 && f[23] != 17) || ((f[20] << 8 | f[21]) & 0x1fff) != 0 || f.size() < 14 + ihl + 2)
    return -1;
  return f[14 + ihl] << 8 | f[15 + ihl];
}

double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The CPU clock of the thread running an lcore (read from any thread: each worker's own CPU time).
clockid_t lcore_cpu_clock(unsigned lcore) {
  clockid_t clock = CLOCK_THREAD_CPUTIME_ID;
  auto mine = [](void* arg) {
    pthread_getcpuclockid(pthread_self(), static_cast<clockid_t*>(arg));
    return 0;
  };
  if (lcore == rte_get_main_lcore()) {
    mine(&clock);
  } else {
    if (rte_eal_remote_launch(mine, &clock, lcore) != 0) throw std::runtime_error("cannot launch on an lcore");
    rte_eal_wait_lcore(lcore);
  }
  return clock;
}

// "stage NAME CYCLES" per element or sub-stage of the group graphs (GROUP_PROFILE), summed over the groups, TSC
// cycles scaled by the share of the wall time each group's worker had its CPU (as busy_cycles_per_packet), in the
// order of the first graph's slots; then "stage outside_graphs" for the rest of `busy`.
void print_stages(const std::vector<std::shared_ptr<metron::GroupRuntime>>& runtimes,
                  const std::vector<unsigned>& cores, const std::vector<double>& cpu, double wall, double busy,
                  uint64_t packets) {
  std::vector<std::string> order;
  std::map<std::string, double> cycles;
  for (const auto& r : runtimes) {
    const metron::StageProfile* p = r->graph().profile();
    const size_t k = std::find(cores.begin(), cores.end(), r->spec().core) - cores.begin();
    const double scale = k < cpu.size() ? cpu[k] / wall : 1.0;
    bool first = true;
    p->each([&](const std::string& name, uint64_t c, uint64_t) {
      if (first) return void(first = false);  // slot 0: the time between this graph's runs (other groups' too)
      if (!cycles.count(name)) order.push_back(name);
      cycles[name] += static_cast<double>(c) * scale;
    });
  }
  double in_graphs = 0;
  for (const std::string& name : order) {
    const double c = cycles[name] / static_cast<double>(packets);
    in_graphs += c;
    std::printf("stage %s %.1f\n", name.c_str(), c);
  }
  std::printf("stage outside_graphs %.1f\n", busy / static_cast<double>(packets) - in_graphs);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: group_dispatch_bench PCAP GROUPS SECONDS [CLICK [LCORES]]\n");
    return 2;
  }
  const unsigned groups = static_cast<unsigned>(std::stoul(argv[2]));
  const double secs = std::stod(argv[3]);
  const std::string lcores = argc > 5 ? argv[5] : "0";
  const std::vector<unsigned> cores = parse_lcores(lcores);
  const unsigned workers = static_cast<unsigned>(cores.size());
  if (groups == 0 || groups > 4096) return std::fprintf(stderr, "GROUPS: 1..4096\n"), 2;
  if (workers == 0 || workers > groups) return std::fprintf(stderr, "LCORES: 1..GROUPS lcores\n"), 2;

  // Frame i tagged for group 1 + i % groups; worker k's rx queue gets the frames of its groups, in trace order.
  std::vector<std::vector<uint8_t>> frames = metron::bench::read_pcap(argv[1]);
  metron::bench::tag_frames(&frames, groups);
  std::vector<std::vector<uint32_t>> of_worker(workers);
  for (size_t i = 0; i < frames.size(); ++i) of_worker[(i % groups) % workers].push_back(static_cast<uint32_t>(i));
  // Written next to the trace under this process's id (benches may run side by side), removed once loaded.
  std::vector<std::string> files;
  std::string spec = "replay0=";
  for (unsigned k = 0; k < workers; ++k) {
    files.push_back(std::string(argv[1]) + ".tagged" + std::to_string(groups) + ".q" + std::to_string(k) + "." +
                    std::to_string(getpid()) + ".pcap");
    metron::bench::write_pcap(files.back(), frames, of_worker[k]);
    spec += (k ? "," : "") + files.back();
  }
  const uint32_t capacity = metron::bench::group_capacity(frames.size(), groups);
  std::string click = argc > 4 && std::strcmp(argv[4], "-") != 0
                          ? argv[4]
                          : "input -> Strip(14) -> CheckIPHeader -> SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -, "
                            "CAPACITY @CAPACITY@) -> Unstrip(14) -> [0]output;";
  for (size_t at; (at = click.find("@CAPACITY@")) != std::string::npos;)
    click.replace(at, 10, std::to_string(capacity));

  const char* profile_env = std::getenv("GROUP_PROFILE");
  const bool profile = profile_env != nullptr && std::strcmp(profile_env, "1") == 0;

  metron::eal_init(metron::eal_default_args("gdisp", lcores));
  rte_mempool* pool =
      metron::packed_pktmbuf_pool("gdisp_pool", metron::pool_mbufs_for(2, workers, workers) + 8192 * workers);
  metron::Engine engine(cores, pool);
  // GROUP_HOLD=FRAMES[,US]: the engine's group batching (Engine::set_group_hold; 0 = off), to compare settings
  // with one binary.
  if (const char* hold = std::getenv("GROUP_HOLD")) {
    const std::string h = hold;
    const size_t comma = h.find(',');
    engine.set_group_hold(static_cast<uint32_t>(std::stoul(h.substr(0, comma))),
                          comma == std::string::npos ? metron::Engine::kDefaultHoldUs
                                                     : static_cast<uint32_t>(std::stoul(h.substr(comma + 1))));
  }
  metron::Port* in = engine.add_port(metron::ReplayPort::open(spec, workers, pool));
  for (const std::string& f : files) std::remove(f.c_str());
  metron::Port* out = in;  // tx queue k: worker k's

  // One plan per worker, as EngineBackend builds them: a group's slot is its core's queue.
  std::vector<std::shared_ptr<metron::GroupRuntime>> runtimes(groups);
  for (unsigned k = 0; k < workers; ++k) {
    auto plan = std::make_unique<metron::WorkerPlan>();
    metron::IngressBinding binding;
    binding.port = in;
    binding.queue = static_cast<uint16_t>(k);
    for (unsigned g = k; g < groups; g += workers) {
      metron::GroupRuntime::Spec gs = metron::bench::group_spec(g, click, cores[k], k, workers, in, out);
      gs.profile = profile;
      runtimes[g] = std::make_shared<metron::GroupRuntime>(std::move(gs));
      binding.groups.push_back(runtimes[g].get());
      plan->groups.push_back(runtimes[g]);
    }
    plan->ingress.push_back(binding);
    engine.publish(cores[k], std::move(plan));
  }
  std::vector<clockid_t> clocks;
  for (unsigned c : cores) clocks.push_back(lcore_cpu_clock(c));

  auto run = [&](double s) { metron::bench::run_for(engine, s); };
  // Warm-up: at least one pass of each worker's frames, so every flow is in its table.
  auto warm = [&] {
    for (unsigned k = 0; k < workers; ++k)
      if (engine.sample(cores[k]).rx < of_worker[k].size()) return false;
    return true;
  };
  while (!warm()) run(0.2);
  // The profiles count the measured run only (the warm-up's cycles went to creating flows); the workers are stopped.
  for (const auto& r : runtimes)
    if (metron::StageProfile* p = r->graph().profile()) p->reset();
  std::vector<metron::CoreSample> s0, s1;
  std::vector<double> c0, cpu;
  for (unsigned k = 0; k < workers; ++k) s0.push_back(engine.sample(cores[k])), c0.push_back(cpu_seconds(clocks[k]));
  const auto t0 = std::chrono::steady_clock::now();
  run(secs);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (unsigned k = 0; k < workers; ++k)
    s1.push_back(engine.sample(cores[k])), cpu.push_back(cpu_seconds(clocks[k]) - c0[k]);

  // Every frame received was sent (no group drops any), and every group counted what it was sent: worker k's
  // queue replayed its frames in order from their start, s1[k].rx frames in all.
  int rc = 0;
  std::vector<uint64_t> want(groups), l4(groups), ones(groups * 16);
  for (unsigned k = 0; k < workers; ++k) {
    if (s1[k].tx != s1[k].rx || s1[k].drops != 0) {
      std::fprintf(stderr, "group_dispatch_bench: lcore %u: rx %lu, tx %lu, drops %lu\n", cores[k], s1[k].rx,
                   s1[k].tx, s1[k].drops);
      rc = 1;
    }
    const std::vector<uint32_t>& mine = of_worker[k];
    const uint64_t passes = s1[k].rx / mine.size(), rest = s1[k].rx % mine.size();
    for (size_t j = 0; j < mine.size(); ++j) {
      const uint32_t i = mine[j], g = i % groups;
      const uint64_t n = passes + (j < rest ? 1 : 0);
      want[g] += n;
      const int sp = sport_of(frames[i]);
      if (sp < 0) continue;
      l4[g] += n;
      for (int b = 0; b < 16; ++b) ones[g * 16 + b] += ((sp >> b) & 1) * n;
    }
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
  double mpps_cpu = 0, busy = 0, cpu_all = 0;
  uint64_t n = 0;
  for (unsigned k = 0; k < workers; ++k) {
    const uint64_t nk = s1[k].rx - s0[k].rx;
    n += nk;
    cpu_all += cpu[k];
    mpps_cpu += static_cast<double>(nk) / cpu[k] / 1e6;
    // busy TSC cycles scaled by the share of the wall time the worker had its CPU (as run.sh's rows)
    busy += static_cast<double>(s1[k].busy_cycles - s0[k].busy_cycles) * cpu[k] / wall;
  }
  std::printf("result %.3f %.3f %.1f\n", mpps_cpu, static_cast<double>(n) / wall / 1e6, busy / static_cast<double>(n));
  uint64_t all = 0;
  for (unsigned k = 0; k < workers; ++k) all += s1[k].rx;
  std::printf("packets %lu %lu\n", n, all);
  if (profile) print_stages(runtimes, cores, cpu, wall, busy, n);
  if (workers > 1) {
    for (unsigned k = 0; k < workers; ++k)
      std::printf("worker %u %lu %.3f %.3f\n", cores[k], s1[k].rx - s0[k].rx, cpu[k],
                  static_cast<double>(s1[k].rx - s0[k].rx) / cpu[k] / 1e6);
    std::printf("per_cpu %.3f\n", static_cast<double>(n) / cpu_all / 1e6);
  }
  runtimes.clear();
  return rc;
}

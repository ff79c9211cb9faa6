// Resident memory of a one-core agent process whose NAPT table holds N flows (default 1M): brings up the EAL
// with the agent's default arguments and the packet pool the agent sizes for one worker and two DPDK ports,
// builds the SynthRewriter group graph a worker would run, feeds it N distinct new flows in 32-packet batches,
// and reports the process RSS before and after, plus the CPU cycles per flow creation. Before the RSS is read
// the core runs on as it would under traffic (the same flows sent again, 2N packets: a growing table finishes
// moving keys into its last hash, at least 16 records per batch) and the grower gets 200 ms to free the hash it
// retires; the peak RSS of the whole run is reported too.
//   usage: napt_memory_bench [N] [v4|any] [declared|grow]   v4: the NAPT pattern sets an IPv4 source, so the
//          table is IPv4-only (compact); any: a pattern that keeps addresses, so the table takes IPv6 flows too
//          (full-width keys, the layout every table had before). declared: CAPACITY N (reserved at once); grow:
//          no CAPACITY, the table grows as the flows arrive (Click's semantics, the default)
//   output: "result <rss_mb> <rss_before_mb> <insert_cycles_per_flow> <peak_rss_mb>"; exit 1 if not every flow
//   got a mapping
#include <rte_cycles.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "core/annotations.h"
#include "flow_frames.h"
#include "core/eal.h"
#include "core/graph.h"
#include "drivers/dpdk_port.h"
#include "utils/checksum.h"

namespace {

// A /proc/self/status field in MB: VmRSS (resident now) or VmHWM (the peak).
double status_mb(const char* field) {
  std::ifstream in("/proc/self/status");
  const std::string key = std::string(field) + ":";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size())) / 1024.0;
  return 0;
}
double rss_mb() { return status_mb("VmRSS"); }

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t flows = argc > 1 ? static_cast<uint32_t>(std::stoul(argv[1])) : (1u << 20);
  const std::string layout = argc > 2 ? argv[2] : "v4";
  const std::string sizing = argc > 3 ? argv[3] : "declared";
  if ((layout != "v4" && layout != "any") || (sizing != "declared" && sizing != "grow")) {
    std::fprintf(stderr, "napt_memory_bench: expected [N] [v4|any] [declared|grow], got '%s' '%s'\n", layout.c_str(),
                 sizing.c_str());
    return 2;
  }
  metron::eal_init(metron::eal_default_args("nmem", "0"));
  metron::register_annotations();
  rte_mempool* pool = metron::packed_pktmbuf_pool("nmem_pool", metron::pool_mbufs_for(2, 1, 1));
  metron::GraphEnv env;
  metron::Graph* g0 = nullptr;
  const double before = rss_mb();
  const std::string pattern = layout == "v4" ? "5.5.5.5 1024-65535 - -" : "- 1024-65535 - -";
  const std::string capacity = sizing == "declared" ? ", CAPACITY " + std::to_string(flows) : "";
  auto graph = metron::Graph::build(
      "input -> Strip(14) -> MarkIPHeader -> rw :: SynthRewriter(PATTERN " + pattern + capacity + ") -> Discard;", env);
  g0 = graph.get();
  const double c0 = cpu_seconds();
  const uint64_t t0 = rte_rdtsc();
  metron::bench::PushDistinctFlows(*g0, pool, flows);
  const double secs = static_cast<double>(rte_rdtsc() - t0) / static_cast<double>(rte_get_tsc_hz());
  const double cpu = cpu_seconds() - c0;
  const uint32_t again = std::min(flows, 65536u);  // flows that exist already: lookups, no new flow
  for (uint64_t sent = 0; sent < 2ull * flows; sent += again) metron::bench::PushDistinctFlows(*g0, pool, again);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double after = rss_mb();
  std::ostringstream rep;
  g0->report(rep);
  std::cerr << rep.str();
  const double cycles = static_cast<double>(rte_get_tsc_hz()) * cpu / flows;
  if (rep.str().find("rw.flows " + std::to_string(flows) + "\n") == std::string::npos) {
    std::fprintf(stderr, "napt_memory_bench: expected %u flows\n", flows);
    return 1;
  }
  std::printf("result %.1f %.1f %.0f %.1f\n", after, before, cycles, status_mb("VmHWM"));
  (void)secs;
  return 0;
}

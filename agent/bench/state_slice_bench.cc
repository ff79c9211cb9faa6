// How long a copy of a group's flow state holds its core, for N flows (default 1M) in one SynthRewriter whose
// group's core is a running Engine worker. Each round, side by side:
//   whole    baseline, the previous code path: the whole table exported in one handoff between two batches (what
//            every checkpoint, ExportState and a split's copy did)
//   sliced   core/state_copy.h sliced_snapshot_of: slices of kStateSliceUs between batches - the longest one is
//            how long the core was held; the copy's total time and slice count are reported too
//   copy     what a split's take-over did in one handoff, and a merge's still does (docs/scaling.md#state-copy):
//            export + import into the successor
//   adopt    what a split's take-over does now: the successor (same Click config) adopts the tables in one
//            handoff (swap_state)
// usage: state_slice_bench [N] [ROUNDS]
// output: "result <whole_ms> <sliced_longest_ms> <sliced_total_ms> <slices> <copy_ms> <sliced_longest_cpu_ms> <adopt_ms>
// <eal_mb>" (medians; sliced_longest_cpu_ms is the worker's CPU time in its longest slice, without what the OS took
// from it; eal_mb the DPDK memory it ran with, flow_frames.h TablesEalMb); exit 1 if a copy misses a flow
#include <rte_cycles.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/annotations.h"
#include "flow_frames.h"
#include "core/eal.h"
#include "core/engine.h"
#include "core/state_copy.h"
#include "drivers/dpdk_port.h"
#include "utils/checksum.h"

namespace {

double ms(uint64_t cycles) { return static_cast<double>(cycles) * 1000.0 / static_cast<double>(rte_get_tsc_hz()); }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
size_t entries(const metron::Snapshot& s) {
  size_t n = 0;
  for (const auto& t : s) n += static_cast<size_t>(t.entries_size());
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t flows = argc > 1 ? static_cast<uint32_t>(std::stoul(argv[1])) : (1u << 20);
  const int rounds = argc > 2 ? std::stoi(argv[2]) : 3;
  // Three tables of `flows` at once: the group's, the successor's a copy fills, the adopter's.
  const unsigned pool_mbufs = metron::pool_mbufs_for(2, 1, 1);
  const unsigned eal_mb = metron::bench::TablesEalMb(3, flows, pool_mbufs);
  metron::eal_init(metron::eal_default_args("sslice", "0", eal_mb));
  metron::register_annotations();
  rte_mempool* pool = metron::packed_pktmbuf_pool("sslice_pool", pool_mbufs);
  metron::GroupRuntime::Spec spec;
  spec.pipeline_id = "bench";
  spec.group_id = "g";
  spec.click = "input -> Strip(14) -> MarkIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -, CAPACITY " +
               std::to_string(flows) + ") -> Discard;";
  spec.core = 0;
  metron::GroupRuntime group(spec);
  metron::bench::PushDistinctFlows(group.graph(), pool, flows);
  // The group's core: a worker with nothing else to do (the handoffs are what is measured).
  metron::Engine engine({0}, pool);
  engine.set_idle_sleep_us(20);
  engine.start();
  std::thread worker([&] { engine.run_main_worker(); });

  std::vector<double> whole, longest, longest_cpu, total, slices, takeover, adopt;
  int rc = 0;
  for (int r = 0; r < rounds; ++r) {
    metron::Snapshot snap;
    uint64_t held = 0;
    engine.between_batches(0, [&] {
      const uint64_t t0 = rte_rdtsc();
      snap = metron::snapshot_of(group);
      held = rte_rdtsc() - t0;
    });
    whole.push_back(ms(held));
    if (entries(snap) != flows) rc = 1, std::fprintf(stderr, "state_slice_bench: whole copy has %zu of %u\n", entries(snap), flows);

    metron::SliceStats st;
    const uint64_t t0 = rte_rdtsc();
    snap = metron::sliced_snapshot_of(engine, group, metron::kStateSliceUs, &st);
    total.push_back(ms(rte_rdtsc() - t0));
    longest.push_back(ms(st.longest_cycles));
    longest_cpu.push_back(static_cast<double>(st.longest_cpu_ns) / 1e6);
    slices.push_back(static_cast<double>(st.slices));
    if (entries(snap) != flows) rc = 1, std::fprintf(stderr, "state_slice_bench: sliced copy has %zu of %u\n", entries(snap), flows);

    metron::GroupRuntime::Spec next = spec;
    next.group_id = "g2";
    metron::GroupRuntime successor(next);
    engine.between_batches(0, [&] {
      const uint64_t t1 = rte_rdtsc();
      const metron::Snapshot s = metron::snapshot_of(group);
      (void)metron::copy_state(successor, {&s}, {"g"}, "bench");
      held = rte_rdtsc() - t1;
    });
    takeover.push_back(ms(held));

    metron::GroupRuntime adopter(next);
    bool swapped = false;
    engine.between_batches(0, [&] {
      const uint64_t t1 = rte_rdtsc();
      swapped = metron::swap_state(group, adopter);
      held = rte_rdtsc() - t1;
    });
    adopt.push_back(ms(held));
    if (!swapped || entries(metron::snapshot_of(group)) != 0)  // the source holds the adopter's empty table
      rc = 1, std::fprintf(stderr, "state_slice_bench: the successor did not adopt the table\n");
    metron::swap_state(group, adopter);  // back, for the next round
  }
  engine.stop();
  worker.join();
  std::printf("result %.1f %.3f %.1f %.0f %.1f %.3f %.4f %u\n", median(whole), median(longest), median(total),
              median(slices), median(takeover), median(longest_cpu), median(adopt), eal_mb);
  return rc;
}

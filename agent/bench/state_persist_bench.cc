// Saving and restoring a group's flow state across an agent restart (core/state_store.h), for N flows (default
// 1M) in one SynthRewriter: the table is filled by N new flows, then each round
//   export     the element's table into a StateSnapshot - what the core spends between two batches for a
//              checkpoint, the shutdown save, ExportState and a split's copy
//   save       StateStore::save of that snapshot: serialize, CRC, write, fsync, rename
//   load       StateStore::load: read, check, parse, age the entries
//   import     the loaded snapshot into a fresh graph's table (what DeployPipeline adds before the group runs)
//   copy       baseline: export + import in memory, no disk (what a split/merge copies today)
// usage: state_persist_bench [N] [ROUNDS] [DIR]
// output: "result <export_ms> <save_ms> <load_ms> <import_ms> <copy_ms> <file_mb> <eal_mb>" (medians; eal_mb: the
// DPDK memory it ran with, flow_frames.h TablesEalMb); exit 1 if a round does not get every flow back
#include <rte_cycles.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/annotations.h"
#include "flow_frames.h"
#include "core/eal.h"
#include "core/graph.h"
#include "core/state_store.h"
#include "drivers/dpdk_port.h"
#include "metron/agent/v1/agent.pb.h"
#include "utils/checksum.h"

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t flows = argc > 1 ? static_cast<uint32_t>(std::stoul(argv[1])) : (1u << 20);
  const int rounds = argc > 2 ? std::stoi(argv[2]) : 3;
  const std::string dir = argc > 3 ? argv[3] : "/tmp/metron-state-bench-" + std::to_string(getpid());
  // Three tables of `flows` at once: the filled one, the one restored from disk, the in-memory copy's.
  const unsigned pool_mbufs = metron::pool_mbufs_for(2, 1, 1);
  const unsigned eal_mb = metron::bench::TablesEalMb(3, flows, pool_mbufs);
  metron::eal_init(metron::eal_default_args("spers", "0", eal_mb));
  metron::register_annotations();
  rte_mempool* pool = metron::packed_pktmbuf_pool("spers_pool", pool_mbufs);
  const std::string click = "input -> Strip(14) -> MarkIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -,"
                            " CAPACITY " + std::to_string(flows) + ") -> Discard;";
  metron::GraphEnv env;
  auto graph = metron::Graph::build(click, env);
  metron::bench::PushDistinctFlows(*graph, pool, flows);
  metron::StateStore store(dir);
  std::vector<double> t_export, t_save, t_load, t_import, t_copy;
  uint64_t bytes = 0;
  int rc = 0;
  for (int r = 0; r < rounds; ++r) {
    metron::agent::v1::StateSnapshot snap;
    snap.set_pipeline_id("bench");
    snap.set_group_id("g");
    auto t0 = std::chrono::steady_clock::now();
    metron::agent::v1::StateTable* t = snap.add_tables();
    t->set_element("rw");
    t->set_kind("SynthRewriter");
    graph->find("rw")->export_state(t);
    t_export.push_back(ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    bytes = store.save(snap, click);
    t_save.push_back(ms_since(t0));

    auto fresh = metron::Graph::build(click, env);
    std::string why;
    t0 = std::chrono::steady_clock::now();
    auto loaded = store.load("bench", "g", click, &why);
    t_load.push_back(ms_since(t0));
    if (!loaded) {
      std::fprintf(stderr, "state_persist_bench: %s\n", why.c_str());
      return 1;
    }
    t0 = std::chrono::steady_clock::now();
    const uint64_t n = fresh->find("rw")->import_state(loaded->tables(0), false);
    t_import.push_back(ms_since(t0));
    if (n != flows) rc = 1, std::fprintf(stderr, "state_persist_bench: restored %lu of %u flows\n", n, flows);

    // Baseline: the same table copied in memory, as a split does.
    auto other = metron::Graph::build(click, env);
    t0 = std::chrono::steady_clock::now();
    metron::agent::v1::StateTable copy;
    graph->find("rw")->export_state(&copy);
    other->find("rw")->import_state(copy, false);
    t_copy.push_back(ms_since(t0));
  }
  store.remove("bench", "g");
  rmdir(dir.c_str());
  std::printf("result %.1f %.1f %.1f %.1f %.1f %.1f %u\n", median(t_export), median(t_save), median(t_load),
              median(t_import), median(t_copy), static_cast<double>(bytes) / 1e6, eal_mb);
  return rc;
}

// The DPDK library calls under the FW->NAPT->LB chain, alone: what one core spends per packet in rte_acl and
// rte_hash when nothing else runs, the ceiling the agent's classify and flow-lookup stages are compared with
// (run.sh measures both in the same run).
//   usage: datapath_ceiling_bench RULES PCAP CAPACITY SECONDS
//     RULES: the IPFilter rule file of the benchmark (one rule per line, trailing commas allowed)
//     PCAP: the benchmark's trace (Ethernet + IPv4 + TCP/UDP frames)
//     CAPACITY: the flow table's declared capacity (the hash is sized as FlowTable sizes it: two keys per flow)
//   - acl: the rules compiled by AclClassifier (one rte_acl trie, SSE), rte_acl_classify over the trace's
//     classifier keys 32 at a time, in trace order;
//   - hash: an rte_hash created as FlowTable creates it (16-byte IPv4 keys, CRC, same entries), holding every
//     flow of the trace twice (forward key, and a reply key as a NAPT mapping would add), rte_hash_lookup_bulk_data
//     over the trace's keys 32 at a time, in trace order.
//   output: "result <acl_cycles_per_packet> <hash_cycles_per_packet> <flows>", CPU cycles (the thread's CPU time
//   in TSC cycles: the machine is shared)
#include <rte_cycles.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>

#include <time.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "core/annotations.h"
#include "core/eal.h"
#include "elements/acl_classifier.h"
#include "elements/flow_table.h"
#include "elements/ip_rules.h"
#include "elements/rewriter.h"
#include "pcap_frames.h"

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// CPU cycles per packet of `pass` (n packets) repeated for `seconds` of wall time: the thread's CPU time in TSC
// cycles, so time the shared machine's other work took the CPU is not counted (as the agent's rows do).
template <typename F>
double cycles_per_packet(double seconds, unsigned n, F pass) {
  const uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc();
  const double c0 = thread_cpu_seconds();
  uint64_t packets = 0;
  do {
    pass();
    packets += n;
  } while (rte_rdtsc() - t0 < seconds * hz);
  return (thread_cpu_seconds() - c0) * static_cast<double>(hz) / static_cast<double>(packets);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: datapath_ceiling_bench RULES PCAP CAPACITY SECONDS\n");
    return 2;
  }
  const uint32_t capacity = static_cast<uint32_t>(std::stoul(argv[3]));
  const double seconds = std::stod(argv[4]);
  metron::eal_init(metron::eal_default_args("ceil", "0"));
  metron::register_annotations();
  rte_mempool* pool = metron::packed_pktmbuf_pool("ceil_pool", 1024);

  std::vector<metron::IpRule> rules;
  {
    std::ifstream in(argv[1]);
    for (std::string line; std::getline(in, line);) {
      while (!line.empty() && (line.back() == ',' || line.back() == ' ' || line.back() == '\r')) line.pop_back();
      if (!line.empty()) rules.push_back(metron::parse_ipfilter_rule(line));
    }
  }
  // Classifier keys and flow tuples of every frame, read by the agent's own parsers from a marked mbuf.
  const auto frames = metron::bench::read_pcap(argv[2]);
  std::vector<metron::FlowKey> keys(frames.size());
  std::vector<metron::Key4> tuples(frames.size());
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  for (size_t i = 0; i < frames.size(); ++i) {
    rte_pktmbuf_reset(m);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(frames[i].size())), frames[i].data(), frames[i].size());
    metron::mark_ip(m, rte_pktmbuf_mtod_offset(m, uint8_t*, 14), 4);
    metron::Tuple t;
    uint8_t* l4;
    if (!metron::ipv4_flow_key(m, &keys[i]) || !metron::tuple_of(m, &t, &l4)) {
      std::fprintf(stderr, "frame %zu is not IPv4 TCP/UDP\n", i);
      return 1;
    }
    metron::Key4& k = tuples[i];
    std::memset(&k, 0, sizeof k);
    std::memcpy(k.src, t.src, 4), std::memcpy(k.dst, t.dst, 4);
    k.sport = t.sport, k.dport = t.dport, k.proto = t.proto;
  }
  rte_pktmbuf_free(m);
  const unsigned n = static_cast<unsigned>(frames.size() / metron::kBurst * metron::kBurst);

  metron::AclClassifier acl("ceiling", rules, 0, 4);
  std::vector<const metron::FlowKey*> kp(n);
  for (unsigned i = 0; i < n; ++i) kp[i] = &keys[i];
  volatile int sink = 0;
  const double acl_cyc = cycles_per_packet(seconds, n, [&] {
    int out[metron::kBurst];
    for (unsigned i = 0; i < n; i += metron::kBurst) {
      acl.classify(kp.data() + i, out, metron::kBurst);
      sink = sink + out[0];
    }
  });

  rte_hash_parameters p{};
  p.name = "ceiling_hash";
  p.entries = capacity * 2 + capacity / 16 + 64;  // FlowTable's sizing (flow_table.cc, hash_entries)
  p.key_len = sizeof(metron::Key4);
  p.hash_func = rte_hash_crc;
  p.hash_func_init_val = 0x4d455452;
  p.socket_id = 0;
  rte_hash* h = rte_hash_create(&p);
  if (h == nullptr) {
    std::fprintf(stderr, "rte_hash_create failed\n");
    return 1;
  }
  uint32_t flows = 0;
  for (unsigned i = 0; i < n; ++i) {
    if (rte_hash_lookup(h, &tuples[i]) >= 0) continue;
    metron::Key4 reply = tuples[i];  // what a NAPT mapping's reply key looks like: another address, another port
    std::memcpy(reply.src, "\x05\x05\x05\x05", 4);
    reply.sport = static_cast<uint16_t>(1024 + flows);
    reply.v6 = 2;  // never equal to a forward key
    rte_hash_add_key_data(h, &tuples[i], reinterpret_cast<void*>(uintptr_t{flows} << 1));
    rte_hash_add_key_data(h, &reply, reinterpret_cast<void*>(uintptr_t{flows} << 1 | 1));
    ++flows;
  }
  std::vector<const void*> tp(n);
  for (unsigned i = 0; i < n; ++i) tp[i] = &tuples[i];
  const double hash_cyc = cycles_per_packet(seconds, n, [&] {
    void* data[metron::kBurst];
    for (unsigned i = 0; i < n; i += metron::kBurst) {
      uint64_t hits = 0;
      rte_hash_lookup_bulk_data(h, tp.data() + i, metron::kBurst, &hits, data);
      sink = sink + static_cast<int>(hits);
    }
  });
  rte_hash_free(h);
  std::printf("result %.1f %.1f %u %s\n", acl_cyc, hash_cyc, flows, metron::acl_algorithm_name(acl.algorithm()));
  return 0;
}

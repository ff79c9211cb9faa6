// A hand-written NAT loop, DPDK's l3fwd style, as a DPDK user would write the agent's per-packet work without a
// framework: one function, bursts of 32 from the same memory-fed port the agent's rows read (ReplayPort), the
// header checks and the flow key in one pass, rte_hash_lookup_bulk_data (the library call the ceiling times alone),
// the rewrite with the flow's stored checksum deltas in a second pass, tx. It is the floor the agent's rows are
// compared with besides the library calls alone: what the same work costs with nothing but the work, so a row's
// distance from the library ceiling splits into what the work itself needs and what the agent adds.
//   usage: handwritten_nat_bench PCAP CAPACITY SECONDS napt|deployed|napt-index|deployed-index
//   - napt: what the NAPT row's graph does per packet (Strip(14) -> CheckIPHeader -> SynthRewriter(PATTERN 5.5.5.5
//     1024-65535 - -) -> Unstrip(14)): the checks CheckIPHeader makes (version and header length, lengths, the
//     NIC's checksum verdict), TCP/UDP first fragments keyed, the source address and port rewritten, both
//     checksums updated, the flow's last-seen time and TCP progress (FIN/RST seen) kept for its timeout;
//   - deployed: what the offloaded row's group does per packet besides (the agent side of FW->NAPT->LB, tagged
//     frames): the frame's tag read and checked against the core's group, the class's telemetry (packets, bytes,
//     TCP/UDP frames and the source port's per-bit counts, class_count.h's), the destination rewritten too
//     (NAPT -> LB), the TTL taken down in the same header update (DecIPTTL), the destination MAC set (egress).
//   - napt-index, deployed-index: the same, the flows looked up in the agent's own FlowTable (its index of
//     signatures in front of the rte_hash, the record's key compared, flow_table.h) instead of the rte_hash call:
//     the agent's lookup with nothing around it.
//   Flows are mapped once, before the run (the agent's rows map theirs in a warm-up pass); the
//   first pass of the trace is checked frame by frame against a copy rewritten field by field with its checksums
//   computed whole (rte_ipv4_cksum, rte_ipv4_udptcp_cksum): exit 1 on any difference.
//   output: "result <mpps_cpu> <cycles_per_packet> <packets>", CPU cycles (the thread's CPU time in TSC cycles,
//   as the agent's rows count theirs)
#include <rte_cycles.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/class_count.h"
#include "core/eal.h"
#include "core/packet_batch.h"
#include "drivers/replay_port.h"
#include "elements/flow_table.h"
#include "elements/rewriter.h"
#include "group_bench.h"
#include "pcap_frames.h"
#include "thread_clock.h"
#include "utils/checksum.h"

namespace {

using metron::Key4;
using metron::kBurst;

// One flow's state: the rewrite of its forward packets (target and checksum deltas), its last packet's time and
// its TCP progress. One cache line.
struct alignas(64) Flow {
  Key4 to;
  metron::RewriteDeltas d;  // d.ip: with the TTL's decrement added for the deployed group (it runs DecIPTTL)
  uint64_t last_tsc;
  uint8_t fin_rst;
};

constexpr uint8_t kMac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};  // the egress's next hop

// The per-class telemetry of the deployed group: class_count.h's counters for its one class.
struct Telemetry {
  uint64_t packets = 0, bytes = 0, l4 = 0, ones_lo = 0, ones_hi = 0;
  uint64_t ones[metron::kSportBits] = {};
  // A batch's byte-wide per-bit counts into the totals (a batch has < 256 frames: no byte overflows).
  void flush() {
    for (int k = 0; k < 8; ++k) {
      ones[k] += (ones_lo >> (8 * k)) & 0xff;
      ones[8 + k] += (ones_hi >> (8 * k)) & 0xff;
    }
    ones_lo = ones_hi = 0;
  }
};

// A header checksum delta with the TTL's decrement folded in (RFC 1624: terms add).
inline uint16_t ttl_folded(uint16_t d) {
  const uint32_t s = uint32_t{d} + metron::ipv4_ttl_dec_term();
  return static_cast<uint16_t>((s & 0xffff) + (s >> 16));
}

// kIndex: flows looked up in the agent's own FlowTable (its index in front of the rte_hash, flow_table.h) instead of
// rte_hash_lookup_bulk_data, the records and deltas its own.
template <bool kDeployed, bool kIndex>
struct Loop {
  rte_hash* hash;
  metron::FlowTable* table;
  Flow* flows;
  uint32_t tag;  // the group's tag and class id as the frame's destination MAC bytes 2-5 hold them (loaded)
  Telemetry tel;
  uint64_t dropped = 0;

  // One burst, rewritten in place; the frames kept are compacted to the front. Returns how many.
  unsigned run(rte_mbuf** pkts, unsigned n, uint64_t now) {
    Key4 keys[kBurst];
    const void* kp[kBurst];
    uint32_t sigs[kBurst];
    uint8_t* ips[kBurst];
    rte_mbuf* kept[kBurst];
    unsigned nk = 0;
    for (unsigned i = 0; i < n; ++i) {
      rte_mbuf* m = pkts[i];
      uint8_t* d = rte_pktmbuf_mtod(m, uint8_t*);
      const int len = static_cast<int>(rte_pktmbuf_data_len(m)) - 14;
      uint8_t* ip = d + 14;
      uint8_t* l4;
      // CheckIPHeader's checks of an option-less header, then the key of a TCP/UDP first fragment with its whole
      // transport header (the rewriters' key4_at: the same checks and the same two stores they make).
      bool ok = len >= 20 && metron::as_loaded16(d + 12) == 0x0008 && ip[0] == 0x45 &&
                (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD;
      const int tot = metron::load16(ip + 2);
      ok = ok && tot >= 20 && tot <= len && metron::key4_at(ip, len, &keys[nk], &ip, &l4);
      if constexpr (kDeployed) {
        uint32_t t;
        std::memcpy(&t, d + 2, 4);
        ok = ok && t == tag && ip[8] > 1;
        if (ok) {
          const uint16_t sport = metron::as_loaded16(l4);
          ++tel.packets, tel.bytes += rte_pktmbuf_pkt_len(m), ++tel.l4;
          tel.ones_hi += metron::kSpread.v[sport & 0xff], tel.ones_lo += metron::kSpread.v[sport >> 8];
        }
      }
      if (!ok) {
        ++dropped;
        rte_pktmbuf_free(m);
        continue;
      }
      kp[nk] = &keys[nk];
      if constexpr (kIndex) {
        sigs[nk] = metron::FlowTable::sig4(keys[nk]);
        table->prefetch_sig(sigs[nk]);
      }
      ips[nk] = ip;
      kept[nk++] = m;
    }
    if constexpr (kDeployed) tel.flush();
    void* data[kBurst];
    int32_t found[kBurst];
    uint8_t* recs[kBurst];
    uint64_t hits = 0;
    if constexpr (kIndex) {
      if (nk) table->lookup4(reinterpret_cast<const Key4* const*>(kp), sigs, nk, found, recs);
      for (unsigned i = 0; i < nk; ++i) hits |= uint64_t{found[i] >= 0} << i;
    } else {
      if (nk) rte_hash_lookup_bulk_data(hash, kp, nk, &hits, data);
      // Every hit's flow asked for before the first is touched, so the batch's misses overlap (l3fwd's prefetch of
      // the next frames, for the one line a NAT has per flow; FlowTable::lookup4 asks for its records itself).
      for (unsigned i = 0; i < nk; ++i)
        if ((hits >> i) & 1) rte_prefetch0(&flows[reinterpret_cast<uintptr_t>(data[i])]);
    }
    unsigned out = 0;
    for (unsigned i = 0; i < nk; ++i) {
      if (!((hits >> i) & 1)) {  // every flow is mapped before the run: a miss is a frame of no flow
        ++dropped;
        rte_pktmbuf_free(kept[i]);
        continue;
      }
      Flow local;
      if constexpr (kIndex) {  // the trace's frames are all forward: the record's mapped key and forward deltas
        local.to = metron::FlowTable::mapped4_at(recs[i]);
        local.d = metron::FlowTable::deltas4_at(recs[i], false);
        if constexpr (kDeployed) local.d.ip = ttl_folded(local.d.ip);
      }
      Flow& f = kIndex ? local : flows[reinterpret_cast<uintptr_t>(data[i])];
      uint8_t* ip = ips[i];
      uint8_t* l4 = ip + 20;
      const bool tcp = ip[9] == 6;
      if constexpr (kDeployed) {
        ip[8] = static_cast<uint8_t>(ip[8] - 1);
        std::memcpy(ip + 12, &f.to, 8);
        const uint32_t ports = static_cast<uint32_t>(metron::be16(f.to.sport)) |
                               static_cast<uint32_t>(metron::be16(f.to.dport)) << 16;
        std::memcpy(l4, &ports, 4);
        std::memcpy(rte_pktmbuf_mtod(kept[i], uint8_t*), kMac, 6);
      } else {
        std::memcpy(ip + 12, f.to.src, 4);
        const uint16_t sport = metron::be16(f.to.sport);
        std::memcpy(l4, &sport, 2);
      }
      uint16_t c;
      std::memcpy(&c, ip + 10, 2);
      c = metron::csum_apply16(c, f.d.ip);
      std::memcpy(ip + 10, &c, 2);
      uint8_t* cs = l4 + (tcp ? 16 : 6);
      std::memcpy(&c, cs, 2);
      if (tcp | (c != 0)) {
        c = metron::csum_apply16(c, f.d.l4);
        c = static_cast<uint16_t>(c | (0u - static_cast<unsigned>(!tcp & (c == 0))));  // UDP: 0 is sent as 0xffff
        std::memcpy(cs, &c, 2);
      }
      const uint8_t fin_rst = static_cast<uint8_t>(tcp ? l4[13] & 0x05 : 0);
      if constexpr (kIndex) {
        metron::FlowMeta& meta = metron::FlowTable::meta_at(recs[i]);
        meta.last_tsc = now;
        meta.state = static_cast<uint8_t>(meta.state | fin_rst);
      } else {
        f.last_tsc = now;
        f.fin_rst |= fin_rst;
      }
      kept[out++] = kept[i];
    }
    std::memcpy(pkts, kept, out * sizeof *pkts);
    return out;
  }
};

// frame rewritten field by field to what `f` maps it to, checksums computed whole: what the loop must send.
std::vector<uint8_t> expected(std::vector<uint8_t> frame, const Flow& f, bool deployed) {
  uint8_t* ip = frame.data() + 14;
  uint8_t* l4 = ip + 20;
  std::memcpy(ip + 12, f.to.src, 4);
  metron::store16(l4, f.to.sport);
  if (deployed) {
    std::memcpy(frame.data(), kMac, 6);
    ip[8] = static_cast<uint8_t>(ip[8] - 1);
    std::memcpy(ip + 16, f.to.dst, 4);
    metron::store16(l4 + 2, f.to.dport);
  }
  const bool tcp = ip[9] == 6;
  uint8_t* cs = l4 + (tcp ? 16 : 6);
  const bool had = tcp || metron::load16(cs) != 0;
  auto* h = reinterpret_cast<rte_ipv4_hdr*>(ip);
  h->hdr_checksum = 0;
  h->hdr_checksum = rte_ipv4_cksum(h);
  std::memset(cs, 0, 2);
  if (had) {
    uint16_t c = rte_ipv4_udptcp_cksum(h, l4);
    std::memcpy(cs, &c, 2);
  }
  return frame;
}

template <bool kDeployed, bool kIndex>
int run(const std::string& pcap, uint32_t capacity, double secs) {
  std::vector<std::vector<uint8_t>> frames = metron::bench::read_pcap(pcap);
  // The deployed group's frames carry the switch's tag (group 1, as group_dispatch_bench tags them): a copy of the
  // trace, written next to it under this process's id and removed once loaded.
  std::string file = pcap;
  if (kDeployed) {
    metron::bench::tag_frames(&frames, 1);
    file += ".hand." + std::to_string(getpid()) + ".pcap";
    std::vector<uint32_t> all(frames.size());
    for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    metron::bench::write_pcap(file, frames, all);
  }
  rte_mempool* pool = metron::packed_pktmbuf_pool("hand_pool", 8191);
  auto port = metron::ReplayPort::open("replay0=" + file, 1, pool);
  if (kDeployed) std::remove(file.c_str());

  rte_hash_parameters p{};
  p.name = "hand_hash";
  p.entries = capacity * 2 + capacity / 16 + 64;  // FlowTable's sizing, as datapath_ceiling_bench's
  p.key_len = sizeof(Key4);
  p.hash_func = rte_hash_crc;
  p.hash_func_init_val = 0x4d455452;
  p.socket_id = 0;
  rte_hash* h = rte_hash_create(&p);
  metron::FlowTable table("hand_table", capacity, 0, false);  // kIndex: a declared IPv4 table, as SynthRewriter's
  auto* flows = static_cast<Flow*>(rte_zmalloc("hand_flows", sizeof(Flow) * frames.size(), 64));
  if (h == nullptr || flows == nullptr) return std::fprintf(stderr, "handwritten_nat_bench: no memory\n"), 1;
  // Each flow mapped as SynthRewriter maps it (5.5.5.5, a port from 1024; the deployed group's balancer to
  // 10.0.0.10-13:80), with its reply key beside it as a NAPT mapping adds one. flow_of[i]: frame i's.
  std::vector<uint32_t> flow_of(frames.size());
  uint32_t nflows = 0;
  for (uint32_t i = 0; i < frames.size(); ++i) {
    Key4 k;
    uint8_t *ip, *l4;
    if (!metron::key4_at(frames[i].data() + 14, static_cast<int>(frames[i].size()) - 14, &k, &ip, &l4))
      return std::fprintf(stderr, "handwritten_nat_bench: frame %u is not IPv4 TCP/UDP\n", i), 1;
    void* known;
    if (rte_hash_lookup_data(h, &k, &known) >= 0) {
      flow_of[i] = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(known));
      continue;
    }
    const uint32_t f = flow_of[i] = nflows++;
    Key4 to = k;
    std::memcpy(to.src, "\x05\x05\x05\x05", 4);
    if (kDeployed) {
      const uint8_t dst[4] = {10, 0, 0, static_cast<uint8_t>(10 + f % 4)};
      std::memcpy(to.dst, dst, 4);
      to.dport = 80;
    }
    // A port of its own for every flow: 64,512 ports on 5.5.5.5, then on 5.5.6.5, ... (the 1M-flow row's 16 groups
    // each map onto ports of their own), so no two flows share a reply key.
    to.src[2] = static_cast<uint8_t>(5 + f / 64512);
    to.sport = static_cast<uint16_t>(1024 + f % 64512);
    flows[f].to = to;
    flows[f].d = metron::rewrite_deltas(k, to);
    if (kDeployed) flows[f].d.ip = ttl_folded(flows[f].d.ip);
    const Key4 reply = metron::reversed(to);
    if (rte_hash_add_key_data(h, &k, reinterpret_cast<void*>(uintptr_t{f})) < 0 ||
        rte_hash_add_key_data(h, &reply, reinterpret_cast<void*>(uintptr_t{f})) < 0)
      return std::fprintf(stderr, "handwritten_nat_bench: the table holds no more than %u flows\n", f), 1;
    if (kIndex && table.insert(metron::to_tuple(k), metron::to_tuple(to), 0, 0, 1, rte_rdtsc()) < 0)
      return std::fprintf(stderr, "handwritten_nat_bench: FlowTable holds no more than %u flows\n", f), 1;
  }

  uint32_t tag = 0;
  std::memcpy(&tag, frames[0].data() + 2, 4);
  Loop<kDeployed, kIndex> loop{h, &table, flows, tag, {}, 0};
  rte_mbuf* pkts[kBurst];
  // The first pass, checked frame by frame.
  uint64_t seen = 0;
  while (seen < frames.size()) {
    const unsigned n = port->rx_burst(0, pkts, static_cast<uint16_t>(std::min<uint64_t>(kBurst, frames.size() - seen)));
    const unsigned out = loop.run(pkts, n, rte_rdtsc());
    if (out != n) return std::fprintf(stderr, "handwritten_nat_bench: %u of %u frames dropped\n", n - out, n), 1;
    for (unsigned i = 0; i < n; ++i, ++seen) {
      const std::vector<uint8_t> want = expected(frames[seen], flows[flow_of[seen]], kDeployed);
      if (rte_pktmbuf_data_len(pkts[i]) != want.size() ||
          std::memcmp(rte_pktmbuf_mtod(pkts[i], uint8_t*), want.data(), want.size()) != 0)
        return std::fprintf(stderr, "handwritten_nat_bench: frame %lu rewritten wrong\n", seen), 1;
    }
    port->tx_burst(0, pkts, static_cast<uint16_t>(n));
  }

  const uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc();
  const double c0 = metron::bench::thread_cpu_seconds();
  uint64_t packets = 0;
  do {
    for (int k = 0; k < 64; ++k) {
      const uint64_t now = rte_rdtsc();
      const unsigned n = port->rx_burst(0, pkts, kBurst);
      const unsigned out = loop.run(pkts, n, now);
      port->tx_burst(0, pkts, static_cast<uint16_t>(out));
      packets += n;
    }
  } while (rte_rdtsc() - t0 < secs * static_cast<double>(hz));
  const double cpu = metron::bench::thread_cpu_seconds() - c0;
  if (loop.dropped != 0) return std::fprintf(stderr, "handwritten_nat_bench: %lu frames dropped\n", loop.dropped), 1;
  if (kDeployed && loop.tel.packets != packets + frames.size())
    return std::fprintf(stderr, "handwritten_nat_bench: telemetry counted %lu of %lu\n", loop.tel.packets,
                        packets + frames.size()), 1;
  std::printf("result %.3f %.1f %lu\n", static_cast<double>(packets) / cpu / 1e6,
              cpu * static_cast<double>(hz) / static_cast<double>(packets), packets);
  rte_hash_free(h);
  rte_free(flows);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 5 ? argv[4] : "";
  using Run = int (*)(const std::string&, uint32_t, double);
  const Run fn = mode == "napt"             ? run<false, false>
                 : mode == "deployed"       ? run<true, false>
                 : mode == "napt-index"     ? run<false, true>
                 : mode == "deployed-index" ? run<true, true>
                                            : nullptr;
  if (fn == nullptr) {
    std::fprintf(stderr, "usage: handwritten_nat_bench PCAP CAPACITY SECONDS napt|deployed|napt-index|deployed-index\n");
    return 2;
  }
  metron::eal_init(metron::eal_default_args("hand", "0"));
  return fn(argv[1], static_cast<uint32_t>(std::stoul(argv[2])), std::stod(argv[3]));
}

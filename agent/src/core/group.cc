#include "core/group.h"

#include <rte_cycles.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "core/port.h"
#include "core/tx_buffer.h"
#include "utils/checksum.h"

namespace metron {

GroupRuntime::GroupRuntime(Spec spec) : spec_(std::move(spec)) {
  GraphEnv env;
  env.socket_id = spec_.socket_id;
  env.slot = spec_.slot;
  env.slots = spec_.slots;
  env.port_share = spec_.port_share;
  env.port_shares = spec_.port_shares;
  env.port_share_assigned = spec_.port_share_assigned;
  env.egress = this;
  env.instance = spec_.pipeline_id + "/" + spec_.group_id;
  env.profile = spec_.profile;
  graph_ = Graph::build(spec_.click, env);
  if (StageProfile* p = graph_->profile()) telemetry_slot_ = p->add_slot("telemetry");
  std::vector<uint32_t> idx(spec_.class_ids.size());
  std::iota(idx.begin(), idx.end(), 0u);
  std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return spec_.class_ids[a] < spec_.class_ids[b]; });
  for (uint32_t i : idx) {
    sorted_classes_.push_back(spec_.class_ids[i]);
    sorted_index_.push_back(i);
  }
  classes_.reset(new ClassCounters[std::max<size_t>(1, spec_.class_ids.size())]);
}

namespace {

// kSpread[x]: byte k is bit k of x. Adding kSpread[byte] for every packet counts how many packets had each of the
// byte's 8 bits set, 8 counters in one add (a batch has at most kBurst < 256 packets: no byte overflows).
struct Spread {
  uint64_t v[256];
  constexpr Spread() : v() {
    for (int x = 0; x < 256; ++x)
      for (int k = 0; k < 8; ++k) v[x] |= static_cast<uint64_t>((x >> k) & 1) << (8 * k);
  }
};
constexpr Spread kSpread;
static_assert(kBurst < 256, "per-bit counts are kept in bytes during a batch");
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "header words are tested as little-endian loads");

// A 16-bit header field as it lies in memory (wire order, not swapped): compared and counted as is.
inline uint16_t as_loaded16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// One class's counts over a batch: added to its ClassCounters once per batch, not per packet.
// (No member initializers: a batch zeroes only the tallies it uses, ClassTally{}.)
struct ClassTally {
  uint64_t packets, bytes, l4;
  uint64_t ones_lo, ones_hi;  // per-bit counts of the source port's low and high byte, a byte per bit

  void merge(const ClassTally& o) {
    packets += o.packets, bytes += o.bytes, l4 += o.l4;
    ones_lo += o.ones_lo, ones_hi += o.ones_hi;  // per-bit counts stay < 256: a batch has at most kBurst frames
  }
  void add_to(ClassCounters& c) const {
    c.packets.add(packets);
    c.bytes.add(bytes);
    if (l4 == 0) return;
    c.l4.add(l4);
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      c.sport_ones[k].add((ones_lo >> (8 * k)) & 0xff);
      c.sport_ones[8 + k].add((ones_hi >> (8 * k)) & 0xff);
    }
  }
};

// The source port of a frame whose IPv4 header has options (rare: the batch loop reads the ports of option-less
// headers at a known place), as loaded (wire order), or 0 with *l4 = 0 when it carries none: not IPv4 TCP/UDP, a
// later fragment, or too short for the port.
__attribute__((noinline)) uint16_t sport_past_options(const uint8_t* p, uint32_t len, unsigned* l4) {
  *l4 = 0;
  if (len < 14 + 20 + 2 || load16(p + 12) != 0x0800 || (p[14] >> 4) != 4) return 0;
  const uint32_t ihl = (p[14] & 0x0f) * 4u;
  const uint8_t* ip = p + 14;
  if (ihl < 20 || len < 14 + ihl + 2 || !tcp_or_udp(ip[9]) || (load16(ip + 6) & 0x1fff) != 0) return 0;
  *l4 = 1;
  uint16_t sport_wire;
  std::memcpy(&sport_wire, ip + ihl, 2);
  return sport_wire;
}

}  // namespace

// The group's telemetry (packets, bytes, per class packets, bytes and source-port bits, which the controller's
// load monitor reads to choose how to split a class) is tallied over the batch and added to the shared counters
// once per batch and class: a reader sees whole batches, exactly as many as were counted.
// The frames since the class last changed are counted in scalars (registers: a batch is mostly one class's run):
// the run's packets and bytes from where it began, its TCP/UDP frames and their source-port bits as they come. A
// run goes into its class's tally when the class changes; tallies are kept for up to kTallies classes at once
// (slot = counters' index mod kTallies, flushed when another class takes the slot), so a batch that interleaves a
// few classes still adds once per class.
void GroupRuntime::process(PacketBatch& b, TxBuffer* tx, bool received_now) {
  const uint64_t t0 = rte_rdtsc();
  StageProfile* const profile = graph_->profile();
  if (__builtin_expect(profile != nullptr, 0)) profile->enter(telemetry_slot_, b.n);
  constexpr unsigned kTallies = 8;
  constexpr uint32_t kUnknown = ~0u;
  ClassTally tally[kTallies];
  uint32_t owner[kTallies];
  unsigned used = 0;  // bit s: tally[s] counts for class index owner[s]
  uint64_t bytes = 0, unknown = 0;
  uint32_t last_cls = ~0u, last = kUnknown;  // the run's class id (as loaded) and its counters' index
  unsigned run_from = 0;                     // the run's first frame ...
  uint64_t run_bytes_from = 0;               // ... and `bytes` before it
  uint64_t l4 = 0, ones_lo = 0, ones_hi = 0;  // the run's TCP/UDP frames and their source ports' bits
  // Ends the run before frame i (the batch's end: i = n).
  auto end_run = [&](unsigned i) {
    if (i == run_from) return;
    if (last == kUnknown) {
      unknown += i - run_from;
    } else {
      const ClassTally run{i - run_from, bytes - run_bytes_from, l4, ones_lo, ones_hi};
      const unsigned s = last % kTallies;
      if (!(used >> s & 1u) || owner[s] != last) {
        if (used >> s & 1u) tally[s].add_to(classes_[owner[s]]);
        tally[s] = ClassTally{};
        owner[s] = last;
        used |= 1u << s;
      }
      tally[s].merge(run);
    }
    run_from = i, run_bytes_from = bytes;
    l4 = ones_lo = ones_hi = 0;
  };
  // This loop is the graph's first reader of the batch, whose mbufs and headers were last touched when they were
  // dispatched, up to a hold (Engine::kDefaultHoldFrames) ago, and are out of L1 by now: their lines are asked
  // for ahead (both mbuf lines of every frame at once, the header line a few frames ahead, once its mbuf's first
  // line says where it is) so the misses overlap instead of this loop and each element after it waiting in turn.
  // A batch received just now (or one burst before) skips that (12 instructions per packet for lines in L1).
  constexpr unsigned kAhead = 4;
  const unsigned n = b.n;
  if (!received_now) {
    for (unsigned i = 0; i < n; ++i) {
      rte_prefetch0(b.pkts[i]);
      rte_prefetch0(RTE_PTR_ADD(b.pkts[i], RTE_CACHE_LINE_SIZE));
    }
    for (unsigned i = 0; i < n && i < kAhead; ++i) rte_prefetch0(rte_pktmbuf_mtod(b.pkts[i], const void*));
  }
  // The loop twice, with and without the header prefetch: no test of received_now per packet.
  auto count_batch = [&](auto prefetch) {
    for (unsigned i = 0; i < n; ++i) {
      const rte_mbuf* m = b.pkts[i];
      if constexpr (decltype(prefetch)::value)
        if (i + kAhead < n) rte_prefetch0(rte_pktmbuf_mtod(b.pkts[i + kAhead], const void*));
      const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
      // Class id = dst MAC bytes 4-5 (docs/contracts.md#tags); the dispatcher guaranteed >= 14 bytes. Compared as
      // loaded, swapped only when it changes.
      const uint16_t cls_wire = as_loaded16(p + 4);
      if (__builtin_expect(cls_wire != last_cls, 0)) {
        end_run(i);
        last_cls = cls_wire;
        const uint32_t cls = be16(cls_wire);
        const auto it = std::lower_bound(sorted_classes_.begin(), sorted_classes_.end(), cls);
        last = it != sorted_classes_.end() && *it == cls ? sorted_index_[it - sorted_classes_.begin()] : kUnknown;
      }
      bytes += rte_pktmbuf_pkt_len(m);
      // The source port's bits. The header's words are tested and counted as they lie in memory (wire order,
      // little-endian loads): no byte swap per packet. An IPv4 header without options, nearly every frame, has the
      // ports at a known place: one test, whichever the protocol (tcp_or_udp), and a frame without ports counts
      // port 0, which has no bits (kSpread.v[0] = 0), so no branch on what it carries.
      const uint32_t len = rte_pktmbuf_data_len(m);
      uint32_t type_ver;  // EtherType, version and header length: 08 00 45 for IPv4 without options
      std::memcpy(&type_ver, p + 12, 4);
      uint16_t sport_wire;
      unsigned ports;
      if (__builtin_expect(((type_ver & 0xffffff) == 0x450008) & (len >= 14 + 20 + 2), 1)) {
        // The fragment offset is 0x1fff of the word, 0xff1f as loaded.
        ports = tcp_or_udp(p[14 + 9]) & ((as_loaded16(p + 14 + 6) & 0xff1f) == 0);
        sport_wire = static_cast<uint16_t>(as_loaded16(p + 14 + 20) & (0u - ports));
      } else {
        sport_wire = sport_past_options(p, len, &ports);
      }
      l4 += ports;
      ones_hi += kSpread.v[sport_wire & 0xff];  // the port's high byte first
      ones_lo += kSpread.v[sport_wire >> 8];
    }
  };
  if (received_now) count_batch(std::false_type{});
  else count_batch(std::true_type{});
  end_run(n);
  for (unsigned u = used; u != 0; u &= u - 1) {
    const unsigned s = static_cast<unsigned>(__builtin_ctz(u));
    tally[s].add_to(classes_[owner[s]]);
  }
  if (unknown) unknown_class_.add(unknown);
  packets_.add(b.n);
  bytes_.add(bytes);
  if (__builtin_expect(profile != nullptr, 0)) profile->leave();
  tx_buffer_ = tx;
  graph_->push_input(b);
  tx_buffer_ = nullptr;
  busy_.add(rte_rdtsc() - t0);
}

unsigned GroupRuntime::poll_sources(TxBuffer* tx) {
  const uint64_t t0 = rte_rdtsc();
  tx_buffer_ = tx;
  const unsigned n = graph_->run_sources();
  tx_buffer_ = nullptr;
  if (n) busy_.add(rte_rdtsc() - t0);
  return n;
}

void GroupRuntime::egress(int k, PacketBatch& b) {
  const EgressTarget& e = spec_.egress[k];
  // The target's settings in locals: the frame stores below could alias them, and each would be loaded again.
  const uint16_t vlan = e.vlan;
  const bool set_mac = e.set_dst_mac;
  uint8_t mac[6];
  std::memcpy(mac, e.dst_mac, sizeof mac);
  if (vlan) {
    for (uint16_t i = 0; i < b.n; ++i) {
      rte_mbuf* m = b.pkts[i];
      uint8_t* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, 4));
      if (p != nullptr) {
        std::memmove(p, p + 4, 12);
        store16(p + 12, 0x8100);
        store16(p + 14, vlan);
      }
      if (set_mac) std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), mac, sizeof mac);
    }
  } else if (set_mac) {
    for (uint16_t i = 0; i < b.n; ++i) std::memcpy(rte_pktmbuf_mtod(b.pkts[i], uint8_t*), mac, sizeof mac);
  }
  const uint16_t q = static_cast<uint16_t>(spec_.slot % e.port->tx_queues());
  if (tx_buffer_ != nullptr) {
    tx_buffer_->add(e.port, q, this, b.pkts, b.n);
  } else {
    const uint16_t sent = e.port->tx_burst(q, b.pkts, b.n);
    if (sent < b.n) rte_pktmbuf_free_bulk(b.pkts + sent, b.n - sent);
    count_tx(sent, static_cast<uint16_t>(b.n - sent));
  }
  b.n = 0;
}

uint64_t GroupRuntime::drops() const {
  return __atomic_load_n(&graph_->counters().drops, __ATOMIC_RELAXED) + tx_dropped_.get();
}

}  // namespace metron

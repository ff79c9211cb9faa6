// A group's telemetry (packets, bytes, and per class its packets, bytes and source-port bits, which the
// controller's load monitor reads to choose how to split a class), counted over a batch and added to the shared
// counters once per batch and class: a reader sees whole batches, exactly as many as were counted.
//
// ClassCount is one batch's count. GroupRuntime::process runs it over the batch itself, or, for a batch just
// received, leaves it to the element its `input` feeds when that element takes it (Element::take_group_count: a
// rewriter's first pass over the headers), so the headers are walked once: the same frames, the same counts.
#pragma once

#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "core/packet_batch.h"
#include "utils/checksum.h"

namespace metron {

struct RelaxedCounter {
  std::atomic<uint64_t> v{0};
  // Single writer: a plain add, no locked instruction.
  void add(uint64_t n) { v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  uint64_t get() const { return v.load(std::memory_order_relaxed); }
};

// Bits of the L4 source port counted per class, to choose a bit to split the class by.
constexpr int kSportBits = 16;

struct ClassCounters {
  RelaxedCounter packets;
  RelaxedCounter bytes;
  RelaxedCounter l4;                     // TCP/UDP packets with a source port ...
  RelaxedCounter sport_ones[kSportBits];  // ... and per bit, those with it set
};

// kSpread[x]: byte k is bit k of x. Adding kSpread[byte] for every packet counts how many packets had each of the
// byte's 8 bits set, 8 counters in one add (a batch has at most kBurst < 256 packets: no byte overflows).
struct Spread {
  uint64_t v[256];
  constexpr Spread() : v() {
    for (int x = 0; x < 256; ++x)
      for (int k = 0; k < 8; ++k) v[x] |= static_cast<uint64_t>((x >> k) & 1) << (8 * k);
  }
};
inline constexpr Spread kSpread;
static_assert(kBurst < 256, "per-bit counts are kept in bytes during a batch");
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "header words are tested as little-endian loads");

// A 16-bit header field as it lies in memory (wire order, not swapped): compared and counted as is.
inline uint16_t as_loaded16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// The source port of a frame whose IPv4 header has options (rare: the count reads the ports of option-less
// headers at a known place), as loaded (wire order), or 0 with *l4 = 0 when it carries none: not IPv4 TCP/UDP, a
// later fragment, or too short for the port.
uint16_t sport_past_options(const uint8_t* p, uint32_t len, unsigned* l4);

// Where a group's classes are counted: its class ids sorted, their index in the counters, the counters.
struct ClassTable {
  const uint32_t* sorted = nullptr;
  const uint32_t* index = nullptr;
  uint32_t n = 0;
  ClassCounters* counters = nullptr;
};

// The tallies a count keeps for the classes it has met in a batch (cold: touched when the class changes).
struct ClassTallies {
  struct Tally {
    uint64_t packets, bytes, l4;
    uint64_t ones_lo, ones_hi;  // per-bit counts of the source port's low and high byte, a byte per bit
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
  static constexpr unsigned kSlots = 8;
  unsigned used = 0;  // bit s: tally[s] counts for class index owner[s]
  uint32_t owner[kSlots];
  Tally tally[kSlots];
};

// Small and copied by value: an element counting in its own pass keeps a copy in locals (registers) for the
// batch and stores it back (ClassCount c = *slot; ...; *slot = c), the tallies staying where they are.
class ClassCount {
 public:
  ClassCount(const ClassTable* t, ClassTallies* tallies) : t_(t), tallies_(tallies) {}

  // Frame i of the batch (frames counted in order, from 0), whatever it carries. Class id = dst MAC bytes 4-5
  // (docs/contracts.md#tags; the dispatcher guaranteed >= 14 bytes), compared as loaded, swapped only when it
  // changes. The source port: the header's words tested and counted as they lie in memory (wire order), no byte
  // swap per packet. An IPv4 header without options, nearly every frame, has the ports at a known place: one
  // test, whichever the protocol (tcp_or_udp), and a frame without ports counts port 0, which has no bits
  // (kSpread.v[0] = 0), so no branch on what it carries.
  void frame(unsigned i, const rte_mbuf* m) {
    const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
    run(i, p, m);
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
    port(ports, sport_wire);
  }
  // Frame i at p, which its reader found to be IPv4 TCP or UDP behind an IPv4 EtherType at offset 14, a first
  // fragment holding its ports, the source port loaded (wire order) as sport_wire: what frame() would find.
  void frame_l4(unsigned i, const rte_mbuf* m, const uint8_t* p, uint16_t sport_wire) {
    run(i, p, m);
    port(1, sport_wire);
  }
  // Ends the batch of n frames: every class's tally into its counters. Returns the batch's bytes; *unknown, the
  // frames whose class is not the group's.
  uint64_t end(unsigned n, uint64_t* unknown) {
    end_run(n);
    for (unsigned u = tallies_->used; u != 0; u &= u - 1) {
      const unsigned s = static_cast<unsigned>(__builtin_ctz(u));
      tallies_->tally[s].add_to(t_->counters[tallies_->owner[s]]);
    }
    *unknown = unknown_;
    return bytes_;
  }

 private:
  static constexpr uint32_t kUnknown = ~0u;

  void run(unsigned i, const uint8_t* p, const rte_mbuf* m) {
    const uint16_t cls_wire = as_loaded16(p + 4);
    if (__builtin_expect(cls_wire != last_cls_, 0)) next_class(i, cls_wire);
    bytes_ += rte_pktmbuf_pkt_len(m);
  }
  void port(unsigned ports, uint16_t sport_wire) {
    l4_ += ports;
    ones_hi_ += kSpread.v[sport_wire & 0xff];  // the port's high byte first
    ones_lo_ += kSpread.v[sport_wire >> 8];
  }
  void next_class(unsigned i, uint16_t cls_wire) {
    end_run(i);
    last_cls_ = cls_wire;
    const uint32_t cls = be16(cls_wire);
    const uint32_t* at = std::lower_bound(t_->sorted, t_->sorted + t_->n, cls);
    last_ = at != t_->sorted + t_->n && *at == cls ? t_->index[at - t_->sorted] : kUnknown;
  }
  // Ends the run before frame i (the batch's end: i = n).
  void end_run(unsigned i) {
    if (i == run_from_) return;
    if (last_ == kUnknown) {
      unknown_ += i - run_from_;
    } else {
      ClassTallies& ts = *tallies_;
      const unsigned s = last_ % ClassTallies::kSlots;
      if (!(ts.used >> s & 1u) || ts.owner[s] != last_) {
        if (ts.used >> s & 1u) ts.tally[s].add_to(t_->counters[ts.owner[s]]);
        ts.tally[s] = ClassTallies::Tally{};
        ts.owner[s] = last_;
        ts.used |= 1u << s;
      }
      ClassTallies::Tally& t = ts.tally[s];
      t.packets += i - run_from_, t.bytes += bytes_ - run_bytes_from_, t.l4 += l4_;
      t.ones_lo += ones_lo_, t.ones_hi += ones_hi_;  // per-bit counts stay < 256: a batch has at most kBurst frames
    }
    run_from_ = i, run_bytes_from_ = bytes_;
    l4_ = ones_lo_ = ones_hi_ = 0;
  }

  const ClassTable* t_;
  ClassTallies* tallies_;
  // The frames since the class last changed are counted in scalars (a batch is mostly one class's run): the run's
  // packets and bytes from where it began, its TCP/UDP frames and their source-port bits as they come. A run goes
  // into its class's tally when the class changes; tallies are kept for up to ClassTallies::kSlots classes at
  // once (slot = counters' index mod kSlots, flushed when another class takes the slot), so a batch that
  // interleaves a few classes still adds once per class.
  uint32_t last_cls_ = ~0u, last_ = kUnknown;  // the run's class id (as loaded) and its counters' index
  unsigned run_from_ = 0;                      // the run's first frame ...
  uint64_t run_bytes_from_ = 0;                // ... and bytes_ before it
  uint64_t bytes_ = 0, unknown_ = 0;
  uint64_t l4_ = 0, ones_lo_ = 0, ones_hi_ = 0;  // the run's TCP/UDP frames and their source ports' bits
};

}  // namespace metron

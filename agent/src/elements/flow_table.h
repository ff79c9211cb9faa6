// FlowTable: one core's NAPT/LB mappings. Each flow is one record (metadata, original tuple, mapped tuple)
// indexed twice in an rte_hash (cuckoo, bulk lookup): by its original tuple (forward packets) and by the reverse
// of its mapped tuple (replies). Fixed capacity, reserved when the graph is built; no allocation on the packet
// path. Expiry is incremental: each batch sweeps a few records, so there is never a long stall.
//
// Memory is what bounds a core's flow count, so the layout is compact:
//  - a table whose rewriter can only map IPv4 flows hashes 16-byte keys (rte_hash stores 32 B per key instead of
//    48 B for the 40-byte Tuple) and stores 48-byte records (16 B metadata + two 16-byte keys) instead of 96;
//  - records and hash memory come from DPDK's allocator, which hands out fresh memory without writing it, and
//    records are taken from a high-water mark before the free list, so a table only becomes resident as flows
//    arrive: an idle group with CAPACITY 1M costs next to nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

struct rte_hash;

namespace metron {

// A 5-tuple. IPv4 addresses occupy the first 4 bytes of src/dst (rest zero). Ports in host order. Padding is
// always zero so the struct can be hashed as bytes.
struct Tuple {
  uint8_t src[16];
  uint8_t dst[16];
  uint16_t sport;
  uint16_t dport;
  uint8_t proto;
  uint8_t v6;
  uint8_t pad[2];
};
static_assert(sizeof(Tuple) == 40, "hashed as bytes");

inline Tuple reversed(const Tuple& t) {
  Tuple r = t;
  for (int i = 0; i < 16; ++i) r.src[i] = t.dst[i], r.dst[i] = t.src[i];
  r.sport = t.dport;
  r.dport = t.sport;
  return r;
}

// The hashed form of a tuple in IPv4-only tables. A v6 tuple encoded this way keeps v6 = 1, so it never equals a
// stored key (IPv4-only tables refuse IPv6 inserts) and its lookup simply misses.
struct Key4 {
  uint8_t src[4];
  uint8_t dst[4];
  uint16_t sport;
  uint16_t dport;
  uint8_t proto;
  uint8_t v6;
  uint8_t pad[2];
};
static_assert(sizeof(Key4) == 16, "rte_hash compares 16-byte keys with one vector compare");

// The per-flow state next to the two tuples.
struct FlowMeta {
  uint64_t last_tsc;
  uint32_t backend;  // pattern index chosen for the flow; the next free record while the record is free
  uint8_t fout;
  uint8_t rout;
  uint8_t live;
  uint8_t proto;
};
static_assert(sizeof(FlowMeta) == 16, "record header");

class FlowTable {
 public:
  // ipv6: whether IPv6 flows may be inserted (full-width keys); an IPv4-only table refuses them. Throws
  // std::runtime_error when the memory cannot be had.
  FlowTable(const std::string& name, uint32_t capacity, int socket_id, bool ipv6);
  ~FlowTable();
  FlowTable(const FlowTable&) = delete;
  FlowTable& operator=(const FlowTable&) = delete;

  // For each key: -1 (miss) or record index << 1 | direction (0 forward, 1 reply).
  void lookup(const Tuple* const* keys, unsigned n, int32_t* out) const;
  int32_t lookup_one(const Tuple& key) const;
  // Adds a flow; -1 if the table is full, either key is already present, or the flow is IPv6 in an IPv4 table.
  int32_t insert(const Tuple& orig, const Tuple& mapped, uint32_t backend, uint8_t fout, uint8_t rout, uint64_t now);
  void remove(uint32_t idx);
  void clear();

  FlowMeta& meta(uint32_t idx) { return *reinterpret_cast<FlowMeta*>(record(idx)); }
  const FlowMeta& meta(uint32_t idx) const { return *reinterpret_cast<const FlowMeta*>(record(idx)); }
  Tuple orig(uint32_t idx) const { return decode(record(idx) + sizeof(FlowMeta)); }
  Tuple mapped(uint32_t idx) const { return decode(record(idx) + sizeof(FlowMeta) + key_len_); }
  // What a packet of the flow is rewritten to: the mapped tuple forward, the original one reversed for replies.
  Tuple rewrite_target(uint32_t idx, bool reply) const { return reply ? reversed(orig(idx)) : mapped(idx); }

  // Calls f(idx) for every live record.
  template <typename F>
  void for_each(F f) const {
    for_each_from(0, fresh_, f);
  }
  // Calls f(idx) for the live records among the `count` from index `from` on and returns the index after them.
  // A record keeps its index for its whole life (deletes free it in place, inserts never move one), so a walk in
  // pieces with inserts and deletes in between still visits every record that stays live throughout.
  template <typename F>
  uint32_t for_each_from(uint32_t from, uint32_t count, F f) const {
    const uint32_t end = count < fresh_ - std::min(from, fresh_) ? from + count : fresh_;
    for (uint32_t i = from; i < end; ++i)
      if (meta(i).live) f(i);
    return std::max(end, from);
  }
  // Records [0, records_used()) have held a flow at some point; the rest never did.
  uint32_t records_used() const { return fresh_; }

  bool ipv6() const { return key_len_ == sizeof(Tuple); }
  uint32_t size() const { return size_; }
  uint32_t capacity() const { return capacity_; }
  uint32_t free_slots() const { return capacity_ - size_; }
  // Bytes one flow takes in this table (record plus its two hash keys), for capacity planning and tests.
  size_t bytes_per_flow() const;

  // Removes up to `budget` records, checked round-robin, that have been idle longer than their timeout.
  // timeout_of(meta) returns the idle limit in TSC cycles. Returns how many expired.
  template <typename TimeoutOf>
  unsigned expire(uint64_t now, unsigned budget, TimeoutOf timeout_of) {
    unsigned n = 0;
    for (unsigned i = 0; i < budget && fresh_ > 0; ++i) {
      const uint32_t idx = sweep_ < fresh_ ? sweep_ : 0;
      sweep_ = idx + 1;
      FlowMeta& m = meta(idx);
      if (m.live && now - m.last_tsc > timeout_of(m)) {
        remove(idx);
        ++n;
      }
    }
    return n;
  }

 private:
  static constexpr uint32_t kNoRecord = UINT32_MAX;
  uint8_t* record(uint32_t idx) { return records_ + static_cast<size_t>(idx) * stride_; }
  const uint8_t* record(uint32_t idx) const { return records_ + static_cast<size_t>(idx) * stride_; }
  // The hashed form of a tuple (key_len_ bytes) and back; inline, they run for every packet.
  void encode(const Tuple& t, uint8_t* key) const {
    if (ipv6()) {
      std::memcpy(key, &t, sizeof t);
      return;
    }
    Key4 k{};
    std::memcpy(k.src, t.src, 4);
    std::memcpy(k.dst, t.dst, 4);
    k.sport = t.sport;
    k.dport = t.dport;
    k.proto = t.proto;
    k.v6 = t.v6;
    std::memcpy(key, &k, sizeof k);
  }
  Tuple decode(const uint8_t* key) const {
    Tuple t{};
    if (ipv6()) {
      std::memcpy(&t, key, sizeof t);
      return t;
    }
    Key4 k;
    std::memcpy(&k, key, sizeof k);
    std::memcpy(t.src, k.src, 4);
    std::memcpy(t.dst, k.dst, 4);
    t.sport = k.sport;
    t.dport = k.dport;
    t.proto = k.proto;
    return t;
  }

  rte_hash* hash_ = nullptr;
  uint8_t* records_ = nullptr;
  uint32_t key_len_;
  uint32_t stride_;
  uint32_t capacity_;
  uint32_t size_ = 0;
  uint32_t sweep_ = 0;
  uint32_t fresh_ = 0;                 // records [0, fresh_) have been used at least once
  uint32_t free_head_ = kNoRecord;     // freed records, linked through FlowMeta::backend
};

}  // namespace metron

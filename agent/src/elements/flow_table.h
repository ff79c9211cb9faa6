// FlowTable: one core's NAPT/LB mappings. Each flow is one record (metadata, original tuple, mapped tuple)
// indexed twice in an rte_hash (cuckoo, bulk lookup): by its original tuple (forward packets) and by the reverse
// of its mapped tuple (replies). No allocation on the packet path. Expiry is incremental: each batch sweeps a few
// records, so there is never a long stall.
//
// Memory is what bounds a core's flow count, so the layout is compact:
//  - a table whose rewriter can only map IPv4 flows hashes 16-byte keys (rte_hash stores 32 B per key instead of
//    48 B for the 40-byte Tuple) and stores 48-byte records (16 B metadata + two 16-byte keys) instead of 96;
//  - records and hash memory come from DPDK's allocator, which hands out fresh memory without writing it, and
//    records are taken from a high-water mark before the free list, so a table only becomes resident as flows
//    arrive: an idle group with CAPACITY 1M costs next to nothing.
//
// Capacity (Click's semantics: an IPRewriter holds every flow unless MAPPING_CAPACITY says otherwise):
//  - a *declared* capacity is reserved whole when the graph is built and never changes; a full table sheds by
//    the owner's policy (FlowRewriter: Click's, evict an idle flow past its guarantee, else refuse the new one);
//  - without one the table *grows*: it starts small and doubles whenever it is half to 3/4 full, until DPDK
//    memory runs out (then it sheds like a declared one, and counts the failed growth).
// Growing never stalls the core. Records live in fixed-size chunks that never move, so a record keeps its index
// for its whole life (the sliced walks of core/state_copy.h rely on it) and growing the record space is adding
// chunks. The hash cannot grow in place: a bigger one replaces it by an incremental rehash. The core, between two
// batches, asks for growth (an atomic store); a process-wide grower thread allocates the new chunks and the new
// rte_hash off the packet path and publishes them; the core adopts them at its next batch boundary (O(1): a
// pointer swap), inserts new flows into the new hash from then on and moves the keys of a few old records into
// it at every batch (like the ~500 us slices of a state copy, but a few records per batch: 16 plus two per flow
// the batch created, so the move always finishes before the new table asks to grow again). Until then a lookup
// that misses the new hash looks in the old one. The grower frees the old hash once the core is done with it; a
// large hash lives in a DPDK heap of its own, so freeing it returns its memory to the OS (hash_heap.h).
//
// Per-packet lookups of an IPv4-only table with a declared capacity go through an index of its own in front of the
// rte_hash (FAJITA's and l3fwd's staged lookups): a bucket per cache line of 8 (signature, record) entries, the
// signature being the key's CRC that rte_hash computes too. rte_hash is opaque, so its buckets cannot be asked for
// ahead of its bulk call, and each of its lookups reads two bucket lines and a key line before the record: ~100
// cycles per packet in the offloaded chain against 49 for the same bulk call alone (BENCHMARKS.md). The index is
// hashed once per packet where the key is read, its line asked for then, the record asked for as soon as the
// line names it, and the key compared against the record, which the packet needs anyway: one line besides the
// record. It is a cache, never the truth: an entry names a record whose key is compared, and a key it does not
// name (bucket full, or another key's entry took its place) is looked up in the rte_hash with the same signature
// and put back. Growing tables have none (their index would have to grow with them): rte_hash with the signature.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <rte_byteorder.h>
#include <rte_hash_crc.h>
#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

#include "utils/checksum.h"

struct rte_hash;

namespace metron {
struct OwnHeap;
}

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
static_assert(offsetof(Key4, src) == 0 && offsetof(Key4, dst) == 4, "the addresses are the first 8 bytes, as in IPv4");

inline Key4 to_key4(const Tuple& t) {
  Key4 k{};
  std::memcpy(k.src, t.src, 4);
  std::memcpy(k.dst, t.dst, 4);
  k.sport = t.sport;
  k.dport = t.dport;
  k.proto = t.proto;
  k.v6 = t.v6;
  return k;
}
inline Tuple to_tuple(const Key4& k) {
  Tuple t{};
  std::memcpy(t.src, k.src, 4);
  std::memcpy(t.dst, k.dst, 4);
  t.sport = k.sport;
  t.dport = k.dport;
  t.proto = k.proto;
  return t;
}
inline Key4 reversed(const Key4& k) {
  Key4 r = k;
  std::memcpy(r.src, k.dst, 4);
  std::memcpy(r.dst, k.src, 4);
  r.sport = k.dport;
  r.dport = k.sport;
  return r;
}

// What rewriting one direction of a flow does to the checksums, a constant of the flow: RFC 1624's sum of
// ~m + m' over the words that change (csum_term), folded to 16 bits, for the IPv4 header (the four address words)
// and for TCP/UDP (those and the two ports). Applied with csum_apply16 it gives the same checksum, bit for bit, as
// the terms summed per packet (a fold keeps the sum's value mod 0xffff and whether it is zero). An IPv4-only
// flow table keeps both directions' in each record, so a hit's rewrite adds two stored words instead of summing
// six terms from the packet and the target. Kept in network byte order, as the checksums they are added to: a
// one's-complement sum is the same bytes swapped in either order (RFC 1071), so no swap per packet.
struct RewriteDeltas {
  uint16_t ip;
  uint16_t l4;
};
inline RewriteDeltas rewrite_deltas(const Key4& from, const Key4& to) {
  const auto* fa = reinterpret_cast<const uint8_t*>(&from);  // src, dst
  const auto* ta = reinterpret_cast<const uint8_t*>(&to);
  uint32_t addr = 0;
  for (int w = 0; w < 4; ++w) addr += csum_term(load16(fa + 2 * w), load16(ta + 2 * w));
  const uint32_t l4 = addr + csum_term(from.sport, to.sport) + csum_term(from.dport, to.dport);
  return {be16(__rte_raw_cksum_reduce(addr)), be16(__rte_raw_cksum_reduce(l4))};
}

// The per-flow state next to the two tuples.
struct FlowMeta {
  uint64_t last_tsc;
  uint32_t backend;  // pattern index chosen for the flow; the next free record while the record is free
  uint8_t fout;
  uint8_t rout;
  uint8_t live : 1;   // 1 while the record holds a flow
  uint8_t state : 7;  // owner-defined, zero at insert (IPRewriter: TCP/UDP progress for Click's timeouts)
  uint8_t proto;
};
static_assert(sizeof(FlowMeta) == 16, "record header");
// FlowMeta's live bit and state as the one byte they share, between rout and proto: live in bit 0, the state in
// bits 1-7 (GCC's x86-64 bit-field order; flow_table_test's ProgressByteHoldsLiveAndState checks it). A hit's
// progress update reads and writes it whole (next_progress_byte).
inline uint8_t* progress_byte(FlowMeta& m) { return reinterpret_cast<uint8_t*>(&m) + offsetof(FlowMeta, rout) + 1; }
static_assert(offsetof(FlowMeta, proto) == offsetof(FlowMeta, rout) + 2, "live and state: one byte before proto");

// A counter or level with one writer (the core) read by other threads (stats): plain loads and stores.
template <typename T>
struct Relaxed {
  std::atomic<T> v{0};
  T get() const { return v.load(std::memory_order_relaxed); }
  void set(T x) { v.store(x, std::memory_order_relaxed); }
  void add(T n) { set(get() + n); }
};

class FlowTable {
  struct IndexBucket;  // the index's bucket (below), named here for SigPrefetcher

 public:
  // Results of insert() other than a record index.
  static constexpr int32_t kConflict = -1;  // a key is already present, or an IPv6 flow in an IPv4-only table
  static constexpr int32_t kFull = -2;      // no free record (see room_coming())
  // The largest table: 1024 chunks of 65,536 records.
  static constexpr uint32_t kMaxCapacity = 1u << 26;
  // A growing table's sizes: 7/16 of a power of two, so its two keys per flow fill 7/8 of the rte_hash's bucket
  // entries (which rte_hash rounds up to a power of two; cuckoo inserts start failing past ~90%) and none is
  // wasted: 1M flows fit a 1.8M table whose hash is as big as a declared 1M table's (BENCHMARKS.md).
  static constexpr uint32_t kGrowthStep = 7u << 6;  // 448 flows, then 896, ... 57,344, ... 1,835,008, ...

  // ipv6: whether IPv6 flows may be inserted (full-width keys); an IPv4-only table refuses them.
  // grows: false = `capacity` is declared and final; true = the table starts at the first kGrowthStep doubling
  // that holds `capacity` and doubles as it fills (see the top of this file). Throws std::runtime_error when the
  // memory cannot be had.
  FlowTable(const std::string& name, uint32_t capacity, int socket_id, bool ipv6, bool grows = false);
  ~FlowTable();
  FlowTable(const FlowTable&) = delete;
  FlowTable& operator=(const FlowTable&) = delete;

  // For each key: -1 (miss) or record index << 1 | direction (0 forward, 1 reply). The hits' records are asked
  // for (prefetch()) before these return, so a batch's record misses overlap.
  void lookup(const Tuple* const* keys, unsigned n, int32_t* out) const;
  int32_t lookup_one(const Tuple& key) const;
  // IPv4-only tables (!ipv6()): the same with keys in their hashed form, which rewriters read straight from the
  // headers (no Tuple per packet to build and encode), and the records' keys as stored.
  void lookup4(const Key4* const* keys, unsigned n, int32_t* out) const;
  // The same with each key's signature (sig4()) computed by the caller, once per packet, where it read the key and
  // asked for the key's index line (prefetch_sig()) a stage ahead of this call.
  // recs[i], where out[i] >= 0: that record's address (record_at), computed once for the lookup's prefetch and
  // compare and handed on to the hit's rewrite.
  void lookup4(const Key4* const* keys, const uint32_t* sigs, unsigned n, int32_t* out, uint8_t** recs) const;
  // A key's signature: the CRC rte_hash computes for it (same function, same seed), which also picks its bucket of
  // the index.
  // Two CRC32-C steps over the key's two 8-byte words, as rte_hash_crc runs them for 16 bytes (its loop, its
  // tail tests and its per-step check of the CPU's CRC support cost 17 instructions per packet).
  static uint32_t sig4(const Key4& k) {
    static_assert(sizeof(Key4) == 16, "two 8-byte CRC steps");
    uint64_t w[2];
    std::memcpy(w, &k, sizeof w);
#if defined(__SSE4_2__)
    return static_cast<uint32_t>(_mm_crc32_u64(_mm_crc32_u64(kHashSeed, w[0]), w[1]));
#else
    return rte_hash_crc_8byte(w[1], rte_hash_crc_8byte(w[0], kHashSeed));
#endif
  }
  // Asks for the index line of a key's signature (nothing for tables without an index).
  void prefetch_sig(uint32_t sig) const { sig_prefetcher()(sig); }
  // prefetch_sig's index in a value a batch loop keeps in registers: its key stores could alias the table's
  // members, which each packet would load again.
  struct SigPrefetcher {
    const IndexBucket* index;  // index_
    uint32_t mask;             // index_mask_
    void operator()(uint32_t sig) const {
      if (index != nullptr) __builtin_prefetch(&index[sig & mask]);
    }
  };
  SigPrefetcher sig_prefetcher() const { return {index_, index_mask_}; }
  bool indexed() const { return index_ != nullptr; }
  // Lookups the index answered, and those that went to the rte_hash (a miss, or a key the index did not name).
  uint64_t index_hits() const { return index_hits_.get(); }
  uint64_t index_fallbacks() const { return index_fallbacks_.get(); }
  int32_t lookup_one4(const Key4& key) const { return find(reinterpret_cast<const uint8_t*>(&key)); }
  // Record idx's address, and an IPv4-only table's record parts read from it: a hit reads its metadata, target and
  // deltas from one address computation (each record(idx) is a chunk load and a multiply).
  uint8_t* record_at(uint32_t idx) const { return const_cast<uint8_t*>(record(idx)); }
  static FlowMeta& meta_at(uint8_t* r) { return *reinterpret_cast<FlowMeta*>(r); }
  static const Key4& orig4_at(const uint8_t* r) { return *reinterpret_cast<const Key4*>(r + sizeof(FlowMeta)); }
  static const Key4& mapped4_at(const uint8_t* r) {
    return *reinterpret_cast<const Key4*>(r + sizeof(FlowMeta) + sizeof(Key4));
  }
  // The checksum deltas of rewriting the record's forward packets (orig -> mapped) or its replies
  // (reversed(mapped) -> reversed(orig)), computed when it was inserted.
  static RewriteDeltas deltas4_at(const uint8_t* r, bool reply) {
    RewriteDeltas d;
    std::memcpy(&d, r + sizeof(FlowMeta) + 2 * sizeof(Key4) + (reply ? sizeof d : 0), sizeof d);
    return d;
  }
  const Key4& orig4(uint32_t idx) const { return orig4_at(record(idx)); }
  const Key4& mapped4(uint32_t idx) const { return mapped4_at(record(idx)); }
  RewriteDeltas deltas4(uint32_t idx, bool reply) const { return deltas4_at(record(idx), reply); }
  // Asks for record idx's cache lines (for writing: a hit's metadata is updated) ahead of their use: a rewriter
  // asks for every hit of a batch right after its bulk lookup, so the batch's record misses overlap.
  void prefetch(uint32_t idx) const { prefetch_at(record(idx)); }
  void prefetch_at(const uint8_t* r) const {
    __builtin_prefetch(r, 1);
    __builtin_prefetch(r + stride_ - 1, 1);
  }
  // Adds a flow: its record index, kFull or kConflict.
  int32_t insert(const Tuple& orig, const Tuple& mapped, uint32_t backend, uint8_t fout, uint8_t rout, uint64_t now);
  void remove(uint32_t idx);
  // Control path (the core held or not running): empties the table; a grown table keeps its size.
  void clear();

  // Between two batches, on the core: adopts a growth the grower prepared, moves some keys of an ongoing rehash,
  // asks for growth when 3/4 full. Constant work (a few records).
  void maintain(uint64_t now);
  // Control path: makes room for `n` more flows now (import of a snapshot), finishing a rehash and growing here
  // if need be. False if a declared capacity or the memory cannot hold them.
  bool reserve(uint32_t n);
  // Whether lookups still consult the previous hash (a growth's rehash is under way).
  bool rehashing() const { return old_hash_ != nullptr; }
  // Whether a full growing table is waiting for room the grower is preparing (a shed would be premature).
  bool room_coming() const {
    const uint8_t s = grow_state_.load(std::memory_order_relaxed);
    return s == kWanted || s == kReady;
  }

  FlowMeta& meta(uint32_t idx) { return meta_at(record(idx)); }
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
  // A record keeps its index for its whole life (deletes free it in place, inserts never move one, growth adds
  // chunks), so a walk in pieces with inserts and deletes in between still visits every record that stays live
  // throughout.
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
  bool grows() const { return grows_; }
  // Any thread (stats): flows held, flows held before the next growth or shed, DPDK memory reserved.
  uint32_t size() const { return size_.get(); }
  uint32_t capacity() const { return capacity_.get(); }
  uint32_t free_slots() const { return capacity() - size(); }
  size_t memory_bytes() const { return memory_.get(); }
  uint64_t growths() const { return growths_.get(); }
  uint64_t growth_failures() const { return growth_failures_.get(); }
  // Hashes of this growing table that got no heap of their own (hash_heap.h: none left, or none made ahead in time
  // for a growth) and went to the EAL heap, where their memory stays resident after the table outgrows them.
  uint64_t shared_heap_hashes() const { return shared_heap_hashes_.get(); }
  // Bytes one flow takes in this table (record plus its two hash keys), for capacity planning and tests.
  size_t bytes_per_flow() const;
  // DPDK memory a table of `capacity` flows reserves (records, hash buckets, keys, free-slot ring).
  static size_t reserve_bytes(uint64_t capacity, bool ipv6);
  // An upper bound of reserve_bytes(c, ipv6) / c over capacities of 1,000 flows and more (the hash rounds to
  // powers of two).
  static size_t max_bytes_per_flow(bool ipv6);
  // DPDK memory new tables on NUMA node `socket` can take now: the heap's free bytes, plus, when the EAL uses
  // hugepages (and so grows its heap on demand), the node's free hugepages.
  static size_t memory_available(int socket);

  // Removes up to `budget` records, checked round-robin, that have been idle longer than their timeout.
  // timeout_of(meta) returns the idle limit in TSC cycles. Returns how many expired. A pass over every record
  // begins at most once per `period` TSC cycles (sweep_period()): once a pass is over, the sweep waits out the
  // rest of the period, so a table swept faster than its flows can expire (a fast core checks its table's every
  // record many times a second at a few records per batch) spends nothing on it meanwhile, and an idle flow is
  // gone at most a period plus a pass after its timeout (Click's IPRewriterBase reaps on its GC timer likewise,
  // every REAP_INTERVAL: 15 minutes by default).
  template <typename TimeoutOf>
  unsigned expire(uint64_t now, unsigned budget, uint64_t period, TimeoutOf timeout_of) {
    return expire(now, budget, period, timeout_of, [](uint32_t) {});
  }
  // The same, calling before_remove(idx) for each record just before it goes (owners with per-record state of
  // their own beside the table: HyperscanDPI's streams and held segments).
  template <typename TimeoutOf, typename BeforeRemove>
  unsigned expire(uint64_t now, unsigned budget, uint64_t period, TimeoutOf timeout_of, BeforeRemove before_remove) {
    unsigned n = 0;
    for (unsigned i = 0; i < budget && fresh_ > 0; ++i) {
      if (sweep_ >= fresh_) {  // the last pass is over: the next one begins a period after it did
        if (now - pass_began_ < period) return n;
        sweep_ = 0;
      }
      if (sweep_ == 0) pass_began_ = now;
      const uint32_t idx = next_swept();
      FlowMeta& m = meta(idx);
      if (m.live && now - m.last_tsc > timeout_of(m)) {
        before_remove(idx);
        remove(idx);
        ++n;
      }
    }
    // The records the next sweep checks are asked for now: a sweep reads a few records per batch, too slowly for
    // the hardware prefetcher to follow, and by its next batch (other groups' batches run in between) the
    // records would be cold: their metadata loads were ~5% of the offloaded chain's cycles at 16 groups.
    for (uint32_t i = 0, idx = sweep_; i < budget && fresh_ > 0; ++i, ++idx) {
      if (idx >= fresh_) idx = 0;
      __builtin_prefetch(record(idx));
    }
    return n;
  }
  // expire()'s period for flows whose shortest timeout is `shortest` TSC cycles: a quarter of it, at most a
  // second, so an idle flow outlives its timeout by at most a quarter of it (plus a pass) and by a second at most.
  static uint64_t sweep_period(uint64_t shortest, uint64_t tsc_hz) { return std::min(shortest / 4, tsc_hz); }
  // Shedding a full table: checks records round-robin from the expiry sweep's position, at most `scan` of them
  // (and each once), until `candidates` live ones idle longer than guarantee_of(meta) TSC cycles are found, and
  // removes the longest idle of those. False if there was none.
  template <typename GuaranteeOf>
  bool evict_one(uint64_t now, unsigned candidates, unsigned scan, GuaranteeOf guarantee_of) {
    uint32_t victim = kNoRecord;
    uint64_t idlest = 0;
    unsigned found = 0;
    for (uint32_t i = 0, n = std::min<uint32_t>(scan, fresh_); i < n && found < candidates; ++i) {
      const uint32_t idx = next_swept();
      const FlowMeta& m = meta(idx);
      const uint64_t idle = now - m.last_tsc;
      if (!m.live || idle <= guarantee_of(m)) continue;
      ++found;
      if (victim == kNoRecord || idle > idlest) victim = idx, idlest = idle;
    }
    if (victim == kNoRecord) return false;
    remove(victim);
    return true;
  }

 private:
  friend class FlowTableGrower;
  static constexpr uint32_t kNoRecord = UINT32_MAX;
  static constexpr uint32_t kHashSeed = 0x4d455452;
  // The index: buckets of kIndexWays entries, one cache line each; ref = (record index << 1 | direction) + 1, 0 free.
  // The signatures and refs are apart (not one {sig, ref} pair per way) so that a probe compares all eight
  // signatures in two vector compares, without a branch per way (index_probe()). A way holds its signature with
  // bit 0 set (index_sig), a free way 0 in both: a probe's compare of the signatures alone finds only ways in use.
  static constexpr unsigned kIndexWays = 8;
  struct alignas(64) IndexBucket {
    uint32_t sig[kIndexWays];
    uint32_t ref[kIndexWays];
  };
  static_assert(sizeof(IndexBucket) == 64, "a bucket is one cache line");
  IndexBucket* bucket_of(uint32_t sig) const { return &index_[sig & index_mask_]; }
  static uint32_t index_sig(uint32_t sig) { return sig | 1; }
  // Buckets of a table of `capacity` flows: two keys per flow, at most four keys per bucket on average when full.
  static uint32_t index_buckets(uint64_t capacity);
  // Names record ref - 1 for signature sig in its bucket: the entry with the same ref, else a free one, else the
  // one the signature's high bits pick (the key it named falls back to the rte_hash until it is put back).
  void index_put(uint32_t sig, uint32_t ref) const;
  void index_drop(uint32_t sig, uint32_t ref) const;
  // The record (ref - 1) that the first way of sig's bucket with this signature and a record names, or -1.
  int32_t index_probe(uint32_t sig) const;
  // Whether record idx, at address r, is live and holds `key` in direction dir.
  bool holds(uint32_t idx, const uint8_t* r, unsigned dir, const Key4& key) const;
  static constexpr unsigned kMaxChunks = 1024;
  static constexpr unsigned kChunkBitsMax = 16;
  // Growth handshake between the core and the grower thread (grow_state_).
  enum : uint8_t { kIdle, kWanted, kReady, kFailed };

  uint8_t* record(uint32_t idx) { return chunks_[idx >> chunk_bits_] + static_cast<size_t>(idx & chunk_mask_) * stride_; }
  const uint8_t* record(uint32_t idx) const {
    return chunks_[idx >> chunk_bits_] + static_cast<size_t>(idx & chunk_mask_) * stride_;
  }
  bool can_grow() const { return uint64_t{capacity_plain_} * 2 <= kMaxCapacity; }
  uint32_t next_swept() {
    const uint32_t idx = sweep_ < fresh_ ? sweep_ : 0;
    sweep_ = idx + 1;
    return idx;
  }
  // The hashed form of a tuple (key_len_ bytes) and back; inline, they run for every packet.
  void encode(const Tuple& t, uint8_t* key) const {
    if (ipv6()) {
      std::memcpy(key, &t, sizeof t);
      return;
    }
    const Key4 k = to_key4(t);
    std::memcpy(key, &k, sizeof k);
  }
  Tuple decode(const uint8_t* key) const {
    if (ipv6()) {
      Tuple t;
      std::memcpy(&t, key, sizeof t);
      return t;
    }
    Key4 k;
    std::memcpy(&k, key, sizeof k);
    return to_tuple(k);
  }
  int32_t find(const uint8_t* key) const;
  // One bulk lookup of at most RTE_HASH_LOOKUP_BULK_MAX keys in hashed form (and in the old hash while rehashing).
  // sigs: the keys' signatures (sig4()), or nullptr to have rte_hash compute them.
  void lookup_hashed(const void** keys, uint32_t* sigs, unsigned n, int32_t* out) const;
  // Allocates the records [from, to) and a hash for `to` flows into next_hash_ / chunks_ (grower thread, or the
  // control path for reserve()); false, nothing kept, if the memory cannot be had. may_wait: a heap of its own may
  // be made now (control path) rather than only taken ready (hash_heap.h).
  bool prepare_growth(uint32_t from, uint32_t to, bool may_wait);
  void adopt_growth();
  // Moves the keys of up to `n` records not yet rehashed into the new hash; frees nothing.
  void rehash_some(uint32_t n);
  void drop_hash(rte_hash*& h);  // frees it (hash_heap.h), leaves nullptr

  std::string name_;
  int socket_id_;
  uint32_t key_len_;
  uint32_t stride_;
  bool grows_;
  unsigned chunk_bits_;
  uint32_t chunk_mask_;
  uint8_t* chunks_[kMaxChunks] = {};  // [0, capacity >> chunk_bits_) in use; the grower fills the next ones
  rte_hash* hash_ = nullptr;
  IndexBucket* index_ = nullptr;  // declared IPv4-only tables (see the top of this file)
  uint32_t index_mask_ = 0;      // buckets - 1
  uint32_t size_plain_ = 0;            // the core's copy of size_
  uint32_t capacity_plain_;            // the core's copy of capacity_
  uint32_t sweep_ = 0;
  uint64_t pass_began_ = 0;  // TSC when the expiry sweep's current (or last) pass over the records began
  uint32_t fresh_ = 0;                 // records [0, fresh_) have been used at least once
  uint32_t free_head_ = kNoRecord;     // freed records, linked through FlowMeta::backend
  // Growth (grows_ only).
  uint32_t grow_at_ = UINT32_MAX;      // size at which to ask for more room (3/4 of the capacity)
  rte_hash* old_hash_ = nullptr;       // being rehashed into hash_: keys of records [rehash_at_, rehash_end_)
  uint32_t rehash_at_ = 0, rehash_end_ = 0;
  uint32_t inserts_ = 0;               // flows created since the last maintain()
  uint64_t retry_tsc_ = 0;             // after a failed growth, when to ask again
  std::atomic<uint8_t> grow_state_{kIdle};
  rte_hash* next_hash_ = nullptr;      // kReady: the grower's hash for the next capacity
  uint32_t next_capacity_ = 0;
  std::atomic<rte_hash*> retired_{nullptr};  // a rehashed-from hash for the grower to free
  std::atomic<uint32_t> standby_at_{UINT32_MAX};  // size from which the grower makes the next hash's own heap
  OwnHeap* standby_ = nullptr;                     // that heap (hash_heap.h); grower or control path, mu_ held
  uint32_t standby_tried_ = 0;                     // capacity for which the grower last made one (grower only)
  Relaxed<uint32_t> size_, capacity_;
  Relaxed<uint64_t> memory_, growths_, growth_failures_, shared_heap_hashes_;
  mutable Relaxed<uint64_t> index_hits_, index_fallbacks_;
};

}  // namespace metron

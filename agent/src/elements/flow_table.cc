#include "elements/flow_table.h"

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <dirent.h>
#include <rte_eal.h>
#include <rte_lcore.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "elements/hash_heap.h"

namespace metron {

namespace {

std::atomic<unsigned> g_seq{0};

// Two keys per flow; cuckoo hashing fills ~90%, keep headroom so inserts do not fail before the capacity.
uint32_t hash_entries(uint64_t capacity) { return static_cast<uint32_t>(capacity * 2 + capacity / 16 + 64); }

size_t key_len_of(bool ipv6) { return ipv6 ? sizeof(Tuple) : sizeof(Key4); }
// A record: its FlowMeta, the two keys and, IPv4-only, both directions' RewriteDeltas (8 bytes: the records stay
// 8-byte aligned for FlowMeta's timestamp).
size_t record_bytes(bool ipv6) {
  return sizeof(FlowMeta) + 2 * key_len_of(ipv6) + (ipv6 ? 0 : 2 * sizeof(RewriteDeltas));
}

// The signature of a key in an IPv4-only table's hashed form, wherever it is stored.
uint32_t sig_at(const uint8_t* key) {
  Key4 k;
  std::memcpy(&k, key, sizeof k);
  return FlowTable::sig4(k);
}

// What rte_hash_create allocates for a table of `capacity` flows: buckets of 8 entries (64 B) for the entries
// rounded up to a power of two, a key store of entries + 1 slots, a ring of free slot ids (4 B each) rounded up to a
// power of two.
size_t hash_bytes(uint64_t capacity, bool ipv6) {
  const uint64_t entries = hash_entries(capacity), slots = entries + 1;
  const size_t key_entry = (8 + key_len_of(ipv6) + 15) / 16 * 16;
  return rte_align64pow2(entries) / 8 * 64 + rte_align64pow2(slots) * 4 + slots * key_entry;
}

}  // namespace

// Prepares growth for the tables that ask (FlowTable::maintain) and frees the hashes they retire, off the packet
// path. One thread for the process, started with the first growing table; it sleeps until woken (or 20 ms). A
// DPDK control thread, so it runs on the CPUs the EAL leaves to control threads, not on a worker's.
class FlowTableGrower {
 public:
  static FlowTableGrower& instance() {
    static FlowTableGrower* g = new FlowTableGrower();  // never destroyed: its thread may outlive static teardown
    return *g;
  }
  void add(FlowTable* t) {
    std::lock_guard<std::mutex> lock(mu_);
    tables_.push_back(t);
    if (!started_) {
      pthread_t th;
      if (rte_ctrl_thread_create(&th, "metron-grow", nullptr, &FlowTableGrower::start, this) != 0)
        throw std::runtime_error("cannot start the flow-table grower thread");
      pthread_detach(th);
      started_ = true;
    }
  }
  // Once this returns the grower never touches `t` again (it holds mu_ while it works on a table).
  void remove(FlowTable* t) {
    std::lock_guard<std::mutex> lock(mu_);
    tables_.erase(std::remove(tables_.begin(), tables_.end(), t), tables_.end());
  }
  // Any thread, the cores included: no lock taken.
  void wake() {
    pending_.store(true, std::memory_order_release);
    cv_.notify_one();
  }
  std::mutex& mutex() { return mu_; }

 private:
  static void* start(void* self) {
    static_cast<FlowTableGrower*>(self)->run();
    return nullptr;
  }
  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait_for(lock, std::chrono::milliseconds(20), [this] { return pending_.exchange(false); });
      unsigned standbys = 0;
      for (FlowTable* t : tables_) standbys += t->standby_ != nullptr;
      for (FlowTable* t : tables_) serve(*t, &standbys);
    }
  }
  static void serve(FlowTable& t, unsigned* standbys) {
    switch (t.grow_state_.load(std::memory_order_acquire)) {
      case FlowTable::kWanted: {
        const uint32_t cap = t.capacity_plain_;
        if (t.prepare_growth(cap, cap * 2, /*may_wait=*/false)) {
          t.grow_state_.store(FlowTable::kReady, std::memory_order_release);
        } else {
          t.growth_failures_.add(1);
          t.grow_state_.store(FlowTable::kFailed, std::memory_order_release);
        }
        break;
      }
      default:
        break;
    }
    free_hash(t.retired_.exchange(nullptr, std::memory_order_acquire));
    // The next growth's heap, made while the table still has room: DPDK zeroes all of it when it takes it, which
    // for the larger tables takes longer than the table's last quarter lasts at full speed (BENCHMARKS.md).
    // Heaps are few: standby ones take at most half of them, so that hashes in use do not go without.
    const uint32_t cap = t.capacity();
    if (t.standby_ == nullptr && t.standby_tried_ != cap && *standbys < RTE_MAX_HEAPS / 2 &&
        t.grow_state_.load(std::memory_order_acquire) == FlowTable::kIdle &&
        t.size() >= t.standby_at_.load(std::memory_order_acquire)) {
      std::string why;
      t.standby_ = make_own_heap(hash_bytes(uint64_t{cap} * 2, t.ipv6()), &why);  // none: the growth makes one
      t.standby_tried_ = cap;
      *standbys += t.standby_ != nullptr;
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> pending_{false};
  std::vector<FlowTable*> tables_;
  bool started_ = false;
};

FlowTable::FlowTable(const std::string& name, uint32_t capacity, int socket_id, bool ipv6, bool grows)
    : name_(name),
      socket_id_(socket_id),
      key_len_(static_cast<uint32_t>(key_len_of(ipv6))),
      stride_(static_cast<uint32_t>(record_bytes(ipv6))),
      grows_(grows) {
  if (capacity == 0) throw std::runtime_error(name + ": flow table capacity must be positive");
  if (capacity > kMaxCapacity)
    throw std::runtime_error(name + ": flow table capacity " + std::to_string(capacity) + " above the maximum " +
                             std::to_string(kMaxCapacity));
  uint32_t cap = capacity;
  if (grows) {
    cap = kGrowthStep;
    while (cap < capacity) cap *= 2;
    chunk_bits_ = kChunkBitsMax;
  } else {
    chunk_bits_ = 31;  // one chunk holds the whole declared capacity
  }
  chunk_mask_ = (1u << chunk_bits_) - 1;
  if (grows_) FlowTableGrower::instance().add(this);  // first: it may throw, and nothing is allocated yet
  if (!prepare_growth(0, cap, /*may_wait=*/true)) {
    const std::string why = rte_strerror(rte_errno);
    if (grows_) FlowTableGrower::instance().remove(this);
    throw std::runtime_error(name + ": cannot allocate a flow table for " + std::to_string(cap) + " flows: " + why);
  }
  adopt_growth();
  if (!grows_ && !this->ipv6()) {
    index_mask_ = index_buckets(cap) - 1;
    index_ = static_cast<IndexBucket*>(rte_zmalloc_socket("flow_index", size_t{index_mask_ + 1} * sizeof(IndexBucket),
                                                          RTE_CACHE_LINE_SIZE, socket_id_));
    if (index_ == nullptr) {
      drop_hash(hash_);
      for (uint8_t*& c : chunks_) rte_free(c), c = nullptr;
      throw std::runtime_error(name + ": cannot allocate the flow index for " + std::to_string(cap) + " flows");
    }
  }
}

FlowTable::~FlowTable() {
  rte_free(index_);
  if (grows_) FlowTableGrower::instance().remove(this);
  drop_hash(hash_);
  drop_hash(old_hash_);
  drop_hash(next_hash_);
  free_hash(retired_.exchange(nullptr));
  drop_own_heap(standby_);
  for (uint8_t*& c : chunks_) rte_free(c), c = nullptr;
}

void FlowTable::drop_hash(rte_hash*& h) {
  free_hash(h);
  h = nullptr;
}

size_t FlowTable::bytes_per_flow() const {
  // rte_hash keeps each key with an 8-byte data pointer, 16-byte aligned.
  const size_t entry = (8 + key_len_ + 15) / 16 * 16;
  return stride_ + 2 * entry;
}

uint32_t FlowTable::index_buckets(uint64_t capacity) {
  return static_cast<uint32_t>(rte_align64pow2(std::max<uint64_t>(capacity / 2, 1)));
}

size_t FlowTable::reserve_bytes(uint64_t capacity, bool ipv6) {
  // A declared IPv4-only table's index: at most 64 bytes per flow (a line per two flows, rounded up).
  const size_t index = ipv6 ? 0 : size_t{index_buckets(capacity)} * 64;
  return capacity * record_bytes(ipv6) + hash_bytes(capacity, ipv6) + index;
}

size_t FlowTable::max_bytes_per_flow(bool ipv6) {
  // Powers of two at most double the buckets and the ring: per flow at most 2 x 2.0625 entries of each, plus the
  // record and 2.0625 key slots (the constant 64 entries are negligible for the capacities that matter).
  const size_t key_len = key_len_of(ipv6);
  const size_t key_entry = (8 + key_len + 15) / 16 * 16;
  const double per = static_cast<double>(record_bytes(ipv6)) + 2.0625 * (2 * 8 + 2 * 4 + key_entry);
  // ... and the 65 constant entries spread over at least 1,000 flows.
  // ... and the 65 constant entries spread over at least 1,000 flows, and an IPv4 table's index.
  return static_cast<size_t>(per + 65.0 * (2 * 8 + 2 * 4 + key_entry) / 1000) + 1 + (ipv6 ? 0 : 64);
}

size_t FlowTable::memory_available(int socket) {
  rte_malloc_socket_stats st{};
  size_t bytes = rte_malloc_get_socket_stats(socket, &st) == 0 ? st.heap_freesz_bytes : 0;
  if (!rte_eal_has_hugepages()) return bytes;
  const std::string dir = "/sys/devices/system/node/node" + std::to_string(socket) + "/hugepages";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      size_t kb = 0;
      if (std::sscanf(e->d_name, "hugepages-%zukB", &kb) != 1) continue;
      std::ifstream in(dir + "/" + e->d_name + "/free_hugepages");
      size_t pages = 0;
      if (in >> pages) bytes += pages * kb * 1024;
    }
    closedir(d);
  }
  return bytes;
}

bool FlowTable::prepare_growth(uint32_t from, uint32_t to, bool may_wait) {
  // A declared table is one chunk of its capacity; a growing one has whole chunks of 2^16 records (the first
  // holds every size up to 57,344), allocated when the capacity first reaches into them.
  const unsigned first = from >> chunk_bits_, last = (to - 1) >> chunk_bits_;
  const uint64_t per_chunk = grows_ ? uint64_t{1} << chunk_bits_ : to;
  unsigned added[kMaxChunks], nadded = 0;
  auto undo = [&] {
    for (unsigned k = 0; k < nadded; ++k) rte_free(chunks_[added[k]]), chunks_[added[k]] = nullptr;
  };
  // rte_zmalloc does not write memory the heap has never handed out, so untouched records stay non-resident.
  for (unsigned c = first; c <= last; ++c) {
    if (chunks_[c] != nullptr) continue;
    chunks_[c] = static_cast<uint8_t*>(
        rte_zmalloc_socket("flow_records", per_chunk * stride_, RTE_CACHE_LINE_SIZE, socket_id_));
    if (chunks_[c] == nullptr) return undo(), false;
    added[nadded++] = c;
  }
  const std::string hname = "ft" + std::to_string(g_seq++);
  rte_hash_parameters p{};
  p.name = hname.c_str();
  p.entries = hash_entries(to);
  p.key_len = key_len_;
  p.hash_func = rte_hash_crc;
  p.hash_func_init_val = kHashSeed;  // sig4() computes the same signatures
  p.socket_id = socket_id_;
  // A growing table retires this hash at its next growth: a large one gets a heap of its own, so that retiring it
  // gives its memory back (hash_heap.h). A declared table's hash lives as long as the table. The grower only uses a
  // heap made ahead: zeroing one now would keep a core that fills its table fast waiting for room (refusing flows).
  const size_t bytes = hash_bytes(to, ipv6());
  const OwnHeapUse use = !grows_ || !own_heap_pays(bytes) ? OwnHeapUse::kNo
                         : may_wait                        ? OwnHeapUse::kYes
                                                           : OwnHeapUse::kIfReady;
  HashHome home;
  next_hash_ = create_hash(p, bytes, use, &standby_, &home);
  if (next_hash_ == nullptr) return undo(), false;
  if (home == HashHome::kEalFallback) shared_heap_hashes_.add(1);
  next_capacity_ = to;
  return true;
}

void FlowTable::adopt_growth() {
  if (hash_ != nullptr) {  // a growth: the keys of the records used so far move over in the next batches
    old_hash_ = hash_;
    rehash_at_ = 0;
    rehash_end_ = fresh_;
    growths_.add(1);
  }
  hash_ = next_hash_;
  next_hash_ = nullptr;
  capacity_plain_ = next_capacity_;
  capacity_.set(capacity_plain_);
  // Ask for the next size early enough that the grower has it ready before the table is full: with at least a
  // quarter of the table, and up to half of it or 128k flows, still free.
  const uint32_t headroom = std::max(capacity_plain_ / 4, std::min(capacity_plain_ / 2, 1u << 17));
  grow_at_ = grows_ && can_grow() ? capacity_plain_ - headroom : UINT32_MAX;
  // The grower makes the next hash's heap of its own a headroom (at most half the flows) before the growth is asked
  // for: at full speed a core fills that much in about the time making the heap takes on a loaded machine.
  const bool own_next = grow_at_ != UINT32_MAX && own_heap_pays(hash_bytes(uint64_t{capacity_plain_} * 2, ipv6()));
  standby_at_.store(own_next ? grow_at_ - std::min(headroom, grow_at_ / 2) : UINT32_MAX, std::memory_order_release);
  // (A growing table has no index; it is the only part reserve_bytes() counts that depends on the kind of table.)
  memory_.set(reserve_bytes(capacity_plain_, ipv6()) - (grows_ && !ipv6() ? size_t{index_buckets(capacity_plain_)} * 64 : 0));
}

void FlowTable::rehash_some(uint32_t n) {
  for (; n > 0 && rehash_at_ < rehash_end_; --n) {
    const uint32_t idx = rehash_at_++;
    if (!meta(idx).live) continue;
    uint8_t rev[sizeof(Tuple)];
    encode(reversed(mapped(idx)), rev);
    // Present already if the record was reused after the adoption: adding again writes the same data.
    rte_hash_add_key_data(hash_, record(idx) + sizeof(FlowMeta), reinterpret_cast<void*>(uintptr_t{idx} << 1));
    rte_hash_add_key_data(hash_, rev, reinterpret_cast<void*>(uintptr_t{idx} << 1 | 1));
  }
  if (rehash_at_ < rehash_end_) return;
  // Done: the grower frees the old hash. Its slot is empty (the grower emptied it before preparing this growth);
  // if not, the old hash stays consulted until the next batch tries again.
  rte_hash* expected = nullptr;
  if (!retired_.compare_exchange_strong(expected, old_hash_, std::memory_order_release)) return;
  old_hash_ = nullptr;
  FlowTableGrower::instance().wake();
}

void FlowTable::maintain(uint64_t now) {
  if (!grows_) return;
  if (old_hash_ != nullptr) {
    // Two records per flow created since the last batch, so the old hash is empty before the new one asks to
    // grow again (at most as many new flows arrive meanwhile as there are records to move).
    rehash_some(16 + 2 * inserts_);
    inserts_ = 0;
    return;
  }
  inserts_ = 0;
  switch (grow_state_.load(std::memory_order_acquire)) {
    case kReady:
      adopt_growth();
      grow_state_.store(kIdle, std::memory_order_relaxed);
      break;
    case kIdle:
      if (size_plain_ >= grow_at_) {
        grow_state_.store(kWanted, std::memory_order_release);
        FlowTableGrower::instance().wake();
      }
      break;
    case kFailed:  // the memory was short: ask again a second later
      if (retry_tsc_ == 0) {
        retry_tsc_ = now + rte_get_tsc_hz();
      } else if (now >= retry_tsc_) {
        retry_tsc_ = 0;
        grow_state_.store(kWanted, std::memory_order_release);
        FlowTableGrower::instance().wake();
      }
      break;
    default:
      break;
  }
}

bool FlowTable::reserve(uint32_t n) {
  if (!grows_) return free_slots() >= n;
  std::lock_guard<std::mutex> lock(FlowTableGrower::instance().mutex());  // the grower is idle meanwhile
  if (grow_state_.load(std::memory_order_acquire) == kReady) adopt_growth();
  grow_state_.store(kIdle, std::memory_order_relaxed);
  for (;;) {
    if (old_hash_ != nullptr) {
      rehash_some(UINT32_MAX);
      drop_hash(old_hash_);  // still here if the retired slot was busy: free it here, off the core
    }
    free_hash(retired_.exchange(nullptr));
    if (uint64_t{size_plain_} + n <= grow_at_ || (!can_grow() && free_slots() >= n)) return true;
    if (!can_grow()) return false;
    if (!prepare_growth(capacity_plain_, capacity_plain_ * 2, /*may_wait=*/true)) {
      growth_failures_.add(1);
      return free_slots() >= n;
    }
    adopt_growth();
  }
}

int32_t FlowTable::find(const uint8_t* key) const {
  void* data = nullptr;
  if (rte_hash_lookup_data(hash_, key, &data) >= 0) return static_cast<int32_t>(reinterpret_cast<uintptr_t>(data));
  if (old_hash_ != nullptr && rte_hash_lookup_data(old_hash_, key, &data) >= 0)
    return static_cast<int32_t>(reinterpret_cast<uintptr_t>(data));
  return -1;
}

void FlowTable::lookup_hashed(const void** keys, uint32_t* sigs, unsigned n, int32_t* out) const {
  void* data[RTE_HASH_LOOKUP_BULK_MAX];
  uint64_t hits = 0;
  if (sigs != nullptr) rte_hash_lookup_with_hash_bulk_data(hash_, keys, sigs, n, &hits, data);
  else rte_hash_lookup_bulk_data(hash_, keys, n, &hits, data);
  for (unsigned i = 0; i < n; ++i) out[i] = (hits >> i) & 1 ? static_cast<int32_t>(reinterpret_cast<uintptr_t>(data[i])) : -1;
  if (old_hash_ != nullptr && hits != (n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1)) {
    // During a rehash: what the new hash does not know yet may still be in the old one.
    const void* miss[RTE_HASH_LOOKUP_BULK_MAX];
    unsigned at[RTE_HASH_LOOKUP_BULK_MAX], nm = 0;
    for (unsigned i = 0; i < n; ++i)
      if (!((hits >> i) & 1)) miss[nm] = keys[i], at[nm++] = i;
    uint64_t old_hits = 0;
    rte_hash_lookup_bulk_data(old_hash_, miss, nm, &old_hits, data);
    for (unsigned k = 0; k < nm; ++k)
      if ((old_hits >> k) & 1) out[at[k]] = static_cast<int32_t>(reinterpret_cast<uintptr_t>(data[k]));
  }
}

void FlowTable::lookup(const Tuple* const* keys, unsigned n, int32_t* out) const {
  if (!ipv6()) {
    Key4 compact[RTE_HASH_LOOKUP_BULK_MAX];
    const Key4* ptrs[RTE_HASH_LOOKUP_BULK_MAX];
    for (unsigned done = 0; done < n;) {
      const unsigned chunk = std::min<unsigned>(n - done, RTE_HASH_LOOKUP_BULK_MAX);
      for (unsigned i = 0; i < chunk; ++i) compact[i] = to_key4(*keys[done + i]), ptrs[i] = &compact[i];
      lookup4(ptrs, chunk, out + done);
      done += chunk;
    }
    return;
  }
  for (unsigned done = 0; done < n;) {
    const unsigned chunk = std::min<unsigned>(n - done, RTE_HASH_LOOKUP_BULK_MAX);
    const void* ptrs[RTE_HASH_LOOKUP_BULK_MAX];
    std::memcpy(ptrs, keys + done, chunk * sizeof *ptrs);
    lookup_hashed(ptrs, nullptr, chunk, out + done);
    for (unsigned i = 0; i < chunk; ++i)
      if (out[done + i] >= 0) prefetch(static_cast<uint32_t>(out[done + i]) >> 1);
    done += chunk;
  }
}

void FlowTable::lookup4(const Key4* const* keys, unsigned n, int32_t* out) const {
  uint32_t sigs[RTE_HASH_LOOKUP_BULK_MAX];
  uint8_t* recs[RTE_HASH_LOOKUP_BULK_MAX];
  for (unsigned done = 0; done < n;) {
    const unsigned chunk = std::min<unsigned>(n - done, RTE_HASH_LOOKUP_BULK_MAX);
    for (unsigned i = 0; i < chunk; ++i) sigs[i] = sig4(*keys[done + i]), prefetch_sig(sigs[i]);
    lookup4(keys + done, sigs, chunk, out + done, recs);
    done += chunk;
  }
}

namespace {
// Whether two keys are the same 16 bytes: two 8-byte compares, no call, no copy through the stack.
bool same_key(const void* a, const void* b) {
  uint64_t x[2], y[2];
  std::memcpy(x, a, sizeof x);
  std::memcpy(y, b, sizeof y);
  return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
}
}  // namespace

inline bool FlowTable::holds(uint32_t idx, const uint8_t* r, unsigned dir, const Key4& key) const {
  if (idx >= fresh_ || !reinterpret_cast<const FlowMeta*>(r)->live) return false;
  if (dir == 0) return same_key(&orig4_at(r), &key);
  const Key4 k = reversed(mapped4_at(r));
  return same_key(&k, &key);
}

inline int32_t FlowTable::index_probe(uint32_t sig) const {
  const IndexBucket* b = bucket_of(sig);
#if defined(__SSE2__)
  const __m128i s = _mm_set1_epi32(static_cast<int>(index_sig(sig)));
  const auto* v = reinterpret_cast<const __m128i*>(b);
  const auto bits = [](__m128i eq) { return static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(eq))); };
  const unsigned hit = bits(_mm_cmpeq_epi32(_mm_load_si128(v), s)) | bits(_mm_cmpeq_epi32(_mm_load_si128(v + 1), s)) << 4;
  return hit != 0 ? static_cast<int32_t>(b->ref[__builtin_ctz(hit)] - 1) : -1;
#else
  for (unsigned w = 0; w < kIndexWays; ++w)
    if (b->sig[w] == index_sig(sig)) return static_cast<int32_t>(b->ref[w] - 1);
  return -1;
#endif
}

void FlowTable::index_put(uint32_t sig, uint32_t ref) const {
  IndexBucket* b = bucket_of(sig);
  unsigned to = kIndexWays;
  for (unsigned w = 0; w < kIndexWays; ++w) {
    if (b->ref[w] == ref) {
      to = w;
      break;
    }
    if (b->ref[w] == 0 && to == kIndexWays) to = w;
  }
  if (to == kIndexWays) to = sig >> 29;  // full: the bits above those that chose the bucket choose the way
  b->sig[to] = index_sig(sig);
  b->ref[to] = ref;
}

void FlowTable::index_drop(uint32_t sig, uint32_t ref) const {
  IndexBucket* b = bucket_of(sig);
  for (unsigned w = 0; w < kIndexWays; ++w)
    if (b->ref[w] == ref) b->sig[w] = b->ref[w] = 0;
}

void FlowTable::lookup4(const Key4* const* keys, const uint32_t* sigs, unsigned n, int32_t* out,
                        uint8_t** recs) const {
  if (index_ == nullptr) {
    for (unsigned done = 0; done < n;) {
      const unsigned chunk = std::min<unsigned>(n - done, RTE_HASH_LOOKUP_BULK_MAX);
      const void* ptrs[RTE_HASH_LOOKUP_BULK_MAX];
      uint32_t s[RTE_HASH_LOOKUP_BULK_MAX];
      std::memcpy(ptrs, keys + done, chunk * sizeof *ptrs);
      std::memcpy(s, sigs + done, chunk * sizeof *s);
      lookup_hashed(ptrs, s, chunk, out + done);
      for (unsigned i = 0; i < chunk; ++i) {
        if (out[done + i] < 0) continue;
        recs[done + i] = record_at(static_cast<uint32_t>(out[done + i]) >> 1);
        prefetch_at(recs[done + i]);
      }
      done += chunk;
    }
    return;
  }
  // Stage 1: the record each key's bucket names (its line was asked for a stage earlier), asked for at once.
  for (unsigned i = 0; i < n; ++i) {
    const int32_t ref = index_probe(sigs[i]);
    out[i] = ref;
    if (ref >= 0 && static_cast<uint32_t>(ref >> 1) < fresh_) {
      recs[i] = record_at(static_cast<uint32_t>(ref) >> 1);
      prefetch_at(recs[i]);
    }
  }
  // Stage 2: each key compared with its record's; the rest go to the rte_hash with their signatures, in bulk.
  const void* miss[RTE_HASH_LOOKUP_BULK_MAX];
  uint32_t miss_sig[RTE_HASH_LOOKUP_BULK_MAX];
  unsigned at[RTE_HASH_LOOKUP_BULK_MAX];
  unsigned nm = 0, hits = 0;
  auto fall_back = [&] {
    int32_t found[RTE_HASH_LOOKUP_BULK_MAX];
    lookup_hashed(miss, miss_sig, nm, found);
    for (unsigned k = 0; k < nm; ++k) {
      if (found[k] < 0) continue;
      out[at[k]] = found[k];
      recs[at[k]] = record_at(static_cast<uint32_t>(found[k]) >> 1);
      prefetch_at(recs[at[k]]);
      index_put(miss_sig[k], static_cast<uint32_t>(found[k]) + 1);  // put back: the next packet finds it
    }
    index_fallbacks_.add(nm);
    nm = 0;
  };
  for (unsigned i = 0; i < n; ++i) {
    if (out[i] >= 0 && holds(static_cast<uint32_t>(out[i]) >> 1, recs[i], out[i] & 1, *keys[i])) {
      ++hits;
      continue;
    }
    out[i] = -1;
    miss[nm] = keys[i], miss_sig[nm] = sigs[i], at[nm] = i;
    if (++nm == RTE_HASH_LOOKUP_BULK_MAX) fall_back();
  }
  if (nm > 0) fall_back();
  if (hits) index_hits_.add(hits);
}

int32_t FlowTable::lookup_one(const Tuple& key) const {
  uint8_t k[sizeof(Tuple)];
  encode(key, k);
  return find(k);
}

int32_t FlowTable::insert(const Tuple& orig, const Tuple& mapped, uint32_t backend, uint8_t fout, uint8_t rout,
                          uint64_t now) {
  if ((orig.v6 || mapped.v6) && !ipv6()) return kConflict;
  const uint32_t idx = free_head_ != kNoRecord ? free_head_ : fresh_ < capacity_plain_ ? fresh_ : kNoRecord;
  if (idx == kNoRecord) return kFull;
  uint8_t fwd[sizeof(Tuple)], rev[sizeof(Tuple)];
  encode(orig, fwd);
  encode(reversed(mapped), rev);
  if (find(fwd) >= 0 || find(rev) >= 0) return kConflict;
  int rc = rte_hash_add_key_data(hash_, fwd, reinterpret_cast<void*>(uintptr_t{idx} << 1));
  if (rc == 0) {
    rc = rte_hash_add_key_data(hash_, rev, reinterpret_cast<void*>(uintptr_t{idx} << 1 | 1));
    if (rc != 0) rte_hash_del_key(hash_, fwd);
  }
  if (rc != 0) return rc == -ENOSPC ? kFull : kConflict;
  uint8_t* r = record(idx);
  FlowMeta& m = meta(idx);
  if (idx == free_head_) free_head_ = m.backend;
  else ++fresh_;
  m.last_tsc = now;
  m.backend = backend;
  m.fout = fout;
  m.rout = rout;
  m.live = 1;
  m.state = 0;
  m.proto = orig.proto;
  std::memcpy(r + sizeof(FlowMeta), fwd, key_len_);
  encode(mapped, r + sizeof(FlowMeta) + key_len_);
  if (!ipv6()) {
    const Key4 o = to_key4(orig), m4 = to_key4(mapped);
    const RewriteDeltas d[2] = {rewrite_deltas(o, m4), rewrite_deltas(reversed(m4), reversed(o))};
    std::memcpy(r + sizeof(FlowMeta) + 2 * key_len_, d, sizeof d);
  }
  if (index_ != nullptr) {
    // Both keys named in the index. A mapping onto the flow's own reverse has one key, which the rte_hash answers
    // with the reply direction (the second add): the index names only that one too.
    if (std::memcmp(fwd, rev, sizeof(Key4)) != 0) index_put(sig_at(fwd), (idx << 1) + 1);
    index_put(sig_at(rev), (idx << 1 | 1) + 1);
  }
  size_.set(++size_plain_);
  ++inserts_;
  return static_cast<int32_t>(idx);
}

void FlowTable::remove(uint32_t idx) {
  FlowMeta& m = meta(idx);
  if (!m.live) return;
  uint8_t rev[sizeof(Tuple)];
  encode(reversed(mapped(idx)), rev);
  const uint8_t* fwd = record(idx) + sizeof(FlowMeta);
  rte_hash_del_key(hash_, fwd);
  rte_hash_del_key(hash_, rev);
  if (index_ != nullptr) {
    index_drop(sig_at(fwd), (idx << 1) + 1);
    index_drop(sig_at(rev), (idx << 1 | 1) + 1);
  }
  if (old_hash_ != nullptr) {  // a record not rehashed yet has its keys there (or stale ones: gone with it)
    rte_hash_del_key(old_hash_, fwd);
    rte_hash_del_key(old_hash_, rev);
  }
  m.live = 0;
  m.backend = free_head_;
  free_head_ = idx;
  size_.set(--size_plain_);
}

void FlowTable::clear() {
  rte_hash_reset(hash_);
  if (index_ != nullptr) std::memset(index_, 0, size_t{index_mask_ + 1} * sizeof(IndexBucket));
  drop_hash(old_hash_);
  for (uint32_t i = 0; i < fresh_; ++i) meta(i).live = 0;
  fresh_ = 0;
  free_head_ = kNoRecord;
  size_plain_ = 0;
  size_.set(0);
  sweep_ = 0;
  pass_began_ = 0;
}

}  // namespace metron

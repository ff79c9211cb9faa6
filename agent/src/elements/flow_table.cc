#include "elements/flow_table.h"

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

namespace metron {

namespace {

std::atomic<unsigned> g_seq{0};

}  // namespace

FlowTable::FlowTable(const std::string& name, uint32_t capacity, int socket_id, bool ipv6)
    : key_len_(ipv6 ? sizeof(Tuple) : sizeof(Key4)),
      stride_(static_cast<uint32_t>(sizeof(FlowMeta)) + 2 * key_len_),
      capacity_(capacity) {
  if (capacity == 0) throw std::runtime_error(name + ": flow table capacity must be positive");
  const std::string hname = "ft" + std::to_string(g_seq++);
  rte_hash_parameters p{};
  p.name = hname.c_str();
  // Two keys per flow; cuckoo hashing fills ~90%, keep headroom so inserts do not fail before `capacity`.
  p.entries = capacity * 2 + capacity / 16 + 64;
  p.key_len = key_len_;
  p.hash_func = rte_hash_crc;
  p.hash_func_init_val = 0x4d455452;
  p.socket_id = socket_id;
  hash_ = rte_hash_create(&p);
  // rte_zmalloc does not write memory the heap has never handed out, so untouched records stay non-resident.
  if (hash_ != nullptr)
    records_ = static_cast<uint8_t*>(
        rte_zmalloc_socket("flow_records", static_cast<size_t>(capacity) * stride_, RTE_CACHE_LINE_SIZE, socket_id));
  if (hash_ == nullptr || records_ == nullptr) {
    const std::string why = rte_strerror(rte_errno);
    if (hash_ != nullptr) rte_hash_free(hash_);
    throw std::runtime_error(name + ": cannot allocate a flow table for " + std::to_string(capacity) +
                             " flows: " + why);
  }
}

FlowTable::~FlowTable() {
  rte_hash_free(hash_);
  rte_free(records_);
}

size_t FlowTable::bytes_per_flow() const {
  // rte_hash keeps each key with an 8-byte data pointer, 16-byte aligned.
  const size_t entry = (8 + key_len_ + 15) / 16 * 16;
  return stride_ + 2 * entry;
}

void FlowTable::lookup(const Tuple* const* keys, unsigned n, int32_t* out) const {
  void* data[RTE_HASH_LOOKUP_BULK_MAX];
  Key4 compact[RTE_HASH_LOOKUP_BULK_MAX];
  const void* ptrs[RTE_HASH_LOOKUP_BULK_MAX];
  for (unsigned done = 0; done < n;) {
    const unsigned chunk = std::min<unsigned>(n - done, RTE_HASH_LOOKUP_BULK_MAX);
    for (unsigned i = 0; i < chunk; ++i) {
      if (ipv6()) {
        ptrs[i] = keys[done + i];
      } else {
        encode(*keys[done + i], reinterpret_cast<uint8_t*>(&compact[i]));
        ptrs[i] = &compact[i];
      }
    }
    uint64_t hits = 0;
    rte_hash_lookup_bulk_data(hash_, ptrs, chunk, &hits, data);
    for (unsigned i = 0; i < chunk; ++i)
      out[done + i] = (hits >> i) & 1 ? static_cast<int32_t>(reinterpret_cast<uintptr_t>(data[i])) : -1;
    done += chunk;
  }
}

int32_t FlowTable::lookup_one(const Tuple& key) const {
  uint8_t k[sizeof(Tuple)];
  encode(key, k);
  void* data = nullptr;
  return rte_hash_lookup_data(hash_, k, &data) >= 0 ? static_cast<int32_t>(reinterpret_cast<uintptr_t>(data)) : -1;
}

int32_t FlowTable::insert(const Tuple& orig, const Tuple& mapped, uint32_t backend, uint8_t fout, uint8_t rout,
                          uint64_t now) {
  if ((orig.v6 || mapped.v6) && !ipv6()) return -1;
  const uint32_t idx = free_head_ != kNoRecord ? free_head_ : fresh_ < capacity_ ? fresh_ : kNoRecord;
  if (idx == kNoRecord) return -1;
  uint8_t fwd[sizeof(Tuple)], rev[sizeof(Tuple)];
  encode(orig, fwd);
  encode(reversed(mapped), rev);
  void* data = nullptr;
  if (rte_hash_lookup_data(hash_, fwd, &data) >= 0 || rte_hash_lookup_data(hash_, rev, &data) >= 0) return -1;
  if (rte_hash_add_key_data(hash_, fwd, reinterpret_cast<void*>(static_cast<uintptr_t>(idx << 1))) != 0) return -1;
  if (rte_hash_add_key_data(hash_, rev, reinterpret_cast<void*>(static_cast<uintptr_t>(idx << 1 | 1))) != 0) {
    rte_hash_del_key(hash_, fwd);
    return -1;
  }
  uint8_t* r = record(idx);
  FlowMeta& m = meta(idx);
  if (idx == free_head_) free_head_ = m.backend;
  else ++fresh_;
  m.last_tsc = now;
  m.backend = backend;
  m.fout = fout;
  m.rout = rout;
  m.live = 1;
  m.proto = orig.proto;
  std::memcpy(r + sizeof(FlowMeta), fwd, key_len_);
  encode(mapped, r + sizeof(FlowMeta) + key_len_);
  ++size_;
  return static_cast<int32_t>(idx);
}

void FlowTable::remove(uint32_t idx) {
  FlowMeta& m = meta(idx);
  if (!m.live) return;
  uint8_t rev[sizeof(Tuple)];
  encode(reversed(mapped(idx)), rev);
  rte_hash_del_key(hash_, record(idx) + sizeof(FlowMeta));
  rte_hash_del_key(hash_, rev);
  m.live = 0;
  m.backend = free_head_;
  free_head_ = idx;
  --size_;
}

void FlowTable::clear() {
  rte_hash_reset(hash_);
  for (uint32_t i = 0; i < fresh_; ++i) meta(i).live = 0;
  fresh_ = 0;
  free_head_ = kNoRecord;
  size_ = 0;
  sweep_ = 0;
}

}  // namespace metron

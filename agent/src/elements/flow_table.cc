#include "elements/flow_table.h"

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

namespace metron {

namespace {
std::atomic<unsigned> g_seq{0};
}

FlowTable::FlowTable(const std::string& name, uint32_t capacity, int socket_id)
    : capacity_(capacity), records_(new FlowRecord[capacity]()) {
  if (capacity == 0) throw std::runtime_error(name + ": flow table capacity must be positive");
  const std::string hname = "ft" + std::to_string(g_seq++);
  rte_hash_parameters p{};
  p.name = hname.c_str();
  // Two keys per flow; cuckoo hashing fills ~90%, keep headroom so inserts do not fail before `capacity`.
  p.entries = capacity * 2 + capacity / 16 + 64;
  p.key_len = sizeof(Tuple);
  p.hash_func = rte_hash_crc;
  p.hash_func_init_val = 0x4d455452;
  p.socket_id = socket_id;
  hash_ = rte_hash_create(&p);
  if (hash_ == nullptr)
    throw std::runtime_error(name + ": cannot allocate a flow table for " + std::to_string(capacity) +
                             " flows: " + rte_strerror(rte_errno));
  free_.reserve(capacity);
  for (uint32_t i = capacity; i > 0; --i) free_.push_back(i - 1);
}

FlowTable::~FlowTable() {
  if (hash_ != nullptr) rte_hash_free(hash_);
}

void FlowTable::lookup(const Tuple* const* keys, unsigned n, int32_t* out) const {
  void* data[RTE_HASH_LOOKUP_BULK_MAX];
  for (unsigned done = 0; done < n;) {
    const unsigned chunk = std::min<unsigned>(n - done, RTE_HASH_LOOKUP_BULK_MAX);
    uint64_t hits = 0;
    rte_hash_lookup_bulk_data(hash_, reinterpret_cast<const void**>(const_cast<const Tuple**>(keys + done)), chunk,
                              &hits, data);
    for (unsigned i = 0; i < chunk; ++i)
      out[done + i] = (hits >> i) & 1 ? static_cast<int32_t>(reinterpret_cast<uintptr_t>(data[i])) : -1;
    done += chunk;
  }
}

int32_t FlowTable::lookup_one(const Tuple& key) const {
  void* data = nullptr;
  return rte_hash_lookup_data(hash_, &key, &data) >= 0 ? static_cast<int32_t>(reinterpret_cast<uintptr_t>(data))
                                                        : -1;
}

int32_t FlowTable::insert(const Tuple& orig, const Tuple& mapped, uint32_t backend, uint8_t fout, uint8_t rout,
                          uint64_t now) {
  if (free_.empty()) return -1;
  const Tuple rev = reversed(mapped);
  if (lookup_one(orig) >= 0 || lookup_one(rev) >= 0) return -1;
  const uint32_t idx = free_.back();
  if (rte_hash_add_key_data(hash_, &orig, reinterpret_cast<void*>(static_cast<uintptr_t>(idx << 1))) != 0) return -1;
  if (rte_hash_add_key_data(hash_, &rev, reinterpret_cast<void*>(static_cast<uintptr_t>(idx << 1 | 1))) != 0) {
    rte_hash_del_key(hash_, &orig);
    return -1;
  }
  free_.pop_back();
  FlowRecord& r = records_[idx];
  r.orig = orig;
  r.mapped = mapped;
  r.last_tsc = now;
  r.backend = backend;
  r.fout = fout;
  r.rout = rout;
  r.live = 1;
  ++size_;
  return static_cast<int32_t>(idx);
}

void FlowTable::remove(uint32_t idx) {
  FlowRecord& r = records_[idx];
  if (!r.live) return;
  rte_hash_del_key(hash_, &r.orig);
  const Tuple rev = reversed(r.mapped);
  rte_hash_del_key(hash_, &rev);
  r.live = 0;
  free_.push_back(idx);
  --size_;
}

void FlowTable::clear() {
  for (uint32_t i = 0; i < capacity_; ++i)
    if (records_[i].live) remove(i);
}

}  // namespace metron

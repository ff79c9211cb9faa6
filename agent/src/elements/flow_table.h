// FlowTable: one core's NAPT/LB mappings. Each flow is one record (original 5-tuple, mapped 5-tuple, backend,
// last use) indexed twice in an rte_hash (cuckoo, bulk lookup): by its original tuple (forward packets) and by
// the reverse of its mapped tuple (replies). Fixed capacity, allocated when the graph is built; no allocation on
// the packet path. Expiry is incremental: each batch sweeps a few records, so there is never a long stall.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

struct FlowRecord {
  Tuple orig;
  Tuple mapped;
  uint64_t last_tsc;
  uint32_t backend;  // pattern index chosen for the flow
  uint8_t fout;
  uint8_t rout;
  uint8_t live;
  uint8_t pad;
};

class FlowTable {
 public:
  // Throws std::runtime_error when the memory cannot be had.
  FlowTable(const std::string& name, uint32_t capacity, int socket_id);
  ~FlowTable();
  FlowTable(const FlowTable&) = delete;
  FlowTable& operator=(const FlowTable&) = delete;

  // For each key: -1 (miss) or record index << 1 | direction (0 forward, 1 reply).
  void lookup(const Tuple* const* keys, unsigned n, int32_t* out) const;
  int32_t lookup_one(const Tuple& key) const;
  // Adds a flow; -1 if the table is full or either key is already present.
  int32_t insert(const Tuple& orig, const Tuple& mapped, uint32_t backend, uint8_t fout, uint8_t rout, uint64_t now);
  void remove(uint32_t idx);
  void clear();

  FlowRecord& record(uint32_t idx) { return records_[idx]; }
  const FlowRecord& record(uint32_t idx) const { return records_[idx]; }
  uint32_t size() const { return size_; }
  uint32_t capacity() const { return capacity_; }
  uint32_t free_slots() const { return capacity_ - size_; }

  // Removes up to `budget` records, checked round-robin, that have been idle longer than their timeout.
  // timeout_of(record) returns the idle limit in TSC cycles. Returns how many expired.
  template <typename TimeoutOf>
  unsigned expire(uint64_t now, unsigned budget, TimeoutOf timeout_of) {
    unsigned n = 0;
    for (unsigned i = 0; i < budget; ++i) {
      const uint32_t idx = sweep_;
      sweep_ = sweep_ + 1 == capacity_ ? 0 : sweep_ + 1;
      FlowRecord& r = records_[idx];
      if (r.live && now - r.last_tsc > timeout_of(r)) {
        remove(idx);
        ++n;
      }
    }
    return n;
  }

 private:
  rte_hash* hash_ = nullptr;
  uint32_t capacity_;
  uint32_t size_ = 0;
  uint32_t sweep_ = 0;
  std::unique_ptr<FlowRecord[]> records_;
  std::vector<uint32_t> free_;  // stack of free record indexes, sized once
};

}  // namespace metron

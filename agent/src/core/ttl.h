// DecIPTTL's work on a packet, shared by the element and by the elements that absorb it (the TTL fold,
// Element::absorb_ttl_decrement): one definition of what a decrement and an expiry are.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <vector>

#include "core/annotations.h"
#include "utils/checksum.h"

namespace metron {

// Decrements the TTL (IPv4, checksum updated) or hop limit (IPv6) of a packet with a marked IP header. False when
// it has expired (<= 1: left unchanged, for the caller to drop or send to its expired output) or has no marked
// header (dropped by DecIPTTL as in Click).
inline bool decrement_ttl(rte_mbuf* m, bool* expired) {
  const PacketAnno a = anno(m);
  *expired = false;
  if (a.ip_ver == 0) return false;
  uint8_t* ip = ip_header(m);
  if (a.ip_ver == 4) {
    if (ip[8] <= 1) return *expired = true, false;
    const uint16_t old_word = load16(ip + 8);
    --ip[8];
    store16(ip + 10, csum_update16(load16(ip + 10), old_word, load16(ip + 8)));
    return true;
  }
  if (ip[7] <= 1) return *expired = true, false;
  --ip[7];
  return true;
}

// The DecIPTTLs an element absorbed (Element::absorb_ttl_decrement), by output: every packet the element sends to
// such an output is decremented; one that cannot be is dropped instead (res[i] = -1), an expired one counted in
// that DecIPTTL's counter.
class TtlFold {
 public:
  void absorb(int port, uint64_t* expired) {
    if (static_cast<size_t>(port) >= expired_.size()) expired_.resize(port + 1, nullptr);
    expired_[port] = expired;
  }
  bool empty() const { return expired_.empty(); }
  // For a batch of n packets whose outputs are res[0..n) (-1: dropped).
  void apply(rte_mbuf* const* pkts, uint16_t n, int* res) const {
    const int ports = static_cast<int>(expired_.size());
    for (uint16_t i = 0; i < n; ++i) {
      const int r = res[i];
      if (r < 0 || r >= ports || expired_[r] == nullptr) continue;
      bool expired;
      if (!decrement_ttl(pkts[i], &expired)) {
        res[i] = -1;
        *expired_[r] += expired;
      }
    }
  }

 private:
  std::vector<uint64_t*> expired_;  // by output; null where none was absorbed
};

}  // namespace metron

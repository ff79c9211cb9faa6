// DecIPTTL: decrements the IPv4 TTL (checksum updated incrementally) or the IPv6 hop limit. Expired packets go
// to output 1 if connected, else they are dropped; unmarked packets are dropped.
//
// Its step is public so that an element whose output feeds a DecIPTTL with one output may run it itself, on
// headers it already has in hand, and send that output straight on to what the DecIPTTL feeds (Element::
// fold_output): the rewriters do (rewriter.cc, TtlFold), the synthesized chains' `SynthRewriter -> DecIPTTL`. The
// packets leave the same, the expired ones are counted here the same, and the DecIPTTL stays in the graph for
// anything else that feeds it.
#pragma once

#include <cstring>

#include "core/annotations.h"
#include "core/element.h"
#include "utils/checksum.h"

namespace metron {

class DecIPTTL final : public Element {
 public:
  const char* class_name() const override { return "DecIPTTL"; }
  PortCountRange output_range() const override { return {1, 2}; }
  void configure(Args& args) override { args.take("MULTICAST"); }
  void push(int, PacketBatch& b) override {
    const int expired_out = noutputs() > 1 ? 1 : -1;
    classify_push(b, [&](rte_mbuf* m) { return verdict(m, 0, expired_out, &expired_); });
  }
  void report(std::ostream& os) const override { os << "expired " << expired_ << "\n"; }

  enum Step { kDecremented, kExpired, kUnmarked };
  // One packet: its TTL (hop limit) taken down by one, or kExpired (<= 1, left as it is), or kUnmarked (no IP
  // header marked, left as it is).
  static Step step(rte_mbuf* m) {
    const PacketAnno a = anno(m);
    if (a.ip_ver == 0) return kUnmarked;
    uint8_t* ip = ip_header(m, a);
    if (a.ip_ver == 4) {
      if (ip[8] <= 1) return kExpired;
      --ip[8];
      uint16_t c;
      std::memcpy(&c, ip + 10, 2);
      c = ipv4_ttl_dec_csum(c);
      std::memcpy(ip + 10, &c, 2);
      return kDecremented;
    }
    if (ip[7] <= 1) return kExpired;
    --ip[7];
    return kDecremented;
  }
  // step() and where the packet goes then: `kept` once decremented, `expired_out` (counted in *expired) when it
  // expired, -1 (a drop) when unmarked.
  static int verdict(rte_mbuf* m, int kept, int expired_out, uint64_t* expired) {
    switch (step(m)) {
      case kDecremented: return kept;
      case kExpired: return ++*expired, expired_out;
      default: return -1;
    }
  }
  // Whether an element feeding this one may run step() itself and skip it: expired packets are dropped (no
  // output 1), which the folding element does by dropping them and counting them here.
  bool foldable() const { return noutputs() == 1; }
  void count_expired(uint64_t n) { expired_ += n; }

 private:
  uint64_t expired_ = 0;
};

}  // namespace metron

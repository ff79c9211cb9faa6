// CheckIPHeader([OFFSET], CHECKSUM bool): checks the IPv4 header (version, header length, total length against
// the frame, checksum) and marks it. Unlike Click it also accepts IPv6 headers (version, payload length), since
// group configs (docs/contracts.md#click) run IPv4 and IPv6 traffic through one CheckIPHeader.
// Bad packets go to output 1 if it is connected, else they are dropped.
//
// Its step is public so that the element it feeds may run it itself, in its own first pass over the headers, and
// take its batches straight from what feeds it (Element::fold_input, CheckIPHeader::Fold): the rewriters and
// IPFilter/IPClassifier do, the synthesized chains' `CheckIPHeader -> SynthRewriter` and `CheckIPHeader ->
// IPFilter`. The same packets are dropped and counted here, the same headers marked.
#pragma once

#include "core/annotations.h"
#include "core/element.h"
#include "utils/checksum.h"

namespace metron {

class CheckIPHeader final : public Element {
 public:
  const char* class_name() const override { return "CheckIPHeader"; }
  PortCountRange output_range() const override { return {1, 2}; }
  void configure(Args& args) override;  // ip_header.cc
  void push(int, PacketBatch& b) override {
    const int bad_out = noutputs() > 1 ? 1 : -1;
    // The settings in locals: the annotation stores below could alias the members, and each would be loaded again.
    const int offset = offset_;
    const bool checksum = checksum_;
    const int anno_offset = g_anno_offset;
    classify_push(b, [&](rte_mbuf* m) {
      uint8_t* ip;
      int left;
      if (step(m, offset, checksum, anno_offset, &ip, &left) != 0) return 0;
      ++bad_;
      return bad_out;
    });
  }
  void report(std::ostream& os) const override { os << "drops " << bad_ << "\n"; }

  // One packet: its IP header checked and marked, its version returned (4, 6) with where it is and the bytes from
  // it to the end of the data; 0 if it is bad (left unmarked). anno_offset: g_anno_offset, read once per batch.
  static uint8_t step(rte_mbuf* m, int offset, bool checksum, int anno_offset, uint8_t** ip_out, int* left) {
    const int len = static_cast<int>(rte_pktmbuf_data_len(m)) - offset;
    if (len < 20) return 0;
    uint8_t* ip = rte_pktmbuf_mtod_offset(m, uint8_t*, offset);
    *ip_out = ip;
    *left = len;
    // IPv4 without options, nearly every packet: the same checks with the header's length a constant.
    if (ip[0] == 0x45) return check_ipv4(m, ip, 20, len, checksum, anno_offset);
    const uint8_t ver = ip[0] >> 4;
    if (ver == 4) return check_ipv4(m, ip, (ip[0] & 0xf) * 4, len, checksum, anno_offset);
    if (ver == 6) {
      if (len < 40 || 40 + load16(ip + 4) > len) return 0;
      mark_ip(m, ip, 6, anno_offset);
      return 6;
    }
    return 0;
  }
  // Whether the element it feeds may run step() itself and take its place: bad packets are dropped (no output
  // 1), which the folding element does by dropping them and counting them here.
  bool foldable() const { return noutputs() == 1; }
  void count_bad(uint64_t n) { bad_ += n; }

  // What an element that takes a CheckIPHeader's place keeps of it (its fold_input: take(feeder)), for its first
  // pass over a batch: each packet's step() before anything reads the header, the bad ones dropped there (not
  // counted as the folding element's own) and counted here once per batch.
  struct Fold {
    CheckIPHeader* check = nullptr;  // null: nothing folded, the packets come checked
    int offset = 0;
    bool checksum = true;
    bool take(Element& feeder) {
      auto* c = dynamic_cast<CheckIPHeader*>(&feeder);
      if (c == nullptr || !c->foldable()) return false;
      check = c, offset = c->offset_, checksum = c->checksum_;
      return true;
    }
  };

 private:
  static uint8_t check_ipv4(rte_mbuf* m, uint8_t* ip, int hlen, int len, bool checksum, int anno_offset) {
    const int tot = load16(ip + 2);
    if (hlen < 20 || hlen > len || tot < hlen || tot > len) return 0;
    if (checksum && !ipv4_header_valid(ip, hlen)) return 0;
    mark_ip(m, ip, 4, anno_offset);
    return 4;
  }
  uint16_t offset_ = 0;
  bool checksum_ = true;
  uint64_t bad_ = 0;
};

}  // namespace metron

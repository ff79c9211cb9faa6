// CheckIPHeader([OFFSET], CHECKSUM bool): checks the IPv4 header (version, header length, total length against
// the frame, checksum) and marks it. Unlike Click it also accepts IPv6 headers (version, payload length), since
// group configs (docs/contracts.md#click) run IPv4 and IPv6 traffic through one CheckIPHeader.
// Bad packets go to output 1 if it is connected, else they are dropped.
//
// The checksum is the NIC's to check where it can: a port that offers IPv4 checksum offload has it on
// (DpdkPort), and its GOOD in the mbuf (RTE_MBUF_F_RX_IP_CKSUM_GOOD) stands for the software sum, as DPDK's
// l3fwd takes it. Only for the header the verdict is about: a CheckIPHeader whose frames all come as
// their port delivered them (Element::frames_as_received) and at offset 14 behind an IPv4 EtherType. A frame
// without a verdict (a port without the offload, not IPv4 to the NIC) has its sum computed as before.
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
    const Sum sum = sum_mode();
    const int anno_offset = g_anno_offset;
    classify_push(b, [&](rte_mbuf* m) {
      uint8_t* ip;
      int left;
      if (step(m, offset, sum, anno_offset, &ip, &left) != 0) return 0;
      ++bad_;
      return bad_out;
    });
  }
  void report(std::ostream& os) const override { os << "drops " << bad_ << "\n"; }
  void frames_as_received() override { nic_verdicts_ = offset_ == 14; }

  // How the IPv4 header's checksum is checked: not at all (CHECKSUM false), by summing it, or by the port's
  // verdict where the mbuf carries one and summing it where not.
  enum class Sum : uint8_t { kSkip, kCompute, kNicFirst };
  Sum sum_mode() const { return !checksum_ ? Sum::kSkip : nic_verdicts_ ? Sum::kNicFirst : Sum::kCompute; }

  // One packet: its IP header checked and marked, its version returned (4, 6) with where it is and the bytes from
  // it to the end of the data; 0 if it is bad (left unmarked). anno_offset: g_anno_offset, read once per batch.
  static uint8_t step(rte_mbuf* m, int offset, Sum sum, int anno_offset, uint8_t** ip_out, int* left) {
    const int len = static_cast<int>(rte_pktmbuf_data_len(m)) - offset;
    if (len < 20) return 0;
    uint8_t* ip = rte_pktmbuf_mtod_offset(m, uint8_t*, offset);
    *ip_out = ip;
    *left = len;
    // IPv4 without options, nearly every packet: the same checks with the header's length a constant.
    if (ip[0] == 0x45) return check_ipv4(m, ip, 20, len, sum, anno_offset);
    const uint8_t ver = ip[0] >> 4;
    if (ver == 4) return check_ipv4(m, ip, (ip[0] & 0xf) * 4, len, sum, anno_offset);
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
    Sum sum = Sum::kCompute;
    bool take(Element& feeder) {
      auto* c = dynamic_cast<CheckIPHeader*>(&feeder);
      if (c == nullptr || !c->foldable()) return false;
      check = c, offset = c->offset_, sum = c->sum_mode();
      return true;
    }
  };

 private:
  static uint8_t check_ipv4(rte_mbuf* m, uint8_t* ip, int hlen, int len, Sum sum, int anno_offset) {
    const int tot = load16(ip + 2);
    if (hlen < 20 || hlen > len || tot < hlen || tot > len) return 0;
    if (sum != Sum::kSkip && !checksum_ok(m, ip, hlen, sum)) return 0;
    mark_ip(m, ip, 4, anno_offset);
    return 4;
  }
  // A NIC's GOOD stands; anything else (BAD, none, not the header the NIC checked) is summed here, which a
  // header the NIC found bad fails too: only good frames take the short way.
  static bool checksum_ok(const rte_mbuf* m, const uint8_t* ip, int hlen, Sum sum) {
    if (sum == Sum::kNicFirst && (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD &&
        load16(ip - 2) == 0x0800)  // offset 14: the EtherType before it
      return true;
    return ipv4_header_valid(ip, hlen);
  }
  uint16_t offset_ = 0;
  bool checksum_ = true;
  bool nic_verdicts_ = false;  // frames_as_received() at offset 14
  uint64_t bad_ = 0;
};

}  // namespace metron

// IP header elements: CheckIPHeader, MarkIPHeader, SetIPChecksum, and DecIPTTL's factory (dec_ip_ttl.h).
// They mark/read the IP header annotation (core/annotations.h) like Click's network-header pointer.
#include "core/annotations.h"
#include "core/element.h"
#include "elements/dec_ip_ttl.h"
#include "utils/checksum.h"

namespace metron {

namespace {

uint16_t parse_offset(Args& args) {
  uint16_t off = 0;
  if (args.positional_count() > 1) throw ConfigError("expected at most one positional argument, OFFSET");
  if (args.positional_count() == 1) off = static_cast<uint16_t>(parse_uint(args.positional(0), "OFFSET", 1500));
  if (auto v = args.take("OFFSET")) off = static_cast<uint16_t>(parse_uint(*v, "OFFSET", 1500));
  return off;
}

// CheckIPHeader([OFFSET], CHECKSUM bool): checks the IPv4 header (version, header length, total length against
// the frame, checksum) and marks it. Unlike Click it also accepts IPv6 headers (version, payload length), since
// group configs (docs/contracts.md#click) run IPv4 and IPv6 traffic through one CheckIPHeader.
// Bad packets go to output 1 if it is connected, else they are dropped.
class CheckIPHeader final : public Element {
 public:
  const char* class_name() const override { return "CheckIPHeader"; }
  PortCountRange output_range() const override { return {1, 2}; }
  void configure(Args& args) override {
    offset_ = parse_offset(args);
    if (auto v = args.take("CHECKSUM")) checksum_ = parse_bool(*v, "CHECKSUM");
    args.take("VERBOSE");
    args.take("DETAILS");
  }
  void push(int, PacketBatch& b) override {
    const int bad_out = noutputs() > 1 ? 1 : -1;
    // The settings in locals: the annotation stores below could alias the members, and each would be loaded again.
    const int offset = offset_;
    const bool checksum = checksum_;
    classify_push(b, [&](rte_mbuf* m) {
      if (check(m, offset, checksum)) return 0;
      ++bad_;
      return bad_out;
    });
  }
  void report(std::ostream& os) const override { os << "drops " << bad_ << "\n"; }

 private:
  static bool check(rte_mbuf* m, int offset, bool checksum) {
    const int len = static_cast<int>(rte_pktmbuf_data_len(m)) - offset;
    if (len < 20) return false;
    uint8_t* ip = rte_pktmbuf_mtod_offset(m, uint8_t*, offset);
    // IPv4 without options, nearly every packet: the same checks with the header's length a constant.
    if (ip[0] == 0x45) return check_ipv4(m, ip, 20, len, checksum);
    const uint8_t ver = ip[0] >> 4;
    if (ver == 4) return check_ipv4(m, ip, (ip[0] & 0xf) * 4, len, checksum);
    if (ver == 6) {
      if (len < 40 || 40 + load16(ip + 4) > len) return false;
      mark_ip(m, ip, 6);
      return true;
    }
    return false;
  }
  static bool check_ipv4(rte_mbuf* m, uint8_t* ip, int hlen, int len, bool checksum) {
    const int tot = load16(ip + 2);
    if (hlen < 20 || hlen > len || tot < hlen || tot > len) return false;
    if (checksum && !ipv4_header_valid(ip, hlen)) return false;
    mark_ip(m, ip, 4);
    return true;
  }
  uint16_t offset_ = 0;
  bool checksum_ = true;
  uint64_t bad_ = 0;
};

// MarkIPHeader([OFFSET]): marks the IP header without checking it (version from its first nibble).
class MarkIPHeader final : public Element {
 public:
  const char* class_name() const override { return "MarkIPHeader"; }
  void configure(Args& args) override { offset_ = parse_offset(args); }
  void push(int, PacketBatch& b) override {
    classify_push(b, [this](rte_mbuf* m) {
      if (rte_pktmbuf_data_len(m) < offset_ + 20u) return -1;
      uint8_t* ip = rte_pktmbuf_mtod_offset(m, uint8_t*, offset_);
      const uint8_t ver = ip[0] >> 4;
      if ((ver != 4 && ver != 6) || (ver == 6 && rte_pktmbuf_data_len(m) < offset_ + 40u)) return -1;
      mark_ip(m, ip, ver);
      return 0;
    });
  }

 private:
  uint16_t offset_ = 0;
};

// SetIPChecksum: recomputes the IPv4 header checksum of marked packets (20-60 bytes: cheaper than tracking
// what changed). Elements that rewrite fields (DecIPTTL, rewriters) update it incrementally themselves.
class SetIPChecksum final : public Element {
 public:
  const char* class_name() const override { return "SetIPChecksum"; }
  void configure(Args&) override {}
  void push(int, PacketBatch& b) override {
    classify_push(b, [](rte_mbuf* m) {
      const PacketAnno a = anno(m);
      if (a.ip_ver == 6) return 0;
      if (a.ip_ver != 4) return -1;
      uint8_t* ip = ip_header(m);
      const int hlen = (ip[0] & 0xf) * 4;
      if (hlen < 20 || hlen > ip_bytes_left(m)) return -1;
      store16(ip + 10, ipv4_header_csum(ip, hlen));
      return 0;
    });
  }
};

}  // namespace

METRON_EXPORT_ELEMENT(CheckIPHeader)
METRON_EXPORT_ELEMENT(MarkIPHeader)
METRON_EXPORT_ELEMENT(DecIPTTL)
METRON_EXPORT_ELEMENT(SetIPChecksum)

}  // namespace metron

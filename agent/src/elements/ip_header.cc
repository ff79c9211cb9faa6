// IP header elements: MarkIPHeader, SetIPChecksum, and the factories of CheckIPHeader (check_ip_header.h) and
// DecIPTTL (dec_ip_ttl.h).
// They mark/read the IP header annotation (core/annotations.h) like Click's network-header pointer.
#include "core/annotations.h"
#include "core/element.h"
#include "elements/check_ip_header.h"
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

}  // namespace

void CheckIPHeader::configure(Args& args) {
  offset_ = parse_offset(args);
  if (auto v = args.take("CHECKSUM")) checksum_ = parse_bool(*v, "CHECKSUM");
  args.take("VERBOSE");
  args.take("DETAILS");
}

namespace {

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

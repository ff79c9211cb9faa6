// Layer-2 framing: Strip, Unstrip, EtherEncap, EtherRewrite, VLANEncap, VLANDecap.
#include <rte_ether.h>

#include <cstring>

#include "core/element.h"
#include "utils/checksum.h"

namespace metron {

namespace {

uint16_t parse_ethertype(const std::string& s) {
  return static_cast<uint16_t>(parse_uint(s, "ETHERTYPE", 0xffff));
}

class Strip final : public Element {
 public:
  const char* class_name() const override { return "Strip"; }
  void configure(Args& args) override {
    if (args.positional_count() != 1) throw ConfigError("expected one argument, the byte count");
    len_ = static_cast<uint16_t>(parse_uint(args.positional(0), "LENGTH", 1500));
  }
  void push(int, PacketBatch& b) override {
    classify_push(b, [this](rte_mbuf* m) { return rte_pktmbuf_adj(m, len_) != nullptr ? 0 : -1; });
  }

 private:
  uint16_t len_ = 0;
};

class Unstrip final : public Element {
 public:
  const char* class_name() const override { return "Unstrip"; }
  void configure(Args& args) override {
    if (args.positional_count() != 1) throw ConfigError("expected one argument, the byte count");
    len_ = static_cast<uint16_t>(parse_uint(args.positional(0), "LENGTH", 1500));
  }
  void push(int, PacketBatch& b) override {
    classify_push(b, [this](rte_mbuf* m) { return rte_pktmbuf_prepend(m, len_) != nullptr ? 0 : -1; });
  }

 private:
  uint16_t len_ = 0;
};

// EtherEncap(ETHERTYPE, SRC, DST): prepends an Ethernet header.
class EtherEncap final : public Element {
 public:
  const char* class_name() const override { return "EtherEncap"; }
  void configure(Args& args) override {
    if (args.positional_count() != 3) throw ConfigError("expected ETHERTYPE, SRC, DST");
    store16(hdr_ + 12, parse_ethertype(args.positional(0)));
    parse_mac(args.positional(1), "SRC", hdr_ + 6);
    parse_mac(args.positional(2), "DST", hdr_);
  }
  void push(int, PacketBatch& b) override {
    classify_push(b, [this](rte_mbuf* m) {
      char* p = rte_pktmbuf_prepend(m, 14);
      if (p == nullptr) return -1;
      std::memcpy(p, hdr_, 14);
      return 0;
    });
  }

 private:
  uint8_t hdr_[14] = {};
};

// EtherRewrite(SRC, DST): overwrites both addresses.
class EtherRewrite final : public Element {
 public:
  const char* class_name() const override { return "EtherRewrite"; }
  void configure(Args& args) override {
    if (args.positional_count() != 2) throw ConfigError("expected SRC, DST");
    parse_mac(args.positional(0), "SRC", macs_ + 6);
    parse_mac(args.positional(1), "DST", macs_);
  }
  void push(int, PacketBatch& b) override {
    classify_push(b, [this](rte_mbuf* m) {
      if (rte_pktmbuf_data_len(m) < 14) return -1;
      std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), macs_, 12);
      return 0;
    });
  }

 private:
  uint8_t macs_[12] = {};
};

// StoreEtherAddress(ADDR, OFFSET): writes ADDR at OFFSET, which is `src` (6), `dst` (0) or a byte offset.
class StoreEtherAddress final : public Element {
 public:
  const char* class_name() const override { return "StoreEtherAddress"; }
  void configure(Args& args) override {
    if (args.positional_count() != 2) throw ConfigError("expected ADDR, OFFSET");
    parse_mac(args.positional(0), "ADDR", mac_);
    const std::string& o = args.positional(1);
    offset_ = o == "src" ? 6 : o == "dst" ? 0 : static_cast<uint16_t>(parse_uint(o, "OFFSET", 1500));
  }
  void push(int, PacketBatch& b) override {
    classify_push(b, [this](rte_mbuf* m) {
      if (rte_pktmbuf_data_len(m) < offset_ + 6u) return -1;
      std::memcpy(rte_pktmbuf_mtod_offset(m, uint8_t*, offset_), mac_, 6);
      return 0;
    });
  }

 private:
  uint8_t mac_[6] = {};
  uint16_t offset_ = 0;
};

// VLANEncap(VLAN_TCI tci | VLAN_ID id [, VLAN_PCP pcp] [, ETHERTYPE 0x8100]): inserts an 802.1Q tag.
class VLANEncap final : public Element {
 public:
  const char* class_name() const override { return "VLANEncap"; }
  void configure(Args& args) override {
    uint16_t tci = 0;
    bool have = false;
    if (args.positional_count() == 1) {
      tci = static_cast<uint16_t>(parse_uint(args.positional(0), "VLAN_TCI", 0xffff));
      have = true;
    } else if (args.positional_count() > 1) {
      throw ConfigError("expected at most one positional argument, VLAN_TCI");
    }
    if (auto v = args.take("VLAN_TCI")) tci = static_cast<uint16_t>(parse_uint(*v, "VLAN_TCI", 0xffff)), have = true;
    if (auto v = args.take("VLAN_ID"))
      tci = static_cast<uint16_t>((tci & 0xf000) | parse_uint(*v, "VLAN_ID", 4095)), have = true;
    if (auto v = args.take("VLAN_PCP")) tci = static_cast<uint16_t>((tci & 0x0fff) | parse_uint(*v, "VLAN_PCP", 7) << 13);
    if (auto v = args.take("ETHERTYPE")) tpid_ = parse_ethertype(*v);
    if (!have) throw ConfigError("missing VLAN_TCI or VLAN_ID");
    tci_ = tci;
  }
  void push(int, PacketBatch& b) override {
    classify_push(b, [this](rte_mbuf* m) {
      if (rte_pktmbuf_data_len(m) < 14) return -1;
      uint8_t* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, 4));
      if (p == nullptr) return -1;
      std::memmove(p, p + 4, 12);
      store16(p + 12, tpid_);
      store16(p + 14, tci_);
      return 0;
    });
  }

 private:
  uint16_t tci_ = 0;
  uint16_t tpid_ = RTE_ETHER_TYPE_VLAN;
};

// VLANDecap: removes the outer 802.1Q/802.1ad tag if there is one; untagged frames pass unchanged.
class VLANDecap final : public Element {
 public:
  const char* class_name() const override { return "VLANDecap"; }
  void configure(Args& args) override { args.take("ANNO"); }
  void push(int, PacketBatch& b) override {
    classify_push(b, [](rte_mbuf* m) {
      if (rte_pktmbuf_data_len(m) < 18) return 0;
      uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
      const uint16_t type = load16(p + 12);
      if (type != RTE_ETHER_TYPE_VLAN && type != RTE_ETHER_TYPE_QINQ) return 0;
      std::memmove(p + 4, p, 12);
      rte_pktmbuf_adj(m, 4);
      return 0;
    });
  }
};

}  // namespace

METRON_EXPORT_ELEMENT(Strip)
METRON_EXPORT_ELEMENT(Unstrip)
METRON_EXPORT_ELEMENT(EtherEncap)
METRON_EXPORT_ELEMENT(EtherRewrite)
METRON_EXPORT_ELEMENT(StoreEtherAddress)
METRON_EXPORT_ELEMENT(VLANEncap)
METRON_EXPORT_ELEMENT(VLANDecap)

}  // namespace metron

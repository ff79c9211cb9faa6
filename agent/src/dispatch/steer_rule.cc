#include "dispatch/steer_rule.h"

#include <algorithm>
#include <cstdio>

namespace metron {
namespace {

constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeIpv6 = 0x86dd;

grpc::Status Invalid(const std::string& where, const std::string& field, const std::string& what) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, where + "." + field + ": " + what);
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string Hex(const std::string& bytes) {
  std::string out;
  char buf[3];
  for (unsigned char c : bytes) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    out += buf;
  }
  return out.empty() ? "(empty)" : "0x" + out;
}

grpc::Status ParsePrefix(const std::string& bytes, uint32_t len, const std::string& where,
                         const std::string& field, IpPrefix* out) {
  if (bytes.empty()) {
    if (len != 0) return Invalid(where, field + "_prefix", std::to_string(len) + " given without " + field);
    *out = IpPrefix{};
    return grpc::Status::OK;
  }
  if (bytes.size() != 4 && bytes.size() != 16) {
    return Invalid(where, field, Hex(bytes) + " has " + std::to_string(bytes.size()) +
                                     " bytes, expected 4 (IPv4) or 16 (IPv6)");
  }
  const uint32_t max = bytes.size() * 8;
  if (len > max) {
    return Invalid(where, field + "_prefix", std::to_string(len) + " exceeds " + std::to_string(max));
  }
  IpPrefix p;
  p.version = bytes.size() == 4 ? 4 : 6;
  p.len = static_cast<uint8_t>(len);
  for (size_t i = 0; i < bytes.size(); ++i) p.addr[i] = static_cast<uint8_t>(bytes[i]);
  // A prefix of 0 with an address means "any address of this IP version".
  for (uint32_t bit = len; bit < max; ++bit) {
    if (p.addr[bit / 8] & (0x80 >> (bit % 8))) {
      return Invalid(where, field, Hex(bytes) + " has bits set beyond prefix length " + std::to_string(len));
    }
  }
  *out = p;
  return grpc::Status::OK;
}

grpc::Status ParsePort(uint32_t value, uint32_t mask, const std::string& where, const std::string& field,
                       PortMatch* out) {
  if (value > 0xffff) return Invalid(where, field, std::to_string(value) + " exceeds 65535");
  if (mask > 0xffff) return Invalid(where, field + "_mask", std::to_string(mask) + " exceeds 65535");
  if (value & ~mask) {
    return Invalid(where, field, std::to_string(value) + " has bits outside mask " + std::to_string(mask));
  }
  out->value = static_cast<uint16_t>(value);
  out->mask = static_cast<uint16_t>(mask);
  return grpc::Status::OK;
}

}  // namespace

uint8_t SteerMatch::ip_version() const {
  if (ip_src.version) return ip_src.version;
  if (ip_dst.version) return ip_dst.version;
  if (ether_type == kEtherTypeIpv4) return 4;
  if (ether_type == kEtherTypeIpv6) return 6;
  return 0;
}

void PrefixMask(uint8_t len, uint8_t* mask, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) {
    const int bits = std::min(8, std::max(0, static_cast<int>(len) - static_cast<int>(i) * 8));
    mask[i] = static_cast<uint8_t>(0xff00 >> bits);
  }
}

bool ParseMac(const std::string& text, MacAddr* out) {
  if (text.size() != 17) return false;
  MacAddr mac;
  for (int i = 0; i < 6; ++i) {
    if (i > 0 && text[i * 3 - 1] != ':') return false;
    int v = 0;
    for (int j = 0; j < 2; ++j) {
      const char c = text[i * 3 + j];
      int d;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      else return false;
      v = v * 16 + d;
    }
    mac[i] = static_cast<uint8_t>(v);
  }
  *out = mac;
  return true;
}

std::string FormatMac(const MacAddr& mac) {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
                mac[5]);
  return buf;
}

grpc::Status ParseNicRule(const pb::NicRule& rule, const std::string& where, SteerRule* out) {
  SteerRule r;
  r.id = rule.id();
  r.nic = rule.nic();
  r.priority = rule.priority();
  if (r.nic.empty()) return Invalid(where, "nic", "empty: every NIC rule names its NIC");

  const pb::NicMatch& m = rule.match();
  const std::string mw = where + ".match";
  if (!m.eth_dst().empty()) {
    if (!ParseMac(m.eth_dst(), &r.match.eth_dst)) {
      return Invalid(mw, "eth_dst", Quote(m.eth_dst()) + " is not a MAC address aa:bb:cc:dd:ee:ff");
    }
    r.match.has_eth_dst = true;
    r.match.eth_dst_mask.fill(0xff);
    if (!m.eth_dst_mask().empty() && !ParseMac(m.eth_dst_mask(), &r.match.eth_dst_mask)) {
      return Invalid(mw, "eth_dst_mask", Quote(m.eth_dst_mask()) + " is not a MAC mask aa:bb:cc:dd:ee:ff");
    }
    for (int i = 0; i < 6; ++i) {
      if (r.match.eth_dst[i] & ~r.match.eth_dst_mask[i]) {
        return Invalid(mw, "eth_dst", Quote(m.eth_dst()) + " has bits outside mask " +
                                          FormatMac(r.match.eth_dst_mask));
      }
    }
  } else if (!m.eth_dst_mask().empty()) {
    return Invalid(mw, "eth_dst_mask", Quote(m.eth_dst_mask()) + " given without eth_dst");
  }
  if (m.vlan() > kMaxVlanId) return Invalid(mw, "vlan", std::to_string(m.vlan()) + " is not a VLAN id 1..4094");
  r.match.vlan = static_cast<uint16_t>(m.vlan());
  if (m.ether_type() > 0xffff) return Invalid(mw, "ether_type", std::to_string(m.ether_type()) + " exceeds 0xffff");
  r.match.ether_type = static_cast<uint16_t>(m.ether_type());

  grpc::Status s = ParsePrefix(m.ip_src(), m.ip_src_prefix(), mw, "ip_src", &r.match.ip_src);
  if (!s.ok()) return s;
  s = ParsePrefix(m.ip_dst(), m.ip_dst_prefix(), mw, "ip_dst", &r.match.ip_dst);
  if (!s.ok()) return s;
  if (r.match.ip_src.version && r.match.ip_dst.version && r.match.ip_src.version != r.match.ip_dst.version) {
    return Invalid(mw, "ip_dst", "IPv" + std::to_string(r.match.ip_dst.version) + " address with an IPv" +
                                     std::to_string(r.match.ip_src.version) + " ip_src");
  }
  const uint8_t addr_version = r.match.ip_src.version ? r.match.ip_src.version : r.match.ip_dst.version;
  if (addr_version) {
    const uint16_t want = addr_version == 4 ? kEtherTypeIpv4 : kEtherTypeIpv6;
    if (r.match.ether_type && r.match.ether_type != want) {
      return Invalid(mw, "ether_type", std::to_string(r.match.ether_type) + " contradicts the IPv" +
                                           std::to_string(addr_version) + " address");
    }
    // Canonical form, so equal matches compare equal: the IP version lives in ether_type, and an address
    // with prefix 0 ("any address") says nothing more.
    r.match.ether_type = want;
    if (r.match.ip_src.len == 0) r.match.ip_src = IpPrefix{};
    if (r.match.ip_dst.len == 0) r.match.ip_dst = IpPrefix{};
  }
  if (m.ip_proto() > 0xff) return Invalid(mw, "ip_proto", std::to_string(m.ip_proto()) + " exceeds 255");
  r.match.ip_proto = static_cast<uint8_t>(m.ip_proto());
  if (r.match.ip_proto && r.match.ip_version() == 0) {
    return Invalid(mw, "ip_proto", std::to_string(m.ip_proto()) +
                                       " needs an IP version: set ether_type 0x0800/0x86dd or an address");
  }
  s = ParsePort(m.l4_src(), m.l4_src_mask(), mw, "l4_src", &r.match.l4_src);
  if (!s.ok()) return s;
  s = ParsePort(m.l4_dst(), m.l4_dst_mask(), mw, "l4_dst", &r.match.l4_dst);
  if (!s.ok()) return s;
  if (r.match.l4_src.mask || r.match.l4_dst.mask) {
    const uint8_t p = r.match.ip_proto;
    if (p != 6 && p != 17 && p != 132) {
      return Invalid(mw, "ip_proto", std::to_string(p) + ": l4 ports need ip_proto 6 (TCP), 17 (UDP) or 132 (SCTP)");
    }
  }

  const pb::NicAction& a = rule.action();
  switch (a.action_case()) {
    case pb::NicAction::kQueue:
      r.action = {SteerActionKind::kQueue, a.queue()};
      break;
    case pb::NicAction::kDrop:
      if (!a.drop()) return Invalid(where, "action.drop", "false: omit the action or set drop = true");
      r.action = {SteerActionKind::kDrop, 0};
      break;
    case pb::NicAction::kMark:
      r.action = {SteerActionKind::kMark, a.mark()};
      break;
    case pb::NicAction::ACTION_NOT_SET:
      return Invalid(where, "action", "not set: one of queue, drop, mark is required");
  }
  *out = std::move(r);
  return grpc::Status::OK;
}

pb::NicRule ToProto(const SteerRule& r) {
  pb::NicRule p;
  p.set_id(r.id);
  p.set_nic(r.nic);
  p.set_priority(r.priority);
  pb::NicMatch* m = p.mutable_match();
  if (r.match.has_eth_dst) {
    m->set_eth_dst(FormatMac(r.match.eth_dst));
    m->set_eth_dst_mask(FormatMac(r.match.eth_dst_mask));
  }
  m->set_vlan(r.match.vlan);
  m->set_ether_type(r.match.ether_type);
  auto set_prefix = [](const IpPrefix& ip, std::string* bytes, pb::NicMatch* mm, bool src) {
    if (!ip.version) return;
    bytes->assign(reinterpret_cast<const char*>(ip.addr.data()), ip.version == 4 ? 4 : 16);
    if (src) mm->set_ip_src_prefix(ip.len);
    else mm->set_ip_dst_prefix(ip.len);
  };
  set_prefix(r.match.ip_src, m->mutable_ip_src(), m, true);
  set_prefix(r.match.ip_dst, m->mutable_ip_dst(), m, false);
  m->set_ip_proto(r.match.ip_proto);
  m->set_l4_src(r.match.l4_src.value);
  m->set_l4_src_mask(r.match.l4_src.mask);
  m->set_l4_dst(r.match.l4_dst.value);
  m->set_l4_dst_mask(r.match.l4_dst.mask);
  switch (r.action.kind) {
    case SteerActionKind::kQueue: p.mutable_action()->set_queue(r.action.value); break;
    case SteerActionKind::kDrop: p.mutable_action()->set_drop(true); break;
    case SteerActionKind::kMark: p.mutable_action()->set_mark(r.action.value); break;
  }
  return p;
}

grpc::Status TagRule(pb::TagType type, uint32_t tag, uint32_t queue, const std::string& where, SteerRule* out) {
  SteerRule r;
  r.action = {SteerActionKind::kQueue, queue};
  switch (type) {
    case pb::TAG_MAC:
      if (tag == 0 || tag > kMaxMacGroupTag) {
        return Invalid(where, "value", std::to_string(tag) + " is not a MAC group tag 1..65535");
      }
      r.match.has_eth_dst = true;
      r.match.eth_dst = {kMacTagByte0, kMacTagByte1, static_cast<uint8_t>(tag >> 8), static_cast<uint8_t>(tag),
                         0, 0};
      r.match.eth_dst_mask = {0xff, 0xff, 0xff, 0xff, 0, 0};
      break;
    case pb::TAG_VLAN:
      if (tag == 0 || tag > kMaxVlanId) {
        return Invalid(where, "value", std::to_string(tag) + " is not a VLAN id 1..4094");
      }
      r.match.vlan = static_cast<uint16_t>(tag);
      break;
    default:
      return Invalid(where, "type", std::to_string(static_cast<int>(type)) + " is not TAG_MAC or TAG_VLAN");
  }
  *out = std::move(r);
  return grpc::Status::OK;
}

bool SameMatch(const SteerMatch& a, const SteerMatch& b) {
  auto same_prefix = [](const IpPrefix& x, const IpPrefix& y) {
    return x.version == y.version && x.len == y.len && x.addr == y.addr;
  };
  return a.has_eth_dst == b.has_eth_dst && (!a.has_eth_dst || (a.eth_dst == b.eth_dst && a.eth_dst_mask == b.eth_dst_mask)) &&
         a.vlan == b.vlan && a.ether_type == b.ether_type && same_prefix(a.ip_src, b.ip_src) &&
         same_prefix(a.ip_dst, b.ip_dst) && a.ip_proto == b.ip_proto && a.l4_src.value == b.l4_src.value &&
         a.l4_src.mask == b.l4_src.mask && a.l4_dst.value == b.l4_dst.value && a.l4_dst.mask == b.l4_dst.mask;
}

bool SameRule(const SteerRule& a, const SteerRule& b) {
  return a.priority == b.priority && a.action.kind == b.action.kind && a.action.value == b.action.value &&
         SameMatch(a.match, b.match);
}

}  // namespace metron

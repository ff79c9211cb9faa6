#include "dispatch/testpmd_flow_syntax.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

namespace metron {
namespace {

std::string FormatIp(const IpPrefix& p, bool mask) {
  uint8_t bytes[16];
  const size_t n = p.version == 4 ? 4 : 16;
  if (mask) PrefixMask(p.len, bytes, n);
  else std::copy(p.addr.begin(), p.addr.begin() + n, bytes);
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(p.version == 4 ? AF_INET : AF_INET6, bytes, buf, sizeof buf);
  return buf;
}

std::string Hex16(uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", v);
  return buf;
}

const char* L4Name(uint8_t proto) { return proto == 6 ? "tcp" : proto == 17 ? "udp" : "sctp"; }

uint8_t L4Proto(const std::string& item) { return item == "tcp" ? 6 : item == "udp" ? 17 : item == "sctp" ? 132 : 0; }

// ---- parsing ------------------------------------------------------------------------------------------------

struct Word {
  std::string text;
  size_t column;  // 1-based
};

class Parser {
 public:
  explicit Parser(const std::string& line) {
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      const size_t start = i;
      while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      if (i > start) words_.push_back({line.substr(start, i - start), start + 1});
    }
    end_column_ = line.size() + 1;
  }

  bool done() const { return pos_ >= words_.size(); }
  const std::string& peek() const {
    static const std::string kEnd;
    return done() ? kEnd : words_[pos_].text;
  }
  bool accept(const std::string& w) {
    if (peek() != w || done()) return false;
    ++pos_;
    return true;
  }
  grpc::Status expect(const std::string& w) {
    if (accept(w)) return grpc::Status::OK;
    return error("expected '" + w + "'");
  }
  grpc::Status word(std::string* out, const std::string& what) {
    if (done()) return error("expected " + what);
    *out = words_[pos_++].text;
    return grpc::Status::OK;
  }
  grpc::Status number(uint64_t max, uint64_t* out, const std::string& what) {
    if (done()) return error("expected " + what);
    const std::string& t = words_[pos_].text;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(t.c_str(), &end, 0);
    if (t.empty() || *end != '\0' || errno != 0 || v > max || t[0] == '-') {
      return error(what + " (0.." + std::to_string(max) + ")");
    }
    ++pos_;
    *out = v;
    return grpc::Status::OK;
  }
  size_t position() const { return pos_; }
  // An error at the current word (or the previous one, for values just consumed).
  grpc::Status error(const std::string& what, int back = 0) const {
    return error_at(pos_ >= static_cast<size_t>(back) ? pos_ - back : 0, what);
  }
  grpc::Status error_at(size_t at, const std::string& what) const {
    const std::string col = std::to_string(at < words_.size() ? words_[at].column : end_column_);
    const std::string got = at < words_.size() ? "'" + words_[at].text + "'" : "end of line";
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "testpmd flow, column " + col + ": " + what + ", got " + got);
  }

 private:
  std::vector<Word> words_;
  size_t pos_ = 0;
  size_t end_column_ = 1;
};

// "spec"/"is" values and "mask" values of one field, as text until the item is complete.
struct FieldValues {
  std::string spec, mask;
  size_t spec_at = 0, mask_at = 0;  // word positions, for errors
  bool exact = false;
};

grpc::Status ReadField(Parser& p, FieldValues* f) {
  std::string how;
  grpc::Status s = p.word(&how, "spec, mask or is");
  if (!s.ok()) return s;
  std::string* into = how == "spec" || how == "is" ? &f->spec : how == "mask" ? &f->mask : nullptr;
  if (into == nullptr) return p.error("expected spec, mask or is (last/prefix are not supported)", 1);
  if (how == "is") f->exact = true;
  (into == &f->mask ? f->mask_at : f->spec_at) = p.position();
  return p.word(into, "a value after '" + how + "'");
}

grpc::Status ParseIp(Parser& p, const std::string& text, size_t at, int version, std::string* bytes) {
  uint8_t buf[16];
  if (inet_pton(version == 4 ? AF_INET : AF_INET6, text.c_str(), buf) != 1) {
    return p.error_at(at, "expected an IPv" + std::to_string(version) + " address");
  }
  bytes->assign(reinterpret_cast<const char*>(buf), version == 4 ? 4 : 16);
  return grpc::Status::OK;
}

grpc::Status PrefixOf(Parser& p, const std::string& mask_bytes, size_t at, uint32_t* len) {
  uint32_t n = 0;
  bool ended = false;
  for (unsigned char b : mask_bytes) {
    for (int bit = 7; bit >= 0; --bit) {
      const bool one = b >> bit & 1;
      if (one && ended) return p.error_at(at, "the address mask is not a prefix");
      if (one) ++n;
      else ended = true;
    }
  }
  *len = n;
  return grpc::Status::OK;
}

uint64_t ToNumber(const std::string& text, bool* ok) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  *ok = !text.empty() && *end == '\0' && errno == 0 && text[0] != '-';
  return v;
}

}  // namespace

std::string ToTestpmd(const SteerRule& rule, uint16_t port_id, uint16_t default_queue) {
  const SteerMatch& m = rule.match;
  std::ostringstream s;
  s << "flow create " << port_id << " ingress priority " << rule.priority << " pattern eth";
  const uint8_t version = m.ip_version();
  const uint16_t ether_type = version ? 0 : m.ether_type;
  if (m.has_eth_dst) s << " dst spec " << FormatMac(m.eth_dst) << " dst mask " << FormatMac(m.eth_dst_mask);
  if (!m.vlan && ether_type) s << " type is " << Hex16(ether_type);
  if (m.vlan) {
    s << " / vlan tci spec " << m.vlan << " tci mask 0x0fff";
    if (ether_type) s << " inner_type is " << Hex16(ether_type);
  }
  if (version) {
    s << " / ipv" << int{version};
    if (m.ip_src.version && m.ip_src.len) s << " src spec " << FormatIp(m.ip_src, false) << " src mask " << FormatIp(m.ip_src, true);
    if (m.ip_dst.version && m.ip_dst.len) s << " dst spec " << FormatIp(m.ip_dst, false) << " dst mask " << FormatIp(m.ip_dst, true);
    if (m.ip_proto) s << " proto is " << int{m.ip_proto};
  }
  if (m.ip_proto == 6 || m.ip_proto == 17 || m.ip_proto == 132) {
    s << " / " << L4Name(m.ip_proto);
    if (m.l4_src.mask) s << " src spec " << m.l4_src.value << " src mask " << Hex16(m.l4_src.mask);
    if (m.l4_dst.mask) s << " dst spec " << m.l4_dst.value << " dst mask " << Hex16(m.l4_dst.mask);
  }
  s << " / end actions ";
  switch (rule.action.kind) {
    case SteerActionKind::kQueue: s << "queue index " << rule.action.value; break;
    case SteerActionKind::kDrop: s << "drop"; break;
    case SteerActionKind::kMark: s << "mark id " << rule.action.value << " / queue index " << default_queue; break;
  }
  s << " / end";
  return s.str();
}

grpc::Status ParseTestpmd(const std::string& line, const std::string& nic, uint64_t id, SteerRule* out,
                          uint16_t* port_id) {
  Parser p(line);
  pb::NicRule rule;
  rule.set_id(id);
  rule.set_nic(nic);
  pb::NicMatch* m = rule.mutable_match();
  grpc::Status s = p.expect("flow");
  if (s.ok()) s = p.expect("create");
  uint64_t v = 0;
  if (s.ok()) s = p.number(0xffff, &v, "a port id");
  if (!s.ok()) return s;
  const uint16_t port = static_cast<uint16_t>(v);
  while (!p.accept("pattern")) {
    if (p.accept("ingress")) continue;
    if (p.accept("priority")) {
      s = p.number(0xffffffff, &v, "a priority");
      if (!s.ok()) return s;
      rule.set_priority(static_cast<uint32_t>(v));
      continue;
    }
    return p.error("expected ingress, priority or pattern (egress/transfer/group are not NicRule attributes)");
  }

  // Items, in protocol order: eth, vlan, one IP item, one L4 item.
  auto stage_of = [](const std::string& item) {
    return item == "eth" ? 0 : item == "vlan" ? 1 : item == "ipv4" || item == "ipv6" ? 2 : L4Proto(item) ? 3 : -1;
  };
  int last_stage = -1;
  int ip_version = 0;
  while (!p.accept("end")) {
    std::string item;
    const size_t item_at = p.position();
    s = p.word(&item, "a pattern item or end");
    if (!s.ok()) return s;
    const int stage = stage_of(item);
    if (stage < 0) return p.error("expected eth, vlan, ipv4, ipv6, tcp, udp, sctp or end", 1);
    if (stage <= last_stage) return p.error("pattern items out of order or repeated", 1);
    last_stage = stage;
    std::map<std::string, FieldValues> fields;
    while (p.peek() != "/" && !p.done()) {
      std::string field;
      s = p.word(&field, "a field");
      if (!s.ok()) return s;
      s = ReadField(p, &fields[field]);
      if (!s.ok()) return s;
      const bool known = (item == "eth" && (field == "dst" || field == "type")) ||
                         (item == "vlan" && (field == "tci" || field == "inner_type")) ||
                         ((item == "ipv4" || item == "ipv6") && (field == "src" || field == "dst" || field == "proto")) ||
                         (L4Proto(item) && (field == "src" || field == "dst"));
      if (!known) return p.error("'" + item + " " + field + "' is not a NicRule match field", 3);
    }
    s = p.expect("/");
    if (!s.ok()) return s;
    bool ok = true;
    size_t bad_at = 0;
    if (item == "eth") {
      if (fields.count("dst")) {
        const FieldValues& f = fields["dst"];
        m->set_eth_dst(f.spec);
        if (!f.exact && !f.mask.empty()) m->set_eth_dst_mask(f.mask);
      }
      if (fields.count("type")) {
        m->set_ether_type(static_cast<uint32_t>(ToNumber(fields["type"].spec, &ok)));
        bad_at = fields["type"].spec_at;
      }
    } else if (item == "vlan") {
      if (fields.count("tci")) {
        const FieldValues& f = fields["tci"];
        const uint64_t tci = ToNumber(f.spec, &ok);
        bool mask_ok = true;
        const uint64_t mask = f.mask.empty() ? 0xffff : ToNumber(f.mask, &mask_ok);
        if (!ok || !mask_ok || (mask & 0x0fff) != 0x0fff || (tci & ~0x0fffull & mask)) {
          return p.error_at(f.mask.empty() ? f.spec_at : f.mask_at,
                            "vlan tci must match the VLAN id exactly (mask 0x0fff, no PCP/DEI bits)");
        }
        m->set_vlan(static_cast<uint32_t>(tci & 0x0fff));
      }
      if (fields.count("inner_type")) {
        m->set_ether_type(static_cast<uint32_t>(ToNumber(fields["inner_type"].spec, &ok)));
        bad_at = fields["inner_type"].spec_at;
      }
    } else if (item == "ipv4" || item == "ipv6") {
      ip_version = item == "ipv4" ? 4 : 6;
      for (const char* dir : {"src", "dst"}) {
        if (!fields.count(dir)) continue;
        const FieldValues& f = fields[dir];
        std::string addr, mask;
        s = ParseIp(p, f.spec, f.spec_at, ip_version, &addr);
        if (s.ok() && !f.exact && !f.mask.empty()) s = ParseIp(p, f.mask, f.mask_at, ip_version, &mask);
        uint32_t len = ip_version == 4 ? 32 : 128;
        if (s.ok() && !mask.empty()) s = PrefixOf(p, mask, f.mask_at, &len);
        if (!s.ok()) return s;
        if (std::string(dir) == "src") {
          m->set_ip_src(addr);
          m->set_ip_src_prefix(len);
        } else {
          m->set_ip_dst(addr);
          m->set_ip_dst_prefix(len);
        }
      }
      if (fields.count("proto")) {
        m->set_ip_proto(static_cast<uint32_t>(ToNumber(fields["proto"].spec, &ok)));
        bad_at = fields["proto"].spec_at;
      }
      if (m->ether_type() && m->ether_type() != (ip_version == 4 ? 0x0800u : 0x86ddu)) {
        return p.error_at(item_at, "'" + item + "' contradicts the ether type given before");
      }
      m->set_ether_type(ip_version == 4 ? 0x0800 : 0x86dd);
    } else {
      const uint8_t proto = L4Proto(item);
      if (m->ip_proto() && m->ip_proto() != proto) return p.error_at(item_at, "'" + item + "' contradicts the IP item's proto");
      m->set_ip_proto(proto);
      for (const char* dir : {"src", "dst"}) {
        if (!fields.count(dir)) continue;
        const FieldValues& f = fields[dir];
        bool mask_ok = true;
        const uint64_t port_value = ToNumber(f.spec, &ok);
        const uint64_t mask = f.exact || f.mask.empty() ? 0xffff : ToNumber(f.mask, &mask_ok);
        if (!ok || !mask_ok) return p.error_at(ok ? f.mask_at : f.spec_at, "expected a number");
        if (std::string(dir) == "src") {
          m->set_l4_src(static_cast<uint32_t>(port_value));
          m->set_l4_src_mask(static_cast<uint32_t>(mask));
        } else {
          m->set_l4_dst(static_cast<uint32_t>(port_value));
          m->set_l4_dst_mask(static_cast<uint32_t>(mask));
        }
      }
    }
    if (!ok) return p.error_at(bad_at, "expected a number");
  }

  s = p.expect("actions");
  if (!s.ok()) return s;
  bool have_fate = false;
  while (!p.accept("end")) {
    if (p.accept("queue")) {
      s = p.expect("index");
      if (s.ok()) s = p.number(0xffff, &v, "a queue index");
      if (!s.ok()) return s;
      // After mark, the queue is where marked frames go: the rule's queue is the NIC's default one.
      if (!rule.action().has_mark()) rule.mutable_action()->set_queue(static_cast<uint32_t>(v));
    } else if (p.accept("drop")) {
      rule.mutable_action()->set_drop(true);
    } else if (p.accept("mark")) {
      s = p.expect("id");
      if (s.ok()) s = p.number(0xffffffff, &v, "a mark id");
      if (!s.ok()) return s;
      rule.mutable_action()->set_mark(static_cast<uint32_t>(v));
    } else {
      return p.error("expected queue, drop, mark or end");
    }
    have_fate = true;
    s = p.expect("/");
    if (!s.ok()) return s;
  }
  if (!have_fate) return p.error("expected an action before end", 1);
  if (!p.done()) return p.error("expected the end of the line");
  s = ParseNicRule(rule, "testpmd flow", out);
  if (s.ok() && port_id != nullptr) *port_id = port;
  return s;
}

}  // namespace metron

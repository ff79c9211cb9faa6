#include "elements/ip_rules.h"

#include <arpa/inet.h>

#include <cctype>
#include <cstddef>
#include <cstring>
#include <functional>
#include <map>

#include "core/annotations.h"
#include "elements/ipv6_ext.h"
#include "utils/args.h"
#include "utils/checksum.h"

namespace metron {

namespace {

using K = Expr::Kind;

std::unique_ptr<Expr> leaf(Field f, uint32_t lo, uint32_t hi) {
  auto e = std::make_unique<Expr>();
  e->kind = K::kField;
  e->field = f;
  e->iv = {lo, hi};
  return e;
}
std::unique_ptr<Expr> node(K k, std::unique_ptr<Expr> a, std::unique_ptr<Expr> b = nullptr) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->a = std::move(a);
  e->b = std::move(b);
  return e;
}
std::unique_ptr<Expr> all(std::unique_ptr<Expr> a, std::unique_ptr<Expr> b) { return node(K::kAnd, std::move(a), std::move(b)); }
std::unique_ptr<Expr> any(std::unique_ptr<Expr> a, std::unique_ptr<Expr> b) { return node(K::kOr, std::move(a), std::move(b)); }
std::unique_ptr<Expr> constant(bool v) {
  auto e = std::make_unique<Expr>();
  e->kind = v ? K::kTrue : K::kFalse;
  return e;
}
std::unique_ptr<Expr> version(uint32_t v) {
  auto e = std::make_unique<Expr>();
  e->kind = K::kVersion;
  e->iv = {v, v};
  return e;
}
std::unique_ptr<Expr> first_frag() { return leaf(Field::kFirstFrag, 1, 1); }

const std::map<std::string, uint32_t>& proto_names() {
  static const std::map<std::string, uint32_t> m = {{"icmp", 1},   {"igmp", 2},    {"tcp", 6},  {"udp", 17},
                                                    {"gre", 47},   {"esp", 50},    {"ah", 51},  {"icmp6", 58},
                                                    {"icmpv6", 58}, {"sctp", 132}};
  return m;
}
const std::map<std::string, uint32_t>& port_names() {
  static const std::map<std::string, uint32_t> m = {
      {"ftp", 21},  {"ssh", 22}, {"telnet", 23}, {"smtp", 25}, {"domain", 53}, {"dns", 53},
      {"http", 80}, {"www", 80}, {"pop3", 110},  {"ntp", 123}, {"imap", 143}, {"snmp", 161},
      {"bgp", 179}, {"https", 443}};
  return m;
}
// The same numbers for ICMP and ICMPv6 packets, as the synthesizer's pattern parser reads them.
const std::map<std::string, uint32_t>& icmp_type_names() {
  static const std::map<std::string, uint32_t> m = {
      {"echo-reply", 0}, {"unreachable", 3}, {"redirect", 5}, {"echo", 8}, {"time-exceeded", 11}};
  return m;
}
const std::map<std::string, uint8_t>& tcp_flag_names() {
  static const std::map<std::string, uint8_t> m = {{"fin", 0x01}, {"syn", 0x02}, {"rst", 0x04},
                                                   {"psh", 0x08}, {"ack", 0x10}, {"urg", 0x20}};
  return m;
}

bool looks_like_address(const std::string& w) {
  if (w.empty()) return false;
  if (w.find(':') != std::string::npos) return std::isxdigit(static_cast<unsigned char>(w[0])) || w[0] == ':';
  return std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos;
}
bool is_relation(const std::string& t) {
  return t == "<" || t == ">" || t == "<=" || t == ">=" || t == "=" || t == "==" || t == "!=";
}

class ExprParser {
 public:
  explicit ExprParser(const std::string& text) : text_(text) {
    std::string cur;
    auto flush = [&] {
      if (!cur.empty()) toks_.push_back(cur), cur.clear();
    };
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        flush();
      } else if (c == '(' || c == ')') {
        flush();
        toks_.push_back(std::string(1, c));
      } else if (c == '!' && (i + 1 >= text.size() || text[i + 1] != '=')) {
        flush();
        toks_.push_back("!");
      } else if ((c == '&' || c == '|') && i + 1 < text.size() && text[i + 1] == c) {
        flush();
        toks_.push_back(std::string(2, c));
        ++i;
      } else if (c == '<' || c == '>' || c == '=' || c == '!') {  // relations, also written without spaces
        flush();
        std::string op(1, c);
        if (i + 1 < text.size() && text[i + 1] == '=') op += '=', ++i;
        toks_.push_back(op);
      } else {
        cur += c;
      }
    }
    flush();
  }

  std::unique_ptr<Expr> parse() {
    if (toks_.empty()) fail("empty expression");
    auto e = parse_or();
    if (i_ < toks_.size()) fail("unexpected '" + toks_[i_] + "'");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const { throw ConfigError("in '" + text_ + "': " + msg); }
  bool at(const std::string& t) const { return i_ < toks_.size() && toks_[i_] == t; }
  std::string next(const std::string& what) {
    if (i_ >= toks_.size()) fail("expected " + what + " at the end");
    return toks_[i_++];
  }

  std::unique_ptr<Expr> parse_or() {
    auto e = parse_and();
    while (at("or") || at("||")) {
      ++i_;
      e = any(std::move(e), parse_and());
    }
    return e;
  }
  std::unique_ptr<Expr> parse_and() {
    auto e = parse_not();
    for (;;) {
      if (at("and") || at("&&")) {
        ++i_;
      } else if (i_ >= toks_.size() || at(")") || at("or") || at("||")) {
        return e;
      }  // otherwise juxtaposition: an implied `and`
      e = all(std::move(e), parse_not());
    }
  }
  std::unique_ptr<Expr> parse_not() {
    if (at("not") || at("!")) {
      ++i_;
      return node(K::kNot, parse_not());
    }
    if (at("(")) {
      ++i_;
      auto e = parse_or();
      if (!at(")")) fail("missing ')'");
      ++i_;
      return e;
    }
    return primitive();
  }

  // A decimal or 0x-hexadecimal number (a leading zero is not octal), or a name from `names`.
  uint32_t value(const std::string& v, const std::string& what, uint32_t max,
                 const std::map<std::string, uint32_t>* names) const {
    if (names != nullptr && names->count(v)) return names->at(v);
    const bool hex = v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
    const std::string digits = hex ? v.substr(2) : v;
    uint64_t x = 0;
    bool ok = !digits.empty() && digits.size() <= 10;
    for (char c : digits) {
      const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                    : hex && std::isxdigit(static_cast<unsigned char>(c)) ? std::tolower(c) - 'a' + 10
                                                                          : -1;
      ok = ok && d >= 0;
      x = x * (hex ? 16 : 10) + static_cast<uint64_t>(std::max(d, 0));
    }
    if (!ok || x > max)
      fail(what + ": expected a number 0.." + std::to_string(max) + (names != nullptr ? " or a name" : "") +
           ", got '" + v + "'");
    return static_cast<uint32_t>(x);
  }

  // [REL] VALUE or LO-HI over 0..max: the allowed values of field f as a leaf (or the negation of one).
  std::unique_ptr<Expr> relation(Field f, const std::string& what, const std::map<std::string, uint32_t>* names,
                                 uint32_t max) {
    std::string op = "=";
    if (i_ < toks_.size() && is_relation(toks_[i_])) op = toks_[i_++];
    const std::string v = next(what);
    uint32_t lo, hi;
    const size_t dash = v.find('-', 1);
    if ((op == "=" || op == "==") && dash != std::string::npos && (names == nullptr || !names->count(v))) {
      lo = value(v.substr(0, dash), what, max, names);
      hi = value(v.substr(dash + 1), what, max, names);
      if (lo > hi) fail(what + ": empty range '" + v + "'");
    } else {
      lo = hi = value(v, what, max, names);
    }
    if (op == "=" || op == "==") return leaf(f, lo, hi);
    if (op == "!=") return node(K::kNot, leaf(f, lo, lo));
    if (op == "<") return lo == 0 ? constant(false) : leaf(f, 0, lo - 1);
    if (op == "<=") return leaf(f, 0, lo);
    if (op == ">") return lo == max ? constant(false) : leaf(f, lo + 1, max);
    return leaf(f, lo, max);  // >=
  }
  std::unique_ptr<Expr> relation(Field f, const std::string& what, const std::map<std::string, uint32_t>* names) {
    return relation(f, what, names, kFieldMax[static_cast<int>(f)]);
  }

  // ICMP for IPv4 packets, ICMPv6 for IPv6 ones: what `icmp`, `proto icmp` and `icmp type` test.
  static std::unique_ptr<Expr> icmp() {
    return any(all(version(4), leaf(Field::kProto, 1, 1)), all(version(6), leaf(Field::kProto, 58, 58)));
  }

  // `ip proto`/`proto` VALUE: the name `icmp` (without a relation) means either ICMP version, as above.
  std::unique_ptr<Expr> proto() {
    if (at("icmp")) {
      ++i_;
      return icmp();
    }
    return relation(Field::kProto, "ip proto", &proto_names());
  }

  std::unique_ptr<Expr> ip_qualified() {  // after "ip"
    const std::string w = i_ < toks_.size() ? toks_[i_] : "";
    auto take = [&] { return ++i_, true; };
    if (w == "proto" && take()) return proto();
    if (w == "vers" && take()) {
      const std::string v = next("an IP version");
      if (v != "4" && v != "6") fail("ip vers: expected 4 or 6, got '" + v + "'");
      return version(v == "4" ? 4 : 6);
    }
    if ((w == "ttl" || w == "hlim") && take()) return relation(Field::kTtl, "ip " + w, nullptr);
    if (w == "tos" && take()) return relation(Field::kTos, "ip tos", nullptr);
    if (w == "dscp" && take()) {  // the TOS byte's upper six bits
      std::unique_ptr<Expr> d = relation(Field::kTos, "ip dscp", nullptr, 63);
      Expr* l = d->kind == K::kNot ? d->a.get() : d.get();
      if (l->kind == K::kField) l->iv = {l->iv.lo << 2, l->iv.hi << 2 | 3};
      return d;
    }
    if (w == "firstfrag" && take()) return first_frag();
    if (w == "mf" && take()) return leaf(Field::kMf, 1, 1);
    if (w == "frag" && take()) return any(leaf(Field::kMf, 1, 1), node(K::kNot, first_frag()));
    if (w == "unfrag" && take()) return all(leaf(Field::kMf, 0, 0), first_frag());
    return constant(true);  // plain `ip`
  }

  std::unique_ptr<Expr> primitive() {
    const std::string w = next("a primitive");
    if (w == "true" || w == "any" || w == "all" || w == "-") return constant(true);
    if (w == "false" || w == "none") return constant(false);
    if (w == "ip") return ip_qualified();
    if (w == "proto") return proto();
    if (w == "icmp") {
      if (!at("type")) return icmp();
      ++i_;
      // A transport test, as in Click's IPFilter (FIELD_ICMP_TYPE carries the ICMP protocol, so it holds for
      // first fragments only) and in the synthesizer (docs/contracts.md): a later fragment has no ICMP header,
      // whatever type its key reads (0).
      return all(all(icmp(), first_frag()), relation(Field::kIcmpType, "icmp type", &icmp_type_names()));
    }
    if (w == "tcp" && at("opt")) {
      ++i_;
      const std::string f = next("a TCP flag");
      auto it = tcp_flag_names().find(f);
      if (it == tcp_flag_names().end()) fail("tcp opt: expected syn, ack, fin, rst, psh or urg, got '" + f + "'");
      auto flag = std::make_unique<Expr>();
      flag->kind = K::kTcpFlag;
      flag->flag = it->second;
      return all(leaf(Field::kProto, 6, 6), all(first_frag(), std::move(flag)));
    }
    if ((w == "tcp" || w == "udp") && port_follows()) return directional(w);
    auto pn = proto_names().find(w);
    if (pn != proto_names().end()) return leaf(Field::kProto, pn->second, pn->second);
    if (w == "src" || w == "dst" || w == "host" || w == "net" || w == "port") {
      --i_;
      return directional("");
    }
    // A bare value repeats the previous address or port primitive (`dst port 80 or 443`, `src host A or B`).
    if (repeat_ && (std::isdigit(static_cast<unsigned char>(w[0])) || w.find(':') != std::string::npos ||
                    is_relation(w) || port_names().count(w))) {
      --i_;
      return repeat_();
    }
    if (looks_like_address(w)) {
      --i_;
      return address_test(0, true);
    }
    fail("unknown primitive '" + w + "'");
  }

  // Whether a port test follows: [src|dst|src or dst|src and dst] port.
  bool port_follows() const {
    size_t j = i_;
    if (j < toks_.size() && (toks_[j] == "src" || toks_[j] == "dst")) ++j;
    if (j > i_ && toks_[j - 1] == "src" && j + 1 < toks_.size() && (toks_[j] == "or" || toks_[j] == "and") &&
        toks_[j + 1] == "dst")
      j += 2;
    return j < toks_.size() && toks_[j] == "port";
  }

  // [src|dst|src or dst|src and dst] [tcp|udp] port ... | host ... | net ... | ADDRESS; proto: tcp/udp before.
  std::unique_ptr<Expr> directional(std::string proto) {
    int dir = 0;  // 0 either, 1 src, 2 dst, 3 both
    if (at("src")) dir = 1, ++i_;
    else if (at("dst")) dir = 2, ++i_;
    if (dir == 1 && (at("or") || at("and")) && i_ + 1 < toks_.size() && toks_[i_ + 1] == "dst") {
      dir = at("or") ? 0 : 3;
      i_ += 2;
    }
    if (proto.empty() && (at("tcp") || at("udp"))) {
      proto = toks_[i_++];
      if (!at("port")) fail("expected 'port' after '" + proto + "'");
    }
    const std::string kind = i_ < toks_.size() ? toks_[i_] : "";
    if (kind == "host" || kind == "net") {
      ++i_;
      return address_test(dir, kind == "host");
    }
    if (kind == "port") {
      ++i_;
      auto e = port_test(dir, proto);
      repeat_ = [this, dir, proto] { return port_test(dir, proto); };
      return e;
    }
    if (dir && looks_like_address(kind)) return address_test(dir, true);
    fail("expected 'host', 'net' or 'port' after '" +
         std::string(dir == 1 ? "src" : dir == 2 ? "dst" : dir == 3 ? "src and dst" : "") + "'");
  }

  // Ports exist only for TCP and UDP (`tcp`/`udp` before the test: that one), and only in first fragments.
  std::unique_ptr<Expr> port_test(int dir, const std::string& proto) {
    auto port = [&](Field f) { return relation(f, "port", &port_names()); };
    std::unique_ptr<Expr> e;
    if (dir == 1 || dir == 2) {
      e = port(dir == 1 ? Field::kSport : Field::kDport);
    } else {
      const size_t save = i_;
      auto s = port(Field::kSport);
      i_ = save;
      e = node(dir == 0 ? K::kOr : K::kAnd, std::move(s), port(Field::kDport));
    }
    auto p = proto == "tcp"   ? leaf(Field::kProto, 6, 6)
             : proto == "udp" ? leaf(Field::kProto, 17, 17)
                              : any(leaf(Field::kProto, 6, 6), leaf(Field::kProto, 17, 17));
    return all(all(std::move(p), first_frag()), std::move(e));
  }

  // host/net A for src (1), dst (2), either (0) or both (3); IPv4 gives interval leaves, IPv6 prefix leaves.
  std::unique_ptr<Expr> address_test(int dir, bool host) {
    auto e = one_address(dir, host);
    repeat_ = [this, dir, host] { return one_address(dir, host); };
    return e;
  }
  std::unique_ptr<Expr> one_address(int dir, bool host) {
    std::string a = next("an address");
    auto sides = [dir](std::unique_ptr<Expr> s, std::unique_ptr<Expr> d) {
      if (dir == 1) return s;
      if (dir == 2) return d;
      return node(dir == 3 ? K::kAnd : K::kOr, std::move(s), std::move(d));
    };
    if (a.find(':') != std::string::npos) {
      auto e6 = [&](K k) {
        auto e = std::make_unique<Expr>();
        e->kind = k;
        const size_t slash = a.find('/');
        parse_ipv6(a.substr(0, slash), "address", e->addr6);
        e->len6 = slash == std::string::npos ? 128 : static_cast<uint8_t>(parse_uint(a.substr(slash + 1), "prefix length", 128));
        if (host && e->len6 != 128) fail("'host' takes an address, not a prefix: '" + a + "'");
        for (int bit = e->len6; bit < 128; ++bit) e->addr6[bit / 8] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
        return e;
      };
      return sides(e6(K::kSrc6), e6(K::kDst6));
    }
    if (!host && at("mask")) {
      ++i_;
      a += " " + next("a netmask");
    }
    uint32_t addr, mask;
    parse_ipv4_prefix(a, "address", &addr, &mask);
    if (host && mask != 0xffffffff) fail("'host' takes an address, not a prefix: '" + a + "'");
    const Interval iv{addr, addr | ~mask};
    return sides(leaf(Field::kSrc, iv.lo, iv.hi), leaf(Field::kDst, iv.lo, iv.hi));
  }

  std::function<std::unique_ptr<Expr>()> repeat_;  // the last address or port primitive, for bare values

  std::string text_;
  std::vector<std::string> toks_;
  size_t i_ = 0;
};

uint32_t field_value(const PacketFacts& f, Field x) {
  switch (x) {
    case Field::kProto: return f.proto;
    case Field::kFirstFrag: return f.first_frag;
    case Field::kTtl: return f.ttl;
    case Field::kTos: return f.tos;
    case Field::kSrc: return load32(f.src);
    case Field::kDst: return load32(f.dst);
    case Field::kSport: return f.sport;
    case Field::kDport: return f.dport;
    case Field::kMf: return f.mf;
    case Field::kIcmpType: return f.icmp_type;
  }
  return 0;
}

bool prefix_match(const uint8_t* a, const uint8_t* p, int len) {
  for (int bit = 0; bit < len; ++bit) {
    const uint8_t m = static_cast<uint8_t>(0x80 >> (bit % 8));
    if ((a[bit / 8] & m) != (p[bit / 8] & m)) return false;
  }
  return true;
}

Term full_term() {
  Term t;
  for (int f = 0; f < kFields; ++f) t.iv[f] = {0, kFieldMax[f]};
  return t;
}

// The longer of two prefixes if one contains the other; false if they are disjoint.
bool intersect(const Prefix6& a, const Prefix6& b, Prefix6* out) {
  const Prefix6& shorter = a.len <= b.len ? a : b;
  const Prefix6& longer = a.len <= b.len ? b : a;
  if (!prefix_match(longer.addr, shorter.addr, shorter.len)) return false;
  *out = longer;
  return true;
}

std::vector<Term> terms(const Expr& e, bool neg, size_t max, uint8_t version) {
  std::vector<Term> out;
  auto constant_terms = [&](bool v) {
    if (v != neg) out.push_back(full_term());
    return out;
  };
  switch (e.kind) {
    case K::kTrue: return constant_terms(true);
    case K::kFalse: return constant_terms(false);
    case K::kVersion: return constant_terms(e.iv.lo == version);
    case K::kSrc6:
    case K::kDst6: {
      if (version != 6) return constant_terms(false);
      Prefix6 p;
      std::memcpy(p.addr, e.addr6, 16);
      p.len = e.len6;
      auto with = [&](const Prefix6& q) {
        Term t = full_term();
        (e.kind == K::kSrc6 ? t.src6 : t.dst6) = q;
        out.push_back(t);
      };
      if (!neg) {
        with(p);
        return out;
      }
      // Not in P/len: agrees with P on the first b bits and differs at bit b, for some b < len.
      for (int b = 0; b < p.len; ++b) {
        Prefix6 q;
        std::memcpy(q.addr, p.addr, 16);
        for (int bit = b + 1; bit < 128; ++bit) q.addr[bit / 8] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
        q.addr[b / 8] ^= static_cast<uint8_t>(0x80 >> (b % 8));
        q.len = static_cast<uint8_t>(b + 1);
        with(q);
      }
      return out;
    }
    case K::kNot: return terms(*e.a, !neg, max, version);
    case K::kTcpFlag: {
      Term t = full_term();
      (neg ? t.flags_clear : t.flags_set) = e.flag;
      out.push_back(t);
      return out;
    }
    case K::kField: {
      const int f = static_cast<int>(e.field);
      // IPv4 address tests are false on IPv6 packets (eval), whatever the interval.
      if (version != 4 && (e.field == Field::kSrc || e.field == Field::kDst)) return constant_terms(false);
      if (!neg) {
        Term t = full_term();
        t.iv[f] = e.iv;
        out.push_back(t);
      } else {
        if (e.iv.lo > 0) {
          Term t = full_term();
          t.iv[f] = {0, e.iv.lo - 1};
          out.push_back(t);
        }
        if (e.iv.hi < kFieldMax[f]) {
          Term t = full_term();
          t.iv[f] = {e.iv.hi + 1, kFieldMax[f]};
          out.push_back(t);
        }
      }
      return out;
    }
    case K::kAnd:
    case K::kOr: {
      const bool conj = (e.kind == K::kAnd) != neg;  // De Morgan
      std::vector<Term> l = terms(*e.a, neg, max, version), r = terms(*e.b, neg, max, version);
      if (!conj) {
        l.insert(l.end(), r.begin(), r.end());
        if (l.size() > max) throw ConfigError("rule expands to more than " + std::to_string(max) + " terms");
        return l;
      }
      for (const Term& x : l)
        for (const Term& y : r) {
          Term t;
          bool empty = false;
          for (int f = 0; f < kFields; ++f) {
            t.iv[f] = {std::max(x.iv[f].lo, y.iv[f].lo), std::min(x.iv[f].hi, y.iv[f].hi)};
            if (t.iv[f].lo > t.iv[f].hi) empty = true;
          }
          t.flags_set = x.flags_set | y.flags_set;
          t.flags_clear = x.flags_clear | y.flags_clear;
          if (t.flags_set & t.flags_clear) empty = true;
          if (!intersect(x.src6, y.src6, &t.src6) || !intersect(x.dst6, y.dst6, &t.dst6)) empty = true;
          if (!empty) out.push_back(t);
          if (out.size() > max) throw ConfigError("rule expands to more than " + std::to_string(max) + " terms");
        }
      return out;
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<Expr> parse_ip_expr(const std::string& text) { return ExprParser(text).parse(); }

bool eval(const Expr& e, const PacketFacts& f) {
  switch (e.kind) {
    case K::kTrue: return true;
    case K::kFalse: return false;
    case K::kNot: return !eval(*e.a, f);
    case K::kAnd: return eval(*e.a, f) && eval(*e.b, f);
    case K::kOr: return eval(*e.a, f) || eval(*e.b, f);
    case K::kVersion: return f.version == e.iv.lo;
    case K::kTcpFlag: return (f.tcp_flags & e.flag) != 0;
    case K::kSrc6: return f.version == 6 && prefix_match(f.src, e.addr6, e.len6);
    case K::kDst6: return f.version == 6 && prefix_match(f.dst, e.addr6, e.len6);
    case K::kField: {
      if (f.version != 4 && (e.field == Field::kSrc || e.field == Field::kDst)) return false;
      const uint32_t v = field_value(f, e.field);
      return v >= e.iv.lo && v <= e.iv.hi;
    }
  }
  return false;
}

std::vector<Term> to_terms(const Expr& e, size_t max_terms, uint8_t version) {
  return terms(e, false, max_terms, version);
}

IpRule parse_ipfilter_rule(const std::string& arg) {
  const size_t sp = arg.find_first_of(" \t\n");
  const std::string action = arg.substr(0, sp);
  const std::string rest = sp == std::string::npos ? "" : arg.substr(sp + 1);
  IpRule r;
  r.text = arg;
  if (action == "allow") r.output = 0;
  else if (action == "deny" || action == "drop") r.output = -1;
  else if (!action.empty() && std::isdigit(static_cast<unsigned char>(action[0])))
    r.output = static_cast<int>(parse_uint(action, "rule '" + arg + "' output", 1023));
  else
    throw ConfigError("rule '" + arg + "': expected 'allow', 'deny', 'drop' or an output number first");
  r.expr = parse_ip_expr(rest);
  return r;
}

int first_match(const std::vector<IpRule>& rules, const PacketFacts& f) {
  for (const IpRule& r : rules)
    if (eval(*r.expr, f)) return r.output;
  return -1;
}

namespace {

// The transport fields the filter language tests (TCP/UDP ports and flags, ICMP/ICMPv6 type) of a first
// fragment's upper-layer header at l4 with l4left bytes (maybe negative) left in the datagram, as the compiled
// classifiers' keys hold them: two 4-byte words as they lie in memory, network order (sport dport | icmp_type
// tcp_flags, each widened to 16 bits so the group fills its word). Zero where the packet has none. Written whole
// into a key: a group stored in halves cannot be forwarded to rte_acl's load of it.
struct TransportWords {
  uint32_t ports = 0, icmp_flags = 0;
};
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the words below put their first byte lowest");

TransportWords transport_words(uint8_t proto, const uint8_t* l4, int l4left) {
  TransportWords w;
  if (tcp_or_udp(proto) & (l4left >= 4)) {
    std::memcpy(&w.ports, l4, 4);
    // TCP's flags: the byte is read where it lies inside the datagram, kept for TCP alone (no branch on which)
    if (l4left >= 14) w.icmp_flags = (uint32_t{l4[13]} << 24) & (0u - uint32_t{proto == 6});
  } else if ((proto == 1 || proto == 58) && l4left >= 1) {  // an ICMP type in either IP version, as eval reads it
    w.icmp_flags = uint32_t{l4[0]} << 8;
  }
  return w;
}

// The words into a key's sport..tcp_flags (FlowKey, FlowKey6: the ports, then the ICMP type and flags, adjacent).
template <typename Key>
void store_transport(const TransportWords& w, Key* k) {
  static_assert(offsetof(Key, dport) == offsetof(Key, sport) + 2 && offsetof(Key, icmp_type) == offsetof(Key, sport) + 4 &&
                    offsetof(Key, tcp_flags) == offsetof(Key, sport) + 6,
                "transport words");
  auto* out = reinterpret_cast<unsigned char*>(k) + offsetof(Key, sport);
  std::memcpy(out, &w.ports, 4);
  std::memcpy(out + 4, &w.icmp_flags, 4);
}

}  // namespace

bool packet_facts(rte_mbuf* m, PacketFacts* f) {
  const PacketAnno a = anno(m);
  if (a.ip_ver != 4 && a.ip_ver != 6) return false;
  const uint8_t* ip = ip_header(m);
  const int left = ip_bytes_left(m);
  const uint8_t* l4;
  int l4left;
  f->version = a.ip_ver;
  f->sport = f->dport = 0;
  f->icmp_type = f->tcp_flags = 0;
  if (a.ip_ver == 4) {
    if (left < 20) return false;
    const int hl = (ip[0] & 0xf) * 4;
    f->proto = ip[9];
    f->ttl = ip[8];
    f->tos = ip[1];
    const uint16_t frag = load16(ip + 6);
    f->first_frag = (frag & 0x1fff) == 0;
    f->mf = (frag & 0x2000) != 0;
    std::memcpy(f->src, ip + 12, 4);
    std::memcpy(f->dst, ip + 16, 4);
    std::memset(f->src + 4, 0, 12);
    std::memset(f->dst + 4, 0, 12);
    l4 = ip + hl;
    l4left = left - hl;
  } else {
    if (left < 40) return false;
    const Ipv6Upper u = ipv6_upper_layer(ip, left);  // behind the extension headers
    f->proto = u.proto;
    f->ttl = ip[7];
    f->tos = static_cast<uint8_t>(load16(ip) >> 4);
    f->first_frag = u.first_frag;
    f->mf = u.mf;
    std::memcpy(f->src, ip + 8, 16);
    std::memcpy(f->dst, ip + 24, 16);
    l4 = ip + u.l4;
    l4left = u.end - u.l4;
  }
  if (f->first_frag) {
    const TransportWords w = transport_words(f->proto, l4, l4left);
    uint8_t b[8];
    std::memcpy(b, &w.ports, 4);
    std::memcpy(b + 4, &w.icmp_flags, 4);
    f->sport = load16(b), f->dport = load16(b + 2);
    f->icmp_type = b[5], f->tcp_flags = b[7];
  }
  return true;
}

FlowKey flow_key_of(const PacketFacts& f) {
  FlowKey k{};
  k.ver_ihl = 0x45;
  k.tos = f.tos;
  k.frag = htons(static_cast<uint16_t>((f.first_frag ? 0 : 1) | (f.mf ? 0x2000 : 0)));  // a later one: offset 1
  k.ttl = f.ttl;
  k.proto = f.proto;
  std::memcpy(&k.src, f.src, 4);
  std::memcpy(&k.dst, f.dst, 4);
  k.sport = htons(f.sport);
  k.dport = htons(f.dport);
  k.icmp_type = htons(f.icmp_type);
  k.tcp_flags = htons(f.tcp_flags);
  k.first_frag = f.first_frag;
  k.mf = f.mf;
  return k;
}

FlowKey6 flow_key6_of(const PacketFacts& f) {
  FlowKey6 k{};
  k.proto = f.proto;
  k.first_frag = f.first_frag;
  k.ttl = f.ttl;
  k.tos = f.tos;
  k.mf = f.mf;
  std::memcpy(k.src, f.src, 16);
  std::memcpy(k.dst, f.dst, 16);
  k.sport = htons(f.sport);
  k.dport = htons(f.dport);
  k.icmp_type = htons(f.icmp_type);
  k.tcp_flags = htons(f.tcp_flags);
  return k;
}

bool ipv4_flow_key(rte_mbuf* m, FlowKey* k) {
  const PacketAnno a = anno(m);
  if (a.ip_ver != 4) return false;
  const uint8_t* ip = ip_header(m);
  const int left = ip_bytes_left(m);
  if (left < 20) return false;
  const int hl = (ip[0] & 0xf) * 4;
  const uint8_t proto = ip[9];
  const uint16_t frag = load16(ip + 6);
  const bool first_frag = (frag & 0x1fff) == 0;
  static_assert(offsetof(FlowKey, sport) == 20 && offsetof(FlowKey, first_frag) == 28, "FlowKey's words");
  const uint32_t frag_facts = uint32_t{first_frag} | uint32_t{(frag & 0x2000) != 0} << 8;  // first_frag mf
  auto* out = reinterpret_cast<unsigned char*>(k);
  std::memcpy(out, ip, 20);  // the header as it is
  store_transport(first_frag ? transport_words(proto, ip + hl, left - hl) : TransportWords{}, k);
  std::memcpy(out + 28, &frag_facts, 4);
  return true;
}

bool ipv6_flow_key(rte_mbuf* m, FlowKey6* k) {
  const PacketAnno a = anno(m);
  if (a.ip_ver != 6) return false;
  const uint8_t* ip = ip_header(m);
  const int left = ip_bytes_left(m);
  if (left < 40) return false;
  const Ipv6Upper u = ipv6_upper_layer(ip, left);  // behind the extension headers
  std::memset(k, 0, sizeof *k);
  k->proto = u.proto;
  k->first_frag = u.first_frag;
  k->ttl = ip[7];
  k->tos = static_cast<uint8_t>(load16(ip) >> 4);
  k->mf = u.mf;
  std::memcpy(k->src, ip + 8, 16);
  std::memcpy(k->dst, ip + 24, 16);
  if (k->first_frag) store_transport(transport_words(k->proto, ip + u.l4, u.end - u.l4), k);
  return true;
}

}  // namespace metron

#include "elements/ip_rules.h"

#include <arpa/inet.h>

#include <cctype>
#include <map>

#include "utils/args.h"

namespace metron {

namespace {

std::unique_ptr<Expr> leaf(Field f, uint32_t lo, uint32_t hi) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::kField;
  e->field = f;
  e->iv = {lo, hi};
  return e;
}
std::unique_ptr<Expr> node(Expr::Kind k, std::unique_ptr<Expr> a, std::unique_ptr<Expr> b = nullptr) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->a = std::move(a);
  e->b = std::move(b);
  return e;
}
std::unique_ptr<Expr> constant(bool v) {
  auto e = std::make_unique<Expr>();
  e->kind = v ? Expr::Kind::kTrue : Expr::Kind::kFalse;
  return e;
}

const std::map<std::string, uint32_t>& proto_names() {
  static const std::map<std::string, uint32_t> m = {{"icmp", 1}, {"igmp", 2}, {"tcp", 6}, {"udp", 17},
                                                    {"gre", 47}, {"esp", 50}, {"ah", 51}, {"sctp", 132}};
  return m;
}
const std::map<std::string, uint32_t>& port_names() {
  static const std::map<std::string, uint32_t> m = {
      {"ftp", 21}, {"ssh", 22},  {"telnet", 23}, {"smtp", 25}, {"domain", 53}, {"dns", 53},
      {"http", 80}, {"www", 80}, {"pop3", 110},  {"ntp", 123}, {"https", 443}, {"snmp", 161}};
  return m;
}

bool looks_like_ipv4(const std::string& w) {
  return !w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos;
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
      e = node(Expr::Kind::kOr, std::move(e), parse_and());
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
      e = node(Expr::Kind::kAnd, std::move(e), parse_not());
    }
  }
  std::unique_ptr<Expr> parse_not() {
    if (at("not") || at("!")) {
      ++i_;
      return node(Expr::Kind::kNot, parse_not());
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

  // [src|dst] host/net/port ... with an optional leading tcp/udp qualifier.
  std::unique_ptr<Expr> primitive() {
    const std::string w = next("a primitive");
    if (w == "true" || w == "any" || w == "all" || w == "-" || w == "ip") return constant(true);
    if (w == "false" || w == "none") return constant(false);
    if (w == "proto") return proto_value();  // "ip proto P" = `ip` (true) and `proto P`
    auto pn = proto_names().find(w);
    if (pn != proto_names().end()) {
      auto p = leaf(Field::kProto, pn->second, pn->second);
      if ((w == "tcp" || w == "udp") && (at("src") || at("dst") || at("port")))
        return node(Expr::Kind::kAnd, std::move(p), directional());
      return p;
    }
    if (w == "src" || w == "dst" || w == "host" || w == "net" || w == "port") {
      --i_;
      return directional();
    }
    if (looks_like_ipv4(w)) {
      --i_;
      return either(Field::kSrc, Field::kDst, address(true));
    }
    fail("unknown primitive '" + w + "'");
  }

  std::unique_ptr<Expr> proto_value() {
    const std::string v = next("a protocol");
    auto pn = proto_names().find(v);
    if (pn != proto_names().end()) return leaf(Field::kProto, pn->second, pn->second);
    const uint32_t p = static_cast<uint32_t>(parse_uint(v, "ip proto", 255));
    return leaf(Field::kProto, p, p);
  }

  static std::unique_ptr<Expr> either(Field a, Field b, Interval iv) {
    return node(Expr::Kind::kOr, leaf(a, iv.lo, iv.hi), leaf(b, iv.lo, iv.hi));
  }

  std::unique_ptr<Expr> directional() {
    int dir = 0;  // 0 either, 1 src, 2 dst
    if (at("src")) dir = 1, ++i_;
    else if (at("dst")) dir = 2, ++i_;
    if (dir == 1 && at("or") && i_ + 1 < toks_.size() && toks_[i_ + 1] == "dst") {  // "src or dst host X"
      i_ += 2;
      return directional_body(0);
    }
    return directional_body(dir);
  }

  std::unique_ptr<Expr> directional_body(int dir) {
    const std::string kind = i_ < toks_.size() ? toks_[i_] : "";
    Field fs, fd;
    Interval iv;
    bool is_port = false;
    if (kind == "host") {
      ++i_;
      iv = address(true);
      fs = Field::kSrc, fd = Field::kDst;
    } else if (kind == "net") {
      ++i_;
      iv = address(false);
      fs = Field::kSrc, fd = Field::kDst;
    } else if (kind == "port") {
      ++i_;
      iv = port_value();
      fs = Field::kSport, fd = Field::kDport;
      is_port = true;
    } else if (dir && i_ < toks_.size() && looks_like_ipv4(kind)) {
      iv = address(true);
      fs = Field::kSrc, fd = Field::kDst;
    } else {
      fail("expected 'host', 'net' or 'port' after '" + std::string(dir == 1 ? "src" : "dst") + "'");
    }
    std::unique_ptr<Expr> e = dir == 1   ? leaf(fs, iv.lo, iv.hi)
                              : dir == 2 ? leaf(fd, iv.lo, iv.hi)
                                         : either(fs, fd, iv);
    if (is_port)  // ports exist only for TCP and UDP
      e = node(Expr::Kind::kAnd, node(Expr::Kind::kOr, leaf(Field::kProto, 6, 6), leaf(Field::kProto, 17, 17)),
               std::move(e));
    return e;
  }

  Interval address(bool host) {
    std::string a = next("an IPv4 address");
    if (!host && at("mask")) {
      ++i_;
      a += " " + next("a netmask");
    }
    uint32_t addr, mask;
    parse_ipv4_prefix(a, "address", &addr, &mask);
    if (host && mask != 0xffffffff) fail("'host' takes an address, not a prefix: '" + a + "'");
    return {addr, addr | ~mask};
  }

  Interval port_value() {
    std::string op;
    if (at("<") || at(">") || at("<=") || at(">=") || at("=") || at("==") || at("!=")) op = next("");
    const std::string v = next("a port");
    auto pn = port_names().find(v);
    Interval iv;
    if (pn != port_names().end()) {
      iv = {pn->second, pn->second};
    } else {
      uint16_t lo, hi;
      parse_port_range(v, "port", &lo, &hi);
      iv = {lo, hi};
    }
    if (op.empty() || op == "=" || op == "==") return iv;
    if (iv.lo != iv.hi) fail("a comparison takes one port, got '" + v + "'");
    const uint32_t p = iv.lo;
    if (op == "<") {
      if (p == 0) fail("'port < 0' matches nothing");
      return {0, p - 1};
    }
    if (op == "<=") return {0, p};
    if (op == ">") {
      if (p == 65535) fail("'port > 65535' matches nothing");
      return {p + 1, 65535};
    }
    if (op == ">=") return {p, 65535};
    fail("'!=' is written 'not port N'");
  }

  std::string text_;
  std::vector<std::string> toks_;
  size_t i_ = 0;
};

uint32_t field_value(const FlowKey& k, Field f) {
  switch (f) {
    case Field::kProto: return k.proto;
    case Field::kSrc: return ntohl(k.src);
    case Field::kDst: return ntohl(k.dst);
    case Field::kSport: return ntohs(k.sport);
    case Field::kDport: return ntohs(k.dport);
  }
  return 0;
}

Term full_term() {
  Term t;
  for (int f = 0; f < kFields; ++f) t[f] = {0, kFieldMax[f]};
  return t;
}

// Terms for e (negated when neg), in negation normal form on the fly.
std::vector<Term> terms(const Expr& e, bool neg, size_t max) {
  using K = Expr::Kind;
  std::vector<Term> out;
  switch (e.kind) {
    case K::kTrue:
    case K::kFalse:
      if ((e.kind == K::kTrue) != neg) out.push_back(full_term());
      return out;
    case K::kNot:
      return terms(*e.a, !neg, max);
    case K::kField: {
      const int f = static_cast<int>(e.field);
      if (!neg) {
        Term t = full_term();
        t[f] = e.iv;
        out.push_back(t);
      } else {
        if (e.iv.lo > 0) {
          Term t = full_term();
          t[f] = {0, e.iv.lo - 1};
          out.push_back(t);
        }
        if (e.iv.hi < kFieldMax[f]) {
          Term t = full_term();
          t[f] = {e.iv.hi + 1, kFieldMax[f]};
          out.push_back(t);
        }
      }
      return out;
    }
    case K::kAnd:
    case K::kOr: {
      const bool conj = (e.kind == K::kAnd) != neg;  // De Morgan
      std::vector<Term> l = terms(*e.a, neg, max), r = terms(*e.b, neg, max);
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
            t[f] = {std::max(x[f].lo, y[f].lo), std::min(x[f].hi, y[f].hi)};
            if (t[f].lo > t[f].hi) empty = true;
          }
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

bool eval(const Expr& e, const FlowKey& k) {
  using K = Expr::Kind;
  switch (e.kind) {
    case K::kTrue: return true;
    case K::kFalse: return false;
    case K::kNot: return !eval(*e.a, k);
    case K::kAnd: return eval(*e.a, k) && eval(*e.b, k);
    case K::kOr: return eval(*e.a, k) || eval(*e.b, k);
    case K::kField: {
      const uint32_t v = field_value(k, e.field);
      return v >= e.iv.lo && v <= e.iv.hi;
    }
  }
  return false;
}

std::vector<Term> to_terms(const Expr& e, size_t max_terms) { return terms(e, false, max_terms); }

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

int first_match(const std::vector<IpRule>& rules, const FlowKey& k) {
  for (const IpRule& r : rules)
    if (eval(*r.expr, k)) return r.output;
  return -1;
}

}  // namespace metron

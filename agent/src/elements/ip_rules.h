// Click's IP filter language (IPFilter/IPClassifier patterns) parsed into an expression tree, evaluated
// directly (the naive reference) or flattened to disjunctions of per-field intervals for the compiled
// classifier (acl_classifier.h).
//
// Primitives: `ip`, `true`/`any`/`all`/`-`, `false`/`none`, `tcp`/`udp`/`icmp`, `ip proto P`,
// `[src|dst] host A`, bare `A` (= host A), `[src|dst] net A/LEN` (or `A mask M`), `[tcp|udp] [src|dst] port N`
// with N a number, a name (http, https, ssh, domain...), a range `LO-HI` or a comparison (`port < 1024`).
// `host`/`net`/`port` without src/dst match either. Port primitives only match TCP and UDP. Combinators:
// `not`/`!`, `and`/`&&` (also implied by juxtaposition), `or`/`||`, parentheses. Non-first IPv4 fragments are
// matched with ports 0.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace metron {

// The classifier's view of a packet; also the rte_acl input layout (addresses and ports in network order).
struct FlowKey {
  uint8_t proto;
  uint8_t pad[3];
  uint32_t src;
  uint32_t dst;
  uint16_t sport;
  uint16_t dport;
};
static_assert(sizeof(FlowKey) == 16, "rte_acl field offsets assume this layout");

enum class Field : uint8_t { kProto = 0, kSrc, kDst, kSport, kDport };
constexpr int kFields = 5;
constexpr uint32_t kFieldMax[kFields] = {0xff, 0xffffffff, 0xffffffff, 0xffff, 0xffff};

struct Interval {
  uint32_t lo, hi;
};

struct Expr {
  enum class Kind { kTrue, kFalse, kAnd, kOr, kNot, kField };
  Kind kind = Kind::kTrue;
  Field field = Field::kProto;
  Interval iv{0, 0};  // kField: value in [lo, hi], host order
  std::unique_ptr<Expr> a, b;
};

// A conjunction of one interval per field (full range = unconstrained).
using Term = std::array<Interval, kFields>;

// Throws ConfigError naming the offending word.
std::unique_ptr<Expr> parse_ip_expr(const std::string& text);
bool eval(const Expr& e, const FlowKey& k);
// Disjunctive normal form; throws ConfigError when it would exceed max_terms.
std::vector<Term> to_terms(const Expr& e, size_t max_terms = 4096);

// One IPFilter/IPClassifier rule: an output (-1 = drop) and its expression.
struct IpRule {
  int output;
  std::unique_ptr<Expr> expr;
  std::string text;
};
// IPFilter argument: "allow EXPR" (output 0), "deny EXPR"/"drop EXPR" (drop), "K EXPR" (output K).
IpRule parse_ipfilter_rule(const std::string& arg);
// Reference semantics: the output of the first matching rule, or -1 (drop) when none matches.
int first_match(const std::vector<IpRule>& rules, const FlowKey& k);

}  // namespace metron

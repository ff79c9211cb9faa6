// Click's IP filter language (IPFilter/IPClassifier patterns) parsed into an expression tree, evaluated
// directly on a packet's header facts (the naive reference) or flattened, per IP version, to disjunctions of
// per-field constraints for the compiled classifiers (acl_classifier.h).
//
// Primitives: `ip`, `true`/`any`/`all`/`-`, `false`/`none`, `tcp`/`udp`/`icmp`, `ip proto P`, `ip vers 4|6`,
// `ip ttl|hlim N`, `ip tos N`, `ip dscp N`, `ip firstfrag`, `ip mf`, `ip frag`, `ip unfrag`, `[src|dst] host A`,
// bare `A` (= host A), `[src|dst] net A/LEN` (or `A mask M`), IPv6 addresses and prefixes too, `[tcp|udp]
// [src|dst] port N`, `icmp type N`, `tcp opt syn|ack|fin|rst|psh|urg`. Values are decimal or 0x numbers, names
// (http, ssh, bgp...; echo, unreachable...; icmp, icmpv6...), ranges `LO-HI`, or relations `< <= > >= = == !=`
// before the value (`port < 1024`, `ip ttl != 1`). `host`/`net`/`port` without src/dst match either side, `src
// and dst` both; a bare value repeats the last address or port test (`dst port 80 or 443`). `icmp`, `proto
// icmp` and `icmp type` mean ICMP for IPv4 packets and ICMPv6 for IPv6 ones. Port tests imply TCP or UDP (the
// one named before `port`) and a first fragment; `tcp opt` implies TCP and a first fragment; `icmp type`
// implies ICMP and a first fragment (as in Click). IPv6 packets are read behind their extension headers
// (ipv6_ext.h). This is the synthesizer's language (docs/contracts.md): tests/e2e/
// test_classifier_agreement.py checks that both implementations classify packets alike.
// Combinators: `not`/`!`, `and`/`&&` (also implied by juxtaposition), `or`/`||`, parentheses.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/annotations.h"
#include "utils/checksum.h"

namespace metron {

// What the filter language can test about a packet (IPv4 or IPv6; addresses in network order).
struct PacketFacts {
  uint8_t version = 4;
  uint8_t proto = 0;  // IPv6: the upper-layer header behind the extension headers (ipv6_ext.h)
  uint8_t ttl = 0, tos = 0;
  bool first_frag = true, mf = false;  // IPv6: from the fragment header (none: true, false)
  uint8_t src[16] = {}, dst[16] = {};  // IPv4 in the first 4 bytes
  uint16_t sport = 0, dport = 0;       // host order; 0 unless TCP/UDP first fragment
  uint8_t icmp_type = 0, tcp_flags = 0;
};

// Reads the facts of a packet whose IP header is marked; false if it is not marked or too short for its header.
bool packet_facts(rte_mbuf* m, PacketFacts* f);

// The compiled IPv4 classifier's input (rte_acl reads it in 4-byte groups; see acl_classifier.cc): an IPv4
// header's first 20 bytes as they are, then the transport words the filter language tests and the fragment facts,
// so that the header of a packet without options is its own key for a classifier that tests neither ICMP types,
// TCP flags nor later fragments (ipv4_header_key). Network order.
struct FlowKey {
  uint8_t ver_ihl, tos;
  uint16_t tot_len, id;
  uint16_t frag;  // flags and fragment offset
  uint8_t ttl, proto;
  uint16_t csum;
  uint32_t src, dst;
  uint16_t sport, dport;          // 0 unless a TCP/UDP first fragment with its ports
  uint16_t icmp_type, tcp_flags;  // widened so the group fills its 4 bytes
  uint8_t first_frag, mf;         // for classifiers that test later fragments (acl_classifier.cc)
  uint16_t pad;
};
static_assert(sizeof(FlowKey) == 32, "rte_acl field offsets assume this layout");
FlowKey flow_key_of(const PacketFacts& f);  // IPv4 facts only
// flow_key_of(packet_facts(m)) for a marked IPv4 packet, read straight from the headers (the per-packet fast
// path); false when the packet is not a marked, long-enough IPv4 packet.
bool ipv4_flow_key(rte_mbuf* m, FlowKey* k);
// The packet's own IPv4 header as its FlowKey, or nullptr: only for a marked IPv4 packet without options with at
// least 4 bytes behind its header. Its ports are whatever those bytes are, which is the FlowKey's ports for a
// TCP/UDP first fragment and, for any other packet, bytes no rule outcome depends on (port tests imply TCP or UDP
// and a first fragment). Its ICMP type, TCP flags and fragment facts are other bytes of the packet, so only a
// classifier that tests none of them may read it (AclClassifier::header_is_key).
// The same for an IPv4 header at ip with `left` bytes from it to the end of the data (a header just checked).
inline const uint8_t* ipv4_header_key_at(const uint8_t* ip, int left) {
  return left >= 24 && ip[0] == 0x45 ? ip : nullptr;
}
inline const uint8_t* ipv4_header_key(rte_mbuf* m) {
  const PacketAnno a = anno(m);  // read once
  return a.ip_ver == 4 ? ipv4_header_key_at(ip_header(m, a), ip_bytes_left(m, a)) : nullptr;
}

// The compiled IPv6 classifier's input: FlowKey with 128-bit addresses (rte_acl reads them as four 4-byte groups).
struct FlowKey6 {
  uint8_t proto, pad0[3];
  uint8_t first_frag, ttl, tos, mf;
  uint8_t src[16], dst[16];  // network order
  uint16_t sport, dport;     // network order
  uint16_t icmp_type, tcp_flags;
};
static_assert(sizeof(FlowKey6) == 48, "rte_acl field offsets assume this layout");
FlowKey6 flow_key6_of(const PacketFacts& f);  // IPv6 facts only
// flow_key6_of(packet_facts(m)) for a marked IPv6 packet, read straight from the headers; false when the packet
// is not a marked, long-enough IPv6 packet.
bool ipv6_flow_key(rte_mbuf* m, FlowKey6* k);

// Fields of the compiled classifiers (IPv4 addresses as intervals; IPv6 addresses are prefixes, kept apart
// like the tcp flags, which are bit tests).
enum class Field : uint8_t { kProto = 0, kFirstFrag, kTtl, kTos, kSrc, kDst, kSport, kDport, kMf, kIcmpType };
constexpr int kFields = 10;
constexpr uint32_t kFieldMax[kFields] = {0xff, 1, 0xff, 0xff, 0xffffffff, 0xffffffff, 0xffff, 0xffff, 1, 0xff};

struct Interval {
  uint32_t lo, hi;
};

struct Expr {
  enum class Kind { kTrue, kFalse, kAnd, kOr, kNot, kField, kTcpFlag, kVersion, kSrc6, kDst6 };
  Kind kind = Kind::kTrue;
  Field field = Field::kProto;
  Interval iv{0, 0};  // kField: value in [lo, hi], host order; kVersion: lo
  uint8_t flag = 0;   // kTcpFlag
  uint8_t addr6[16] = {};
  uint8_t len6 = 0;   // kSrc6/kDst6 prefix length
  std::unique_ptr<Expr> a, b;
};

struct Prefix6 {
  uint8_t addr[16] = {};  // bits beyond len are zero
  uint8_t len = 0;        // 0: any address
};

// A conjunction: one interval per field, required-set / required-clear TCP flag bits, and (IPv6 terms) one
// prefix per address.
struct Term {
  std::array<Interval, kFields> iv;
  uint8_t flags_set = 0, flags_clear = 0;
  Prefix6 src6, dst6;
};

// Throws ConfigError naming the offending word.
std::unique_ptr<Expr> parse_ip_expr(const std::string& text);
bool eval(const Expr& e, const PacketFacts& f);
// Disjunctive normal form for packets of one IP version (4 or 6): tests of the other version's addresses are
// false, `ip vers` is constant, and IPv6 address tests become prefixes (a negated one, up to 128 sibling
// prefixes). Throws ConfigError when it would exceed max_terms.
std::vector<Term> to_terms(const Expr& e, size_t max_terms = 4096, uint8_t version = 4);

// One IPFilter/IPClassifier rule: an output (-1 = drop) and its expression.
struct IpRule {
  int output;
  std::unique_ptr<Expr> expr;
  std::string text;
};
// IPFilter argument: "allow EXPR" (output 0), "deny EXPR"/"drop EXPR" (drop), "K EXPR" (output K).
IpRule parse_ipfilter_rule(const std::string& arg);
// Reference semantics: the output of the first matching rule, or -1 (drop) when none matches.
int first_match(const std::vector<IpRule>& rules, const PacketFacts& f);

}  // namespace metron

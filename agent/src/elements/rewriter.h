// The IPRewriter family: NAPT and load balancing over a per-core FlowTable.
//
// RewritePattern is Click's `SADDR SPORT DADDR DPORT` (each `-` = keep; SPORT may be a range `lo-hi` from which
// each new flow gets a free port from this instance's share of the range: the core's in a standalone
// configuration, the group's under a controller, docs/scaling.md#port-shares).
// FlowRewriter holds what SynthRewriter and IPRewriter share: the table, the patterns, backend selection
// (round robin or Maglev), checksum-preserving rewriting, timeouts and state export/import.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/annotations.h"
#include "core/element.h"
#include "elements/flow_progress.h"
#include "elements/flow_table.h"

namespace metron {

struct RewritePattern {
  // How a port of a SPORT range is chosen for a new flow (Click's: the flow's own source port if it is in the
  // range and free, else a random free one; `L-H#` sequential, `L-H?` random).
  enum class Pick : uint8_t { kSequential, kSameFirst, kRandom };
  bool set_src = false, set_dst = false, set_sport = false, set_dport = false;
  uint8_t v6 = 0;  // family of the addresses it sets
  uint8_t src[16] = {}, dst[16] = {};
  uint16_t sport_lo = 0, sport_hi = 0;
  uint16_t dport = 0;
  Pick pick = Pick::kSequential;
  uint8_t fout = 0, rout = 1;  // IPRewriter outputs for new flows and their replies
  std::string text;
};

// Parses "SADDR SPORT DADDR DPORT" (4 words); a SPORT range without a `#`/`?` suffix picks ports by `pick`.
// Throws ConfigError.
RewritePattern parse_rewrite_pattern(const std::vector<std::string>& words, const std::string& what,
                                     RewritePattern::Pick pick = RewritePattern::Pick::kSequential);

// Whether any of these patterns can map an IPv6 flow.
bool maps_ipv6(const std::vector<RewritePattern>& patterns);

enum class Select { kRoundRobin, kMaglev };

// Maglev consistent hashing (Eisenbud et al., NSDI'16): a lookup table of prime size in which each backend
// owns ~1/N of the slots, and removing a backend only moves the flows that were on it.
class MaglevTable {
 public:
  static constexpr uint32_t kSize = 65537;
  explicit MaglevTable(const std::vector<std::string>& backends);
  uint32_t pick(uint32_t hash) const { return table_[hash % kSize]; }

 private:
  std::vector<uint16_t> table_;
};

// Chooses a pattern for a new flow. Implemented by SynthRewriter's pool and the *IPMapper elements.
class PatternSelector {
 public:
  virtual ~PatternSelector() = default;
  virtual const std::vector<RewritePattern>& patterns() const = 0;
  virtual uint32_t select(const Tuple& flow, uint32_t hash) = 0;
};

class PatternPool final : public PatternSelector {
 public:
  PatternPool(std::vector<RewritePattern> patterns, Select how);
  const std::vector<RewritePattern>& patterns() const override { return patterns_; }
  uint32_t select(const Tuple& flow, uint32_t hash) override;
  uint32_t rr_cursor() const { return rr_; }
  void set_rr_cursor(uint32_t c) { rr_ = c; }

 private:
  std::vector<RewritePattern> patterns_;
  Select how_;
  uint32_t rr_ = 0;
  std::unique_ptr<MaglevTable> maglev_;
};

// Reads the tuple of a packet with a marked IP header (IPv6: behind its extension headers, ipv6_ext.h); false if
// it is not TCP/UDP over IPv4/IPv6, a non-first fragment, or truncated.
bool tuple_of(rte_mbuf* m, Tuple* t, uint8_t** l4);
// Rewrites the packet's addresses/ports to `to` (same family), updating IPv4 and TCP/UDP checksums
// incrementally.
void rewrite_packet(rte_mbuf* m, const Tuple& from, const Tuple& to, uint8_t* l4);
// The IPv4 forms of both, on the flow key as IPv4-only flow tables hash it (the per-packet path of such tables:
// the key is read from the headers once and serves the lookup and the rewrite). key4_of answers false for what
// tuple_of refuses and for every IPv6 packet.
// Inline: every packet of an IPv4-only rewriter runs it.
static_assert(offsetof(Key4, sport) == 8 && offsetof(Key4, dport) == 10 && offsetof(Key4, proto) == 12 &&
                  offsetof(Key4, v6) == 13 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "key4_of writes a Key4's second half as one little-endian 8-byte word");
// key4_at: the key of an IPv4 packet whose header is at ip, with `left` bytes from it to the end of the data
// (key4_of's from the annotation, or a header just checked, CheckIPHeader::Fold); *ip_out: the header, for the
// rewrite and the flow's progress after the lookup.
inline bool key4_at(uint8_t* ip, int left, Key4* k, uint8_t** ip_out, uint8_t** l4) {
  if (left < 20) return false;
  if ((load16(ip + 6) & 0x1fff) != 0) return false;  // non-first fragment: no ports to map
  const uint8_t proto = ip[9];
  const int at = (ip[0] & 0xf) * 4;
  // TCP or UDP with its whole transport header, one test (tcp_or_udp: no branch on which of the two).
  if (!(tcp_or_udp(proto) & (left >= at + (proto == 6 ? 20 : 8)))) return false;
  uint8_t* const l4p = ip + at;
  *ip_out = ip;
  *l4 = l4p;
  // The key as two 8-byte stores: src and dst (adjacent in both, at the start of a Key4), then ports, protocol and
  // zeros. The signature's CRC reads it back as two 8-byte loads right away, which a store of each field on its
  // own would make wait until the stores reach the cache (a load spanning several stores is not forwarded):
  // ~17 cycles per packet of the offloaded chain (BENCHMARKS.md, session 21). Both ports in one load: swapped
  // whole, the wire's sport|dport is dport-low, sport-high; rotated by 16, host-order sport then dport.
  const uint32_t wire = load32(l4p);
  const uint32_t ports = wire << 16 | wire >> 16;
  const uint64_t rest = uint64_t{ports} | uint64_t{proto} << 32;  // v6, pad: 0
  std::memcpy(k, ip + 12, 8);
  std::memcpy(reinterpret_cast<uint8_t*>(k) + 8, &rest, 8);
  return true;
}
// *ip: as key4_at's, from the annotation (read once per packet; anno_offset: as anno()'s).
inline bool key4_of(rte_mbuf* m, int anno_offset, Key4* k, uint8_t** ip_out, uint8_t** l4) {
  const PacketAnno a = anno(m, anno_offset);  // read once for the version, the header and the bytes left
  if (a.ip_ver != 4) return false;
  return key4_at(ip_header(m, a), ip_bytes_left(m, a), k, ip_out, l4);
}
inline bool key4_of(rte_mbuf* m, Key4* k, uint8_t** l4) {
  uint8_t* ip;
  return key4_of(m, g_anno_offset, k, &ip, l4);
}
void rewrite_ipv4(uint8_t* ip, uint8_t* l4, const Key4& from, const Key4& to);

// The transport checksum field, and whether the packet carries one (UDP over IPv4: 0 = none). No branch on the
// protocol in either (see tcp_or_udp).
inline uint8_t* l4_checksum(uint8_t* l4, uint8_t proto, bool v6, bool* present) {
  const bool tcp = proto == 6;
  uint8_t* csum = l4 + (tcp ? 16 : 6);
  *present = tcp | v6 | (load16(csum) != 0);
  return csum;
}
// A UDP checksum that computes to 0 is sent as 0xffff (0 means none); either byte order.
inline uint16_t sent_l4_checksum(uint8_t proto, uint16_t c) {
  return static_cast<uint16_t>(c | (0u - static_cast<unsigned>((proto == 17) & (c == 0))));
}
inline void store_l4_checksum(uint8_t* csum, uint8_t proto, uint16_t c) { store16(csum, sent_l4_checksum(proto, c)); }
// rewrite_ipv4 with the flow's stored deltas for this direction (FlowTable::deltas4): a hit's rewrite, inline in
// the rewriters' batch loop. ip_term: a further change to the IPv4 header in the same update (stored order, as
// csum_term's: the TTL going down, ipv4_ttl_dec_term(), when the rewriter runs its DecIPTTL; 0 for none).
inline void rewrite_ipv4(uint8_t* ip, uint8_t* l4, const Key4& to, RewriteDeltas d, uint32_t ip_term = 0) {
  bool l4csum;
  uint8_t* csum = l4_checksum(l4, to.proto, false, &l4csum);
  std::memcpy(ip + 12, &to, 8);  // src, dst
  store16(l4, to.sport);
  store16(l4 + 2, to.dport);
  // Both checksums updated as stored (network order), as the deltas are kept.
  uint16_t c;
  std::memcpy(&c, ip + 10, 2);
  c = csum_apply(c, d.ip + ip_term);
  std::memcpy(ip + 10, &c, 2);
  if (!l4csum) return;
  std::memcpy(&c, csum, 2);
  c = sent_l4_checksum(to.proto, csum_apply16(c, d.l4));
  std::memcpy(csum, &c, 2);
}


// Click's idle timeouts and guarantees (IPRewriter/TCPRewriter/UDPRewriter keywords), in seconds, with FastClick's
// defaults. Every rewriter follows each flow's TCP/UDP progress, which picks its timeout.
struct RewriterTimeouts {
  double tcp_data = 86400;   // TCP with payload seen both ways (TCP_TIMEOUT / TIMEOUT)
  double tcp_nodata = 300;   // TCP without (TCP_NODATA_TIMEOUT)
  double tcp_done = 240;     // TCP after FIN both ways or RST (TCP_DONE_TIMEOUT)
  double udp = 300;          // UDP_TIMEOUT
  double udp_streaming = 300;  // UDP with 3+ packets, one a reply (UDP_STREAMING_TIMEOUT; UDP_TIMEOUT unless given)
  double tcp_guarantee = 5;  // a full table never sheds a flow seen this recently (TCP_GUARANTEE / GUARANTEE)
  double udp_guarantee = 5;  // UDP_GUARANTEE
};

class FlowRewriter {
 public:
  struct Options {
    uint32_t capacity = 0;  // declared flows per core (CAPACITY / MAPPING_CAPACITY); 0 = none: the table grows
    std::string capacity_keyword = "CAPACITY";  // the one given, for errors
    RewriterTimeouts timeouts;
  };
  // A table without a declared capacity starts with room for this many flows per core, then doubles as needed
  // (the previous fixed default was 65,536).
  static constexpr uint32_t kInitialCapacity = FlowTable::kGrowthStep << 7;  // 57,344: one chunk of records
  // Click's idle-timeout keywords (TCP_TIMEOUT / TIMEOUT, TCP_NODATA_TIMEOUT, TCP_DONE_TIMEOUT, UDP_TIMEOUT,
  // UDP_STREAMING_TIMEOUT) with FastClick's defaults: IPRewriter's and SynthRewriter's alike, so a synthesized
  // rewriter keeps a flow exactly as long as the chain's IPRewriters would (docs/contracts.md).
  static void parse_timeouts(Args& args, RewriterTimeouts* t);
  // SynthRewriter's keywords (docs/contracts.md): the timeouts above, GUARANTEE, CAPACITY.
  static Options parse_synth_options(Args& args);
  // FastClick's IPRewriter keywords with FastClick's defaults (agent/README.md, "FastClick compatibility").
  static Options parse_click_options(Args& args);

  // patterns: every pattern the element may map new flows with; they decide whether the table must hold IPv6
  // flows (compact IPv4-only tables take half the memory per flow). A declared capacity the memory cannot hold
  // is refused (ResourceError naming the capacity and the memory available).
  void initialize(const std::string& name, const Options& o, const GraphEnv& env,
                  const std::vector<RewritePattern>& patterns);
  FlowTable& table() { return *table_; }
  const FlowTable& table() const { return *table_; }

  // Creates the mapping of a new forward flow from pattern p (index `backend`); -1 if none can be made (counted:
  // mapping_failures, and refused when the table was full). A full table sheds first, as Click's does: a flow
  // idle past its guarantee, the longest idle of a sample, is evicted (counted) for the new one.
  int32_t create(const Tuple& t, const RewritePattern& p, uint32_t backend, uint64_t now);
  // A packet of the flow in record idx passed (reply: in the reply direction); l4 is its TCP/UDP header.
  void touch(uint32_t idx, rte_mbuf* m, uint8_t* l4, bool reply, uint64_t now) {
    touch(table_->meta(idx), m, l4, reply, now);
  }
  static void touch(FlowMeta& meta, rte_mbuf* m, uint8_t* l4, bool reply, uint64_t now) {
    const PacketAnno a = anno(m);
    touch(meta, ip_header(m, a), l4, a.ip_ver == 4, reply, now);
  }
  // The same with the packet's IP header (v4: IPv4, else IPv6) already at hand: a batch loop's hit.
  static void touch(FlowMeta& meta, const uint8_t* ip, const uint8_t* l4, bool v4, bool reply, uint64_t now) {
    meta.last_tsc = now;
    track(meta, ip, l4, v4, reply);
  }
  // Once per batch of `packets`, before its lookups: expiry sweep and the table's growth work. The sweep checks
  // one record per four packets (8 for a full batch): the same rate per packet whatever the batches' sizes (a
  // core with many groups runs each one's held frames in smaller batches).
  void expire(uint64_t now, unsigned packets);
  // A new flow whose first packet was not mapped for another reason than the table (e.g. a reply without one).
  void count_failure() { failures_.add(1); }

  // Element::export_state_slice over the table's records (positions are record indexes); `allocator` is the
  // element's allocator state, written with every slice so the last one's is kept.
  uint64_t export_slice(agent::v1::StateTable* out, const std::string& allocator, uint64_t from,
                        uint64_t deadline_tsc) const;
  // Returns entries imported; validates everything first and throws ConfigError leaving the table unchanged.
  // Entries idle longer than their protocol's timeout are skipped (not counted).
  uint64_t import_state(const agent::v1::StateTable& in, bool merge);

  // Exchanges tables and port cursors with `o` (Element::swap_state); false, nothing changed, if the tables
  // differ in declared capacity or address family.
  bool swap_table(FlowRewriter& o);

  // Element::follow_state: `source` (another instance on this core) is consulted on a miss until unfollowed;
  // false if its table holds another address family.
  bool follow(const FlowRewriter& source);
  void unfollow(const FlowRewriter& source);
  bool following() const { return !sources_.empty(); }
  // A flow this table missed: its record copied from the first source holding it (forward or reply key), as
  // record index << 1 | direction like FlowTable::lookup; -1 if no source holds it; kInheritFailed if one does
  // but this table cannot add it (counted: inherit_failures): the packet is dropped then, since a new mapping
  // would change the flow's translation. The packet path, on the core.
  static constexpr int32_t kInheritFailed = -2;
  int32_t inherit(const Tuple& key, uint64_t now);

  uint16_t port_cursor() const { return cursor_; }
  void set_port_cursor(uint16_t c) { cursor_ = c; }

  void stats(FlowStateStats* out) const;
  // "flows N", "capacity N", "evicted N", "refused N", "mapping_failures N" lines of the standalone report.
  void report(std::ostream& os) const;

 private:
  // Try at most this many ports of a range per new flow (Click tries the whole range).
  static constexpr uint32_t kPortTries = 256;
  // A full table evicts the longest idle of the first kEvictCandidates flows past their guarantee found among
  // at most kEvictScan records (Click evicts the one expiring first of all; a scan of the whole table per new
  // flow would stall the core).
  static constexpr unsigned kEvictCandidates = 32;
  static constexpr unsigned kEvictScan = 1024;
  int32_t insert_or_shed(const Tuple& t, const Tuple& mapped, uint32_t backend, uint8_t fout, uint8_t rout, uint64_t now);
  // The flow's progress after this packet (next_progress). A UDP packet's "TCP" bytes are whatever follows its
  // header, inside the mbuf's buffer; next_progress ignores them (reading them costs nothing, a branch on the
  // protocol does). Inline: every hit runs it.
  // The segment is what the IP header says follows it, less everything before l4 (IPv4's options, IPv6's extension
  // headers); a header claiming less than its own length carries no data.
  static void track(FlowMeta& meta, const uint8_t* ip, const uint8_t* l4, bool v4, bool reply) {
    const int ip_end = v4 ? load16(ip + 2) : 40 + load16(ip + 4);
    const int segment = ip_end - static_cast<int>(l4 - ip);
    uint8_t* const live_state = progress_byte(meta);
    *live_state = next_progress_byte(*live_state, meta.proto == 6, reply, l4[13], segment > (l4[12] >> 4) * 4);
  }
  uint64_t timeout_of(const FlowMeta& m) const { return timeout_[m.proto == 6][m.state & 15]; }
  uint32_t random() {
    rng_ ^= rng_ << 13, rng_ ^= rng_ >> 17, rng_ ^= rng_ << 5;
    return rng_;
  }

  std::unique_ptr<FlowTable> table_;
  // table_ for stats() on other threads: a take-over's swap_table() exchanges tables while GetStats may read.
  std::atomic<const FlowTable*> published_{nullptr};
  uint32_t declared_ = 0;
  uint64_t timeout_[2][16] = {};  // [tcp][state]: idle limit in TSC cycles
  uint64_t sweep_period_ = 0;     // FlowTable::expire's, for the shortest of them
  uint64_t guarantee_[2] = {};    // [tcp]
  uint64_t tsc_hz_ = 1;
  // Ports of a SPORT range this instance maps to: false when it has none (a share the controller assigned of a
  // range with fewer ports than shares).
  bool share_of(const RewritePattern& p, uint32_t* lo, uint32_t* count) const;

  unsigned share_ = 0, shares_ = 1;  // GraphEnv::port_share / port_shares
  bool share_assigned_ = false;
  uint16_t cursor_ = 0;
  uint32_t rng_ = 0x9e3779b9;
  Relaxed<uint64_t> evicted_, refused_, failures_;
  // Tables followed (follow()); what was taken from them, and what could not be.
  std::vector<const FlowRewriter*> sources_;
  Relaxed<uint64_t> inherited_, inherit_failures_;
};

}  // namespace metron

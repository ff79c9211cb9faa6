// Rewriter elements over FlowRewriter (rewriter.h):
//   SynthRewriter(PATTERN SADDR SPORT DADDR DPORT, ..., SELECT roundrobin|maglev, TIMEOUT s, TCP_TIMEOUT s,
//                 UDP_TIMEOUT s, GUARANTEE s, CAPACITY n)  -- the synthesizer's per-class stateful element
//                 (docs/contracts.md#synthrewriter): input 0 forward, input 1 replies; output 0 forward, 1 replies.
//   IPRewriter(INPUTSPEC, ..., KEYWORDS) as FastClick's (agent/README.md, "FastClick compatibility"): INPUTSPEC
//                 one of `pattern SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT`, `pattern NAME FOUTPUT ROUTPUT` (an
//                 IPRewriterPatterns name), `keep FOUTPUT ROUTPUT`, `pass|passthrough|nochange [OUTPUT]`,
//                 `drop|discard`, or the name of a RoundRobinIPMapper/MaglevIPMapper element.
//   IPRewriterPatterns(NAME SADDR SPORT DADDR DPORT, ...): named patterns for IPRewriter's `pattern NAME`.
//   RoundRobinIPMapper / MaglevIPMapper(SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT, ...): pattern pools for
//                 IPRewriter, chosen per new flow in turn or by consistent hash of the 5-tuple.
#include <rte_cycles.h>
#include <rte_hash_crc.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/annotations.h"
#include "core/class_count.h"
#include "elements/check_ip_header.h"
#include "elements/dec_ip_ttl.h"
#include "elements/rewriter.h"
#include "metron/agent/v1/agent.pb.h"

namespace metron {

namespace {

uint32_t flow_hash(const Tuple& t) { return rte_hash_crc(&t, sizeof t, 0x6d61676c); }

std::string pack_allocator(uint16_t port_cursor, uint32_t rr) {
  std::string s(6, '\0');
  s[0] = static_cast<char>(port_cursor >> 8), s[1] = static_cast<char>(port_cursor);
  for (int i = 0; i < 4; ++i) s[2 + i] = static_cast<char>(rr >> (24 - 8 * i));
  return s;
}
bool unpack_allocator(const std::string& s, uint16_t* port_cursor, uint32_t* rr) {
  if (s.size() != 6) return false;
  const auto* b = reinterpret_cast<const uint8_t*>(s.data());
  *port_cursor = static_cast<uint16_t>(b[0] << 8 | b[1]);
  *rr = static_cast<uint32_t>(b[2]) << 24 | b[3] << 16 | b[4] << 8 | b[5];
  return true;
}

// The flow key per packet, in one of two forms: Tuple (any table) or, for IPv4-only tables, the table's own
// hashed form Key4, read from the headers once and used as is for the lookup, the record and the rewrite.
bool read_key(rte_mbuf* m, Tuple* k, uint8_t** ip, uint8_t** l4) {
  if (!tuple_of(m, k, l4)) return false;
  *ip = ip_header(m);
  return true;
}
// anno_offset: g_anno_offset, read once per batch (anno()).
bool read_key(rte_mbuf* m, int, Tuple* k, uint8_t** ip, uint8_t** l4) { return read_key(m, k, ip, l4); }
bool read_key(rte_mbuf* m, int anno_offset, Key4* k, uint8_t** ip, uint8_t** l4) {
  return key4_of(m, anno_offset, k, ip, l4);
}
// The same for a packet whose IP header (version ver, at `at`, `left` bytes to the end of the data) was just
// checked and marked: an IPv4-only table's key straight from it, a Tuple from the annotation.
bool read_key(rte_mbuf* m, uint8_t, uint8_t*, int, Tuple* k, uint8_t** ip, uint8_t** l4) {
  return read_key(m, k, ip, l4);
}
bool read_key(rte_mbuf*, uint8_t ver, uint8_t* at, int left, Key4* k, uint8_t** ip, uint8_t** l4) {
  return ver == 4 && key4_at(at, left, k, ip, l4);
}
// Whether the key's packet is IPv4 (its header's layout).
bool is_v4(const Tuple& k) { return !k.v6; }
bool is_v4(const Key4&) { return true; }
// The key's signature, computed once where the key is read, and its index line asked for then (Key4 keys only:
// the tables with an index, flow_table.h); the bulk lookup a stage later uses both. `prefetch`: the table's
// sig_prefetcher(), taken once per batch.
void hash_key(const FlowTable::SigPrefetcher&, const Tuple&, uint32_t*) {}
void hash_key(const FlowTable::SigPrefetcher& prefetch, const Key4& k, uint32_t* sig) {
  *sig = FlowTable::sig4(k);
  prefetch(*sig);
}
// out[i] >= 0: recs[i] is that record's address.
void lookup_keys(const FlowTable& t, const Tuple* const* k, const uint32_t*, unsigned n, int32_t* out, uint8_t** recs) {
  t.lookup(k, n, out);
  for (unsigned i = 0; i < n; ++i)
    if (out[i] >= 0) recs[i] = t.record_at(static_cast<uint32_t>(out[i]) >> 1);
}
void lookup_keys(const FlowTable& t, const Key4* const* k, const uint32_t* sigs, unsigned n, int32_t* out,
                 uint8_t** recs) {
  t.lookup4(k, sigs, n, out, recs);
}
int32_t lookup_key(const FlowTable& t, const Tuple& k) { return t.lookup_one(k); }
int32_t lookup_key(const FlowTable& t, const Key4& k) { return t.lookup_one4(k); }
// Rewrites a hit (record idx, at address rec) to its target. ip_term (Key4 only): rewrite_ipv4's.
void rewrite_to_target(const FlowTable& t, uint32_t idx, const uint8_t*, bool reply, rte_mbuf* m, uint8_t*,
                       const Tuple& from, uint8_t* l4, uint32_t) {
  rewrite_packet(m, from, t.rewrite_target(idx, reply), l4);
}
// The packet's key is the record's for this direction (the lookup compared them): its stored deltas apply.
// Inlined into the batch loop (GCC kept it a call: 12 instructions per packet of call and argument moves).
__attribute__((always_inline)) inline void rewrite_to_target(const FlowTable&, uint32_t, const uint8_t* rec,
                                                             bool reply, rte_mbuf*, uint8_t* ip, const Key4&,
                                                             uint8_t* l4, uint32_t ip_term) {
  rewrite_ipv4(ip, l4, reply ? reversed(FlowTable::orig4_at(rec)) : FlowTable::mapped4_at(rec),
               FlowTable::deltas4_at(rec, reply), ip_term);
}
const Tuple& as_tuple(const Tuple& k) { return k; }
Tuple as_tuple(const Key4& k) { return to_tuple(k); }

// The DecIPTTL one of a rewriter's outputs is wired to, run by the rewriter (dec_ip_ttl.h, Element::fold_output):
// the synthesized chains' `SynthRewriter -> DecIPTTL`. Packets for output `out` have their TTL taken down where
// they are rewritten (a hit's in the same checksum update), the expired ones dropped and counted in the DecIPTTL.
struct TtlFold {
  static constexpr int kNone = INT32_MIN;  // no output folded (never an output, nor -1, a drop)
  int out = kNone;
  DecIPTTL* ttl = nullptr;
  // Called in initialize() with the rewriter's fold_output<DecIPTTL> (protected): folds the first of its
  // `outputs` wired to a DecIPTTL that allows it.
  template <typename FoldIf>
  void find(int outputs, FoldIf fold_if) {
    for (int k = 0; k < outputs && ttl == nullptr; ++k)
      if ((ttl = fold_if(k)) != nullptr) out = k;
  }
  // One batch's run, in locals (the header stores would make the compiler load members again per packet).
  struct Batch {
    const int out;
    uint64_t expired = 0;
    // A packet sent to output `res` with its TTL as the rewriter left it: where it goes once DecIPTTL has run.
    int run(rte_mbuf* m, int res) { return res != out ? res : DecIPTTL::verdict(m, res, -1, &expired); }
    // A hit bound for *res, its IPv4 header at ip, not yet rewritten: its TTL taken down now and the checksum
    // term that goes with it returned for the rewrite (0 if not folded, or expired: *res = -1).
    uint32_t run_hit(uint8_t* ip, int* res) {
      if (*res != out) return 0;
      const uint8_t t = ip[8];
      if (t <= 1) return ++expired, *res = -1, 0;
      ip[8] = static_cast<uint8_t>(t - 1);
      return ipv4_ttl_dec_term();
    }
  };
  Batch begin() const { return Batch{out}; }
  void end(const Batch& b) const {
    if (b.expired) ttl->count_expired(b.expired);
  }
};

// Per-packet work shared by both rewriters: look every packet up in one bulk call, rewrite hits, and hand misses
// to `on_miss(m, tuple, l4, now)` which returns the output (or -1). With Key4 keys, packets that have none but
// a Tuple (IPv6 ones, which an IPv4-only table never holds) are misses; packets are handled in their order.
// kChecked: the packets come unchecked, the input's CheckIPHeader folded in (`check`).
// count: the group's telemetry, counted here in the pass that reads the keys (GroupRuntime, class_count.h), or null.
template <typename Key, bool kChecked, typename OnMiss, typename OutOf>
void process_keys(Element& self, FlowRewriter& rw, const CheckIPHeader::Fold& check, const TtlFold& fold, PacketBatch& b,
                  int* res, uint64_t* bad, uint64_t now, ClassCount* count, OnMiss on_miss, OutOf out_of) {
  constexpr int16_t kNone = -1, kTupleOnly = -2;
  Key keys[kBurst];
  const Key* ptrs[kBurst];
  uint8_t* ips[kBurst];
  uint8_t* l4s[kBurst];
  int32_t found[kBurst];
  uint8_t* recs[kBurst];  // found[j] >= 0: its record's address
  uint32_t sigs[kBurst];
  int16_t slot[kBurst];  // packet i's key: keys[slot[i]], or kNone / kTupleOnly
  Tuple tuples[kBurst];  // kTupleOnly packets' tuples (Key4 keys only), at the packet's index
  uint8_t* tuple_l4s[kBurst];
  unsigned nk = 0;
  uint64_t bad_headers = 0;  // kChecked: dropped by the check
  // The check's settings, the batch's size, the annotation's offset and the table's index in locals: the key and
  // annotation stores could alias them, and each would be loaded again per packet.
  const int check_offset = check.offset;
  const CheckIPHeader::Sum check_sum = check.sum;
  const uint16_t n = b.n;
  const int anno_offset = g_anno_offset;
  const FlowTable::SigPrefetcher prefetch = rw.table().sig_prefetcher();
  // The count in locals for the pass, stored back after it (class_count.h).
  const bool counting = count != nullptr;
  const bool behind_ethernet = check_offset == 14;
  ClassCount c = counting ? *count : ClassCount(nullptr, nullptr);
  // res[i] is written for every packet: -1 here for those dropped before the lookup, their output after it for
  // the others.
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* const m = b.pkts[i];
    bool keyed;
    if constexpr (kChecked) {
      uint8_t* at;
      int left;
      const uint8_t ver = CheckIPHeader::step(m, check_offset, check_sum, anno_offset, &at, &left);
      if (ver == 0) {
        if (counting) c.frame(i, m);
        res[i] = -1;
        slot[i] = kNone;
        ++bad_headers;
        continue;
      }
      keyed = read_key(m, ver, at, left, &keys[nk], &ips[nk], &l4s[nk]);
      if (counting) {
        // An IPv4 key read from the header behind the Ethernet one is a TCP/UDP first fragment with its ports:
        // its source port is what the count's own parse would find. Anything else is parsed by the count.
        if (std::is_same_v<Key, Key4> && keyed && behind_ethernet && load16(at - 2) == 0x0800)
          c.frame_l4(i, m, at - 14, as_loaded16(l4s[nk]));
        else
          c.frame(i, m);
      }
    } else {
      keyed = read_key(m, anno_offset, &keys[nk], &ips[nk], &l4s[nk]);
      if (counting) c.frame(i, m);
    }
    if (keyed) {
      hash_key(prefetch, keys[nk], &sigs[nk]);
      ptrs[nk] = &keys[nk];
      slot[i] = static_cast<int16_t>(nk++);
      continue;
    }
    if constexpr (std::is_same_v<Key, Key4>) {
      if (tuple_of(m, &tuples[i], &tuple_l4s[i])) {
        slot[i] = kTupleOnly;
        continue;
      }
    }
    res[i] = -1;
    slot[i] = kNone;
    ++*bad;
  }
  if (counting) *count = c;
  if (bad_headers) check.check->count_bad(bad_headers);
  self.profile_stage(0);
  // Every hit's record is asked for inside the lookup, before the first one is touched here (FAJITA, l3fwd), so a
  // batch's record misses overlap instead of following one another.
  if (nk) lookup_keys(rw.table(), ptrs, sigs, nk, found, recs);
  self.profile_stage(1);
  TtlFold::Batch ttl = fold.begin();
  for (uint16_t i = 0; i < n; ++i) {
    const int j = slot[i];
    if (j == kNone) continue;
    rte_mbuf* m = b.pkts[i];
    if (j == kTupleOnly) {
      res[i] = ttl.run(m, on_miss(m, tuples[i], tuple_l4s[i], now));
      continue;
    }
    int32_t r = found[j];
    uint8_t* rec = recs[j];
    if (r < 0) {
      // A new flow's second packet in the same batch missed the bulk lookup: look again before creating.
      r = lookup_key(rw.table(), keys[j]);
      // A flow the group this one follows mapped (a make-before-break update's window) keeps that mapping.
      if (r < 0 && rw.following()) {
        r = rw.inherit(as_tuple(keys[j]), now);
        if (r == FlowRewriter::kInheritFailed) {  // counted; dropped
          res[i] = -1;
          continue;
        }
      }
      if (r < 0) {
        res[i] = ttl.run(m, on_miss(m, as_tuple(keys[j]), l4s[j], now));
        continue;
      }
      rec = rw.table().record_at(static_cast<uint32_t>(r) >> 1);
    }
    const uint32_t idx = static_cast<uint32_t>(r) >> 1;
    const bool reply = r & 1;
    FlowMeta& meta = FlowTable::meta_at(rec);
    FlowRewriter::touch(meta, ips[j], l4s[j], is_v4(keys[j]), reply, now);
    int out = out_of(meta, reply);
    if constexpr (std::is_same_v<Key, Key4>) {
      const uint32_t ip_term = ttl.run_hit(ips[j], &out);
      rewrite_to_target(rw.table(), idx, rec, reply, m, ips[j], keys[j], l4s[j], ip_term);
    } else {
      rewrite_to_target(rw.table(), idx, rec, reply, m, ips[j], keys[j], l4s[j], 0);
      out = ttl.run(m, out);
    }
    res[i] = out;
  }
  fold.end(ttl);
}

template <typename OnMiss, typename OutOf>
void process_batch(Element& self, FlowRewriter& rw, const CheckIPHeader::Fold& check, const TtlFold& ttl, PacketBatch& b,
                   int* res, uint64_t* bad, ClassCount* count, OnMiss on_miss, OutOf out_of) {
  const uint64_t now = rte_rdtsc();
  rw.expire(now, b.n);
  const bool v6 = rw.table().ipv6();
  if (check.check != nullptr) {
    if (v6) process_keys<Tuple, true>(self, rw, check, ttl, b, res, bad, now, count, on_miss, out_of);
    else process_keys<Key4, true>(self, rw, check, ttl, b, res, bad, now, count, on_miss, out_of);
  } else {
    if (v6) process_keys<Tuple, false>(self, rw, check, ttl, b, res, bad, now, count, on_miss, out_of);
    else process_keys<Key4, false>(self, rw, check, ttl, b, res, bad, now, count, on_miss, out_of);
  }
}

class SynthRewriter final : public Element {
 public:
  const char* class_name() const override { return "SynthRewriter"; }
  PortCountRange input_range() const override { return {1, 2}; }
  PortCountRange output_range() const override { return {1, 2}; }
  void configure(Args& args) override {
    std::vector<RewritePattern> pats;
    const auto raw = args.take_all("PATTERN");
    for (size_t i = 0; i < raw.size(); ++i)
      pats.push_back(parse_rewrite_pattern(split_words(raw[i]), "PATTERN " + std::to_string(i)));
    if (pats.empty()) throw ConfigError("expected at least one PATTERN");
    if (args.positional_count()) throw ConfigError("unexpected argument '" + args.positional(0) + "'");
    Select how = Select::kRoundRobin;
    if (auto s = args.take("SELECT")) {
      if (*s == "maglev") how = Select::kMaglev;
      else if (*s != "roundrobin") throw ConfigError("SELECT: expected roundrobin or maglev, got '" + *s + "'");
    }
    opts_ = FlowRewriter::parse_synth_options(args);
    pool_ = std::make_unique<PatternPool>(std::move(pats), how);
  }
  void initialize(const GraphEnv& env) override {
    rw_.initialize(name(), opts_, env, pool_->patterns());
    ttl_.find(noutputs(), [this](int k) { return fold_output<DecIPTTL>(k); });
    check_.resize(ninputs());
    count_slot_.assign(ninputs(), nullptr);
  }
  void push(int port, PacketBatch& b) override {
    int res[kBurst];
    process_batch(
        *this, rw_, check_[port], ttl_, b, res, &bad_, count_slot_[port] != nullptr ? *count_slot_[port] : nullptr,
        [&](rte_mbuf* m, const Tuple& t, uint8_t* l4, uint64_t now) -> int {
          if (port == 1) return ++unmapped_, -1;  // replies without a mapping are dropped (contract)
          const uint32_t k = pool_->select(t, flow_hash(t));
          const int32_t idx = rw_.create(t, pool_->patterns()[k], k, now);
          if (idx < 0) return -1;
          rw_.touch(static_cast<uint32_t>(idx), m, l4, false, now);
          rewrite_packet(m, t, rw_.table().mapped(idx), l4);
          return 0;
        },
        [](const FlowMeta&, bool reply) { return reply ? 1 : 0; });
    push_to_outputs(b, res);
  }
  bool fold_input(int port, Element& feeder) override { return check_.at(port).take(feeder); }
  bool take_group_count(int port, ClassCount* const* slot) override {
    count_slot_.at(port) = slot;
    return true;
  }
  bool has_state() const override { return true; }
  uint64_t export_state_slice(agent::v1::StateTable* out, uint64_t from, uint64_t deadline_tsc) const override {
    return rw_.export_slice(out, pack_allocator(rw_.port_cursor(), pool_->rr_cursor()), from, deadline_tsc);
  }
  uint64_t import_state(const agent::v1::StateTable& in, bool merge) override {
    uint16_t pc = 0;
    uint32_t rr = 0;
    const bool have_alloc = unpack_allocator(in.allocator_state(), &pc, &rr);
    if (!in.allocator_state().empty() && !have_alloc) throw ConfigError("allocator_state: expected 6 bytes");
    for (const auto& e : in.entries())
      if (e.backend() >= pool_->patterns().size())
        throw ConfigError("backend " + std::to_string(e.backend()) + " but only " +
                          std::to_string(pool_->patterns().size()) + " PATTERNs");
    const uint64_t n = rw_.import_state(in, merge);
    if (have_alloc && !merge) rw_.set_port_cursor(pc), pool_->set_rr_cursor(rr % pool_->patterns().size());
    return n;
  }
  bool follow_state(const Element& source) override {
    if (std::strcmp(source.class_name(), class_name()) != 0) return false;
    return rw_.follow(static_cast<const SynthRewriter&>(source).rw_);
  }
  void unfollow_state(const Element& source) override {
    if (std::strcmp(source.class_name(), class_name()) == 0) rw_.unfollow(static_cast<const SynthRewriter&>(source).rw_);
  }
  bool swap_state(Element& other) override {
    if (std::strcmp(other.class_name(), class_name()) != 0) return false;
    auto& o = static_cast<SynthRewriter&>(other);
    if (o.pool_->patterns().size() != pool_->patterns().size() || !rw_.swap_table(o.rw_)) return false;
    const uint32_t rr = pool_->rr_cursor();
    pool_->set_rr_cursor(o.pool_->rr_cursor());
    o.pool_->set_rr_cursor(rr);
    return true;
  }
  bool flow_state_stats(FlowStateStats* out) const override { return rw_.stats(out), true; }
  std::vector<const char*> stage_names() const override { return {"keys", "lookup"}; }
  void report(std::ostream& os) const override {
    rw_.report(os);
    os << "unmapped_replies " << unmapped_ << "\nnot_tcp_udp " << bad_ << "\n";
  }

 private:
  FlowRewriter::Options opts_;
  FlowRewriter rw_;
  std::vector<CheckIPHeader::Fold> check_;  // per input
  std::vector<ClassCount* const*> count_slot_;  // per input: take_group_count's slot, or null
  TtlFold ttl_;
  std::unique_ptr<PatternPool> pool_;
  uint64_t bad_ = 0, unmapped_ = 0;
};

// ---- IPMappers -------------------------------------------------------------------------------------------------

class IPMapperBase : public Element, public PatternSelector {
 public:
  PortCountRange input_range() const override { return {0, 0}; }
  PortCountRange output_range() const override { return {0, 0}; }
  void configure(Args& args) override {
    std::vector<RewritePattern> pats;
    for (size_t i = 0; i < args.positional_count(); ++i) {
      auto w = split_words(args.positional(i));
      const std::string what = "pattern " + std::to_string(i);
      if (w.size() != 6) throw ConfigError(what + ": expected SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT");
      RewritePattern p = parse_rewrite_pattern({w[0], w[1], w[2], w[3]}, what, RewritePattern::Pick::kSameFirst);
      p.fout = static_cast<uint8_t>(parse_uint(w[4], what + " FOUTPUT", 255));
      p.rout = static_cast<uint8_t>(parse_uint(w[5], what + " ROUTPUT", 255));
      pats.push_back(p);
    }
    if (pats.empty()) throw ConfigError("expected at least one pattern");
    pool_ = std::make_unique<PatternPool>(std::move(pats), how());
  }
  void push(int, PacketBatch& b) override { drop_all(b); }
  const std::vector<RewritePattern>& patterns() const override { return pool_->patterns(); }
  uint32_t select(const Tuple& t, uint32_t hash) override { return pool_->select(t, hash); }

 protected:
  virtual Select how() const = 0;
  std::unique_ptr<PatternPool> pool_;
};

class RoundRobinIPMapper final : public IPMapperBase {
 public:
  const char* class_name() const override { return "RoundRobinIPMapper"; }
  Select how() const override { return Select::kRoundRobin; }
};

class MaglevIPMapper final : public IPMapperBase {
 public:
  const char* class_name() const override { return "MaglevIPMapper"; }
  Select how() const override { return Select::kMaglev; }
};

// ---- IPRewriterPatterns -----------------------------------------------------------------------------------------

// Named patterns for IPRewriter's `pattern NAME FOUTPUT ROUTPUT` (Click's IPRewriterPatterns): no ports, no
// packets. Names must be distinct over every IPRewriterPatterns of the configuration (checked by IPRewriter).
class IPRewriterPatterns final : public Element {
 public:
  const char* class_name() const override { return "IPRewriterPatterns"; }
  PortCountRange input_range() const override { return {0, 0}; }
  PortCountRange output_range() const override { return {0, 0}; }
  bool takes_keywords() const override { return false; }  // `NAT 10.0.0.1 ...`: NAT is a name, not a keyword
  void configure(Args& args) override {
    for (size_t i = 0; i < args.positional_count(); ++i) {
      auto w = split_words(args.positional(i));
      const std::string what = "pattern " + std::to_string(i);
      if (w.size() != 5) throw ConfigError(what + ": expected NAME SADDR SPORT DADDR DPORT, got '" + args.positional(i) + "'");
      for (const auto& [name, p] : named_)
        if (name == w[0]) throw ConfigError(what + ": pattern name '" + name + "' given twice");
      named_.emplace_back(w[0], parse_rewrite_pattern({w[1], w[2], w[3], w[4]}, what + " (" + w[0] + ")",
                                                      RewritePattern::Pick::kSameFirst));
    }
    if (named_.empty()) throw ConfigError("expected at least one NAME SADDR SPORT DADDR DPORT");
  }
  void push(int, PacketBatch& b) override { drop_all(b); }
  const RewritePattern* find(const std::string& name) const {
    for (const auto& [n, p] : named_)
      if (n == name) return &p;
    return nullptr;
  }
  const std::vector<std::pair<std::string, RewritePattern>>& named() const { return named_; }

 private:
  std::vector<std::pair<std::string, RewritePattern>> named_;
};

// ---- IPRewriter ------------------------------------------------------------------------------------------------

class IPRewriter final : public Element {
 public:
  const char* class_name() const override { return "IPRewriter"; }
  std::vector<const char*> stage_names() const override { return {"keys", "lookup"}; }
  PortCountRange input_range() const override { return {1, -1}; }
  PortCountRange output_range() const override { return {1, -1}; }
  void configure(Args& args) override {
    opts_ = FlowRewriter::parse_click_options(args);
    for (size_t i = 0; i < args.positional_count(); ++i) specs_.push_back(parse_spec(args.positional(i), i));
    if (specs_.empty()) throw ConfigError("expected at least one input spec");
  }
  void initialize(const GraphEnv& env) override {
    if (static_cast<size_t>(ninputs()) > specs_.size())
      throw ConfigError(std::to_string(ninputs()) + " inputs connected but only " + std::to_string(specs_.size()) +
                        " input specs");
    for (Spec& s : specs_) {
      if (s.kind == Spec::kNamed) {
        s.kind = Spec::kPattern;
        s.base = static_cast<uint32_t>(all_.size());
        RewritePattern p = named_pattern(env, s.mapper_name);
        p.fout = s.fout, p.rout = s.rout;
        all_.push_back(p);
        continue;
      }
      if (s.kind != Spec::kMapper) continue;
      Element* e = env.find_element != nullptr ? env.find_element(env.element_ctx, s.mapper_name) : nullptr;
      s.mapper = dynamic_cast<PatternSelector*>(e);
      if (s.mapper == nullptr)
        throw ConfigError("input spec '" + s.mapper_name + "': no RoundRobinIPMapper/MaglevIPMapper of that name");
      s.base = static_cast<uint32_t>(all_.size());
      for (const RewritePattern& p : s.mapper->patterns()) all_.push_back(p);
    }
    for (const RewritePattern& p : all_)
      if (p.fout >= noutputs() || p.rout >= noutputs())
        throw ConfigError("pattern '" + p.text + "' uses output " + std::to_string(std::max(p.fout, p.rout)) +
                          " but " + std::to_string(noutputs()) + " output(s) are connected");
    for (const Spec& s : specs_)
      if (s.kind == Spec::kPass && s.pass_out >= noutputs())
        throw ConfigError("pass " + std::to_string(s.pass_out) + ": output not connected");
    rw_.initialize(name(), opts_, env, all_);
    ttl_.find(noutputs(), [this](int k) { return fold_output<DecIPTTL>(k); });
    check_.resize(ninputs());
  }
  void push(int port, PacketBatch& b) override {
    int res[kBurst];
    Spec& spec = specs_[port];
    process_batch(
        *this, rw_, check_[port], ttl_, b, res, &bad_, nullptr,
        [&](rte_mbuf* m, const Tuple& t, uint8_t* l4, uint64_t now) -> int {
          uint32_t k;
          switch (spec.kind) {
            case Spec::kDrop: return -1;
            case Spec::kPass: return spec.pass_out;
            case Spec::kPattern: k = spec.base; break;
            default: k = spec.base + spec.mapper->select(t, flow_hash(t)); break;
          }
          const int32_t idx = rw_.create(t, all_[k], k, now);
          if (idx < 0) return -1;
          rw_.touch(static_cast<uint32_t>(idx), m, l4, false, now);
          rewrite_packet(m, t, rw_.table().mapped(idx), l4);
          return all_[k].fout;
        },
        [](const FlowMeta& r, bool reply) { return reply ? r.rout : r.fout; });
    push_to_outputs(b, res);
  }
  bool fold_input(int port, Element& feeder) override { return check_.at(port).take(feeder); }
  bool has_state() const override { return true; }
  uint64_t export_state_slice(agent::v1::StateTable* out, uint64_t from, uint64_t deadline_tsc) const override {
    return rw_.export_slice(out, pack_allocator(rw_.port_cursor(), 0), from, deadline_tsc);
  }
  uint64_t import_state(const agent::v1::StateTable& in, bool merge) override {
    for (const auto& e : in.entries())
      if (e.backend() >= all_.size())
        throw ConfigError("backend " + std::to_string(e.backend()) + " but only " + std::to_string(all_.size()) +
                          " patterns");
    const uint64_t n = rw_.import_state(in, merge);
    FlowTable& t = rw_.table();
    t.for_each([&](uint32_t i) {  // outputs follow from the flow's pattern
      FlowMeta& r = t.meta(i);
      r.fout = all_[r.backend].fout, r.rout = all_[r.backend].rout;
    });
    return n;
  }
  bool follow_state(const Element& source) override {
    if (std::strcmp(source.class_name(), class_name()) != 0) return false;
    const auto& o = static_cast<const IPRewriter&>(source);
    // Records carry their outputs, taken from the patterns: the same patterns in the same order keep them right.
    if (o.all_.size() != all_.size()) return false;
    for (size_t k = 0; k < all_.size(); ++k)
      if (o.all_[k].fout != all_[k].fout || o.all_[k].rout != all_[k].rout) return false;
    return rw_.follow(o.rw_);
  }
  void unfollow_state(const Element& source) override {
    if (std::strcmp(source.class_name(), class_name()) == 0) rw_.unfollow(static_cast<const IPRewriter&>(source).rw_);
  }
  bool swap_state(Element& other) override {
    if (std::strcmp(other.class_name(), class_name()) != 0) return false;
    auto& o = static_cast<IPRewriter&>(other);
    // Records carry their outputs, taken from the patterns: the same patterns in the same order keep them right.
    if (o.all_.size() != all_.size()) return false;
    for (size_t k = 0; k < all_.size(); ++k)
      if (o.all_[k].text != all_[k].text || o.all_[k].fout != all_[k].fout || o.all_[k].rout != all_[k].rout) return false;
    return rw_.swap_table(o.rw_);
  }
  bool flow_state_stats(FlowStateStats* out) const override { return rw_.stats(out), true; }
  void report(std::ostream& os) const override {
    rw_.report(os);
    os << "not_tcp_udp " << bad_ << "\n";
  }

 private:
  struct Spec {
    enum Kind { kPattern, kNamed, kPass, kDrop, kMapper } kind = kDrop;
    uint32_t base = 0;  // first index in all_
    int pass_out = 0;
    uint8_t fout = 0, rout = 0;  // kNamed
    std::string mapper_name;     // kMapper: the element; kNamed: the pattern
    PatternSelector* mapper = nullptr;
  };
  // The pattern NAME of the configuration's IPRewriterPatterns elements (names are unique over all of them).
  static RewritePattern named_pattern(const GraphEnv& env, const std::string& name) {
    const RewritePattern* found = nullptr;
    std::string where;
    for (Element* e : env.all_elements != nullptr ? env.all_elements(env.element_ctx) : std::vector<Element*>{}) {
      const auto* pats = dynamic_cast<const IPRewriterPatterns*>(e);
      const RewritePattern* p = pats != nullptr ? pats->find(name) : nullptr;
      if (p == nullptr) continue;
      if (found != nullptr)
        throw ConfigError("pattern '" + name + "' is defined by both " + where + " and " + e->name() +
                          " (IPRewriterPatterns names must be distinct)");
      found = p, where = e->name();
    }
    if (found == nullptr) throw ConfigError("input spec 'pattern " + name + "': no IPRewriterPatterns defines '" + name + "'");
    return *found;
  }
  Spec parse_spec(const std::string& text, size_t i) {
    const std::string what = "input spec " + std::to_string(i);
    auto w = split_words(text);
    Spec s;
    if (w.empty()) throw ConfigError(what + ": empty");
    auto out = [&](const std::string& v, const char* which) {
      return static_cast<uint8_t>(parse_uint(v, what + " " + which, 255));
    };
    if ((w[0] == "drop" || w[0] == "discard") && w.size() == 1) {
      s.kind = Spec::kDrop;
    } else if ((w[0] == "pass" || w[0] == "passthrough" || w[0] == "nochange") && w.size() <= 2) {
      s.kind = Spec::kPass;
      s.pass_out = w.size() == 2 ? out(w[1], "OUTPUT") : 0;
    } else if ((w[0] == "pattern" && w.size() == 7) || (w[0] == "keep" && w.size() == 3)) {
      RewritePattern p = w[0] == "pattern"
                             ? parse_rewrite_pattern({w[1], w[2], w[3], w[4]}, what, RewritePattern::Pick::kSameFirst)
                             : parse_rewrite_pattern({"-", "-", "-", "-"}, what);
      p.fout = out(w[w.size() - 2], "FOUTPUT");
      p.rout = out(w[w.size() - 1], "ROUTPUT");
      s.kind = Spec::kPattern;
      s.base = static_cast<uint32_t>(all_.size());
      all_.push_back(p);
    } else if (w[0] == "pattern" && w.size() == 4) {  // a named pattern, resolved once every element is configured
      s.kind = Spec::kNamed;
      s.mapper_name = w[1];
      s.fout = out(w[2], "FOUTPUT");
      s.rout = out(w[3], "ROUTPUT");
    } else if (w.size() == 1) {
      s.kind = Spec::kMapper;
      s.mapper_name = w[0];
    } else {
      throw ConfigError(what + ": expected 'pattern SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT', 'pattern NAME "
                        "FOUTPUT ROUTPUT', 'keep FOUTPUT ROUTPUT', 'pass OUTPUT', 'drop' or a mapper element name, "
                        "got '" + text + "'");
    }
    return s;
  }
  FlowRewriter::Options opts_;
  FlowRewriter rw_;
  std::vector<CheckIPHeader::Fold> check_;  // per input
  TtlFold ttl_;
  std::vector<Spec> specs_;
  std::vector<RewritePattern> all_;
  uint64_t bad_ = 0;
};

}  // namespace

METRON_EXPORT_ELEMENT(SynthRewriter)
METRON_EXPORT_ELEMENT(IPRewriter)
METRON_EXPORT_ELEMENT(IPRewriterPatterns)
METRON_EXPORT_ELEMENT(RoundRobinIPMapper)
METRON_EXPORT_ELEMENT(MaglevIPMapper)

}  // namespace metron

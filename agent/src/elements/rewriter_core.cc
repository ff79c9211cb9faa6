// Shared machinery of the rewriter elements (rewriter.h): patterns, selection, packet rewriting, the flow
// mapping lifecycle and its export/import.
#include <arpa/inet.h>
#include <rte_cycles.h>
#include <rte_hash_crc.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/annotations.h"
#include "elements/ipv6_ext.h"
#include "elements/rewriter.h"
#include "metron/agent/v1/agent.pb.h"
#include "utils/checksum.h"

namespace metron {

namespace {

// Parses an address into 16 bytes; returns its family (0 = IPv4, 1 = IPv6).
uint8_t parse_any_address(const std::string& s, const std::string& what, uint8_t out[16]) {
  std::memset(out, 0, 16);
  if (s.find(':') != std::string::npos) {
    parse_ipv6(s, what, out);
    return 1;
  }
  const uint32_t a = parse_ipv4(s, what);
  std::memcpy(out, &a, 4);
  return 0;
}

uint32_t fnv(const std::string& s, uint32_t seed) {
  uint32_t h = 2166136261u ^ seed;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

}  // namespace

RewritePattern parse_rewrite_pattern(const std::vector<std::string>& w, const std::string& what, RewritePattern::Pick pick) {
  if (w.size() != 4) throw ConfigError(what + ": expected SADDR SPORT DADDR DPORT, got " + std::to_string(w.size()) + " word(s)");
  RewritePattern p;
  int fam = -1;
  if (w[0] != "-") {
    p.set_src = true;
    fam = parse_any_address(w[0], what + " SADDR", p.src);
  }
  if (w[1] != "-") {
    p.set_sport = true;
    std::string ports = w[1];
    p.pick = pick;
    if (!ports.empty() && (ports.back() == '#' || ports.back() == '?')) {  // Click's sequential / random suffixes
      p.pick = ports.back() == '#' ? RewritePattern::Pick::kSequential : RewritePattern::Pick::kRandom;
      ports.pop_back();
    }
    parse_port_range(ports, what + " SPORT", &p.sport_lo, &p.sport_hi);
  }
  if (w[2] != "-") {
    p.set_dst = true;
    const int f2 = parse_any_address(w[2], what + " DADDR", p.dst);
    if (fam >= 0 && f2 != fam) throw ConfigError(what + ": SADDR and DADDR are of different address families");
    fam = f2;
  }
  if (w[3] != "-") {
    p.set_dport = true;
    uint16_t hi;
    parse_port_range(w[3], what + " DPORT", &p.dport, &hi);
    if (hi != p.dport) throw ConfigError(what + " DPORT: expected one port, got a range '" + w[3] + "'");
  }
  p.v6 = fam == 1;
  for (size_t i = 0; i < 4; ++i) p.text += (i ? " " : "") + w[i];
  return p;
}

MaglevTable::MaglevTable(const std::vector<std::string>& backends) : table_(kSize, 0) {
  const size_t n = backends.size();
  if (n == 0) return;
  std::vector<uint32_t> offset(n), skip(n), next(n, 0);
  for (size_t i = 0; i < n; ++i) {
    offset[i] = fnv(backends[i], 0x5bd1e995) % kSize;
    skip[i] = fnv(backends[i], 0x9e3779b9) % (kSize - 1) + 1;
  }
  std::vector<int32_t> entry(kSize, -1);
  uint32_t filled = 0;
  for (;;) {
    for (size_t i = 0; i < n; ++i) {
      uint32_t c = static_cast<uint32_t>((offset[i] + static_cast<uint64_t>(next[i]) * skip[i]) % kSize);
      while (entry[c] >= 0) {
        ++next[i];
        c = static_cast<uint32_t>((offset[i] + static_cast<uint64_t>(next[i]) * skip[i]) % kSize);
      }
      entry[c] = static_cast<int32_t>(i);
      ++next[i];
      if (++filled == kSize) {
        for (uint32_t k = 0; k < kSize; ++k) table_[k] = static_cast<uint16_t>(entry[k]);
        return;
      }
    }
  }
}

PatternPool::PatternPool(std::vector<RewritePattern> patterns, Select how) : patterns_(std::move(patterns)), how_(how) {
  if (how_ == Select::kMaglev) {
    std::vector<std::string> names;
    for (const auto& p : patterns_) names.push_back(p.text);
    maglev_ = std::make_unique<MaglevTable>(names);
  }
}

uint32_t PatternPool::select(const Tuple&, uint32_t hash) {
  if (patterns_.size() == 1) return 0;
  if (how_ == Select::kMaglev) return maglev_->pick(hash);
  const uint32_t i = rr_;
  rr_ = rr_ + 1 == patterns_.size() ? 0 : rr_ + 1;
  return i;
}

bool tuple_of(rte_mbuf* m, Tuple* t, uint8_t** l4) {
  const PacketAnno a = anno(m);
  if (a.ip_ver == 4) {
    Key4 k;
    if (!key4_of(m, &k, l4)) return false;
    *t = to_tuple(k);
    return true;
  }
  if (a.ip_ver != 6) return false;
  uint8_t* ip = ip_header(m);
  const int left = ip_bytes_left(m);
  if (left < 40) return false;
  const Ipv6Upper u = ipv6_upper_layer(ip, left);  // behind the extension headers, as the classifiers read it
  if (!u.first_frag) return false;
  std::memset(t, 0, sizeof *t);
  t->proto = u.proto;
  t->v6 = 1;
  std::memcpy(t->src, ip + 8, 16);
  std::memcpy(t->dst, ip + 24, 16);
  if (!(tcp_or_udp(t->proto) & (u.end >= u.l4 + (t->proto == 6 ? 20 : 8)))) return false;
  *l4 = ip + u.l4;
  t->sport = load16(*l4);
  t->dport = load16(*l4 + 2);
  return true;
}

void rewrite_ipv4(uint8_t* ip, uint8_t* l4, const Key4& from, const Key4& to) {
  rewrite_ipv4(ip, l4, to, rewrite_deltas(from, to));
}

void rewrite_packet(rte_mbuf* m, const Tuple& from, const Tuple& to, uint8_t* l4) {
  uint8_t* ip = ip_header(m);
  if (!from.v6) return rewrite_ipv4(ip, l4, to_key4(from), to_key4(to));
  bool l4csum;
  uint8_t* csum = l4_checksum(l4, from.proto, true, &l4csum);
  uint32_t sum = 0;
  for (int w = 0; w < 8; ++w)
    sum += csum_term(load16(from.src + 2 * w), load16(to.src + 2 * w)) +
           csum_term(load16(from.dst + 2 * w), load16(to.dst + 2 * w));
  sum += csum_term(from.sport, to.sport) + csum_term(from.dport, to.dport);
  std::memcpy(ip + 8, to.src, 16);
  std::memcpy(ip + 24, to.dst, 16);
  store16(l4, to.sport);
  store16(l4 + 2, to.dport);
  store_l4_checksum(csum, from.proto, csum_apply(load16(csum), sum));
}

// ---- FlowRewriter ----------------------------------------------------------------------------------------------

namespace {

// CAPACITY / MAPPING_CAPACITY: a number of flows per core. Click also takes another rewriter's name (to share its
// capacity), which the agent, one table per element and core, cannot do.
uint32_t parse_capacity(const std::string& keyword, const std::string& v) {
  if (!v.empty() && !std::isdigit(static_cast<unsigned char>(v[0])))
    throw ConfigError(keyword + ": sharing another rewriter's capacity ('" + v +
                      "') is not supported; give a number of flows per core");
  const auto c = static_cast<uint32_t>(parse_uint(v, keyword, FlowTable::kMaxCapacity));
  if (c == 0) throw ConfigError(keyword + ": must be at least 1");
  return c;
}

// Takes keyword k's time, if given, into *into.
void take_seconds(Args& args, const char* k, double* into) {
  if (auto v = args.take(k)) *into = parse_seconds(*v, k);
}

}  // namespace

void FlowRewriter::parse_timeouts(Args& args, RewriterTimeouts* t) {
  auto secs = [&](const char* k, double* into) { take_seconds(args, k, into); };
  secs("TCP_NODATA_TIMEOUT", &t->tcp_nodata);
  secs("TIMEOUT", &t->tcp_data);
  secs("TCP_TIMEOUT", &t->tcp_data);
  secs("TCP_DONE_TIMEOUT", &t->tcp_done);
  secs("UDP_TIMEOUT", &t->udp);
  t->udp_streaming = t->udp;
  secs("UDP_STREAMING_TIMEOUT", &t->udp_streaming);
}

FlowRewriter::Options FlowRewriter::parse_synth_options(Args& args) {
  Options o;
  RewriterTimeouts& t = o.timeouts;
  parse_timeouts(args, &t);
  if (auto v = args.take("GUARANTEE")) t.tcp_guarantee = t.udp_guarantee = parse_seconds(*v, "GUARANTEE");
  if (auto v = args.take("CAPACITY")) o.capacity = parse_capacity("CAPACITY", *v);
  return o;
}

FlowRewriter::Options FlowRewriter::parse_click_options(Args& args) {
  Options o;
  RewriterTimeouts& t = o.timeouts;
  parse_timeouts(args, &t);
  auto secs = [&](const char* k, double* into) { take_seconds(args, k, into); };
  secs("TCP_GUARANTEE", &t.tcp_guarantee);
  secs("GUARANTEE", &t.tcp_guarantee);  // IPRewriterBase's, read after TCP_GUARANTEE as in Click
  secs("UDP_GUARANTEE", &t.udp_guarantee);
  double reap = 0;  // expiry is incremental here (a few records per batch), so there is no reap timer to set
  secs("REAP_INTERVAL", &reap);
  secs("REAP_TIME", &reap);
  // The agent has no destination-address annotation: elements read the (rewritten) header, which is what
  // DST_ANNO true would give them. HANDLE_MIGRATION: the agent moves flow state between cores itself.
  if (auto v = args.take("DST_ANNO")) parse_bool(*v, "DST_ANNO");
  if (auto v = args.take("HANDLE_MIGRATION")) parse_bool(*v, "HANDLE_MIGRATION");
  if (args.take("REPLY_ANNO"))
    throw ConfigError("REPLY_ANNO: not supported (the agent keeps no per-flow packet annotation for replies)");
  if (auto v = args.take("CAPACITY")) o.capacity = parse_capacity("CAPACITY", *v);
  if (auto v = args.take("MAPPING_CAPACITY"))
    o.capacity = parse_capacity("MAPPING_CAPACITY", *v), o.capacity_keyword = "MAPPING_CAPACITY";
  return o;
}

bool maps_ipv6(const std::vector<RewritePattern>& patterns) {
  for (const RewritePattern& p : patterns)
    if (p.v6 || !(p.set_src || p.set_dst)) return true;  // a pattern setting no address keeps the flow's family
  return false;
}

namespace {
std::string megabytes(size_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MB", static_cast<double>(bytes) / (1 << 20));
  return b;
}
}  // namespace

void FlowRewriter::initialize(const std::string& name, const Options& o, const GraphEnv& env,
                              const std::vector<RewritePattern>& patterns) {
  const bool v6 = maps_ipv6(patterns);
  declared_ = o.capacity;
  if (declared_ != 0) {
    const size_t need = FlowTable::reserve_bytes(declared_, v6), have = FlowTable::memory_available(env.socket_id);
    if (need > have)
      throw ResourceError(o.capacity_keyword + " " + std::to_string(declared_) + " (flows per core) needs " + megabytes(need) +
                          " of DPDK memory for its flow table; " + megabytes(have) + " available on NUMA node " +
                          std::to_string(env.socket_id));
    table_ = std::make_unique<FlowTable>(name, declared_, env.socket_id, v6, /*grows=*/false);
  } else {
    table_ = std::make_unique<FlowTable>(name, kInitialCapacity, env.socket_id, v6, /*grows=*/true);
  }
  published_.store(table_.get(), std::memory_order_release);
  tsc_hz_ = rte_get_tsc_hz();
  const RewriterTimeouts& t = o.timeouts;
  auto cycles = [this](double s) { return static_cast<uint64_t>(s * static_cast<double>(tsc_hz_)); };
  for (unsigned st = 0; st < 16; ++st) {
    // TCP: bits 1/2 payload seen forward/back, 4/8 FIN forward/back (RST sets both); Click's tcp_flow_timeout.
    const bool done = (st & 12) == 12, data = (st & 3) == 3;
    timeout_[1][st] = cycles(done ? t.tcp_done : data ? t.tcp_data : t.tcp_nodata);
    // UDP: bit 1 a reply seen, bits 2-3 packets seen (up to 3); streaming = 3+ packets, one a reply.
    timeout_[0][st] = cycles((st & 1) && (st >> 1) >= 3 ? t.udp_streaming : t.udp);
  }
  const double shortest = std::min({t.tcp_data, t.tcp_nodata, t.tcp_done, t.udp, t.udp_streaming});
  sweep_period_ = FlowTable::sweep_period(cycles(shortest), tsc_hz_);
  guarantee_[1] = cycles(t.tcp_guarantee);
  guarantee_[0] = cycles(t.udp_guarantee);
  share_assigned_ = env.port_share_assigned;
  share_ = share_assigned_ ? env.port_share : env.slot;
  shares_ = std::max(1u, share_assigned_ ? env.port_shares : env.slots);
  rng_ ^= static_cast<uint32_t>(share_ * 2654435761u);
  // A share the controller assigned holds ports no other group of the chain holds. A range with fewer ports than
  // shares (Click accepts any range, e.g. 1024-1025) gives one port to each of the lowest shares and none to the
  // rest: a group whose share holds no port maps no new flow of that pattern (mapping_failures, as Click counts a
  // range with no free port), since sharing the range would hand out another group's ports.
  if (share_assigned_)
    for (const RewritePattern& p : patterns) {
      uint32_t lo, count;
      if (!p.set_sport || p.sport_hi == p.sport_lo || static_cast<uint32_t>(p.sport_hi) - p.sport_lo + 1 >= shares_)
        continue;
      const std::string what = share_of(p, &lo, &count) ? "maps to its one port, " + std::to_string(lo)
                                                         : std::string("holds none of it: its new flows fail");
      std::fprintf(stderr, "metron-agent: %s: port range %u-%u of pattern '%s' has fewer ports than the %u shares it "
                   "is divided into between the chain's groups and cores: share %u %s\n", name.c_str(),
                   p.sport_lo, p.sport_hi, p.text.c_str(), shares_, share_, what.c_str());
    }
}

bool FlowRewriter::share_of(const RewritePattern& p, uint32_t* lo, uint32_t* count) const {
  const uint32_t n = static_cast<uint32_t>(p.sport_hi) - p.sport_lo + 1;
  *lo = p.sport_lo, *count = n;
  if (n < shares_) {
    if (!share_assigned_) return true;  // standalone: every core uses the whole range (Click's behaviour)
    if (share_ >= n) return false;      // a share of a range too small to reach it: no port (see initialize)
    *lo = p.sport_lo + share_, *count = 1;
    return true;
  }
  const uint32_t per = n / shares_;
  *lo = p.sport_lo + share_ * per;
  *count = share_ + 1 == shares_ ? n - share_ * per : per;
  return true;
}

int32_t FlowRewriter::insert_or_shed(const Tuple& t, const Tuple& mapped, uint32_t backend, uint8_t fout, uint8_t rout,
                                     uint64_t now) {
  int32_t idx = table_->insert(t, mapped, backend, fout, rout, now);
  // Full: unless the table's growth is on its way, shed as Click does (the flow idle longest of a sample, if idle
  // past its guarantee, makes room; otherwise the new flow is refused).
  if (idx == FlowTable::kFull && !table_->room_coming() &&
      table_->evict_one(now, kEvictCandidates, kEvictScan, [this](const FlowMeta& m) { return guarantee_[m.proto == 6]; })) {
    evicted_.add(1);
    idx = table_->insert(t, mapped, backend, fout, rout, now);
  }
  return idx;
}

int32_t FlowRewriter::create(const Tuple& t, const RewritePattern& p, uint32_t backend, uint64_t now) {
  int32_t idx = FlowTable::kConflict;
  if ((p.set_src || p.set_dst) && p.v6 != t.v6) return failures_.add(1), -1;  // pattern of the other family
  Tuple mapped = t;
  if (p.set_src) std::memcpy(mapped.src, p.src, 16);
  if (p.set_dst) std::memcpy(mapped.dst, p.dst, 16);
  if (p.set_dport) mapped.dport = p.dport;
  if (!p.set_sport || p.sport_lo == p.sport_hi) {
    if (p.set_sport) mapped.sport = p.sport_lo;
    idx = insert_or_shed(t, mapped, backend, p.fout, p.rout, now);
  } else {
    // This group's (or core's) share of the port range, so no two of them hand out the same port.
    uint32_t lo, count;
    if (!share_of(p, &lo, &count)) return failures_.add(1), -1;  // no port for this share (or pattern): counted
    // Offset in the share of the first port to try, then the following ones (Click's order). cursor_ is the next
    // offset of a sequential pattern.
    uint32_t at;
    if (p.pick == RewritePattern::Pick::kSequential) at = cursor_ < count ? cursor_ : 0;
    else if (p.pick == RewritePattern::Pick::kSameFirst && t.sport >= lo && t.sport - lo < count) at = t.sport - lo;
    else at = random() % count;
    for (uint32_t tries = 0; tries < std::min(count, kPortTries) && idx == FlowTable::kConflict; ++tries) {
      mapped.sport = static_cast<uint16_t>(lo + at);
      idx = insert_or_shed(t, mapped, backend, p.fout, p.rout, now);
      if (tries == 0 && p.pick == RewritePattern::Pick::kSameFirst) at = random() % count;  // own port taken
      else at = at + 1 == count ? 0 : at + 1;
      if (p.pick == RewritePattern::Pick::kSequential) cursor_ = static_cast<uint16_t>(at);
    }
  }
  if (idx >= 0) return idx;
  if (idx == FlowTable::kFull) refused_.add(1);
  failures_.add(1);
  return -1;
}

void FlowRewriter::expire(uint64_t now, unsigned packets) {
  table_->maintain(now);
  table_->expire(now, (packets + 3) / 4, sweep_period_, [this](const FlowMeta& m) { return timeout_of(m); });
}

void FlowRewriter::stats(FlowStateStats* out) const {
  const FlowTable& t = *published_.load(std::memory_order_acquire);
  out->flows = t.size();
  out->capacity = t.capacity();
  out->declared_capacity = declared_;
  out->memory_bytes = t.memory_bytes();
  out->evicted = evicted_.get();
  out->refused = refused_.get();
  out->mapping_failures = failures_.get();
  out->growths = t.growths();
  out->growth_failures = t.growth_failures();
  out->shared_heap_hashes = t.shared_heap_hashes();
  out->inherited = inherited_.get();
  out->inherit_failures = inherit_failures_.get();
}

void FlowRewriter::report(std::ostream& os) const {
  FlowStateStats s;
  stats(&s);
  os << "flows " << s.flows << "\ncapacity " << s.capacity << "\nevicted " << s.evicted << "\nrefused " << s.refused
     << "\nmapping_failures " << s.mapping_failures << "\n";
}

namespace {
void to_pb(const Tuple& t, agent::v1::FiveTuple* out) {
  const size_t len = t.v6 ? 16 : 4;
  out->set_src_ip(std::string(reinterpret_cast<const char*>(t.src), len));
  out->set_dst_ip(std::string(reinterpret_cast<const char*>(t.dst), len));
  out->set_src_port(t.sport);
  out->set_dst_port(t.dport);
  out->set_proto(t.proto);
}
Tuple from_pb(const agent::v1::FiveTuple& in, const std::string& what) {
  Tuple t{};
  const size_t sl = in.src_ip().size(), dl = in.dst_ip().size();
  if ((sl != 4 && sl != 16) || dl != sl)
    throw ConfigError(what + ": src_ip/dst_ip must both be 4 or 16 bytes, got " + std::to_string(sl) + "/" + std::to_string(dl));
  if (in.src_port() > 65535 || in.dst_port() > 65535) throw ConfigError(what + ": port above 65535");
  if (in.proto() != 6 && in.proto() != 17) throw ConfigError(what + ": proto " + std::to_string(in.proto()) + " is not TCP or UDP");
  t.v6 = sl == 16;
  std::memcpy(t.src, in.src_ip().data(), sl);
  std::memcpy(t.dst, in.dst_ip().data(), dl);
  t.sport = static_cast<uint16_t>(in.src_port());
  t.dport = static_cast<uint16_t>(in.dst_port());
  t.proto = static_cast<uint8_t>(in.proto());
  return t;
}
}  // namespace

uint64_t FlowRewriter::export_slice(agent::v1::StateTable* out, const std::string& allocator, uint64_t from,
                                   uint64_t deadline_tsc) const {
  // The clock is read once per step of kStep records: cheap next to the entries, fine-grained next to a slice.
  constexpr uint32_t kStep = 64;
  out->set_allocator_state(allocator);
  // Room for the table at once: growing a million-pointer array by doubling inside a slice copies megabytes.
  if (from == 0) out->mutable_entries()->Reserve(out->entries_size() + static_cast<int>(table_->size()));
  uint32_t at = static_cast<uint32_t>(std::min<uint64_t>(from, table_->records_used()));
  do {
    const uint64_t now = rte_rdtsc();
    at = table_->for_each_from(at, kStep, [&](uint32_t i) {
      const FlowMeta& m = table_->meta(i);
      agent::v1::FlowEntry* e = out->add_entries();
      to_pb(table_->orig(i), e->mutable_key());
      to_pb(table_->mapped(i), e->mutable_mapped());
      e->set_backend(m.backend);
      e->set_idle_ms((now - m.last_tsc) * 1000 / tsc_hz_);
      e->set_progress(m.state);
    });
    if (at >= table_->records_used()) return Element::kExportDone;
  } while (rte_rdtsc() < deadline_tsc);
  return at;
}

bool FlowRewriter::swap_table(FlowRewriter& o) {
  if (declared_ != o.declared_ || table_->ipv6() != o.table_->ipv6()) return false;
  std::swap(table_, o.table_);
  published_.store(table_.get(), std::memory_order_release);
  o.published_.store(o.table_.get(), std::memory_order_release);
  std::swap(cursor_, o.cursor_);
  return true;
}

bool FlowRewriter::follow(const FlowRewriter& source) {
  if (&source == this || source.table_->ipv6() != table_->ipv6()) return false;
  if (std::find(sources_.begin(), sources_.end(), &source) == sources_.end()) sources_.push_back(&source);
  return true;
}

void FlowRewriter::unfollow(const FlowRewriter& source) {
  sources_.erase(std::remove(sources_.begin(), sources_.end(), &source), sources_.end());
}

int32_t FlowRewriter::inherit(const Tuple& key, uint64_t now) {
  for (const FlowRewriter* src : sources_) {
    const FlowTable& t = *src->table_;
    const int32_t r = t.ipv6() ? t.lookup_one(key) : t.lookup_one4(to_key4(key));
    if (r < 0) continue;
    const uint32_t from = static_cast<uint32_t>(r) >> 1;
    const FlowMeta& m = t.meta(from);
    // The same mapping, so the flow's next frames leave as its earlier ones did. Its ports lie in the source's
    // share, which no instance of this table hands out: the insert can only fail for want of room (and sheds as a
    // new flow's would).
    const int32_t idx = insert_or_shed(t.orig(from), t.mapped(from), m.backend, m.fout, m.rout, now);
    if (idx < 0) {
      inherit_failures_.add(1);
      return kInheritFailed;
    }
    table_->meta(static_cast<uint32_t>(idx)).state = m.state;
    inherited_.add(1);
    return idx << 1 | (r & 1);
  }
  return -1;
}

uint64_t FlowRewriter::import_state(const agent::v1::StateTable& in, bool merge) {
  struct Item {
    Tuple orig, mapped;
    uint32_t backend;
    uint64_t idle_ms;
    uint8_t progress;
  };
  std::vector<Item> items;
  items.reserve(in.entries_size());
  for (int i = 0; i < in.entries_size(); ++i) {
    const auto& e = in.entries(i);
    const std::string f = "entries[" + std::to_string(i) + "]";
    Item it{from_pb(e.key(), f + ".key"), from_pb(e.mapped(), f + ".mapped"), e.backend(), e.idle_ms(),
            static_cast<uint8_t>(e.progress() & 0x7f)};
    if (it.orig.v6 != it.mapped.v6 || it.orig.proto != it.mapped.proto)
      throw ConfigError(f + ": key and mapped differ in address family or protocol");
    if (it.orig.v6 && !table_->ipv6())
      throw ConfigError(f + ".key: an IPv6 flow, but this element's patterns only map IPv4 flows");
    items.push_back(it);
  }
  // Room first (a growing table grows here, on the control path), so a refusal leaves the table as it was.
  const size_t n = items.size();
  if (declared_ != 0) {
    const size_t room = merge ? table_->free_slots() : declared_;
    if (n > room) throw ConfigError(std::to_string(n) + " entries but room for " + std::to_string(room) + " (CAPACITY)");
  } else if (!table_->reserve(static_cast<uint32_t>(std::min<size_t>(n, FlowTable::kMaxCapacity)))) {
    throw ConfigError(std::to_string(n) + " entries but the memory holds " + std::to_string(table_->capacity()) +
                      " flows (the table could not grow)");
  }
  if (!merge) table_->clear();
  const uint64_t now = rte_rdtsc();
  uint64_t imported = 0;
  for (const Item& it : items) {
    const uint64_t idle = static_cast<uint64_t>(static_cast<unsigned __int128>(it.idle_ms) * tsc_hz_ / 1000);
    // A flow idle past its timeout is gone: importing it would let its next packet revive it before the expiry
    // sweep reaches it (state saved across an agent restart comes back older by the downtime).
    FlowMeta probe{};
    probe.proto = it.orig.proto;
    probe.state = it.progress;
    if (idle > timeout_of(probe)) continue;
    // Flows already known here (merge) keep their local mapping.
    const int32_t idx = table_->insert(it.orig, it.mapped, it.backend, 0, 1, idle < now ? now - idle : 0);
    if (idx < 0) continue;
    table_->meta(static_cast<uint32_t>(idx)).state = it.progress;
    ++imported;
  }
  return imported;
}

}  // namespace metron

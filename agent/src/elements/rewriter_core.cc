// Shared machinery of the rewriter elements (rewriter.h): patterns, selection, packet rewriting, the flow
// mapping lifecycle and its export/import.
#include <arpa/inet.h>
#include <rte_cycles.h>
#include <rte_hash_crc.h>

#include <algorithm>
#include <cstring>

#include "core/annotations.h"
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

RewritePattern parse_rewrite_pattern(const std::vector<std::string>& w, const std::string& what) {
  if (w.size() != 4) throw ConfigError(what + ": expected SADDR SPORT DADDR DPORT, got " + std::to_string(w.size()) + " word(s)");
  RewritePattern p;
  int fam = -1;
  if (w[0] != "-") {
    p.set_src = true;
    fam = parse_any_address(w[0], what + " SADDR", p.src);
  }
  if (w[1] != "-") {
    p.set_sport = true;
    parse_port_range(w[1], what + " SPORT", &p.sport_lo, &p.sport_hi);
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
  if (a.ip_ver == 0) return false;
  uint8_t* ip = ip_header(m);
  const int left = ip_bytes_left(m);
  std::memset(t, 0, sizeof *t);
  int hl;
  if (a.ip_ver == 4) {
    if (left < 20) return false;
    hl = (ip[0] & 0xf) * 4;
    t->proto = ip[9];
    if ((load16(ip + 6) & 0x1fff) != 0) return false;  // non-first fragment: no ports to map
    std::memcpy(t->src, ip + 12, 4);
    std::memcpy(t->dst, ip + 16, 4);
  } else {
    if (left < 40) return false;
    hl = 40;
    t->proto = ip[6];  // extension headers are not walked: such packets are not TCP/UDP here
    t->v6 = 1;
    std::memcpy(t->src, ip + 8, 16);
    std::memcpy(t->dst, ip + 24, 16);
  }
  if (t->proto != 6 && t->proto != 17) return false;
  if (left < hl + (t->proto == 6 ? 20 : 8)) return false;
  *l4 = ip + hl;
  t->sport = load16(*l4);
  t->dport = load16(*l4 + 2);
  return true;
}

void rewrite_packet(rte_mbuf* m, const Tuple& from, const Tuple& to, uint8_t* l4) {
  uint8_t* ip = ip_header(m);
  uint8_t* csum = from.proto == 6 ? l4 + 16 : l4 + 6;
  const bool l4csum = from.proto == 6 || load16(csum) != 0 || from.v6;  // UDP/IPv4 checksum 0 = none
  uint16_t c = l4csum ? load16(csum) : 0;
  const int words = from.v6 ? 8 : 2;
  uint8_t* sa = from.v6 ? ip + 8 : ip + 12;
  uint8_t* da = from.v6 ? ip + 24 : ip + 16;
  uint16_t ipc = from.v6 ? 0 : load16(ip + 10);
  for (int w = 0; w < words; ++w) {
    const uint16_t os = load16(from.src + 2 * w), ns = load16(to.src + 2 * w);
    const uint16_t od = load16(from.dst + 2 * w), nd = load16(to.dst + 2 * w);
    if (os != ns) {
      if (l4csum) c = csum_update16(c, os, ns);
      if (!from.v6) ipc = csum_update16(ipc, os, ns);
      store16(sa + 2 * w, ns);
    }
    if (od != nd) {
      if (l4csum) c = csum_update16(c, od, nd);
      if (!from.v6) ipc = csum_update16(ipc, od, nd);
      store16(da + 2 * w, nd);
    }
  }
  if (from.sport != to.sport) {
    if (l4csum) c = csum_update16(c, from.sport, to.sport);
    store16(l4, to.sport);
  }
  if (from.dport != to.dport) {
    if (l4csum) c = csum_update16(c, from.dport, to.dport);
    store16(l4 + 2, to.dport);
  }
  if (!from.v6) store16(ip + 10, ipc);
  if (l4csum) {
    if (from.proto == 17 && c == 0) c = 0xffff;
    store16(csum, c);
  }
}

// ---- FlowRewriter ----------------------------------------------------------------------------------------------

FlowRewriter::Options FlowRewriter::parse_options(Args& args) {
  Options o;
  if (auto v = args.take("TIMEOUT")) o.timeout_s = parse_double(*v, "TIMEOUT");
  if (auto v = args.take("TCP_TIMEOUT")) o.tcp_timeout_s = parse_double(*v, "TCP_TIMEOUT");
  if (auto v = args.take("UDP_TIMEOUT")) o.udp_timeout_s = parse_double(*v, "UDP_TIMEOUT");
  if (auto v = args.take("CAPACITY")) o.capacity = static_cast<uint32_t>(parse_uint(*v, "CAPACITY", 1u << 26));
  if (o.capacity == 0) throw ConfigError("CAPACITY: must be at least 1");
  return o;
}

bool maps_ipv6(const std::vector<RewritePattern>& patterns) {
  for (const RewritePattern& p : patterns)
    if (p.v6 || !(p.set_src || p.set_dst)) return true;  // a pattern setting no address keeps the flow's family
  return false;
}

void FlowRewriter::initialize(const std::string& name, const Options& o, const GraphEnv& env,
                              const std::vector<RewritePattern>& patterns) {
  table_ = std::make_unique<FlowTable>(name, o.capacity, env.socket_id, maps_ipv6(patterns));
  tsc_hz_ = rte_get_tsc_hz();
  tcp_timeout_ = static_cast<uint64_t>((o.tcp_timeout_s > 0 ? o.tcp_timeout_s : o.timeout_s) * tsc_hz_);
  udp_timeout_ = static_cast<uint64_t>((o.udp_timeout_s > 0 ? o.udp_timeout_s : o.timeout_s) * tsc_hz_);
  slot_ = env.slot;
  slots_ = env.slots ? env.slots : 1;
}

int32_t FlowRewriter::create(const Tuple& t, const RewritePattern& p, uint32_t backend, uint64_t now) {
  if ((p.set_src || p.set_dst) && p.v6 != t.v6) return -1;  // pattern of the other address family
  Tuple mapped = t;
  if (p.set_src) std::memcpy(mapped.src, p.src, 16);
  if (p.set_dst) std::memcpy(mapped.dst, p.dst, 16);
  if (p.set_dport) mapped.dport = p.dport;
  if (!p.set_sport || p.sport_lo == p.sport_hi) {
    if (p.set_sport) mapped.sport = p.sport_lo;
    return table_->insert(t, mapped, backend, p.fout, p.rout, now);
  }
  // This core's share of the port range, so cores never hand out the same port.
  const uint32_t n = static_cast<uint32_t>(p.sport_hi) - p.sport_lo + 1;
  uint32_t lo = p.sport_lo, count = n;
  if (n >= slots_) {
    const uint32_t per = n / slots_;
    lo = p.sport_lo + slot_ * per;
    count = slot_ + 1 == slots_ ? n - slot_ * per : per;
  }
  for (uint32_t tries = 0; tries < std::min<uint32_t>(count, 64); ++tries) {
    cursor_ = static_cast<uint16_t>(cursor_ + 1 >= count ? 0 : cursor_ + 1);
    mapped.sport = static_cast<uint16_t>(lo + cursor_);
    const int32_t idx = table_->insert(t, mapped, backend, p.fout, p.rout, now);
    if (idx >= 0) return idx;
  }
  return -1;
}

void FlowRewriter::expire(uint64_t now) {
  table_->expire(now, 8, [this](const FlowMeta& m) { return m.proto == 6 ? tcp_timeout_ : udp_timeout_; });
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
    });
    if (at >= table_->records_used()) return Element::kExportDone;
  } while (rte_rdtsc() < deadline_tsc);
  return at;
}

bool FlowRewriter::swap_table(FlowRewriter& o) {
  if (table_->capacity() != o.table_->capacity() || table_->ipv6() != o.table_->ipv6()) return false;
  std::swap(table_, o.table_);
  std::swap(cursor_, o.cursor_);
  return true;
}

uint64_t FlowRewriter::import_state(const agent::v1::StateTable& in, bool merge) {
  struct Item {
    Tuple orig, mapped;
    uint32_t backend;
    uint64_t idle_ms;
  };
  std::vector<Item> items;
  items.reserve(in.entries_size());
  for (int i = 0; i < in.entries_size(); ++i) {
    const auto& e = in.entries(i);
    const std::string f = "entries[" + std::to_string(i) + "]";
    Item it{from_pb(e.key(), f + ".key"), from_pb(e.mapped(), f + ".mapped"), e.backend(), e.idle_ms()};
    if (it.orig.v6 != it.mapped.v6 || it.orig.proto != it.mapped.proto)
      throw ConfigError(f + ": key and mapped differ in address family or protocol");
    if (it.orig.v6 && !table_->ipv6())
      throw ConfigError(f + ".key: an IPv6 flow, but this element's patterns only map IPv4 flows");
    items.push_back(it);
  }
  const uint32_t room = merge ? table_->free_slots() : table_->capacity();
  if (items.size() > room)
    throw ConfigError(std::to_string(items.size()) + " entries but room for " + std::to_string(room) + " (CAPACITY)");
  if (!merge) table_->clear();
  const uint64_t now = rte_rdtsc();
  uint64_t n = 0;
  for (const Item& it : items) {
    const uint64_t idle = static_cast<uint64_t>(static_cast<unsigned __int128>(it.idle_ms) * tsc_hz_ / 1000);
    // A flow idle past its timeout is gone: importing it would let its next packet revive it before the expiry
    // sweep reaches it (state saved across an agent restart comes back older by the downtime).
    if (idle > (it.orig.proto == 6 ? tcp_timeout_ : udp_timeout_)) continue;
    // Flows already known here (merge) keep their local mapping.
    if (table_->insert(it.orig, it.mapped, it.backend, 0, 1, idle < now ? now - idle : 0) >= 0) ++n;
  }
  return n;
}

}  // namespace metron

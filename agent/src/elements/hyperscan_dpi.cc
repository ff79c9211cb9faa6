// HyperscanDPI(REGEX, ..., [MODE STREAM|BLOCK], [FLOWS n], [TIMEOUT s], [HOLD n], [HOLD_CORE n], [OFFSET n]):
// deep packet inspection with Hyperscan. The patterns are compiled once per instance (PCRE-style, quoted if they
// contain commas: HyperscanDPI("attack[0-9]+", "/etc/passwd")); each core's instance owns its scratch space and
// flow table. A packet whose bytes complete a match goes to output 1 if it is connected, else it is dropped;
// every other packet goes to output 0. Counters (report): matches (packets given the match verdict),
// streams_open, streams_shed, ooo_held, ooo_dropped, retransmitted_bytes_skipped, block_scans.
//
// MODE STREAM (the default): an IDS user expects a pattern split across TCP segments to match, so TCP over IPv4
// is matched per flow direction as one byte stream (Hyperscan stream mode), in sequence order:
//  - Each TCP flow has a record in a per-core FlowTable (both directions under one record, FLOWS records per core,
//    default 65,536, reserved when the graph is built) and, per direction, the next expected sequence number and a
//    Hyperscan stream opened at its first payload byte. Streams come from a per-core pool: a closed stream is
//    reset and reused, so the packet path never allocates once the pool has reached its high-water mark (at most
//    two streams per record).
//  - A direction starts at its SYN (or at its first segment when the SYN was not seen: mid-stream pickup).
//    Bytes already scanned (a retransmission, or the overlapping part of a segment) are not scanned again and are
//    counted as retransmitted_bytes_skipped; the packet goes to output 0.
//  - A segment beyond the next expected byte (out of order) is HELD, not forwarded: an inline IPS must not let
//    bytes leave before it has scanned them, or an attacker evades it by sending a pattern's second half first.
//    When the gap fills the held segments are scanned and forwarded in sequence order, each with its own
//    verdict. Holding is bounded: HOLD segments per flow direction (default 8) and HOLD_CORE per core (default
//    512); a segment beyond either bound, and every segment still held when its flow ends (RST, idle timeout), is
//    dropped and counted as ooo_dropped (the sender retransmits it, as after any loss). A duplicate of a held
//    segment is dropped as retransmitted bytes.
//  - Each pattern matches at most once per flow direction (HS_FLAG_SINGLEMATCH per stream): the packet whose
//    bytes complete it gets the match verdict, once. A retransmission of that packet gets no second verdict (its
//    bytes were scanned): an IPS that drops output 1 and must also block the flow's retransmissions should
//    follow the DPI by a per-flow blocker.
//  - FIN closes its direction once the bytes before it are scanned (matches at end of data, `$`, go to the FIN
//    packet); a flow whose both directions have ended, or that sees RST, leaves the table and its streams return
//    to the pool; a flow idle for TIMEOUT seconds (default 300) does too.
//  - A new flow that finds the table full is counted in streams_shed and its packets are matched in block mode,
//    each alone, as are TCP over IPv6 (not kept in the IPv4 flow table yet), UDP and every other protocol, and
//    IPv4 fragments (block_scans counts packets scanned so).
// MODE BLOCK: every packet is matched alone (the element's behaviour before stream mode): bytes from the IP
// payload on (IPv6: behind the extension headers; or from OFFSET, when the IP header is not marked).
//
// Compared with FastClick/MiddleClick (tbarbette/fastclick, read 2026-11): FlowHyperScan (elements/flow) keeps an
// hs_stream_t in each flow's FCB (the flow subsystem's per-flow space), opened on the flow's first packet, and
// scans every packet in arrival order; it has one output and only counts matches (no verdict), and leaves
// ordering to other elements: MiddleClick's TCPReorder (now folded into TCPIn) holds out-of-order packets in a
// per-flow list from a per-thread pool and sends retransmissions to its output 1 or drops them. This element
// does both in one place, on Metron's per-core FlowTable: reordering (bounded per flow and per core, and counted),
// retransmission skipping (retransmissions are forwarded, as a transparent middlebox must, but not
// rescanned) and a per-packet verdict. It does not rewrite the stream (MiddleClick's TCPIn/TCPOut can remove or
// insert bytes and remap sequence numbers), and does not reorder IPv6 flows.
#include <hs/hs.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>

#include <memory>
#include <vector>

#include "core/annotations.h"
#include "core/element.h"
#include "elements/flow_table.h"
#include "elements/ipv6_ext.h"
#include "utils/checksum.h"

namespace metron {

namespace {

constexpr uint32_t kNone = UINT32_MAX;
constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04;

// One direction of a TCP flow (16 bytes; two per flow record).
struct DirState {
  uint32_t stream;    // index in the stream pool, kNone until the first byte is scanned and after close
  uint32_t next_seq;  // next byte expected in sequence order
  uint32_t held;      // first held segment (in sequence order), kNone if none
  uint8_t nheld;
  uint8_t phase;      // kIdle: nothing seen; kOpen; kEnded: FIN processed
  uint8_t pad[2];
};
enum : uint8_t { kIdle = 0, kOpen = 1, kEnded = 2 };

struct HeldSeg {
  rte_mbuf* m;
  uint32_t seq;  // of its first payload byte (after a SYN's)
  uint32_t next;
};

// A TCP segment as the stream sees it.
struct Seg {
  const uint8_t* data;  // payload
  int len;              // payload bytes, from the IP total length (not the frame: Ethernet padding is no data)
  uint32_t seq;         // sequence number of data[0] (a SYN's own number is skipped)
  uint8_t flags;
};

struct Hits {
  unsigned n = 0;
};

int on_stream_match(unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) {
  ++static_cast<Hits*>(ctx)->n;
  return 0;  // keep scanning: stopping would end the stream's matching for good
}
int on_block_match(unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) {
  ++static_cast<Hits*>(ctx)->n;
  return 1;  // one match decides the packet
}

class HyperscanDPI final : public Element {
 public:
  const char* class_name() const override { return "HyperscanDPI"; }
  PortCountRange output_range() const override { return {1, 2}; }
  ~HyperscanDPI() override {
    if (table_) table_->for_each([this](uint32_t idx) { release_flow(idx, false); });
    for (hs_stream_t* s : streams_) hs_close_stream(s, nullptr, nullptr, nullptr);
    if (dirs_ != nullptr) rte_free(dirs_);
    if (scratch_ != nullptr) hs_free_scratch(scratch_);
    if (block_db_ != nullptr) hs_free_database(block_db_);
    if (stream_db_ != nullptr) hs_free_database(stream_db_);
  }
  void configure(Args& args) override {
    if (auto v = args.take("OFFSET")) offset_ = static_cast<uint16_t>(parse_uint(*v, "OFFSET", 1500));
    if (auto v = args.take("MODE")) {
      if (*v == "STREAM") stream_mode_ = true;
      else if (*v == "BLOCK") stream_mode_ = false;
      else throw ConfigError("MODE: expected STREAM or BLOCK, got '" + *v + "'");
    }
    if (auto v = args.take("FLOWS")) flows_ = static_cast<uint32_t>(parse_uint(*v, "FLOWS", FlowTable::kMaxCapacity));
    if (auto v = args.take("TIMEOUT")) timeout_s_ = parse_seconds(*v, "TIMEOUT");
    if (auto v = args.take("HOLD")) hold_flow_ = static_cast<uint8_t>(parse_uint(*v, "HOLD", 255));
    if (auto v = args.take("HOLD_CORE")) hold_core_ = static_cast<uint32_t>(parse_uint(*v, "HOLD_CORE", 1u << 20));
    if (flows_ == 0) throw ConfigError("FLOWS: expected at least 1");
    if (args.positional_count() == 0) throw ConfigError("expected at least one pattern");
    std::vector<std::string> pats;
    for (size_t i = 0; i < args.positional_count(); ++i) pats.push_back(unquote(args.positional(i)));
    block_db_ = compile(pats, HS_MODE_BLOCK);
    if (stream_mode_) stream_db_ = compile(pats, HS_MODE_STREAM);
  }
  void initialize(const GraphEnv& env) override {
    if (hs_alloc_scratch(block_db_, &scratch_) != HS_SUCCESS) throw std::runtime_error("cannot allocate Hyperscan scratch");
    if (!stream_mode_) return;
    if (hs_alloc_scratch(stream_db_, &scratch_) != HS_SUCCESS)
      throw std::runtime_error("cannot allocate Hyperscan scratch");
    const size_t need = FlowTable::reserve_bytes(flows_, false), have = FlowTable::memory_available(env.socket_id);
    if (need > have)
      throw ResourceError("FLOWS " + std::to_string(flows_) + " (flows per core) needs " + std::to_string(need >> 20) +
                          " MB of DPDK memory for its flow table; " + std::to_string(have >> 20) + " MB available");
    table_ = std::make_unique<FlowTable>(env.instance + "." + name() + ".dpi", flows_, env.socket_id, false, false);
    // Not zeroed: a record's two directions are set when its flow is inserted, so pages become resident only as
    // flows arrive (as the table's own records do).
    dirs_ = static_cast<DirState*>(rte_malloc_socket("dpi_dirs", sizeof(DirState) * 2 * flows_, 64, env.socket_id));
    if (dirs_ == nullptr) throw ResourceError("FLOWS " + std::to_string(flows_) + ": no DPDK memory for stream state");
    streams_.reserve(2 * static_cast<size_t>(flows_));
    free_streams_.reserve(2 * static_cast<size_t>(flows_));
    held_.resize(hold_core_);
    for (uint32_t i = 0; i < hold_core_; ++i) held_[i].next = i + 1 < hold_core_ ? i + 1 : kNone;
    free_held_ = hold_core_ > 0 ? 0 : kNone;
    hs_stream_size(stream_db_, &stream_bytes_);
    timeout_tsc_ = static_cast<uint64_t>(timeout_s_ * static_cast<double>(rte_get_tsc_hz()));
    sweep_period_ = FlowTable::sweep_period(timeout_tsc_, rte_get_tsc_hz());
  }

  void push(int, PacketBatch& b) override {
    hit_out_ = noutputs() > 1 ? 1 : -1;
    out_[0].n = out_[1].n = 0;
    if (!stream_mode_) {
      for (uint16_t i = 0; i < b.n; ++i) emit(block_verdict(b.pkts[i]), b.pkts[i]);
    } else {
      const uint64_t now = rte_rdtsc();
      table_->maintain(now);
      table_->expire(now, 8, sweep_period_, [this](const FlowMeta&) { return timeout_tsc_; },
                     [this](uint32_t idx) { release_flow(idx, true); });
      // One bulk lookup for the batch's TCP segments (rte_hash prefetches every bucket before comparing), then
      // the segments in order. A flow inserted or removed by an earlier segment of the batch makes the later
      // results stale: from then on each segment looks its flow up again.
      Key4 keys[kBurst];
      Seg segs[kBurst];
      const Key4* kp[kBurst];
      int32_t found[kBurst];
      uint8_t tcp[kBurst];
      unsigned nk = 0;
      for (uint16_t i = 0; i < b.n; ++i) {
        tcp[i] = tcp_segment(b.pkts[i], &keys[i], &segs[i]);
        if (tcp[i]) kp[nk++] = &keys[i];
      }
      int32_t bulk[kBurst];
      if (nk > 0) table_->lookup4(kp, nk, bulk);
      for (uint16_t i = 0, j = 0; i < b.n; ++i) {
        if (!tcp[i]) continue;
        found[i] = bulk[j++];
        if (found[i] >= 0) {
          const uint32_t idx = static_cast<uint32_t>(found[i]) >> 1;
          rte_prefetch0(&dirs_[2 * idx + (found[i] & 1)]);
        }
      }
      // Hyperscan's stream state is the next miss: its first lines, once the directions have arrived.
      for (uint16_t i = 0; i < b.n; ++i) {
        if (!tcp[i] || found[i] < 0) continue;
        const uint32_t st = dirs_[2 * (static_cast<uint32_t>(found[i]) >> 1) + (found[i] & 1)].stream;
        if (st != kNone) {
          rte_prefetch0(streams_[st]);
          rte_prefetch0(reinterpret_cast<const uint8_t*>(streams_[st]) + 64);
        }
      }
      changed_ = false;
      for (uint16_t i = 0; i < b.n; ++i) {
        if (!tcp[i]) {
          ++block_scans_;
          emit(block_verdict(b.pkts[i]), b.pkts[i]);
          continue;
        }
        stream_packet(b.pkts[i], keys[i], segs[i], changed_ ? table_->lookup_one4(keys[i]) : found[i], now);
      }
    }
    b.n = 0;
    for (int k = 0; k < 2; ++k) output_push(k, out_[k]);
  }

  void report(std::ostream& os) const override {
    os << "matches " << matches_ << "\n";
    if (!stream_mode_) return;
    os << "streams_open " << streams_.size() - free_streams_.size() << "\n"
       << "streams_shed " << shed_ << "\n"
       << "ooo_held " << ooo_held_ << "\n"
       << "ooo_dropped " << ooo_dropped_ << "\n"
       << "retransmitted_bytes_skipped " << retrans_bytes_ << "\n"
       << "block_scans " << block_scans_ << "\n"
       << "flows " << table_->size() << "\n"
       << "stream_bytes " << stream_bytes_ << "\n";
  }

 private:
  hs_database_t* compile(const std::vector<std::string>& pats, unsigned mode) {
    std::vector<const char*> exprs;
    std::vector<unsigned> flags, ids;
    for (size_t i = 0; i < pats.size(); ++i) {
      exprs.push_back(pats[i].c_str());
      flags.push_back(HS_FLAG_DOTALL | HS_FLAG_SINGLEMATCH);
      ids.push_back(static_cast<unsigned>(i));
    }
    hs_database_t* db = nullptr;
    hs_compile_error_t* err = nullptr;
    if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()), mode, nullptr,
                         &db, &err) != HS_SUCCESS) {
      const std::string msg = err != nullptr ? err->message : "unknown error";
      const int which = err != nullptr ? err->expression : -1;
      hs_free_compile_error(err);
      if (block_db_ != nullptr) hs_free_database(block_db_), block_db_ = nullptr;
      throw ConfigError("pattern " + (which >= 0 ? std::to_string(which) + " '" + pats[which] + "'" : std::string("set")) +
                        ": " + msg);
    }
    return db;
  }

  void emit(int k, rte_mbuf* m) {
    if (k < 0) {
      drop(m);
      return;
    }
    PacketBatch& o = out_[k];
    o.push_back(m);
    if (o.n == kBurst) {
      output_push(k, o);
      o.n = 0;
    }
  }
  int verdict(unsigned hits) {
    if (hits == 0) return 0;
    ++matches_;
    return hit_out_;
  }

  int scan_block(const uint8_t* data, int len) {
    if (len <= 0) return 0;
    Hits h;
    hs_scan(block_db_, reinterpret_cast<const char*>(data), static_cast<unsigned>(len), 0, scratch_, on_block_match, &h);
    return verdict(h.n);
  }
  // Block mode: the IP payload on (MODE BLOCK's contract, unchanged).
  int block_verdict(rte_mbuf* m) {
    const uint8_t* data;
    int len;
    const PacketAnno a = anno(m);
    if (a.ip_ver == 4 || a.ip_ver == 6) {
      const uint8_t* ip = ip_header(m);
      const int hl = a.ip_ver == 4 ? (ip[0] & 0xf) * 4 : ipv6_upper_layer(ip, ip_bytes_left(m)).l4;
      data = ip + hl;
      len = ip_bytes_left(m) - hl;
    } else {
      data = rte_pktmbuf_mtod(m, const uint8_t*) + offset_;
      len = static_cast<int>(rte_pktmbuf_data_len(m)) - offset_;
    }
    return scan_block(data, len);
  }

  // An unfragmented IPv4 TCP segment with its flow key; false for anything else.
  static bool tcp_segment(rte_mbuf* m, Key4* k, Seg* s) {
    if (anno(m).ip_ver != 4) return false;
    const uint8_t* ip = ip_header(m);
    const int left = ip_bytes_left(m);
    if (left < 40 || ip[9] != 6 || (load16(ip + 6) & 0x3fff) != 0) return false;  // MF or offset: a fragment
    const int ihl = (ip[0] & 0xf) * 4;
    const int total = std::min<int>(load16(ip + 2), left);
    if (total < ihl + 20) return false;
    const uint8_t* tcp = ip + ihl;
    const int doff = (tcp[12] >> 4) * 4;
    if (doff < 20 || total < ihl + doff) return false;
    std::memcpy(k, ip + 12, 8);
    k->sport = load16(tcp);
    k->dport = load16(tcp + 2);
    k->proto = 6;
    k->v6 = 0;
    k->pad[0] = k->pad[1] = 0;
    s->flags = tcp[13];
    s->seq = load32(tcp + 4) + ((s->flags & kSyn) ? 1 : 0);
    s->data = tcp + doff;
    s->len = total - ihl - doff;
    return true;
  }

  void stream_packet(rte_mbuf* m, const Key4& k, const Seg& s, int32_t r, uint64_t now) {
    if (r < 0) {
      // Nothing to scan and nothing to start: pure ACKs, and FIN/RST of flows not (or no longer) held.
      if ((s.len == 0 && !(s.flags & kSyn)) || (s.flags & kRst)) {
        emit(s.len > 0 ? shed_scan(s) : 0, m);
        return;
      }
      const Tuple t = to_tuple(k);
      const int32_t idx = table_->insert(t, t, 0, 0, 0, now);
      if (idx < 0) {  // full (or a flow whose reverse is itself): counted, never silently unscanned
        ++shed_;
        emit(shed_scan(s), m);
        return;
      }
      dirs_[2 * idx] = DirState{kNone, 0, kNone, 0, kIdle, {0, 0}};
      dirs_[2 * idx + 1] = DirState{kNone, 0, kNone, 0, kIdle, {0, 0}};
      r = idx << 1;
      changed_ = true;
    }
    const uint32_t idx = static_cast<uint32_t>(r) >> 1;
    const unsigned dir = static_cast<unsigned>(r) & 1;
    table_->meta(idx).last_tsc = now;
    if (s.flags & kRst) {
      release_flow(idx, true);
      table_->remove(idx);
      changed_ = true;
      emit(0, m);
      return;
    }
    DirState& d = dirs_[2 * idx + dir];
    if (d.phase == kIdle) {
      d.phase = kOpen;
      d.next_seq = s.seq;
    }
    const int32_t ahead = static_cast<int32_t>(s.seq - d.next_seq);
    if (d.phase == kOpen && ahead > 0 && (s.len > 0 || (s.flags & kFin))) {
      hold(d, m, s.seq);
      return;
    }
    emit(in_order(idx, d, s), m);
    // The gap may have closed: scan and forward what was held behind it, in order.
    while (d.held != kNone && d.phase == kOpen && static_cast<int32_t>(held_[d.held].seq - d.next_seq) <= 0) {
      const uint32_t h = d.held;
      rte_mbuf* hm = held_[h].m;
      d.held = held_[h].next;
      --d.nheld;
      free_hold(h);
      Key4 hk{};
      Seg hs{};
      tcp_segment(hm, &hk, &hs);
      emit(in_order(idx, d, hs), hm);
    }
    if (dirs_[2 * idx].phase == kEnded && dirs_[2 * idx + 1].phase == kEnded) {
      release_flow(idx, true);
      table_->remove(idx);
      changed_ = true;
    }
  }

  // A shed (or unkept) TCP flow's segment: its payload alone.
  int shed_scan(const Seg& s) {
    ++block_scans_;
    return scan_block(s.data, s.len);
  }

  // A segment that starts at or before the next expected byte: scans its new bytes, ends the direction at FIN.
  int in_order(uint32_t idx, DirState& d, const Seg& s) {
    if (d.phase != kOpen) {  // after FIN: nothing more belongs to this direction
      if (s.len > 0) retrans_bytes_ += static_cast<uint64_t>(s.len);
      return 0;
    }
    const uint32_t old = d.next_seq - s.seq;  // bytes of this segment scanned already
    Hits h;
    if (static_cast<int64_t>(old) >= s.len) {
      if (s.len > 0) retrans_bytes_ += static_cast<uint64_t>(s.len);
    } else {
      retrans_bytes_ += old;
      if (d.stream == kNone) d.stream = take_stream();
      if (d.stream == kNone) {
        ++block_scans_;  // unreachable with the pool sized for every record; kept honest rather than silent
        return scan_block(s.data + old, s.len - static_cast<int>(old));
      }
      hs_scan_stream(streams_[d.stream], reinterpret_cast<const char*>(s.data + old),
                     static_cast<unsigned>(s.len - static_cast<int>(old)), 0, scratch_, on_stream_match, &h);
      d.next_seq = s.seq + static_cast<uint32_t>(s.len);
    }
    if ((s.flags & kFin) && static_cast<int32_t>(s.seq + static_cast<uint32_t>(s.len) - d.next_seq) >= 0) {
      end_direction(d, &h);  // matches only the end of data completes belong to the FIN packet
      d.next_seq += 1;
    }
    (void)idx;
    return verdict(h.n);
  }

  void hold(DirState& d, rte_mbuf* m, uint32_t seq) {
    // A segment already held at this sequence number is a retransmission of it.
    uint32_t* link = &d.held;
    while (*link != kNone && static_cast<int32_t>(held_[*link].seq - seq) < 0) link = &held_[*link].next;
    if (*link != kNone && held_[*link].seq == seq) {
      Key4 k{};
      Seg s{};
      tcp_segment(m, &k, &s);
      retrans_bytes_ += static_cast<uint64_t>(s.len);
      drop(m);
      return;
    }
    if (d.nheld >= hold_flow_ || free_held_ == kNone) {
      ++ooo_dropped_;
      drop(m);
      return;
    }
    const uint32_t h = free_held_;
    free_held_ = held_[h].next;
    held_[h] = HeldSeg{m, seq, *link};
    *link = h;
    ++d.nheld;
    ++ooo_held_;
  }
  void free_hold(uint32_t h) {
    held_[h].next = free_held_;
    free_held_ = h;
  }

  uint32_t take_stream() {
    if (!free_streams_.empty()) {
      const uint32_t s = free_streams_.back();
      free_streams_.pop_back();
      return s;
    }
    if (streams_.size() >= 2 * static_cast<size_t>(flows_)) return kNone;
    hs_stream_t* st = nullptr;
    if (hs_open_stream(stream_db_, 0, &st) != HS_SUCCESS) return kNone;
    streams_.push_back(st);  // within the reserved capacity: no reallocation
    return static_cast<uint32_t>(streams_.size() - 1);
  }
  // Ends a direction's stream: resets it for reuse (end-of-data matches counted in `hits` if given, else
  // suppressed) and returns it to the pool.
  void end_direction(DirState& d, Hits* hits) {
    if (d.stream != kNone) {
      hs_reset_stream(streams_[d.stream], 0, scratch_, hits != nullptr ? on_stream_match : nullptr, hits);
      free_streams_.push_back(d.stream);
      d.stream = kNone;
    }
    d.phase = kEnded;
  }
  // Frees what a flow record holds beside the table (streams, held segments) before it is removed. count: the
  // held segments are dropped and counted (false only in the destructor).
  void release_flow(uint32_t idx, bool count) {
    for (unsigned dir = 0; dir < 2; ++dir) {
      DirState& d = dirs_[2 * idx + dir];
      end_direction(d, nullptr);
      while (d.held != kNone) {
        const uint32_t h = d.held;
        d.held = held_[h].next;
        if (count) {
          ++ooo_dropped_;
          drop(held_[h].m);
        } else {
          rte_pktmbuf_free(held_[h].m);
        }
        free_hold(h);
      }
      d.nheld = 0;
    }
  }

  hs_database_t* block_db_ = nullptr;
  hs_database_t* stream_db_ = nullptr;
  hs_scratch_t* scratch_ = nullptr;  // sized for both databases
  uint16_t offset_ = 0;
  bool stream_mode_ = true;
  uint32_t flows_ = 65536;
  double timeout_s_ = 300;
  uint8_t hold_flow_ = 8;
  uint32_t hold_core_ = 512;
  uint64_t timeout_tsc_ = 0;
  uint64_t sweep_period_ = 0;  // FlowTable::expire's
  size_t stream_bytes_ = 0;  // Hyperscan's state per open stream (memory planning: at most 2 x FLOWS of them)
  int hit_out_ = -1;
  bool changed_ = false;  // the table changed during this batch: bulk lookup results are stale
  PacketBatch out_[2];
  std::unique_ptr<FlowTable> table_;
  DirState* dirs_ = nullptr;
  std::vector<hs_stream_t*> streams_;  // every stream opened so far (the pool's high-water mark)
  std::vector<uint32_t> free_streams_;
  std::vector<HeldSeg> held_;
  uint32_t free_held_ = kNone;
  uint64_t matches_ = 0, shed_ = 0, ooo_held_ = 0, ooo_dropped_ = 0, retrans_bytes_ = 0, block_scans_ = 0;
};

}  // namespace

METRON_EXPORT_ELEMENT(HyperscanDPI)

}  // namespace metron

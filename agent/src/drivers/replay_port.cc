#include "drivers/replay_port.h"

#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_prefetch.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "utils/checksum.h"

namespace metron {

namespace {

struct PcapFrames {
  std::vector<uint8_t> bytes;
  std::vector<uint16_t> len;
  uint32_t max_len = 0;
};

// Classic pcap (either byte order, micro- or nanosecond stamps); only the captured bytes are kept.
PcapFrames read_pcap(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("replay: cannot read " + path);
  uint32_t header[6];
  if (!in.read(reinterpret_cast<char*>(header), sizeof header)) throw std::runtime_error("replay: " + path + ": not a pcap file");
  const bool swapped = header[0] == 0xd4c3b2a1u || header[0] == 0x4d3cb2a1u;
  if (!swapped && header[0] != 0xa1b2c3d4u && header[0] != 0xa1b23c4du)
    throw std::runtime_error("replay: " + path + ": not a classic pcap file (pcapng is not read)");
  auto host = [swapped](uint32_t v) { return swapped ? __builtin_bswap32(v) : v; };
  if (host(header[5]) != 1) throw std::runtime_error("replay: " + path + ": link type is not Ethernet");
  PcapFrames f;
  uint32_t rec[4];  // seconds, fraction, captured length, original length
  while (in.read(reinterpret_cast<char*>(rec), sizeof rec)) {
    const uint32_t n = host(rec[2]);
    if (n == 0 || n > RTE_MBUF_DEFAULT_DATAROOM)
      throw std::runtime_error("replay: " + path + ": frame " + std::to_string(f.len.size()) + " of " +
                               std::to_string(n) + " bytes (1.." + std::to_string(RTE_MBUF_DEFAULT_DATAROOM) + ")");
    const size_t at = f.bytes.size();
    f.bytes.resize(at + n);
    if (!in.read(reinterpret_cast<char*>(f.bytes.data() + at), n)) throw std::runtime_error("replay: " + path + ": truncated");
    f.len.push_back(static_cast<uint16_t>(n));
    f.max_len = std::max(f.max_len, n);
  }
  if (f.len.empty()) throw std::runtime_error("replay: " + path + ": no frames");
  return f;
}

// The receive verdict on a frame's IPv4 header checksum, as a NIC with RTE_ETH_RX_OFFLOAD_IPV4_CKSUM writes it in
// ol_flags: for an IPv4 frame (behind one VLAN tag or none) whose header the frame holds, good or bad; none (0)
// otherwise.
uint64_t ipv4_verdict(const uint8_t* f, uint32_t len) {
  uint32_t l3 = 14;
  if (len < l3) return 0;
  uint16_t type = load16(f + 12);
  if (type == 0x8100 && len >= 18) type = load16(f + 16), l3 = 18;
  if (type != 0x0800 || len < l3 + 20 || (f[l3] >> 4) != 4) return 0;
  const uint32_t hlen = (f[l3] & 0x0fu) * 4u;
  if (hlen < 20 || len < l3 + hlen) return 0;
  return ipv4_header_valid(f + l3, hlen) ? RTE_MBUF_F_RX_IP_CKSUM_GOOD : RTE_MBUF_F_RX_IP_CKSUM_BAD;
}

}  // namespace

std::unique_ptr<ReplayPort> ReplayPort::open(const std::string& spec, uint16_t txq, rte_mempool* pool) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw std::runtime_error("replay: expected NAME=FILE[,FILE...], got '" + spec + "'");
  std::unique_ptr<ReplayPort> port(new ReplayPort(spec.substr(0, eq), txq == 0 ? 1 : txq, pool));
  std::string files = spec.substr(eq + 1);
  for (size_t start = 0; start <= files.size();) {
    const size_t comma = std::min(files.find(',', start), files.size());
    const PcapFrames f = read_pcap(files.substr(start, comma - start));
    auto q = std::make_unique<Queue>();
    q->stride = (f.max_len + 63u) & ~63u;
    q->count = static_cast<uint32_t>(f.len.size());
    const size_t size = static_cast<size_t>(q->stride) * q->count;
    q->data = static_cast<uint8_t*>(rte_malloc("replay_frames", size, 64));
    q->len = static_cast<uint16_t*>(rte_malloc("replay_lengths", q->count * sizeof(uint16_t), 64));
    if (q->data == nullptr || q->len == nullptr) {
      rte_free(q->data);
      rte_free(q->len);
      throw std::runtime_error("replay: no DPDK memory for " + std::to_string(size >> 20) + " MB of frames (raise -m)");
    }
    std::vector<uint64_t> verdicts(q->count);
    size_t at = 0;
    for (uint32_t i = 0; i < q->count; ++i) {
      rte_memcpy(q->data + static_cast<size_t>(i) * q->stride, f.bytes.data() + at, f.len[i]);
      q->len[i] = f.len[i];
      verdicts[i] = ipv4_verdict(f.bytes.data() + at, f.len[i]);
      at += f.len[i];
    }
    // One verdict for every frame (a benchmark's trace): in the mbuf template, nothing per frame. Otherwise each
    // frame's own, stored after the template.
    q->flags = verdicts[0];
    if (std::any_of(verdicts.begin(), verdicts.end(), [&](uint64_t v) { return v != q->flags; })) {
      q->verdicts = static_cast<uint64_t*>(rte_malloc("replay_verdicts", q->count * sizeof(uint64_t), 64));
      if (q->verdicts == nullptr) {
        rte_free(q->data);
        rte_free(q->len);
        throw std::runtime_error("replay: no DPDK memory for the frames' checksum verdicts (raise -m)");
      }
      std::copy(verdicts.begin(), verdicts.end(), q->verdicts);
    }
    port->queues_.push_back(std::move(q));
    start = comma + 1;
  }
  for (uint16_t i = 0; i < port->txq_; ++i) port->tx_.push_back(std::make_unique<Queue>());
  return port;
}

ReplayPort::~ReplayPort() {
  for (auto& q : queues_) {
    rte_free(q->data);
    rte_free(q->len);
    rte_free(q->verdicts);
  }
}

uint16_t ReplayPort::rx_burst(uint16_t qi, rte_mbuf** pkts, uint16_t n) {
  Queue& q = *queues_[qi];
  // Raw mbufs, set up as a NIC's vector rx path sets them (i40e, ice, mlx5): a pool's free mbuf already has
  // refcnt 1, one segment and no next (rte_mbuf_raw_alloc's guarantee, which every free path keeps), so only the
  // fields a frame changes are written, all in the mbuf's first cache line. rte_pktmbuf_alloc_bulk's reset also
  // rewrote `next`, in the second line, for every frame.
  if (rte_mempool_get_bulk(pool_, reinterpret_cast<void**>(pkts), n) != 0) {
    q.rx_dropped += n;
    return 0;
  }
  // The queue's fields in locals: the mbuf stores below could alias them, and each would be loaded again.
  const uint8_t* const data = q.data;
  const uint16_t* const lens = q.len;
  const uint64_t* const verdicts = q.verdicts;
  const uint32_t stride = q.stride, count = q.count;
  uint32_t next = q.next;
  uint64_t bytes = 0;
  // The frames a few ahead of the one copied are asked for: the trace (100k frames: 6-13 MB) is read once per
  // loop and is not in the cache, and the copy's first load of each frame was ~20 cycles per packet of the
  // offloaded chain's bench waiting for it (BENCHMARKS.md, session 21), where a NIC's frame arrives in the cache.
  constexpr uint32_t kAhead = 8;
  // Frames of at most one cache line (the benches' 64-byte traces) are copied as the whole line: a fixed-size
  // copy, no branches on the length (the bytes past the frame are the stride's padding, inside the data room).
  const bool one_line = stride == RTE_CACHE_LINE_SIZE;
#if defined(__SSE2__)
  // data_off, refcnt 1, nb_segs 1 (what a free mbuf holds already: written again in the same store), port, then
  // ol_flags: the queue's checksum verdict when all its frames have the same.
  static_assert(offsetof(rte_mbuf, refcnt) == offsetof(rte_mbuf, data_off) + 2 &&
                    offsetof(rte_mbuf, nb_segs) == offsetof(rte_mbuf, data_off) + 4 &&
                    offsetof(rte_mbuf, port) == offsetof(rte_mbuf, data_off) + 6 &&
                    offsetof(rte_mbuf, ol_flags) == offsetof(rte_mbuf, data_off) + 8 &&
                    offsetof(rte_mbuf, pkt_len) == offsetof(rte_mbuf, packet_type) + 4 &&
                    offsetof(rte_mbuf, data_len) == offsetof(rte_mbuf, packet_type) + 8 &&
                    offsetof(rte_mbuf, vlan_tci) == offsetof(rte_mbuf, packet_type) + 10 &&
                    offsetof(rte_mbuf, hash) == offsetof(rte_mbuf, packet_type) + 12,
                "the mbuf's rx fields as the vector rx paths store them");
  const __m128i rearm = _mm_set_epi64x(static_cast<long long>(q.flags),
                                       static_cast<long long>(uint64_t{RTE_MBUF_PORT_INVALID} << 48 |
                                                              uint64_t{1} << 32 | 1u << 16 | RTE_PKTMBUF_HEADROOM));
#endif
  // The loop twice, with and without a verdict per frame: no test per frame.
  auto fill = [&](auto per_frame) {
    for (uint16_t i = 0; i < n; ++i) {
      rte_mbuf* m = pkts[i];
      uint32_t ahead = next + kAhead;
      if (ahead >= count) ahead %= count;
      rte_prefetch0(data + static_cast<size_t>(ahead) * stride);
      const uint16_t len = lens[next];
  #if defined(__SSE2__)
      // Two 16-byte stores, as i40e's and ice's vector rx write them: the rearm word and ol_flags from a template,
      // then packet_type, pkt_len, data_len, vlan_tci and the RSS hash (0: none computed).
      _mm_storeu_si128(reinterpret_cast<__m128i*>(&m->rearm_data), rearm);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(&m->rx_descriptor_fields1), _mm_set_epi32(0, len, len, 0));
  #else
      m->data_off = RTE_PKTMBUF_HEADROOM;
      m->port = RTE_MBUF_PORT_INVALID;
      m->ol_flags = q.flags;
      m->packet_type = 0;
      m->pkt_len = len;
      m->data_len = len;
      m->vlan_tci = 0;
  #endif
      if constexpr (decltype(per_frame)::value) m->ol_flags = verdicts[next];
      const uint8_t* frame = data + static_cast<size_t>(next) * stride;
      if (one_line) rte_mov64(rte_pktmbuf_mtod(m, uint8_t*), frame);
      else rte_memcpy(rte_pktmbuf_mtod(m, void*), frame, len);
      bytes += len;
      if (++next == count) next = 0;
    }
  };
  if (verdicts != nullptr) fill(std::true_type{});
  else fill(std::false_type{});
  q.next = next;
  q.rx_packets += n;
  q.rx_bytes += bytes;
  return n;
}

uint16_t ReplayPort::tx_burst(uint16_t qi, rte_mbuf** pkts, uint16_t n) {
  // Sent mbufs go back as a NIC's tx returns them with RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE (i40e, ice, mlx5): the
  // ones with no other reference, one segment and a buffer of their own, from the port's pool, in one put;
  // anything else (a clone, a chain, another pool's) through rte_pktmbuf_free. rte_pktmbuf_free_bulk, a call into
  // librte_mbuf that tests every mbuf for all cases, cost ~40 instructions per frame (callgrind).
  // The test in one branch: refcnt and nb_segs (adjacent in the rearm word) as one 32-bit compare, the pool and
  // RTE_MBUF_DIRECT combined without branching (16 instructions per frame as four short-circuit tests, callgrind).
  static_assert(offsetof(rte_mbuf, nb_segs) == offsetof(rte_mbuf, refcnt) + 2 &&
                    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "refcnt 1 and nb_segs 1 read as one 32-bit word");
  constexpr uint32_t kOneRefOneSeg = 1u | 1u << 16;
  constexpr uint16_t kChunk = 64;
  void* fast[kChunk];
  for (uint16_t at = 0; at < n; at += kChunk) {
    const uint16_t end = std::min<uint16_t>(n, at + kChunk);
    unsigned nf = 0;
    for (uint16_t i = at; i < end; ++i) {
      rte_mbuf* m = pkts[i];
      uint32_t ref_segs;
      std::memcpy(&ref_segs, &m->refcnt, sizeof ref_segs);
      if ((m->pool == pool_) & (ref_segs == kOneRefOneSeg) & RTE_MBUF_DIRECT(m)) fast[nf++] = m;
      else rte_pktmbuf_free(m);
    }
    if (nf) rte_mempool_put_bulk(pool_, fast, nf);
  }
  tx_[qi % tx_.size()]->tx_packets += n;
  return n;
}

PortCounters ReplayPort::counters() const {
  PortCounters c;
  for (const auto& q : queues_) {
    c.rx_packets += q->rx_packets;
    c.rx_bytes += q->rx_bytes;
    c.rx_dropped += q->rx_dropped;
  }
  for (const auto& q : tx_) c.tx_packets += q->tx_packets;
  return c;
}

}  // namespace metron

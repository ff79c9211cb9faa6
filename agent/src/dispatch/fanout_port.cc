#include "dispatch/fanout_port.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>
#include <cstring>
#include <stdexcept>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "dispatch/cbpf_program.h"

namespace metron {
namespace {

constexpr uint32_t kFrameSize = 2048;
constexpr uint32_t kBlockSize = 1 << 16;
// Frames in each socket's transmit ring: tx_burst marks at most a burst of frames in it and has the kernel send
// them in the same call, so it is not sized per deployment as the receive ring is (FanoutPortOptions::rx_frames).
constexpr uint32_t kTxFrames = 1024;
constexpr uint16_t kVlanHeaderLen = 4;
// Where TPACKET_V2 expects tx data when PACKET_TX_HAS_OFF is not set.
constexpr uint32_t kTxDataOffset = TPACKET2_HDRLEN - sizeof(sockaddr_ll);

[[noreturn]] void Fail(const std::string& ifname, const std::string& step) {
  throw std::runtime_error("FanoutPort " + ifname + ": " + step + ": " + std::strerror(errno));
}

tpacket2_hdr* FrameAt(uint8_t* ring_base, uint32_t i) {
  return reinterpret_cast<tpacket2_hdr*>(ring_base + static_cast<size_t>(i) * kFrameSize);
}

uint32_t Status(const tpacket2_hdr* h) { return __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE); }
void SetStatus(tpacket2_hdr* h, uint32_t s) { __atomic_store_n(&h->tp_status, s, __ATOMIC_RELEASE); }

void Bump(std::atomic<uint64_t>& c, uint64_t n) { c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }

// Copies len bytes at off of a (possibly multi-segment) mbuf to dst.
void CopyOut(const rte_mbuf* m, uint32_t off, uint32_t len, uint8_t* dst) {
  if (m->nb_segs == 1) {
    rte_memcpy(dst, rte_pktmbuf_mtod_offset(m, const uint8_t*, off), len);
    return;
  }
  // rte_pktmbuf_read copies into dst only when the range spans segments; otherwise it points into the mbuf.
  const void* p = rte_pktmbuf_read(m, off, len, dst);
  if (p != dst) rte_memcpy(dst, p, len);
}

}  // namespace

FanoutPort::FanoutPort(FanoutPortOptions options, rte_mempool* pool)
    : options_(std::move(options)), pool_(pool), queues_(new Queue[options_.queues]) {}

std::unique_ptr<FanoutPort> FanoutPort::open(const FanoutPortOptions& options, rte_mempool* pool) {
  if (options.queues == 0) throw std::runtime_error("FanoutPort " + options.ifname + ": queues must be >= 1");
  if (options.default_queue >= options.queues) {
    throw std::runtime_error("FanoutPort " + options.ifname + ": default queue " +
                             std::to_string(options.default_queue) + " >= queues " + std::to_string(options.queues));
  }
  if (options.rx_frames == 0 || options.rx_frames % (kBlockSize / kFrameSize) != 0) {
    throw std::runtime_error("FanoutPort " + options.ifname + ": ring frames (" + std::to_string(options.rx_frames) +
                             ") must be a positive multiple of " + std::to_string(kBlockSize / kFrameSize));
  }
  const int ifindex = if_nametoindex(options.ifname.c_str());
  if (ifindex == 0) Fail(options.ifname, "no such interface");
  std::unique_ptr<FanoutPort> port(new FanoutPort(options, pool));
  for (uint16_t q = 0; q < options.queues; ++q) port->open_queue(port->queues_[q], ifindex);
  port->join_fanout();
  if (!options.hash) {
    grpc::Status s = port->install_programs({});
    if (!s.ok()) throw std::runtime_error("FanoutPort " + options.ifname + ": " + s.error_message());
  }
  // Frames that reached a socket before the group and its program existed were not steered: discard them. The
  // kernel fills a ring at its own position, one slot after the other, and never says where that is: release
  // them in order from our head so that it stays at the kernel's. Releasing slots without moving the head left
  // it behind the kernel, blind to every later frame until the kernel came round the whole ring (frames such as
  // a switch's IPv6 noise arriving while the agent started hid a chain's traffic from its core).
  for (uint16_t q = 0; q < options.queues; ++q) {
    Ring& rx = port->queues_[q].rx;
    for (uint32_t n = 0; n < rx.frames && (Status(FrameAt(rx.base, rx.head)) & TP_STATUS_USER); ++n) {
      SetStatus(FrameAt(rx.base, rx.head), TP_STATUS_KERNEL);
      rx.head = (rx.head + 1) % rx.frames;
    }
  }
  return port;
}

void FanoutPort::open_queue(Queue& q, int ifindex) {
  const std::string& ifn = options_.ifname;
  // Protocol 0: the socket sees no traffic until bound below, after its rings exist.
  q.fd = socket(AF_PACKET, SOCK_RAW, 0);
  if (q.fd < 0) Fail(ifn, "socket(AF_PACKET)");
  int v = TPACKET_V2;
  if (setsockopt(q.fd, SOL_PACKET, PACKET_VERSION, &v, sizeof v) < 0) Fail(ifn, "PACKET_VERSION");
  // Our own and other local senders' outgoing frames are not input.
  v = 1;
  if (setsockopt(q.fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &v, sizeof v) < 0) Fail(ifn, "PACKET_IGNORE_OUTGOING");
  auto ring = [&](int option, uint32_t frames) {
    tpacket_req req{};
    req.tp_block_size = kBlockSize;
    req.tp_frame_size = kFrameSize;
    req.tp_frame_nr = frames;
    req.tp_block_nr = frames / (kBlockSize / kFrameSize);
    if (setsockopt(q.fd, SOL_PACKET, option, &req, sizeof req) < 0)
      Fail(ifn, std::string(option == PACKET_RX_RING ? "PACKET_RX_RING" : "PACKET_TX_RING") + " of " +
                    std::to_string(frames) + " frames");
    return static_cast<size_t>(req.tp_block_size) * req.tp_block_nr;
  };
  // The kernel maps the receive ring first and the transmit ring right after it.
  const size_t rx_len = ring(PACKET_RX_RING, options_.rx_frames);
  q.map_len = rx_len + ring(PACKET_TX_RING, kTxFrames);
  void* map = mmap(nullptr, q.map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, q.fd, 0);
  if (map == MAP_FAILED) Fail(ifn, "mmap rings");
  q.map = static_cast<uint8_t*>(map);
  q.rx = {q.map, options_.rx_frames, 0};
  q.tx = {q.map + rx_len, kTxFrames, 0};
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = ifindex;
  if (bind(q.fd, reinterpret_cast<sockaddr*>(&sll), sizeof sll) < 0) Fail(ifn, "bind");
}

void FanoutPort::join_fanout() {
  // The kernel picks a group id unused in this namespace, so agents (and tests) never join each other's group.
  const int type = options_.hash ? PACKET_FANOUT_HASH : PACKET_FANOUT_CBPF;
  int arg = (type | PACKET_FANOUT_FLAG_UNIQUEID) << 16;
  if (setsockopt(queues_[0].fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof arg) < 0) Fail(options_.ifname, "PACKET_FANOUT");
  int got = 0;
  socklen_t len = sizeof got;
  if (getsockopt(queues_[0].fd, SOL_PACKET, PACKET_FANOUT, &got, &len) < 0) Fail(options_.ifname, "get PACKET_FANOUT");
  fanout_id_ = static_cast<uint16_t>(got & 0xffff);
  // Socket i is the group's member i: the index the program returns (or the flow hash picks).
  arg = fanout_id_ | type << 16;
  for (uint16_t q = 1; q < options_.queues; ++q) {
    if (setsockopt(queues_[q].fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof arg) < 0) {
      Fail(options_.ifname, "join fanout group " + std::to_string(fanout_id_));
    }
  }
}

FanoutPort::~FanoutPort() {
  for (uint16_t q = 0; q < options_.queues; ++q) {
    if (queues_[q].map) munmap(queues_[q].map, queues_[q].map_len);
    if (queues_[q].fd >= 0) close(queues_[q].fd);
  }
}

namespace {

// True only when no frame can match both (different group tags, VLANs or protocols); false when unsure.
bool Disjoint(const SteerMatch& a, const SteerMatch& b) {
  if (a.has_eth_dst && b.has_eth_dst)
    for (size_t i = 0; i < a.eth_dst.size(); ++i) {
      const uint8_t m = a.eth_dst_mask[i] & b.eth_dst_mask[i];
      if ((a.eth_dst[i] & m) != (b.eth_dst[i] & m)) return true;
    }
  if (a.vlan && b.vlan && a.vlan != b.vlan) return true;
  return a.ip_proto && b.ip_proto && a.ip_proto != b.ip_proto;
}

}  // namespace

std::vector<bool> QueuesLosingFrames(const std::vector<SteerRule>& prev, const std::vector<SteerRule>& next,
                                     uint16_t queues, uint16_t default_queue) {
  std::vector<bool> out(queues, false);
  // Where each rule of `next` was in `prev` (-1: new).
  std::vector<long> was(next.size(), -1);
  for (size_t k = 0; k < next.size(); ++k)
    for (size_t i = 0; i < prev.size() && was[k] < 0; ++i)
      if (SameRule(next[k], prev[i])) was[k] = static_cast<long>(i);
  for (size_t i = 0; i < prev.size(); ++i) {
    const SteerRule& r = prev[i];
    if (r.action.kind == SteerActionKind::kDrop) continue;  // its frames never reached a ring
    const uint16_t q = r.action.kind == SteerActionKind::kQueue ? static_cast<uint16_t>(r.action.value) : default_queue;
    if (q >= queues) continue;
    size_t j = 0;
    while (j < next.size() && !(was[j] >= 0 && SameRule(next[j], r))) ++j;
    bool loses = j == next.size();  // the rule is gone
    // A rule now ahead of it that was not before may match some of its frames.
    for (size_t k = 0; k < j && !loses; ++k)
      loses = (was[k] < 0 || was[k] > static_cast<long>(i)) && !Disjoint(next[k].match, r.match);
    if (loses) out[q] = true;
  }
  // Frames that matched no rule went to the default queue, whose worker ran no group for them (they count as
  // misrouted there): waiting for them would not deliver them anywhere else.
  return out;
}

uint32_t FanoutPort::max_rules() const {
  if (options_.hash) return 0;
  // A typical tag or 5-tuple rule compiles to at most 8 instructions; apply() reports the exact limit.
  return BPF_MAXINSNS / 8;
}

grpc::Status FanoutPort::check(const std::vector<SteerRule>& ordered_rules) const {
  if (options_.hash) return hash_only(ordered_rules);
  std::vector<sock_filter> program;
  grpc::Status s = CompileSteeringProgram(ordered_rules, options_.default_queue, ProgramRole::kFanout, &program);
  if (s.ok()) s = CompileSteeringProgram(ordered_rules, options_.default_queue, ProgramRole::kSocketFilter, &program);
  return s;
}

grpc::Status FanoutPort::hash_only(const std::vector<SteerRule>& ordered_rules) const {
  if (ordered_rules.empty()) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "NIC " + options_.ifname + " dispatches by flow hash (RSS compatibility mode): it takes no " +
                          "steering rules (" + std::to_string(ordered_rules.size()) + " given)");
}

grpc::Status FanoutPort::apply(const std::vector<SteerRule>& ordered_rules) {
  if (options_.hash) return hash_only(ordered_rules);
  std::lock_guard<std::mutex> lock(apply_mu_);
  grpc::Status s = install_programs(ordered_rules);
  if (!s.ok()) return s;
  // Only queues the change may take frames from wait for their backlog: adding a tag for one core must not
  // wait for another, saturated core to work through its ring.
  drain_rings(QueuesLosingFrames(applied_, ordered_rules, options_.queues, options_.default_queue));
  applied_ = ordered_rules;
  return s;
}

grpc::Status FanoutPort::install_programs(const std::vector<SteerRule>& ordered_rules) {
  std::vector<sock_filter> fanout, filter;
  grpc::Status s = CompileSteeringProgram(ordered_rules, options_.default_queue, ProgramRole::kFanout, &fanout);
  if (!s.ok()) return s;
  s = CompileSteeringProgram(ordered_rules, options_.default_queue, ProgramRole::kSocketFilter, &filter);
  if (!s.ok()) return s;
  auto os_error = [&](const std::string& what) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "NIC " + options_.ifname + ": " + what + ": " + std::strerror(errno));
  };
  const bool need_filter = HasDropRules(ordered_rules);
  // Install the drop filter before steering can send frames to it, and remove it only after.
  if (need_filter) {
    sock_fprog prog{static_cast<unsigned short>(filter.size()), filter.data()};
    for (uint16_t q = 0; q < options_.queues; ++q) {
      if (setsockopt(queues_[q].fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) < 0) {
        return os_error("SO_ATTACH_FILTER");
      }
    }
  }
  // The kernel swaps the group's program atomically (RCU): each frame sees either the old or the new one.
  sock_fprog prog{static_cast<unsigned short>(fanout.size()), fanout.data()};
  if (setsockopt(queues_[0].fd, SOL_PACKET, PACKET_FANOUT_DATA, &prog, sizeof prog) < 0) {
    return os_error("PACKET_FANOUT_DATA");
  }
  if (!need_filter && socket_filter_) {
    int unused = 0;
    for (uint16_t q = 0; q < options_.queues; ++q) {
      setsockopt(queues_[q].fd, SOL_SOCKET, SO_DETACH_FILTER, &unused, sizeof unused);
    }
  }
  socket_filter_ = need_filter;
  return grpc::Status::OK;
}

void FanoutPort::drain_rings(const std::vector<bool>& queues) {
  if (std::find(queues.begin(), queues.end(), true) == queues.end()) return;
  // A frame the old program steered may still be on its way into a ring (softirq on another CPU): give
  // those a moment, then wait for every slot that holds a frame now to be released by its reader. The reader
  // releases in ring order and the kernel refills in ring order, so a slot cannot be released and refilled
  // between two polls unless a whole ring turned over in one poll period.
  constexpr auto kIdleReader = std::chrono::milliseconds(50);
  std::this_thread::sleep_for(std::chrono::microseconds(200));
  struct Pending {
    uint16_t queue;
    tpacket2_hdr* frame;
  };
  std::vector<Pending> pending;
  std::vector<uint64_t> polls(options_.queues);
  for (uint16_t q = 0; q < options_.queues; ++q) {
    if (!queues[q]) continue;
    polls[q] = queues_[q].counters.rx_polls.load(std::memory_order_relaxed);
    Ring& rx = queues_[q].rx;
    for (uint32_t i = 0; i < rx.frames; ++i) {
      if (Status(FrameAt(rx.base, i)) & TP_STATUS_USER) pending.push_back({q, FrameAt(rx.base, i)});
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(options_.drain_timeout_ms);
  bool idle_checked = false;
  while (!pending.empty() && std::chrono::steady_clock::now() < deadline) {
    if (!idle_checked && std::chrono::steady_clock::now() - start >= kIdleReader) {
      // A queue whose reader did not poll once in that time has no reader: its backlog waits for nobody.
      idle_checked = true;
      pending.erase(std::remove_if(pending.begin(), pending.end(),
                                   [&](const Pending& p) {
                                     return queues_[p.queue].counters.rx_polls.load(std::memory_order_relaxed) ==
                                            polls[p.queue];
                                   }),
                    pending.end());
    }
    pending.erase(std::remove_if(pending.begin(), pending.end(),
                                 [](const Pending& p) { return !(Status(p.frame) & TP_STATUS_USER); }),
                  pending.end());
    if (!pending.empty()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

uint16_t FanoutPort::rx_burst(uint16_t qi, rte_mbuf** pkts, uint16_t n) {
  Queue& q = queues_[qi];
  Ring& rx = q.rx;
  Bump(q.counters.rx_polls, 1);
  uint16_t ready = 0;
  for (uint32_t i = rx.head; ready < n && (Status(FrameAt(rx.base, i)) & TP_STATUS_USER); i = (i + 1) % rx.frames) {
    ++ready;
  }
  if (ready == 0) return 0;
  if (rte_pktmbuf_alloc_bulk(pool_, pkts, ready) != 0) {
    for (uint16_t k = 0; k < ready; ++k) {
      SetStatus(FrameAt(rx.base, rx.head), TP_STATUS_KERNEL);
      rx.head = (rx.head + 1) % rx.frames;
    }
    Bump(q.counters.rx_dropped, ready);
    return 0;
  }
  uint16_t out = 0;
  uint64_t bytes = 0;
  for (uint16_t k = 0; k < ready; ++k) {
    tpacket2_hdr* h = FrameAt(rx.base, rx.head);
    rx.head = (rx.head + 1) % rx.frames;
    rte_mbuf* m = pkts[out];
    const uint32_t len = h->tp_snaplen;
    if (len != h->tp_len || len > rte_pktmbuf_tailroom(m)) {
      // Larger than a ring frame or an mbuf: cannot be delivered whole.
      SetStatus(h, TP_STATUS_KERNEL);
      Bump(q.counters.rx_dropped, 1);
      continue;
    }
    rte_memcpy(rte_pktmbuf_mtod(m, uint8_t*), reinterpret_cast<uint8_t*>(h) + h->tp_mac, len);
    m->data_len = static_cast<uint16_t>(len);
    m->pkt_len = len;
    if (h->tp_status & TP_STATUS_VLAN_VALID) {
      m->vlan_tci = h->tp_vlan_tci;
      m->ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
    }
    SetStatus(h, TP_STATUS_KERNEL);
    bytes += len;
    ++out;
  }
  if (out < ready) rte_pktmbuf_free_bulk(pkts + out, ready - out);
  Bump(q.counters.rx_packets, out);
  Bump(q.counters.rx_bytes, bytes);
  return out;
}

uint16_t FanoutPort::tx_burst(uint16_t qi, rte_mbuf** pkts, uint16_t n) {
  Queue& q = queues_[qi % options_.queues];
  Ring& tx = q.tx;
  constexpr uint32_t kRoom = kFrameSize - kTxDataOffset;
  uint16_t taken = 0;
  uint64_t bytes = 0;
  uint64_t oversized = 0;
  for (; taken < n; ++taken) {
    tpacket2_hdr* h = FrameAt(tx.base, tx.head);
    uint32_t st = Status(h);
    if (st == TP_STATUS_WRONG_FORMAT) st = TP_STATUS_AVAILABLE;  // kernel rejected an earlier frame: reuse slot
    if (st != TP_STATUS_AVAILABLE) break;                        // ring full: caller keeps the rest
    rte_mbuf* m = pkts[taken];
    const bool insert_vlan = m->ol_flags & RTE_MBUF_F_TX_VLAN;
    const uint32_t len = m->pkt_len + (insert_vlan ? kVlanHeaderLen : 0);
    if (len > kRoom || m->pkt_len < 2 * RTE_ETHER_ADDR_LEN) {
      ++oversized;
      rte_pktmbuf_free(m);
      continue;
    }
    uint8_t* dst = reinterpret_cast<uint8_t*>(h) + kTxDataOffset;
    if (insert_vlan) {
      // dst MAC + src MAC, then 802.1Q header, then the rest of the frame.
      CopyOut(m, 0, 2 * RTE_ETHER_ADDR_LEN, dst);
      const uint16_t tpid = htons(RTE_ETHER_TYPE_VLAN), tci = htons(m->vlan_tci);
      std::memcpy(dst + 12, &tpid, 2);
      std::memcpy(dst + 14, &tci, 2);
      CopyOut(m, 12, m->pkt_len - 12, dst + 16);
    } else {
      CopyOut(m, 0, m->pkt_len, dst);
    }
    h->tp_len = len;
    SetStatus(h, TP_STATUS_SEND_REQUEST);
    tx.head = (tx.head + 1) % tx.frames;
    bytes += len;
    rte_pktmbuf_free(m);
  }
  const uint16_t sent = taken - static_cast<uint16_t>(oversized);
  if (sent > 0) {
    // One syscall sends every frame marked above; MSG_DONTWAIT: never block the worker on completion.
    if (send(q.fd, nullptr, 0, MSG_DONTWAIT) < 0 && errno != EAGAIN && errno != ENOBUFS) Bump(q.counters.tx_dropped, sent);
  }
  Bump(q.counters.tx_packets, sent);
  Bump(q.counters.tx_bytes, bytes);
  Bump(q.counters.tx_dropped, oversized + (n - taken));
  return taken;
}

PortCounters FanoutPort::counters() const {
  PortCounters c;
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    for (uint16_t q = 0; q < options_.queues; ++q) {
      tpacket_stats st{};
      socklen_t len = sizeof st;
      if (getsockopt(queues_[q].fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) kernel_drops_ += st.tp_drops;
    }
    c.rx_dropped = kernel_drops_;
  }
  for (uint16_t q = 0; q < options_.queues; ++q) {
    const QueueCounters& qc = queues_[q].counters;
    c.rx_packets += qc.rx_packets.load(std::memory_order_relaxed);
    c.rx_bytes += qc.rx_bytes.load(std::memory_order_relaxed);
    c.rx_dropped += qc.rx_dropped.load(std::memory_order_relaxed);
    c.tx_packets += qc.tx_packets.load(std::memory_order_relaxed);
    c.tx_bytes += qc.tx_bytes.load(std::memory_order_relaxed);
    c.tx_dropped += qc.tx_dropped.load(std::memory_order_relaxed);
  }
  return c;
}

std::string FanoutPort::mac() const {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, options_.ifname.c_str(), IFNAMSIZ - 1);
  if (ioctl(queues_[0].fd, SIOCGIFHWADDR, &ifr) < 0) return {};
  MacAddr mac;
  std::memcpy(mac.data(), ifr.ifr_hwaddr.sa_data, 6);
  return FormatMac(mac);
}

bool FanoutPort::link_up() const {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, options_.ifname.c_str(), IFNAMSIZ - 1);
  if (ioctl(queues_[0].fd, SIOCGIFFLAGS, &ifr) < 0) return false;
  return (ifr.ifr_flags & IFF_RUNNING) != 0;
}

}  // namespace metron

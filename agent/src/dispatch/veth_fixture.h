// Test helpers for dispatch on real kernel interfaces: a private network namespace holding a veth pair
// (the test thread enters it, so nothing is visible to, or collides with, other programs on the machine),
// a raw sender on one end, and per-queue worker threads that record what each queue received.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <rte_mbuf.h>

#include "core/port.h"

namespace metron::test {

inline void Run(const std::string& cmd) {
  if (std::system((cmd + " >/dev/null 2>&1").c_str()) != 0) throw std::runtime_error("command failed: " + cmd);
}

// Owns netns "metron-t<pid>-<n>" with veth pair tx0 <-> rx0, both up, IPv6 off (no ND noise).
class VethNetns {
 public:
  VethNetns() {
    static int counter = 0;
    name_ = "metron-t" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    Run("ip netns add " + name_);
    try {
      Run("ip -n " + name_ + " link add tx0 type veth peer name rx0");
      Run("ip netns exec " + name_ + " sysctl -w net.ipv6.conf.all.disable_ipv6=1");
      Run("ip netns exec " + name_ + " sysctl -w net.ipv6.conf.default.disable_ipv6=1");
      Run("ip -n " + name_ + " link set tx0 up");
      Run("ip -n " + name_ + " link set rx0 up");
      orig_ = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
      const int ns = open(("/var/run/netns/" + name_).c_str(), O_RDONLY | O_CLOEXEC);
      if (orig_ < 0 || ns < 0 || setns(ns, CLONE_NEWNET) != 0) throw std::runtime_error("cannot enter " + name_);
      close(ns);
    } catch (...) {
      std::system(("ip netns del " + name_ + " >/dev/null 2>&1").c_str());
      throw;
    }
  }
  // Another veth pair in the namespace, both ends up.
  void AddPair(const std::string& a, const std::string& b) {
    Run("ip link add " + a + " type veth peer name " + b);
    Run("ip link set " + a + " up");
    Run("ip link set " + b + " up");
  }
  ~VethNetns() {
    if (orig_ >= 0) {
      setns(orig_, CLONE_NEWNET);
      close(orig_);
    }
    // Deleting the namespace destroys the veth pair in it.
    std::system(("ip netns del " + name_ + " >/dev/null 2>&1").c_str());
  }
  VethNetns(const VethNetns&) = delete;
  VethNetns& operator=(const VethNetns&) = delete;

 private:
  std::string name_;
  int orig_ = -1;
};

struct FrameSpec {
  uint8_t dst[6] = {0x02, 0x4d, 0, 0, 0, 0};
  uint16_t vlan = 0;  // 0 = untagged
  uint32_t src_ip = 0x0a000001;
  uint32_t dst_ip = 0x0a000002;
  uint8_t proto = 17;
  uint16_t sport = 1000;
  uint16_t dport = 2000;
  uint32_t seq = 0;  // carried in the payload
  // IPv6 instead of IPv4 when set: these are the addresses (src_ip/dst_ip are then ignored).
  bool ipv6 = false;
  uint8_t src6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  uint8_t dst6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
};

inline FrameSpec MacTagged(uint16_t group, uint16_t cls, uint32_t seq) {
  FrameSpec f;
  f.dst[2] = group >> 8;
  f.dst[3] = group & 0xff;
  f.dst[4] = cls >> 8;
  f.dst[5] = cls & 0xff;
  f.seq = seq;
  return f;
}

// Ethernet [+ 802.1Q] + IPv4 + UDP/TCP ports + 4-byte sequence number, padded to 64 bytes.
inline std::vector<uint8_t> BuildFrame(const FrameSpec& f) {
  std::vector<uint8_t> b;
  auto put16 = [&](uint16_t v) { b.push_back(v >> 8); b.push_back(v & 0xff); };
  auto put32 = [&](uint32_t v) { put16(v >> 16); put16(v & 0xffff); };
  b.insert(b.end(), f.dst, f.dst + 6);
  for (uint8_t x : {0x02, 0x00, 0x00, 0x00, 0x00, 0x01}) b.push_back(x);
  if (f.vlan) { put16(0x8100); put16(f.vlan); }
  if (f.ipv6) {
    put16(0x86dd);
    put32(0x60000000); put16(8 + 4); b.push_back(f.proto); b.push_back(64);
    b.insert(b.end(), f.src6, f.src6 + 16);
    b.insert(b.end(), f.dst6, f.dst6 + 16);
  } else {
    put16(0x0800);
    put16(0x4500); put16(20 + 8 + 4); put16(0); put16(0);
    b.push_back(64); b.push_back(f.proto); put16(0);
    put32(f.src_ip); put32(f.dst_ip);
  }
  put16(f.sport); put16(f.dport); put16(8 + 4); put16(0);
  put32(f.seq);
  if (b.size() < 60) b.resize(60, 0);
  return b;
}

class RawSender {
 public:
  explicit RawSender(const std::string& ifname) {
    fd_ = socket(AF_PACKET, SOCK_RAW, 0);
    if (fd_ < 0) throw std::runtime_error("sender socket");
    addr_.sll_family = AF_PACKET;
    addr_.sll_ifindex = if_nametoindex(ifname.c_str());
    addr_.sll_halen = 6;
  }
  ~RawSender() { close(fd_); }
  void Send(const FrameSpec& f) {
    const std::vector<uint8_t> b = BuildFrame(f);
    if (sendto(fd_, b.data(), b.size(), 0, reinterpret_cast<sockaddr*>(&addr_), sizeof addr_) !=
        static_cast<ssize_t>(b.size())) {
      throw std::runtime_error(std::string("sendto: ") + std::strerror(errno));
    }
  }

 private:
  int fd_ = -1;
  sockaddr_ll addr_{};
};

// What one queue's worker saw of one frame.
struct Seen {
  uint8_t dst[6];
  uint16_t vlan;  // from mbuf->vlan_tci when the port reported a stripped tag, else 0
  bool vlan_stripped;
  uint32_t seq;
  int64_t polled_ns;  // steady clock just before the rx_burst that returned the frame
};

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One thread per rx queue, like the engine's workers: each polls only its own queue.
class QueueWorkers {
 public:
  // idle_sleep: how long a worker naps after an empty poll (a slow reader leaves a backlog in its ring).
  explicit QueueWorkers(Port& port, std::chrono::microseconds idle_sleep = std::chrono::microseconds(100))
      : port_(port), idle_sleep_(idle_sleep), seen_(port.rx_queues()) {
    for (uint16_t q = 0; q < port.rx_queues(); ++q) threads_.emplace_back([this, q] { Loop(q); });
  }
  ~QueueWorkers() { Stop(); }
  void Stop() {
    stop_ = true;
    for (auto& t : threads_) if (t.joinable()) t.join();
  }
  size_t Total() const { return total_.load(); }
  // Waits until `n` frames arrived in total (or 5 s), then a little longer to catch strays.
  bool WaitFor(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (Total() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return Total() == n;
  }
  std::vector<std::vector<Seen>> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    auto out = seen_;
    for (auto& v : seen_) v.clear();
    total_ = 0;
    return out;
  }

 private:
  void Loop(uint16_t q) {
    rte_mbuf* pkts[32];
    while (!stop_) {
      const int64_t polled = NowNs();
      const uint16_t n = port_.rx_burst(q, pkts, 32);
      if (n == 0) {
        std::this_thread::sleep_for(idle_sleep_);
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      for (uint16_t i = 0; i < n; ++i) {
        const uint8_t* d = rte_pktmbuf_mtod(pkts[i], const uint8_t*);
        Seen s{};
        s.polled_ns = polled;
        std::memcpy(s.dst, d, 6);
        s.vlan_stripped = pkts[i]->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED;
        s.vlan = s.vlan_stripped ? (pkts[i]->vlan_tci & 0xfff) : 0;
        // seq is the last 4 bytes of the IPv4/UDP part: eth(14) + ip(20) + ports/len/csum(8).
        if (pkts[i]->pkt_len >= 46) s.seq = ntohl(*reinterpret_cast<const uint32_t*>(d + 42));
        seen_[q].push_back(s);
        rte_pktmbuf_free(pkts[i]);
      }
      total_ += n;
    }
  }
  Port& port_;
  const std::chrono::microseconds idle_sleep_;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> total_{0};
  std::mutex mu_;
  std::vector<std::vector<Seen>> seen_;
  std::vector<std::thread> threads_;
};

}  // namespace metron::test

// Test helper: what leaves a pipeline on a kernel interface, read by a raw socket on a thread of its own.
// Frames are the veth_fixture.h kind (Ethernet + IPv4 + UDP + 4-byte sequence number); each one's translated
// source and destination addresses and ports are recorded under its sequence number.
#pragma once

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace metron::test {

// What leaves the pipeline: per sequence number, how often, and each frame's translated source.
class EgressCapture {
 public:
  explicit EgressCapture(const std::string& ifname) {
    fd_ = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd_ < 0) throw std::runtime_error("capture socket");
    const int buf = 32 << 20;
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
    sockaddr_ll a{};
    a.sll_family = AF_PACKET;
    a.sll_protocol = htons(ETH_P_ALL);
    a.sll_ifindex = static_cast<int>(if_nametoindex(ifname.c_str()));
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("capture bind");
    thread_ = std::thread([this] { Loop(); });
  }
  ~EgressCapture() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  struct Frame {
    uint32_t src_ip;
    uint16_t sport;
    uint32_t dst_ip;  // what a reply's reverse translation restores
    uint16_t dport;
  };
  // Frames by sequence number once `n` arrived (or 10 s passed).
  std::map<uint32_t, std::vector<Frame>> WaitFor(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (total_.load() < n && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // strays and duplicates
    std::lock_guard<std::mutex> lock(mu_);
    return frames_;
  }
  // When each frame arrived, in arrival order.
  std::vector<std::chrono::steady_clock::time_point> Arrivals() {
    std::lock_guard<std::mutex> lock(mu_);
    return arrivals_;
  }

 private:
  void Loop() {
    uint8_t b[2048];
    pollfd p{fd_, POLLIN, 0};
    while (!stop_) {
      if (poll(&p, 1, 20) <= 0) continue;
      sockaddr_ll from{};
      socklen_t len = sizeof from;
      const ssize_t n = recvfrom(fd_, b, sizeof b, 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n < 46 || from.sll_pkttype == PACKET_OUTGOING) continue;
      Frame f{ntohl(*reinterpret_cast<const uint32_t*>(b + 26)), ntohs(*reinterpret_cast<const uint16_t*>(b + 34)),
              ntohl(*reinterpret_cast<const uint32_t*>(b + 30)), ntohs(*reinterpret_cast<const uint16_t*>(b + 36))};
      const uint32_t seq = ntohl(*reinterpret_cast<const uint32_t*>(b + 42));
      std::lock_guard<std::mutex> lock(mu_);
      frames_[seq].push_back(f);
      arrivals_.push_back(std::chrono::steady_clock::now());
      ++total_;
    }
  }
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> total_{0};
  std::mutex mu_;
  std::map<uint32_t, std::vector<Frame>> frames_;
  std::vector<std::chrono::steady_clock::time_point> arrivals_;
  std::thread thread_;
};

}  // namespace metron::test

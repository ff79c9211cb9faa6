// Benchmark: how fast the kernel tag dispatch (FanoutPort) delivers 64 B frames from a veth into its per-core
// queues, against DPDK's own net_af_packet PMD on the same veth with the same queue count and ring size (hash
// fanout, no tag affinity) as the baseline, run side by side and interleaved in one run. Three figures: a small
// tag table (4 tags), a large one (1000 tags, frames carrying the last tags of the table), and the RSS
// compatibility mode (FanoutPort with hash: PACKET_FANOUT_HASH, 64 flows of one tag), which does what the
// baseline PMD does and should cost the same.
//
// On a veth the sender's send() runs the receive path (fanout demux, BPF program, copy into the ring) in its
// own softirq, so the delivered rate is the whole kernel path's throughput, dispatch included; frames lost to
// full rings are not counted.
//
// usage: fanout_dispatch_bench <results dir> [seconds per run, default 1.5]     (root: netns + veth)
// Writes <dir>/agent_fanout_dispatch_4tags.json, agent_fanout_dispatch_1000tags.json and
// agent_rss_fanout_dispatch.json.
#include <linux/if_packet.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "core/eal.h"
#include "dispatch/fanout_port.h"
#include "dispatch/steering_table.h"
#include "dispatch/veth_fixture.h"
#include "drivers/dpdk_port.h"

namespace metron {
namespace {

constexpr uint16_t kQueues = 2;

// Floods tx0 through a PACKET_TX_RING (one syscall per ring's worth of frames), cycling over `frames`.
class RingSender {
 public:
  RingSender(const std::vector<std::vector<uint8_t>>& frames) {
    fd_ = socket(AF_PACKET, SOCK_RAW, 0);
    int v = TPACKET_V2;
    setsockopt(fd_, SOL_PACKET, PACKET_VERSION, &v, sizeof v);
    v = 1;
    setsockopt(fd_, SOL_PACKET, PACKET_QDISC_BYPASS, &v, sizeof v);
    tpacket_req req{1 << 16, 32, 2048, 1024};
    if (setsockopt(fd_, SOL_PACKET, PACKET_TX_RING, &req, sizeof req) < 0) throw std::runtime_error("tx ring");
    ring_ = static_cast<uint8_t*>(mmap(nullptr, 1 << 21, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0));
    sockaddr_ll sll{};
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = if_nametoindex("tx0");
    if (bind(fd_, reinterpret_cast<sockaddr*>(&sll), sizeof sll) < 0) throw std::runtime_error("bind tx0");
    for (uint32_t i = 0; i < 1024; ++i) {
      auto* h = reinterpret_cast<tpacket2_hdr*>(ring_ + i * 2048);
      const auto& f = frames[i % frames.size()];
      std::memcpy(reinterpret_cast<uint8_t*>(h) + TPACKET2_HDRLEN - sizeof(sockaddr_ll), f.data(), f.size());
      h->tp_len = f.size();
    }
  }
  ~RingSender() {
    munmap(ring_, 1 << 21);
    close(fd_);
  }
  void Run(std::atomic<bool>& stop) {
    while (!stop) {
      for (uint32_t i = 0; i < 1024; ++i) {
        auto* h = reinterpret_cast<tpacket2_hdr*>(ring_ + i * 2048);
        if (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) == TP_STATUS_AVAILABLE) {
          __atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
          ++sent;
        }
      }
      send(fd_, nullptr, 0, MSG_DONTWAIT);
    }
  }
  uint64_t sent = 0;

 private:
  int fd_;
  uint8_t* ring_;
};

// Frames/s the port's queues received while the sender flooded for `seconds`.
double Measure(Port& port, const std::vector<std::vector<uint8_t>>& frames, double seconds) {
  std::atomic<bool> stop_rx{false}, stop_tx{false};
  std::atomic<uint64_t> received{0};
  std::vector<std::thread> rx;
  for (uint16_t q = 0; q < port.rx_queues(); ++q) {
    rx.emplace_back([&, q] {
      rte_mbuf* pkts[32];
      uint64_t n = 0;
      while (!stop_rx) {
        const uint16_t got = port.rx_burst(q, pkts, 32);
        if (got == 0) {
          // On a machine with fewer cores than threads here, a spinning reader would starve the sender and
          // the softirq that runs the dispatch: both ports are measured with the same polite poll.
          std::this_thread::sleep_for(std::chrono::microseconds(20));
          continue;
        }
        rte_pktmbuf_free_bulk(pkts, got);
        n += got;
      }
      received += n;
    });
  }
  RingSender sender(frames);
  std::thread tx([&] { sender.Run(stop_tx); });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop_tx = true;
  tx.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // drain what is already queued
  stop_rx = true;
  for (auto& t : rx) t.join();
  std::cerr << "  " << port.name() << ": sent " << sender.sent / seconds / 1e6 << " Mpps, received "
            << received / seconds / 1e6 << " Mpps, port rx_dropped so far " << port.counters().rx_dropped << "\n";
  return received / seconds;
}

std::vector<std::vector<uint8_t>> Frames(uint16_t first_tag, uint16_t count) {
  std::vector<std::vector<uint8_t>> out;
  for (uint16_t t = 0; t < count; ++t) out.push_back(test::BuildFrame(test::MacTagged(first_tag + t, t, t)));
  return out;
}

// `count` UDP flows (distinct source ports) of one MAC tag: what a flow hash spreads over the queues.
std::vector<std::vector<uint8_t>> Flows(uint16_t tag, uint16_t count) {
  std::vector<std::vector<uint8_t>> out;
  for (uint16_t i = 0; i < count; ++i) {
    test::FrameSpec f = test::MacTagged(tag, 0, i);
    f.sport = static_cast<uint16_t>(1000 + i);
    out.push_back(test::BuildFrame(f));
  }
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string Machine() {
  std::ifstream in("/proc/cpuinfo");
  std::string model = "unknown cpu";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " cpus, veth, no hugepages";
}

void Write(const std::string& dir, const std::string& name, const std::string& description, double value,
           const std::string& baseline, double baseline_value) {
  std::ofstream out(dir + "/" + name + ".json");
  out << "{\"name\": \"" << name << "\", \"description\": \"" << description << "\", \"value\": " << value / 1e6 << ", \"unit\": \"Mpps\", \"baseline\": \""
      << baseline << "\", \"baseline_value\": " << baseline_value / 1e6 << ", \"ratio\": " << value / baseline_value
      << ", \"machine\": \"" << Machine() << "\"}\n";
  std::cout << name << ": " << value / 1e6 << " Mpps vs " << baseline << " " << baseline_value / 1e6 << " Mpps (x"
            << value / baseline_value << ")\n";
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: fanout_dispatch_bench <results dir> [seconds per run]\n";
    return 2;
  }
  const std::string dir = argv[1];
  const double seconds = argc > 2 ? std::stod(argv[2]) : 1.5;
  if (geteuid() != 0) {
    std::cerr << "fanout_dispatch_bench: needs root (netns, veth, AF_PACKET)\n";
    return 2;
  }
  eal_init(eal_default_args("bench-fanout", "0"));
  rte_mempool* pool = packed_pktmbuf_pool("bench_pool", 8191);
  test::VethNetns ns;

  const auto small_frames = Frames(1, 4);
  const auto large_frames = Frames(991, 10);  // last entries of a 1000-tag table
  SteeringTable::TagMap small, large;
  for (uint16_t t = 1; t <= 4; ++t) small[t] = t % kQueues;
  for (uint16_t t = 1; t <= 1000; ++t) large[t] = t % kQueues;

  const auto flows = Flows(1, 64);
  std::vector<double> base_small, base_large, fan_small, fan_large, base_flows, rss_flows;
  for (int round = 0; round < 3; ++round) {
    {
      auto af = DpdkPort::open("net_af_packet_b" + std::to_string(round) + ",iface=rx0,qpairs=2,framecnt=1024", kQueues,
                                kQueues, pool);
      Measure(*af, small_frames, 0.3);  // warm-up: first frames on a fresh socket/veth path are slow
      base_small.push_back(Measure(*af, small_frames, seconds));
      base_large.push_back(Measure(*af, large_frames, seconds));
      base_flows.push_back(Measure(*af, flows, seconds));
    }
    {
      FanoutPortOptions o{"rx0", kQueues, 1024, 0};
      o.hash = true;
      auto port = FanoutPort::open(o, pool);
      Measure(*port, flows, 0.3);
      rss_flows.push_back(Measure(*port, flows, seconds));
    }
    {
      auto port = FanoutPort::open({"rx0", kQueues, 1024, 0}, pool);
      SteeringTable table;
      if (!table.add_nic(port.get()).ok()) return 1;
      if (!table.set_tags("rx0", pb::TAG_MAC, small).ok()) return 1;
      Measure(*port, small_frames, 0.3);
      fan_small.push_back(Measure(*port, small_frames, seconds));
      grpc::Status s = table.set_tags("rx0", pb::TAG_MAC, large);
      if (!s.ok()) {
        std::cerr << s.error_message() << "\n";
        return 1;
      }
      fan_large.push_back(Measure(*port, large_frames, seconds));
    }
  }
  const std::string baseline = "DPDK net_af_packet PMD (hash fanout), same veth, queues, ring size";
  Write(dir, "agent_fanout_dispatch_4tags",
        "kernel tag dispatch (AF_PACKET fanout + classic BPF) veth -> 2 queues, 4 MAC tags, 64 B, frames delivered",
        Median(fan_small), baseline, Median(base_small));
  Write(dir, "agent_fanout_dispatch_1000tags",
        "kernel tag dispatch, 1000 MAC tags (binary search), frames of the last 10 tags, 64 B, frames delivered",
        Median(fan_large), baseline, Median(base_large));
  Write(dir, "agent_rss_fanout_dispatch",
        "RSS compatibility mode (AF_PACKET PACKET_FANOUT_HASH, --rss-fanout) veth -> 2 queues, 64 UDP flows, 64 B, "
        "frames delivered",
        Median(rss_flows), baseline, Median(base_flows));
  std::filesystem::remove_all("/var/run/dpdk/metron-bench-fanout-" + std::to_string(getpid()));
  return 0;
}

}  // namespace
}  // namespace metron

int main(int argc, char** argv) { return metron::Main(argc, argv); }

// ReplayPort (--replay): the memory-fed input of the benchmarks. Each rx burst hands out fresh pool mbufs holding
// the trace's frames in order, looping; what is sent to it goes back to the pool; bad input is refused by name.
#include "drivers/replay_port.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "packets.h"
#include "pcap_file.h"
#include "test_env.h"

namespace metron {
namespace {

class Replay : public ::testing::Test {
 protected:
  void SetUp() override {
    test::eal();
    dir_ = "/tmp/metron-replay-" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string pcap(const std::string& name, const std::vector<std::vector<uint8_t>>& frames) {
    test::write_pcap(dir_ + "/" + name, frames);
    return dir_ + "/" + name;
  }
  static std::vector<uint8_t> bytes(rte_mbuf* m) {
    const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
    return {d, d + rte_pktmbuf_data_len(m)};
  }
  std::string dir_;
};

TEST_F(Replay, HandsOutTheTraceInOrderLoopingInFreshMbufs) {
  std::vector<std::vector<uint8_t>> frames;
  for (int i = 0; i < 3; ++i) frames.emplace_back(60 + 50 * i, static_cast<uint8_t>(i + 1));  // 60, 110, 160 B
  auto port = ReplayPort::open("r0=" + pcap("t.pcap", frames), 1, test::pool());
  EXPECT_EQ(port->name(), "r0");
  EXPECT_EQ(port->rx_queues(), 1);
  EXPECT_EQ(port->frames(0), 3u);
  const unsigned free0 = rte_mempool_avail_count(test::pool());
  rte_mbuf* pkts[8];
  ASSERT_EQ(port->rx_burst(0, pkts, 8), 8);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(bytes(pkts[i]), frames[i % 3]) << i;
    EXPECT_EQ(rte_pktmbuf_pkt_len(pkts[i]), frames[i % 3].size());
    EXPECT_EQ(pkts[i]->nb_segs, 1);
  }
  // A graph rewrites frames in place: the next lap must still see the trace as it was.
  rte_pktmbuf_mtod(pkts[0], uint8_t*)[0] = 0xee;
  EXPECT_EQ(port->tx_burst(0, pkts, 8), 8);
  EXPECT_EQ(rte_mempool_avail_count(test::pool()), free0);
  ASSERT_EQ(port->rx_burst(0, pkts, 2), 2);
  EXPECT_EQ(bytes(pkts[0]), frames[2]);
  EXPECT_EQ(bytes(pkts[1]), frames[0]);
  rte_pktmbuf_free_bulk(pkts, 2);
  const PortCounters c = port->counters();
  EXPECT_EQ(c.rx_packets, 10u);
  EXPECT_EQ(c.tx_packets, 8u);
  EXPECT_EQ(c.rx_bytes, 60u * 4 + 110u * 3 + 160u * 3);
}

TEST_F(Replay, OneLineFramesAndMbufsAsAResetLeavesThem) {
  // Frames of at most 64 bytes are copied as one whole line; every field a frame's last use changed is set again
  // (the pool's cache hands the same mbufs back: LIFO).
  std::vector<std::vector<uint8_t>> frames;
  for (int n : {42, 60, 64}) frames.emplace_back(n, static_cast<uint8_t>(n));
  auto port = ReplayPort::open("r0=" + pcap("small.pcap", frames), 1, test::pool());
  rte_mbuf* pkts[3];
  ASSERT_EQ(port->rx_burst(0, pkts, 3), 3);
  for (rte_mbuf* m : pkts) {
    rte_pktmbuf_adj(m, 4);
    m->ol_flags = RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
    m->vlan_tci = 7;
    m->packet_type = RTE_PTYPE_L3_IPV4;
  }
  EXPECT_EQ(port->tx_burst(0, pkts, 3), 3);
  for (int lap = 0; lap < 2; ++lap) {
    ASSERT_EQ(port->rx_burst(0, pkts, 3), 3);
    for (int i = 0; i < 3; ++i) {
      rte_mbuf* m = pkts[i];
      EXPECT_EQ(bytes(m), frames[i]) << i;
      EXPECT_EQ(rte_pktmbuf_pkt_len(m), frames[i].size());
      EXPECT_EQ(m->data_off, RTE_PKTMBUF_HEADROOM);
      EXPECT_EQ(m->ol_flags, 0u);
      EXPECT_EQ(m->vlan_tci, 0);
      EXPECT_EQ(m->packet_type, 0u);
      EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
      EXPECT_EQ(m->nb_segs, 1);
      EXPECT_EQ(m->next, nullptr);
      const char* why = "";
      EXPECT_EQ(rte_mbuf_check(m, 1, &why), 0) << why;
    }
    EXPECT_EQ(port->tx_burst(0, pkts, 3), 3);
  }
}

// As a NIC with IPv4 checksum offload on: each IPv4 frame's header checksum verdict in ol_flags (behind a VLAN
// tag too), none for frames that are not IPv4 or too short to hold the header.
TEST_F(Replay, IPv4FramesComeWithTheNicsChecksumVerdict) {
  test::Flow f;
  const std::vector<uint8_t> good = test::frame(f);
  std::vector<uint8_t> bad = good;
  bad[14 + 10] ^= 1;
  std::vector<uint8_t> tagged_bad = bad;
  tagged_bad.insert(tagged_bad.begin() + 12, {0x81, 0x00, 0x00, 0x07});
  std::vector<uint8_t> arp = good;
  arp[12] = 0x08, arp[13] = 0x06;
  const std::vector<uint8_t> runt(good.begin(), good.begin() + 30);  // EtherType IPv4, header cut short
  test::Flow v6;
  v6.ipv6 = true;
  v6.src = "2001:db8::1";
  v6.dst = "2001:db8::2";
  const std::vector<std::vector<uint8_t>> frames = {good, bad, tagged_bad, arp, runt, test::frame(v6)};
  const uint64_t expect[] = {RTE_MBUF_F_RX_IP_CKSUM_GOOD, RTE_MBUF_F_RX_IP_CKSUM_BAD, RTE_MBUF_F_RX_IP_CKSUM_BAD, 0,
                             0, 0};
  auto port = ReplayPort::open("r0=" + pcap("verdicts.pcap", frames), 1, test::pool());
  rte_mbuf* pkts[12];
  ASSERT_EQ(port->rx_burst(0, pkts, 12), 12);  // two laps: the verdicts come with every copy
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(pkts[i]->ol_flags, expect[i % 6]) << i;
    EXPECT_EQ(bytes(pkts[i]), frames[i % 6]) << i;
  }
  EXPECT_EQ(port->tx_burst(0, pkts, 12), 12);
}

TEST_F(Replay, TxReturnsOnlyWhatNoOneElseHolds) {
  // Fast free takes direct single-segment mbufs of the port's pool with no other reference; a clone, a chain, an
  // mbuf another reference holds and another pool's mbuf are freed as rte_pktmbuf_free frees them.
  rte_mempool* other = rte_pktmbuf_pool_create(("replay_other" + std::to_string(getpid())).c_str(), 63, 0, 0,
                                               RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  ASSERT_NE(other, nullptr);
  auto port = ReplayPort::open("r0=" + pcap("one.pcap", {std::vector<uint8_t>(64, 1)}), 1, test::pool());
  const unsigned free0 = rte_mempool_avail_count(test::pool()), other0 = rte_mempool_avail_count(other);
  rte_mbuf* got[4];
  ASSERT_EQ(port->rx_burst(0, got, 4), 4);
  rte_mbuf* held = got[0];
  rte_mbuf_refcnt_update(held, 1);                      // another reference: stays out of the pool
  rte_mbuf* clone = rte_pktmbuf_clone(got[1], test::pool());  // indirect, pins got[1]'s buffer
  ASSERT_NE(clone, nullptr);
  rte_mbuf* tail = rte_pktmbuf_alloc(test::pool());
  ASSERT_EQ(rte_pktmbuf_chain(got[2], tail), 0);        // two segments
  rte_mbuf* foreign = rte_pktmbuf_alloc(other);
  rte_mbuf* out[6] = {held, clone, got[1], got[2], got[3], foreign};
  EXPECT_EQ(port->tx_burst(0, out, 6), 6);
  EXPECT_EQ(rte_mbuf_refcnt_read(held), 1);
  EXPECT_EQ(rte_mempool_avail_count(test::pool()), free0 - 1);  // all but `held`
  EXPECT_EQ(rte_mempool_avail_count(other), other0);
  rte_pktmbuf_free(held);
  EXPECT_EQ(rte_mempool_avail_count(test::pool()), free0);
  rte_mempool_free(other);
}

TEST_F(Replay, OneRxQueuePerFile) {
  const std::vector<std::vector<uint8_t>> a{std::vector<uint8_t>(64, 0xa)}, b{std::vector<uint8_t>(64, 0xb)};
  auto port = ReplayPort::open("r1=" + pcap("a.pcap", a) + "," + pcap("b.pcap", b), 2, test::pool());
  ASSERT_EQ(port->rx_queues(), 2);
  EXPECT_EQ(port->tx_queues(), 2);
  rte_mbuf* m;
  ASSERT_EQ(port->rx_burst(1, &m, 1), 1);
  EXPECT_EQ(bytes(m), b[0]);
  rte_pktmbuf_free(m);
}

TEST_F(Replay, RefusesWhatItCannotReplayNamingIt) {
  auto refused = [&](const std::string& spec, const std::string& why) {
    try {
      ReplayPort::open(spec, 1, test::pool());
      ADD_FAILURE() << spec << " was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused("r2", "expected NAME=FILE");
  refused("r2=" + dir_ + "/missing.pcap", "cannot read " + dir_ + "/missing.pcap");
  refused("r2=" + pcap("empty.pcap", {}), "no frames");
  std::ofstream(dir_ + "/text.pcap") << "not a capture at all, just text";
  refused("r2=" + dir_ + "/text.pcap", "not a classic pcap file");
  refused("r2=" + pcap("big.pcap", {std::vector<uint8_t>(4000, 1)}), "frame 0 of 4000 bytes");
}

}  // namespace
}  // namespace metron

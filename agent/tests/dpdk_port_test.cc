#include "drivers/dpdk_port.h"

#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "packets.h"
#include "test_env.h"

namespace metron {
namespace {

TEST(DpdkPort, NullVdevReceivesAndSendsBursts) {
  auto port = DpdkPort::open("net_null7,size=64", 1, 1, test::pool());
  EXPECT_EQ(port->name(), "net_null7");
  rte_mbuf* pkts[32];
  uint16_t n = port->rx_burst(0, pkts, 32);
  ASSERT_EQ(n, 32);
  EXPECT_EQ(rte_pktmbuf_pkt_len(pkts[0]), 64u);
  EXPECT_EQ(port->tx_burst(0, pkts, n), n);
  PortCounters c = port->counters();
  EXPECT_EQ(c.rx_packets, 32u);
  EXPECT_EQ(c.tx_packets, 32u);
}

TEST(DpdkPort, RingVdevLoopsPacketsBack) {
  // net_ring with one ring for rx and tx: what we send is what we receive.
  auto port = DpdkPort::open("net_ring3", 1, 1, test::pool());
  rte_mbuf* m = rte_pktmbuf_alloc(test::pool());
  ASSERT_NE(m, nullptr);
  char* d = rte_pktmbuf_append(m, 60);
  for (int i = 0; i < 60; ++i) d[i] = static_cast<char>(i);
  ASSERT_EQ(port->tx_burst(0, &m, 1), 1);
  rte_mbuf* got[4];
  ASSERT_EQ(port->rx_burst(0, got, 4), 1);
  EXPECT_EQ(rte_pktmbuf_mtod(got[0], char*)[59], 59);
  rte_pktmbuf_free(got[0]);
}

// net_ring hands the sender's mbuf over as it is, ol_flags and all; a port that writes no checksum verdict of its
// own clears any it finds, so a verdict about a header before some graph rewrote it is not taken for this one.
TEST(DpdkPort, AVerdictNotTheDevicesOwnIsCleared) {
  auto port = DpdkPort::open("net_ring4", 1, 1, test::pool());
  rte_mbuf* m = rte_pktmbuf_alloc(test::pool());
  ASSERT_NE(m, nullptr);
  rte_pktmbuf_append(m, 60);
  m->ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_VLAN;
  ASSERT_EQ(port->tx_burst(0, &m, 1), 1);
  rte_mbuf* got[4];
  ASSERT_EQ(port->rx_burst(0, got, 4), 1);
  EXPECT_EQ(got[0], m);
  EXPECT_EQ(got[0]->ol_flags, RTE_MBUF_F_RX_VLAN);
  rte_pktmbuf_free(got[0]);
}

TEST(DpdkPort, UnknownDriverNamesTheDevice) {
  try {
    DpdkPort::open("net_nosuchdriver0,x=1", 1, 1, test::pool());
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("net_nosuchdriver0"), std::string::npos) << e.what();
  }
}

TEST(DpdkPort, AReconfigurationTheDriverRefusesLeavesThePortAsItWas) {
  auto port = DpdkPort::open("net_null9,size=64", 2, 2, test::pool());
  rte_eth_conf conf{};
  try {
    port->reconfigure(conf, {5000, 0, 1});  // more rx queues than the driver has
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("port net_null9: configure failed: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("(its previous configuration is back)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(port->hw_rx_queue(1), 1);
  rte_mbuf* pkts[32];
  for (uint16_t q = 0; q < 2; ++q) {
    const uint16_t n = port->rx_burst(q, pkts, 32);
    EXPECT_EQ(n, 32) << "queue " << q;
    rte_pktmbuf_free_bulk(pkts, n);
  }
}

// The IPv4 checksum offload is on wherever the device offers it; net_tap does (checking in software on its rx
// path), so a frame the kernel sends into the tap arrives with the verdict CheckIPHeader then takes.
TEST(DpdkPort, IPv4ChecksumOffloadIsOnAndItsVerdictComesWithTheFrame) {
  const std::string ifname = "mtapck" + std::to_string(getpid() % 100000);
  auto port = DpdkPort::open("net_tap_ck0,iface=" + ifname, 1, 1, test::pool());
  rte_eth_conf conf{};
  ASSERT_EQ(rte_eth_dev_conf_get(port->port_id(), &conf), 0);
  EXPECT_NE(conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM, 0u);
  // No IPv6 on the interface (its router solicitations would come in too), then up.
  ASSERT_EQ(std::system(("sysctl -qw net.ipv6.conf." + ifname + ".disable_ipv6=1 && ip link set " + ifname + " up")
                            .c_str()),
            0);
  const int fd = socket(AF_PACKET, SOCK_RAW, 0);
  ASSERT_GE(fd, 0);
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = static_cast<int>(if_nametoindex(ifname.c_str()));
  to.sll_halen = 6;
  test::Flow f;
  const std::vector<uint8_t> good = test::frame(f);
  std::vector<uint8_t> bad = good;
  bad[14 + 10] ^= 1;
  for (const std::vector<uint8_t>& frame : {good, bad})
    ASSERT_EQ(sendto(fd, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to),
              static_cast<ssize_t>(frame.size()));
  close(fd);
  std::vector<std::pair<std::vector<uint8_t>, uint64_t>> got;
  for (int tries = 0; tries < 200 && got.size() < 2; ++tries) {
    rte_mbuf* pkts[8];
    const uint16_t n = port->rx_burst(0, pkts, 8);
    for (uint16_t i = 0; i < n; ++i) {
      const auto* d = rte_pktmbuf_mtod(pkts[i], const uint8_t*);
      const std::vector<uint8_t> bytes(d, d + rte_pktmbuf_data_len(pkts[i]));
      if (bytes == good || bytes == bad) got.emplace_back(bytes, pkts[i]->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK);
    }
    rte_pktmbuf_free_bulk(pkts, n);
    if (n == 0) usleep(10000);
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first, good);
  EXPECT_EQ(got[0].second, RTE_MBUF_F_RX_IP_CKSUM_GOOD);
  EXPECT_EQ(got[1].first, bad);
  EXPECT_EQ(got[1].second, RTE_MBUF_F_RX_IP_CKSUM_BAD);
}

TEST(DpdkPort, TooManyQueuesIsRefused) {
  EXPECT_THROW(DpdkPort::open("net_null8", 4096, 1, test::pool()), std::runtime_error);
}

}  // namespace
}  // namespace metron

#include "drivers/dpdk_port.h"

#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <stdexcept>

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

TEST(DpdkPort, TooManyQueuesIsRefused) {
  EXPECT_THROW(DpdkPort::open("net_null8", 4096, 1, test::pool()), std::runtime_error);
}

}  // namespace
}  // namespace metron

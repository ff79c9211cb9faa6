// RSS on a DPDK port (agent --rss PORT): the port is reconfigured with RTE_ETH_MQ_RX_RSS over IP/TCP/UDP and
// still delivers on every rx queue; a port whose driver has no RSS is refused naming it and keeps working.
// Real vdevs: net_null (offers RSS) and net_ring (offers none).
#include "dispatch/rss_port.h"

#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "drivers/dpdk_port.h"
#include "test_env.h"
#include "agent_cli.h"
#include "port_read.h"

namespace metron {
namespace {

using test::Received;

TEST(RssPort, HashFunctionsAreIpTcpUdpAsFarAsOffered) {
  EXPECT_EQ(RssHashFunctions(0), 0u);
  EXPECT_EQ(RssHashFunctions(RTE_ETH_RSS_L2_PAYLOAD), 0u);
  EXPECT_EQ(RssHashFunctions(RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_L2_PAYLOAD), RTE_ETH_RSS_IPV4);
  EXPECT_EQ(RssHashFunctions(~0ull), RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP);
}

TEST(RssPort, AnRssCapablePortIsReconfiguredAndDeliversOnEveryQueue) {
  auto port = DpdkPort::open("net_null21,size=64", 2, 2, test::pool());
  grpc::Status s = EnableRss(port->name(), port->port_id(), 2, 2);
  ASSERT_TRUE(s.ok()) << s.error_message();
  rte_eth_conf conf{};
  ASSERT_EQ(rte_eth_dev_conf_get(port->port_id(), &conf), 0);
  EXPECT_EQ(conf.rxmode.mq_mode, RTE_ETH_MQ_RX_RSS);
  EXPECT_NE(conf.rx_adv_conf.rss_conf.rss_hf & RTE_ETH_RSS_IP, 0u);
  rte_eth_rss_conf hash{};
  ASSERT_EQ(rte_eth_dev_rss_hash_conf_get(port->port_id(), &hash), 0);
  EXPECT_NE(hash.rss_hf & RTE_ETH_RSS_IPV4, 0u) << "the driver did not take the hash functions";
  // Queues set up before the reconfiguration still work.
  EXPECT_GT(Received(*port, 0), 0u);
  EXPECT_GT(Received(*port, 1), 0u);
}

TEST(RssPort, APortWithoutRssIsRefusedByNameAndKeepsWorking) {
  auto port = DpdkPort::open("net_ring21", 1, 1, test::pool());
  rte_eth_dev_info info{};
  ASSERT_EQ(rte_eth_dev_info_get(port->port_id(), &info), 0);
  ASSERT_EQ(RssHashFunctions(info.flow_type_rss_offloads), 0u) << "net_ring offers RSS now: pick another vdev";
  grpc::Status s = EnableRss(port->name(), port->port_id(), 1, 1);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message().rfind("port net_ring21 has no RSS over IP/TCP/UDP", 0), 0u) << s.error_message();
  rte_eth_link link{};
  EXPECT_EQ(rte_eth_link_get_nowait(port->port_id(), &link), 0);
  EXPECT_EQ(link.link_status, RTE_ETH_LINK_UP) << "the refused port was stopped";
}

TEST(RssPort, AgentRefusesRssOnAPortWithoutIt) {
  test::ExpectModeRefusedAtStart("rss", "net_ring0", "has no RSS over IP/TCP/UDP");
}

}  // namespace
}  // namespace metron

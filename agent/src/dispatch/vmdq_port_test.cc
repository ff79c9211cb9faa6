// A DPDK port put into VMDq dispatch (agent --vmdq PORT) on real vdevs. None has VMDq: net_null and net_ring report
// 0 pools and are refused naming the port and why, still delivering; net_null told it has an 82599's pools takes
// the VMDq configuration (its queue map is polled), then refuses the pool MAC with its own reason, and the port is
// back in its previous mode, still delivering on every worker's queue. The ethdev MAC calls' errors as the
// drivers give them; the agent binary's exit.
#include "dispatch/vmdq_port.h"

#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "agent_cli.h"
#include "port_read.h"
#include "drivers/dpdk_port.h"
#include "test_env.h"

namespace metron {
namespace {

using test::Received;

rte_eth_dev_info Info(const DpdkPort& port) {
  rte_eth_dev_info info{};
  EXPECT_EQ(rte_eth_dev_info_get(port.port_id(), &info), 0);
  return info;
}

TEST(VmdqPort, APortWithoutVmdqIsRefusedByNameAndKeepsWorking) {
  for (const char* name : {"net_null31", "net_ring31"}) {
    auto port = DpdkPort::open(name, 2, 2, test::pool());
    const rte_eth_dev_info info = Info(*port);
    ASSERT_EQ(info.max_vmdq_pools, 0) << name << " has VMDq now: this test wants a driver without";
    std::unique_ptr<VmdqDispatcher> d;
    grpc::Status s = EnableVmdq(port.get(), info, 2, &d);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(s.error_message(), std::string("port ") + name +
                                     " has no VMDq (its driver reports max_vmdq_pools 0): dispatch it with --rte-flow "
                                     "instead");
    EXPECT_EQ(d, nullptr);
    rte_eth_conf conf{};
    ASSERT_EQ(rte_eth_dev_conf_get(port->port_id(), &conf), 0);
    EXPECT_EQ(conf.rxmode.mq_mode, RTE_ETH_MQ_RX_NONE);
  }
  auto null = DpdkPort::open("net_null32,size=64", 2, 2, test::pool());
  std::unique_ptr<VmdqDispatcher> d;
  EXPECT_FALSE(EnableVmdq(null.get(), Info(*null), 2, &d).ok());
  EXPECT_EQ(VmdqIdleMbufs("net_null32", 2), 0u) << "no VMDq, no extra queues";
  EXPECT_EQ(VmdqIdleMbufs("net_nosuch0", 2), 0u);
  EXPECT_GT(Received(*null, 0), 0u);
  EXPECT_GT(Received(*null, 1), 0u);
}

TEST(VmdqPort, ANicThatTakesThePoolsButRefusesPoolMacsIsPutBackInItsPreviousMode) {
  auto port = DpdkPort::open("net_null33,size=64", 2, 2, test::pool());
  rte_eth_dev_info info = Info(*port);
  // What an 82599 reports: 64 pools of 2 queues, 128 MAC table entries.
  info.max_vmdq_pools = 64;
  info.vmdq_queue_num = 128;
  info.vmdq_queue_base = 0;
  info.vmdq_pool_base = 0;
  info.max_mac_addrs = 128;
  // net_null configures VMDq-only with 16 rx queues (it checks nothing) but has no MAC table calls.
  rte_eth_conf conf{};
  VmdqLayout layout;
  ASSERT_TRUE(VmdqPortConf(port->name(), info, rte_eth_conf{}, 2, &conf, &layout).ok());
  port->reconfigure(conf, {layout.rx_queues, layout.queue_base, layout.queues_per_pool});
  rte_eth_conf now{};
  ASSERT_EQ(rte_eth_dev_conf_get(port->port_id(), &now), 0);
  EXPECT_EQ(now.rxmode.mq_mode, RTE_ETH_MQ_RX_VMDQ_ONLY);
  EXPECT_EQ(port->hw_rx_queue(1), 2) << "worker slot 1 polls the first queue of pool 1";
  rte_eth_stats before{}, after{};
  ASSERT_EQ(rte_eth_stats_get(port->port_id(), &before), 0);
  EXPECT_GT(Received(*port, 1), 0u);
  ASSERT_EQ(rte_eth_stats_get(port->port_id(), &after), 0);
  EXPECT_GT(after.q_ipackets[2], before.q_ipackets[2]) << "slot 1 did not read queue 2";
  EXPECT_EQ(after.q_ipackets[1], before.q_ipackets[1]) << "slot 1 read queue 1, the second queue of pool 0";
  port->reconfigure(rte_eth_conf{}, {2, 0, 1});

  std::unique_ptr<VmdqDispatcher> d;
  grpc::Status s = EnableVmdq(port.get(), info, 2, &d);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "NIC net_null33 refused to add class MAC 02:4d:00:01:00:00 (pool of worker slot 1): "
                               "Operation not supported (the port is back in its previous mode)");
  EXPECT_EQ(d, nullptr);
  ASSERT_EQ(rte_eth_dev_conf_get(port->port_id(), &now), 0);
  EXPECT_EQ(now.rxmode.mq_mode, RTE_ETH_MQ_RX_NONE);
  rte_eth_dev_info back{};
  ASSERT_EQ(rte_eth_dev_info_get(port->port_id(), &back), 0);
  EXPECT_EQ(back.nb_rx_queues, 2);
  EXPECT_EQ(port->hw_rx_queue(1), 1);
  EXPECT_GT(Received(*port, 0), 0u);
  EXPECT_GT(Received(*port, 1), 0u);
}

TEST(VmdqPort, EthdevMacCallsReachTheEthdevAndReturnItsErrors) {
  VmdqLayout layout;
  layout.queues_per_pool = 1;
  auto null = DpdkPort::open("net_null34", 1, 1, test::pool());
  EthdevMacOps on_null(null->port_id(), layout);
  EXPECT_EQ(on_null.add(ClassMac(7, 1), 0), -ENOTSUP) << "net_null has no MAC table calls";
  EXPECT_LT(on_null.backlog(0), 0) << "net_null cannot count its queue: the dispatcher must not wait on it";
  // net_ring has the calls and a MAC table of one entry holding a null address, which the ethdev treats as free.
  auto ring = DpdkPort::open("net_ring34", 1, 1, test::pool());
  ASSERT_EQ(Info(*ring).max_mac_addrs, 1u) << "net_ring's MAC table changed: revisit this test";
  EthdevMacOps on_ring(ring->port_id(), layout);
  ASSERT_EQ(on_ring.add(ClassMac(7, 1), 0), 0);
  rte_ether_addr table[1];
  ASSERT_EQ(rte_eth_macaddrs_get(ring->port_id(), table, 1), 1);
  MacAddr got;
  std::copy(table[0].addr_bytes, table[0].addr_bytes + 6, got.begin());
  EXPECT_EQ(got, ClassMac(7, 1)) << "the ethdev's table does not hold the MAC added";
  EXPECT_EQ(on_ring.add(ClassMac(7, 2), 0), -ENOSPC);
  EXPECT_EQ(on_ring.remove(ClassMac(7, 2)), 0) << "removing a MAC the table does not hold is not an error";
  EXPECT_EQ(on_ring.remove(ClassMac(7, 1)), -EADDRINUSE) << "the ethdev never removes entry 0, the port's own";
}

TEST(VmdqPort, AgentRefusesVmdqOnAPortWithoutItAndExits) {
  test::ExpectModeRefusedAtStart("vmdq", "net_null0", "has no VMDq (its driver reports max_vmdq_pools 0)");
}

}  // namespace
}  // namespace metron

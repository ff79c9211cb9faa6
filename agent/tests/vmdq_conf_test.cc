// The VMDq port configuration worked out from a driver's rte_eth_dev_info (drivers/vmdq_conf.h), on the numbers
// ixgbe (82599) and i40e (X710) report, and the refusals naming the port and what it lacks.
#include "drivers/vmdq_conf.h"

#include <gtest/gtest.h>

namespace metron {
namespace {

// rte_eth_dev_info as ixgbe fills it for an 82599 PF: 128 queues forming 64 pools of 2, 128 MAC table entries.
rte_eth_dev_info Ixgbe82599() {
  rte_eth_dev_info i{};
  i.max_rx_queues = 128;
  i.max_tx_queues = 128;
  i.max_vmdq_pools = 64;
  i.vmdq_queue_base = 0;
  i.vmdq_queue_num = 128;
  i.vmdq_pool_base = 0;
  i.max_mac_addrs = 128;
  return i;
}

// As i40e fills it with VMDq enabled: the PF's 64 queues first, then 64 pools of 4, pool ids from 1.
rte_eth_dev_info I40e() {
  rte_eth_dev_info i{};
  i.max_rx_queues = 64 + 256;
  i.max_tx_queues = 64 + 256;
  i.max_vmdq_pools = 64;
  i.vmdq_queue_base = 64;
  i.vmdq_queue_num = 256;
  i.vmdq_pool_base = 1;
  i.max_mac_addrs = 64;
  return i;
}

TEST(VmdqConf, An82599With4WorkersGets8PoolsOf2QueuesAndSlotIPollsQueue2I) {
  rte_eth_conf current{};
  current.txmode.offloads = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
  rte_eth_conf conf{};
  VmdqLayout l;
  grpc::Status s = VmdqPortConf("0000:01:00.0", Ixgbe82599(), current, 4, &conf, &l);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(conf.rxmode.mq_mode, RTE_ETH_MQ_RX_VMDQ_ONLY);
  const rte_eth_vmdq_rx_conf& v = conf.rx_adv_conf.vmdq_rx_conf;
  EXPECT_EQ(v.nb_queue_pools, RTE_ETH_8_POOLS);
  EXPECT_EQ(v.enable_default_pool, 1);
  EXPECT_EQ(v.default_pool, 0);
  EXPECT_EQ(v.nb_pool_maps, 0);
  EXPECT_EQ(v.rx_mode, RTE_ETH_VMDQ_ACCEPT_UNTAG);
  EXPECT_EQ(conf.txmode.offloads, RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) << "the rest of the configuration is kept";
  EXPECT_EQ(l.pools, 8);
  EXPECT_EQ(l.used_pools, 4);
  EXPECT_EQ(l.queues_per_pool, 2);
  EXPECT_EQ(l.rx_queues, 16);
  EXPECT_EQ(l.mac_entries, 127u);
  EXPECT_EQ(l.idle_rx_queues(), 12) << "the second queue of each worker's pool and 4 pools of 2 without a worker";
  for (uint16_t slot = 0; slot < 4; ++slot) {
    EXPECT_EQ(l.rx_queue_of(slot), 2 * slot);
    EXPECT_EQ(l.nic_pool_of(slot), slot);
  }
}

TEST(VmdqConf, PoolCountsAreRoundedUpToWhatVmdqConfigures) {
  rte_eth_conf conf{};
  VmdqLayout l;
  for (auto [workers, pools] : {std::pair<uint16_t, uint16_t>{1, 8}, {8, 8}, {9, 16}, {17, 32}, {33, 64}, {64, 64}}) {
    ASSERT_TRUE(VmdqPortConf("p", Ixgbe82599(), {}, workers, &conf, &l).ok()) << workers;
    EXPECT_EQ(l.pools, pools) << workers << " workers";
    EXPECT_EQ(conf.rx_adv_conf.vmdq_rx_conf.nb_queue_pools, pools);
    EXPECT_EQ(l.rx_queues, 2 * pools);
    EXPECT_EQ(l.rx_queue_of(workers - 1), 2 * (workers - 1));
  }
}

TEST(VmdqConf, AnI40eKeepsItsPfQueuesAndCountsPoolsFromItsPoolBase) {
  rte_eth_conf conf{};
  VmdqLayout l;
  ASSERT_TRUE(VmdqPortConf("0000:02:00.0", I40e(), {}, 2, &conf, &l).ok());
  EXPECT_EQ(l.pools, 8);
  EXPECT_EQ(l.queues_per_pool, 4);
  EXPECT_EQ(l.rx_queues, 64 + 8 * 4);
  EXPECT_EQ(l.rx_queue_of(0), 64);
  EXPECT_EQ(l.rx_queue_of(1), 68);
  EXPECT_EQ(l.nic_pool_of(0), 1u);
  EXPECT_EQ(l.nic_pool_of(1), 2u);
  EXPECT_EQ(conf.rx_adv_conf.vmdq_rx_conf.default_pool, 1) << "unmatched frames go to worker slot 0's pool";
  EXPECT_EQ(l.mac_entries, 63u);
  EXPECT_EQ(l.idle_rx_queues(), 94) << "the PF's 64, 3 more in each worker's pool, 6 pools of 4 without a worker";
}

TEST(VmdqConf, RefusalsNameThePortAndWhatItLacksAndChangeNothing) {
  rte_eth_conf conf{};
  conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
  VmdqLayout l;
  l.pools = 99;
  auto refused = [&](const rte_eth_dev_info& info, uint16_t workers) {
    grpc::Status s = VmdqPortConf("net_x0", info, {}, workers, &conf, &l);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(conf.rxmode.mq_mode, RTE_ETH_MQ_RX_RSS);
    EXPECT_EQ(l.pools, 99);
    return s.error_message();
  };
  rte_eth_dev_info none{};
  none.max_rx_queues = 1024;
  none.max_mac_addrs = 1;
  EXPECT_EQ(refused(none, 2),
            "port net_x0 has no VMDq (its driver reports max_vmdq_pools 0): dispatch it with --rte-flow instead");
  rte_eth_dev_info eight = Ixgbe82599();
  eight.max_vmdq_pools = 8;
  eight.vmdq_queue_num = 16;
  EXPECT_EQ(refused(eight, 9),
            "port net_x0 has 8 VMDq pools but 9 worker cores need 16 (one pool each; VMDq configures 8, 16, 32 or 64)");
  EXPECT_EQ(refused(Ixgbe82599(), 65),
            "port net_x0 has 64 VMDq pools but 65 worker cores need more than 64 (one pool each; VMDq configures 8, "
            "16, 32 or 64)");
  rte_eth_dev_info few_queues = Ixgbe82599();
  few_queues.vmdq_queue_num = 32;
  EXPECT_EQ(refused(few_queues, 2), "port net_x0 reports 32 VMDq queues for 64 pools: not one queue per pool");
  rte_eth_dev_info short_rx = I40e();
  short_rx.max_rx_queues = 64;  // says the pools' queues start at 64 but counts none of them
  short_rx.vmdq_queue_num = 64;
  EXPECT_EQ(refused(short_rx, 2), "port net_x0 needs 72 rx queues for 8 VMDq pools of 1 from queue 64, but has 64");
  rte_eth_dev_info one_mac = Ixgbe82599();
  one_mac.max_mac_addrs = 1;
  EXPECT_EQ(refused(one_mac, 2),
            "port net_x0 has no MAC table entry beyond its own address (max_mac_addrs 1): no class MAC can be added "
            "to a pool");
}

}  // namespace
}  // namespace metron

// What the dispatch probe finds on the software PMDs this machine has (real drivers, nothing stood in), and how
// the agent binary chooses, refuses and falls back with --dispatch. None of them offers an rte_flow QUEUE rule it
// can create; net_tap validates some rules but its kernel cannot create them (shared/notes/dataplane.md).
#include "dispatch/port_probe.h"

#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <unistd.h>

#include <filesystem>

#include "agent_cli.h"
#include "dispatch/dispatch_choice.h"
#include "dispatch/veth_fixture.h"
#include "drivers/dpdk_port.h"
#include "test_env.h"

namespace metron {
namespace {

std::string Errors(const pb::NicCapabilities& c) {
  std::string out;
  for (const auto& e : c.rte_flow_errors()) out += e + "; ";
  return out;
}

TEST(PortProbe, NetNullHasRssButNoRteFlowNorVmdq) {
  auto port = DpdkPort::open("net_null_pp0", 2, 2, test::pool());
  const PortProbe p = ProbePort("net_null_pp0", port->port_id(), 2);
  EXPECT_EQ(p.caps.driver(), "net_null");
  EXPECT_FALSE(p.caps.rte_flow()) << Errors(p.caps);
  EXPECT_FALSE(p.caps.rte_flow_queue());
  EXPECT_FALSE(p.caps.rte_flow_isolate());
  ASSERT_EQ(p.caps.rte_flow_errors_size(), 1) << Errors(p.caps);
  EXPECT_EQ(p.caps.rte_flow_errors(0).rfind("queue: ", 0), 0u) << Errors(p.caps);
  EXPECT_EQ(p.caps.vmdq_pools(), 0u);
  EXPECT_NE(p.caps.rss_offloads() & RTE_ETH_RSS_IP, 0u);
  EXPECT_EQ(p.caps.reta_size(), 128u);
  EXPECT_EQ(p.caps.max_mac_addrs(), 1u);
  EXPECT_FALSE(p.caps.vlan_filter());
  EXPECT_EQ(p.missing.at(pb::DISPATCH_RTE_FLOW), "port net_null_pp0 has no rte_flow (its driver net_null answers ENOSYS)");
  EXPECT_EQ(p.missing.at(pb::DISPATCH_VMDQ).rfind("port net_null_pp0 has no VMDq (its driver reports max_vmdq_pools 0)", 0), 0u);
  EXPECT_EQ(p.missing.count(pb::DISPATCH_RSS), 0u);
  EXPECT_EQ(PossibleModes(p), (std::vector<pb::DispatchMode>{pb::DISPATCH_RSS, pb::DISPATCH_SINGLE}));
}

TEST(PortProbe, NetRingHasNothingButItsQueues) {
  auto port = DpdkPort::open("net_ring_pp0", 2, 2, test::pool());
  const PortProbe p = ProbePort("net_ring_pp0", port->port_id(), 2);
  EXPECT_EQ(p.caps.driver(), "net_ring");
  EXPECT_FALSE(p.caps.rte_flow()) << Errors(p.caps);
  EXPECT_EQ(p.caps.rss_offloads(), 0u);
  EXPECT_EQ(p.missing.at(pb::DISPATCH_RSS), "port net_ring_pp0 has no RSS over IP/TCP/UDP (its driver offers hash functions 0x0)");
  EXPECT_EQ(PossibleModes(p), (std::vector<pb::DispatchMode>{pb::DISPATCH_SINGLE}));
}

class TapProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: creates a tap interface in a private netns";
    ns_ = std::make_unique<test::VethNetns>();
  }
  std::unique_ptr<test::VethNetns> ns_;
};

// net_tap implements rte_flow by kernel tc. Its own validation accepts a dst MAC -> QUEUE rule (creating it is
// the rte_flow mode's own probe, RteFlowDispatcher::probe, which this kernel fails: no multiq qdisc); MARK and
// JUMP it does not support, and isolated mode needs a tc rule the kernel refuses, so it stays off.
TEST_F(TapProbe, NetTapValidatesQueueButNotMarkJumpOrIsolate) {
  auto port = DpdkPort::open("net_tap_pp0,iface=dptap0", 4, 4, test::pool());
  const PortProbe p = ProbePort("net_tap_pp0", port->port_id(), 4);
  EXPECT_EQ(p.caps.driver(), "net_tap");
  EXPECT_TRUE(p.caps.rte_flow());
  EXPECT_TRUE(p.caps.rte_flow_queue()) << Errors(p.caps);
  EXPECT_FALSE(p.caps.rte_flow_mark());
  EXPECT_FALSE(p.caps.rte_flow_jump());
  EXPECT_FALSE(p.caps.rte_flow_isolate());
  ASSERT_EQ(p.caps.rte_flow_errors_size(), 3) << Errors(p.caps);
  EXPECT_EQ(p.caps.rte_flow_errors(0), "mark: action not supported (Operation not supported)");
  EXPECT_EQ(p.caps.rte_flow_errors(1), "jump: action not supported (Operation not supported)");
  EXPECT_EQ(p.caps.rte_flow_errors(2).rfind("isolate: ", 0), 0u) << Errors(p.caps);
  EXPECT_EQ(p.caps.max_rx_queues(), 16u);
  EXPECT_EQ(p.caps.vmdq_pools(), 0u);
  EXPECT_NE(p.caps.rss_offloads() & RTE_ETH_RSS_IP, 0u);
  EXPECT_EQ(p.caps.max_mac_addrs(), 1u);
  EXPECT_FALSE(p.caps.vlan_filter());
  EXPECT_EQ(p.missing.count(pb::DISPATCH_RTE_FLOW), 0u) << "QUEUE validates: the mode is possible on paper";
  EXPECT_EQ(PossibleModes(p),
            (std::vector<pb::DispatchMode>{pb::DISPATCH_RTE_FLOW, pb::DISPATCH_RSS, pb::DISPATCH_SINGLE}));
  // The probe left the port as it was: not isolated, still validating.
  const PortProbe again = ProbePort("net_tap_pp0", port->port_id(), 4);
  EXPECT_EQ(again.caps.SerializeAsString(), p.caps.SerializeAsString());
}

using test::RunAgent;

std::string Eal(const std::string& prefix, const std::string& vdevs) {
  return "--dpdk -l 0-1 --no-huge -m 256 --no-pci --log-level lib.eal:error --file-prefix " + prefix + " " + vdevs +
         " --";
}

// The agent asked for a mode a port lacks stops naming the port, the flag and the missing capability; with
// --dispatch-fallback it runs the best mode below instead and says what it refused.
TEST(AgentDispatchFlag, RefusesAMissingCapabilityOrFallsBackWhenTold) {
  const std::string prefix = "dp-probe-" + std::to_string(getpid());
  std::string out;
  EXPECT_EQ(RunAgent("--listen 127.0.0.1:0 --dispatch net_ring0=rss " + Eal(prefix, "--vdev net_ring0"), &out), 2)
      << out;
  EXPECT_NE(out.find("metron-agent: --dispatch net_ring0=rss: port net_ring0 has no RSS over IP/TCP/UDP (its driver "
                     "offers hash functions 0x0) (--dispatch-fallback runs the port in the best mode below that it "
                     "can)"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("serving on port"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists("/var/run/dpdk/" + prefix)) << "runtime directory left behind";

  out.clear();
  EXPECT_EQ(RunAgent("--listen 127.0.0.1:0 --dispatch net_null0=warp " + Eal(prefix, "--vdev net_null0"), &out), 2);
  EXPECT_NE(out.find("--dispatch net_null0=warp: unknown mode 'warp' (one of auto, rte-flow, vmdq, rss, single)"),
            std::string::npos)
      << out;
  out.clear();
  EXPECT_EQ(RunAgent("--listen 127.0.0.1:0 --dispatch net_null0=auto --rss net_null0 " +
                         Eal(prefix, "--vdev net_null0"), &out), 2);
  EXPECT_NE(out.find("--rss net_null0: port net_null0 already has --dispatch net_null0=auto"), std::string::npos)
      << out;

  // Falls back and serves (stopped with SIGTERM after 3 s).
  out.clear();
  FILE* p = popen(("{ " + std::string(METRON_AGENT_BIN) +
                   " --listen 127.0.0.1:0 --dispatch-fallback --dispatch net_ring0=vmdq " +
                   Eal(prefix, "--vdev net_ring0") + " & a=$!; sleep 3; kill $a; wait $a; } 2>&1")
                      .c_str(),
                  "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << out;
  EXPECT_NE(out.find("metron-agent: --dispatch net_ring0=vmdq: vmdq refused: port net_ring0 has no VMDq"),
            std::string::npos) << out;
  EXPECT_NE(out.find("metron-agent: --dispatch net_ring0=vmdq: rss refused: port net_ring0 has no RSS"),
            std::string::npos) << out;
  EXPECT_NE(out.find("metron-agent: port net_ring0 dispatches with single"), std::string::npos) << out;
  EXPECT_NE(out.find("serving on port"), std::string::npos) << out;
}

}  // namespace
}  // namespace metron

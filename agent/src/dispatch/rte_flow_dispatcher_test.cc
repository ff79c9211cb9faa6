// RteFlowDispatcher against a real PMD: net_tap (in a private netns) validates rte_flow rules but cannot create
// them on this kernel (no tc multiq/flower), so what is checked is that validation runs per rule, that a refused
// creation reports the NIC, the rule and its testpmd spelling, and that nothing is left half-installed. The agent
// binary, asked to dispatch with rte_flow on such a port (--rte-flow), refuses to start and says why.
#include "dispatch/rte_flow_dispatcher.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "dispatch/steering_table.h"
#include "dispatch/veth_fixture.h"
#include "drivers/dpdk_port.h"
#include "test_env.h"
#include "agent_cli.h"

namespace metron {
namespace {

class RteFlowDispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: creates a tap interface in a private netns";
    ns_ = std::make_unique<test::VethNetns>();
    static int n = 0;
    port_ = DpdkPort::open("net_tap_rfd" + std::to_string(n++) + ",iface=mtap0", 4, 4, test::pool());
  }
  void TearDown() override {
    port_.reset();
    ns_.reset();
  }
  std::vector<SteerRule> Tags(std::initializer_list<std::pair<uint32_t, uint32_t>> tags) {
    std::vector<SteerRule> out;
    for (auto [tag, queue] : tags) {
      SteerRule r;
      EXPECT_TRUE(TagRule(pb::TAG_MAC, tag, queue, "tag", &r).ok());
      r.nic = "mtap0";
      out.push_back(r);
    }
    return out;
  }
  std::unique_ptr<test::VethNetns> ns_;
  std::unique_ptr<DpdkPort> port_;
};

TEST_F(RteFlowDispatcherTest, ValidatesThenReportsTheRuleTheNicRefused) {
  RteFlowDispatcher d("mtap0", port_->port_id(), 4, 0, 64);
  const auto rules = Tags({{7, 1}, {8, 2}});
  EXPECT_TRUE(d.check(rules).ok());
  grpc::Status s = d.apply(rules);
  ASSERT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_EQ(s.error_message().rfind("NIC mtap0 refused a group-tag rule (create: ", 0), 0u) << s.error_message();
  EXPECT_NE(s.error_message().find("flow create " + std::to_string(port_->port_id()) +
                                   " ingress priority 0 pattern eth dst spec 02:4d:00:07:00:00"),
            std::string::npos)
      << s.error_message();
  EXPECT_EQ(d.installed(), 0u) << "a refused list left rules behind";
}

TEST_F(RteFlowDispatcherTest, ProbeCreatesARuleSoATapThatOnlyValidatesIsRefused) {
  RteFlowDispatcher d("mtap0", port_->port_id(), 4, 0, 64);
  grpc::Status s = d.probe();
  ASSERT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_EQ(s.error_message().rfind("NIC mtap0 refused a group-tag rule (create: ", 0), 0u) << s.error_message();
  EXPECT_NE(s.error_message().find("actions queue index 3"), std::string::npos) << s.error_message();
  EXPECT_EQ(d.installed(), 0u);
}

TEST_F(RteFlowDispatcherTest, ProbeOnAPortWithoutRteFlowFailsAtValidation) {
  static int n = 0;
  auto null_port = DpdkPort::open("net_null_rfd" + std::to_string(n++), 2, 2, test::pool());
  RteFlowDispatcher d("null", null_port->port_id(), 2, 0, 64);
  grpc::Status s = d.probe();
  ASSERT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_EQ(s.error_message().rfind("NIC null refused a group-tag rule (validate: ", 0), 0u) << s.error_message();
}

TEST_F(RteFlowDispatcherTest, CapacityIsCheckedBeforeTheNicIsAsked) {
  RteFlowDispatcher d("mtap0", port_->port_id(), 4, 0, 1);
  grpc::Status s = d.check(Tags({{7, 1}, {8, 2}}));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(), "NIC mtap0: 2 rules, its table holds 1");
}

TEST_F(RteFlowDispatcherTest, SteeringTableKeepsItsStateWhenTheNicRefuses) {
  RteFlowDispatcher d("mtap0", port_->port_id(), 4, 0, 64);
  SteeringTable table;
  ASSERT_TRUE(table.add_nic(&d).ok()) << "an empty list needs no rule";
  grpc::Status s = table.set_tags("mtap0", pb::TAG_MAC, {{7, 1}});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(table.tags("mtap0", pb::TAG_MAC).empty());
  EXPECT_EQ(d.installed(), 0u);
}

using test::RunAgent;

TEST_F(RteFlowDispatcherTest, AgentRefusesToStartOnAPortThatCannotDispatch) {
  const std::string prefix = "metron-rfcli-" + std::to_string(getpid());
  const std::string eal = "--dpdk -l 0 --no-huge -m 256 --no-pci --log-level lib.eal:error --file-prefix " + prefix +
                          " --vdev net_tap_cli,iface=mtap1 --";
  std::string out;
  EXPECT_EQ(RunAgent("--listen 127.0.0.1:0 --rte-flow net_tap_cli " + eal, &out), 2) << out;
  EXPECT_NE(out.find("metron-agent: --rte-flow net_tap_cli: the port cannot dispatch with rte_flow: NIC net_tap_cli "
                     "refused a group-tag rule (create: "),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("serving on port"), std::string::npos) << "started serving anyway: " << out;
  EXPECT_FALSE(std::filesystem::exists("/var/run/dpdk/" + prefix)) << "runtime directory left behind";

  out.clear();
  EXPECT_EQ(RunAgent("--listen 127.0.0.1:0 --rte-flow eth9 " + eal, &out), 2) << out;
  EXPECT_NE(out.find("--rte-flow eth9: no DPDK port of that name"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(RunAgent("--listen 127.0.0.1:0 --rte-flow net_tap_cli,rules=many " + eal, &out), 2) << out;
  EXPECT_NE(out.find("--rte-flow net_tap_cli,rules=many: rules: expected"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(RunAgent("--listen 127.0.0.1:0 --rte-flow net_tap_cli,queues=2 " + eal, &out), 2) << out;
  EXPECT_NE(out.find("--rte-flow net_tap_cli,queues=2: expected PORT or PORT,rules=N"), std::string::npos) << out;
}

}  // namespace
}  // namespace metron

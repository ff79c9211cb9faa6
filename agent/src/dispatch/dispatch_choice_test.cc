// The choice of a port's dispatch mode over a probe result. The probe results here are written by hand (a NIC
// with rte_flow and VMDq does not exist on this machine; port_probe_test checks real drivers' probes) and `enable`
// records what it was asked instead of setting a port up: what is tested is the order modes are tried in, when
// the agent stops, and that every refusal is reported.
#include "dispatch/dispatch_choice.h"

#include <gtest/gtest.h>

namespace metron {
namespace {

PortProbe Probe(std::map<pb::DispatchMode, std::string> missing) {
  PortProbe p;
  p.caps.set_driver("test");
  p.missing = std::move(missing);
  return p;
}

struct Recorder {
  std::vector<pb::DispatchMode> asked;
  std::map<pb::DispatchMode, std::string> fails;
  EnableMode fn() {
    return [this](pb::DispatchMode m) {
      asked.push_back(m);
      auto f = fails.find(m);
      return f == fails.end() ? grpc::Status::OK : grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, f->second);
    };
  }
};

DispatchRequest Asked(const std::string& mode, bool fallback = false) {
  DispatchRequest r;
  EXPECT_TRUE(ParseDispatchMode(mode, &r)) << mode;
  r.fallback = fallback;
  return r;
}

TEST(DispatchChoice, AutoTakesTheBestModeThatSetsUpAndReportsTheBetterOnesRefused) {
  Recorder rec;
  rec.fails[pb::DISPATCH_RTE_FLOW] = "NIC x refused a group-tag rule (create: no tc flower)";
  pb::Nic nic;
  const PortProbe p = Probe({{pb::DISPATCH_VMDQ, "port x has no VMDq"}});
  ASSERT_TRUE(ChooseDispatch(p, Asked("auto"), rec.fn(), &nic).ok());
  EXPECT_EQ(nic.active_mode(), pb::DISPATCH_RSS);
  EXPECT_TRUE(nic.auto_mode());
  EXPECT_EQ(nic.requested_mode(), pb::DISPATCH_MODE_UNSPECIFIED);
  EXPECT_EQ(rec.asked, (std::vector<pb::DispatchMode>{pb::DISPATCH_RTE_FLOW, pb::DISPATCH_RSS}))
      << "a mode missing a capability is not tried";
  ASSERT_EQ(nic.refusals_size(), 2);
  EXPECT_EQ(nic.refusals(0).mode(), pb::DISPATCH_RTE_FLOW);
  EXPECT_EQ(nic.refusals(0).reason(), "NIC x refused a group-tag rule (create: no tc flower)");
  EXPECT_EQ(nic.refusals(1).mode(), pb::DISPATCH_VMDQ);
  EXPECT_EQ(nic.refusals(1).reason(), "port x has no VMDq");
  EXPECT_EQ(nic.dispatch_modes_size(), 3) << "rte_flow, RSS, single are possible on paper";
  EXPECT_EQ(nic.capabilities().driver(), "test");
}

TEST(DispatchChoice, AnAskedModeMissingACapabilityStopsWithItsReasonAndSetsNothingUp) {
  Recorder rec;
  pb::Nic nic;
  grpc::Status s = ChooseDispatch(Probe({{pb::DISPATCH_VMDQ, "port x has no VMDq"}}), Asked("vmdq"), rec.fn(), &nic);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "port x has no VMDq");
  EXPECT_TRUE(rec.asked.empty());
}

TEST(DispatchChoice, FallbackGoesOnlyToModesBelowTheAskedOne) {
  Recorder rec;
  pb::Nic nic;
  const PortProbe p = Probe({{pb::DISPATCH_VMDQ, "port x has no VMDq"}});
  ASSERT_TRUE(ChooseDispatch(p, Asked("vmdq", true), rec.fn(), &nic).ok());
  EXPECT_EQ(nic.active_mode(), pb::DISPATCH_RSS);
  EXPECT_EQ(nic.requested_mode(), pb::DISPATCH_VMDQ);
  EXPECT_EQ(rec.asked, (std::vector<pb::DispatchMode>{pb::DISPATCH_RSS})) << "rte_flow is above VMDq: not tried";
  ASSERT_EQ(nic.refusals_size(), 1);
  EXPECT_EQ(nic.refusals(0).mode(), pb::DISPATCH_VMDQ);
}

TEST(DispatchChoice, AnAskedModeThatFailsToSetUpIsRefusedToo) {
  Recorder rec;
  rec.fails[pb::DISPATCH_RSS] = "port x: configure with RSS failed: Invalid argument";
  pb::Nic nic;
  grpc::Status s = ChooseDispatch(Probe({}), Asked("rss"), rec.fn(), &nic);
  EXPECT_EQ(s.error_message(), "port x: configure with RSS failed: Invalid argument");
  rec.asked.clear();
  ASSERT_TRUE(ChooseDispatch(Probe({}), Asked("rss", true), rec.fn(), &nic).ok());
  EXPECT_EQ(nic.active_mode(), pb::DISPATCH_SINGLE);
}

TEST(DispatchChoice, ModeNames) {
  DispatchRequest r;
  EXPECT_FALSE(ParseDispatchMode("rte_flow", &r));
  EXPECT_FALSE(ParseDispatchMode("fanout", &r)) << "fanout is for kernel interfaces (--fanout), not DPDK ports";
  for (const char* m : {"rte-flow", "vmdq", "rss", "single"}) {
    ASSERT_TRUE(ParseDispatchMode(m, &r));
    EXPECT_EQ(DispatchModeName(r.mode), m);
    EXPECT_FALSE(r.automatic);
  }
}

}  // namespace
}  // namespace metron

// RSS compatibility mode (DISPATCH_RSS, agent --rss-fanout): frames are spread over the worker cores by flow
// hash, with no tag affinity, so a pipeline entering there runs each group on every worker core with per-core
// flow state. Real parts: EngineBackend over a running Engine with two workers, the kernel's PACKET_FANOUT_HASH
// on a veth in a private netns (FanoutPort with hash), SynthRewriter translating UDP flows, frames read as they
// leave the pipeline's egress.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>
#include <vector>

#include "veth_engine_fixture.h"

namespace metron {
namespace {

constexpr uint16_t kTag = 7;
constexpr uint32_t kFlows = 64;
constexpr uint32_t kRounds = 4;  // frames per flow

class RssModeTest : public test::VethEngineTest {
 protected:
  void AttachRx0() override {
    engine_->set_idle_sleep_us(100);
    FanoutPortOptions o{"rx0", static_cast<uint16_t>(engine_->slot_count())};
    o.hash = true;
    engine_->add_port(FanoutPort::open(o, test::pool()));
    backend_->add_rss_nic("rx0");
  }

  static pb::GroupSpec Napt(const std::string& id, uint32_t tag, unsigned core) {
    return Group(id,
                 "input -> Strip(14) -> CheckIPHeader(CHECKSUM false) -> rw :: SynthRewriter(PATTERN 192.0.2.1 "
                 "20000-29999 - -) -> Unstrip(14) -> [0]output;",
                 tag, core, {0});
  }
  pb::DeployPipelineRequest Chain() const {
    pb::DeployPipelineRequest d;
    d.set_pipeline_id("chain");
    d.set_ingress_nic("rx0");
    d.add_egress()->set_nic("rx0");
    *d.add_groups() = Napt("napt", kTag, kCoreB);  // the core is ignored in RSS mode
    return d;
  }
  // Flows differ by source address and port, so the kernel's flow hash spreads them.
  void Send(uint32_t flow) {
    test::FrameSpec f = test::MacTagged(kTag, 0, seq_++);
    f.src_ip = 0x0a000100 + flow;
    f.sport = static_cast<uint16_t>(1000 + flow);
    sender_->Send(f);
    flow_of_[f.seq] = flow;
  }

  uint32_t seq_ = 0;
  std::map<uint32_t, uint32_t> flow_of_;
};

TEST_F(RssModeTest, ResourcesReportRssMode) {
  pb::ServerResources r;
  ASSERT_TRUE(backend_->GetResources(pb::GetResourcesRequest(), &r).ok());
  ASSERT_EQ(r.nics_size(), 1);
  EXPECT_EQ(r.nics(0).name(), "rx0");
  EXPECT_EQ(r.nics(0).active_mode(), pb::DISPATCH_RSS);
  ASSERT_EQ(r.nics(0).dispatch_modes_size(), 1);
  EXPECT_EQ(r.nics(0).dispatch_modes(0), pb::DISPATCH_RSS);
  EXPECT_EQ(r.nics(0).max_nic_rules(), 0u);
}

TEST_F(RssModeTest, TheHashPortTakesNoSteeringRules) {
  auto* port = dynamic_cast<FanoutPort*>(engine_->port("rx0"));
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->mode(), pb::DISPATCH_RSS);
  EXPECT_EQ(port->max_rules(), 0u);
  EXPECT_TRUE(port->check({}).ok());
  SteerRule r;
  ASSERT_TRUE(TagRule(pb::TAG_MAC, kTag, 1, "t", &r).ok());
  const grpc::Status s = port->apply({r});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(),
            "NIC rx0 dispatches by flow hash (RSS compatibility mode): it takes no steering rules (1 given)");
  EXPECT_EQ(port->check({r}).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(RssModeTest, TheSpecsCoreIsIgnored) {
  pb::DeployPipelineRequest d = Chain();
  d.mutable_groups(0)->set_core(99);  // not a worker core: refused under tag affinity, ignored here
  pb::PipelineStatus st;
  grpc::Status s = backend_->DeployPipeline(d, &st);
  ASSERT_TRUE(s.ok()) << s.error_message();
  for (unsigned c : {kCoreA, kCoreB}) EXPECT_EQ(engine_->plan(c)->groups.size(), 1u) << "core " << c;
  // Its tag is still the pipeline's: another pipeline on the same NIC cannot take it.
  d.set_pipeline_id("other");
  EXPECT_EQ(backend_->DeployPipeline(d, &st).error_code(), grpc::StatusCode::ALREADY_EXISTS);
}

TEST_F(RssModeTest, EveryFlowKeepsOneTranslationAndFlowsSpreadOverBothCores) {
  pb::PipelineStatus st;
  grpc::Status s = backend_->DeployPipeline(Chain(), &st);
  ASSERT_TRUE(s.ok()) << s.error_message();
  // The status mirrors the request: one group, though it runs on both cores.
  ASSERT_EQ(st.groups_size(), 1);
  EXPECT_EQ(st.groups(0).group_id(), "napt");
  for (unsigned c : {kCoreA, kCoreB}) EXPECT_EQ(engine_->plan(c)->groups.size(), 1u) << "core " << c;

  for (uint32_t round = 0; round < kRounds; ++round)
    for (uint32_t f = 0; f < kFlows; ++f) Send(f);
  const uint32_t n = seq_;
  const auto frames = capture_->WaitFor(n);

  uint32_t lost = 0;
  std::map<uint32_t, std::set<std::pair<uint32_t, uint16_t>>> translations;  // per flow
  for (uint32_t q = 0; q < n; ++q) {
    auto it = frames.find(q);
    if (it == frames.end()) {
      ++lost;
      continue;
    }
    EXPECT_EQ(it->second.size(), 1u) << "frame " << q << " left " << it->second.size() << " times";
    translations[flow_of_[q]].emplace(it->second[0].src_ip, it->second[0].sport);
  }
  EXPECT_EQ(lost, 0u) << "of " << n << " frames";
  ASSERT_EQ(translations.size(), kFlows);
  // One mapping per flow: each flow stayed on one core (the other core's copy would have mapped it anew) ...
  std::map<uint16_t, uint32_t> flow_of_port;
  for (const auto& [flow, seen] : translations) {
    ASSERT_EQ(seen.size(), 1u) << "flow " << flow << " got " << seen.size() << " translations";
    EXPECT_EQ(seen.begin()->first, 0xc0000201u) << "flow " << flow << " not translated";
    // ... and the per-core copies never hand out the same port (each core owns its part of the range).
    auto [where, fresh] = flow_of_port.emplace(seen.begin()->second, flow);
    EXPECT_TRUE(fresh) << "flows " << where->second << " and " << flow << " share port " << seen.begin()->second;
  }

  pb::Stats stats;
  ASSERT_TRUE(backend_->GetStats(pb::StatsRequest(), &stats).ok());
  std::map<uint32_t, uint64_t> group_packets;  // core -> packets of the group's copy there
  for (const auto& g : stats.groups()) group_packets[g.core()] += g.packets();
  ASSERT_EQ(group_packets.size(), 2u) << "the group should be reported on both cores";
  uint64_t total = 0;
  for (const auto& [core, packets] : group_packets) {
    EXPECT_GT(packets, 0u) << "no flow hashed to core " << core;
    RecordProperty("core" + std::to_string(core) + "_packets", std::to_string(packets));
    total += packets;
  }
  EXPECT_EQ(total, n);
  for (const auto& c : stats.cores()) {
    EXPECT_GT(c.rx_packets(), 0u) << "core " << c.core();
    EXPECT_EQ(c.drops(), 0u) << "core " << c.core() << " dropped frames";
  }
}

TEST_F(RssModeTest, StateMovesAreRefusedNamingTheNicAndLeaveThePipelineRunning) {
  pb::PipelineStatus st;
  ASSERT_TRUE(backend_->DeployPipeline(Chain(), &st).ok());
  pb::UpdatePipelineRequest u;
  u.set_pipeline_id("chain");
  *u.add_groups() = Napt("napt2", kTag, kCoreA);
  u.mutable_groups(0)->add_state_from("napt");
  grpc::Status s = backend_->UpdatePipeline(u, &st);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("groups[0].state_from"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("'rx0'"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("RSS"), std::string::npos) << s.error_message();

  pb::ExportStateRequest e;
  e.set_pipeline_id("chain");
  e.set_group_id("napt");
  pb::StateSnapshot snap;
  EXPECT_EQ(backend_->ExportState(e, &snap).error_code(), grpc::StatusCode::FAILED_PRECONDITION);

  // Nothing changed: both copies still run and translate.
  pb::ListPipelinesReply list;
  ASSERT_TRUE(backend_->ListPipelines(pb::ListPipelinesRequest(), &list).ok());
  ASSERT_EQ(list.pipelines_size(), 1);
  EXPECT_EQ(list.pipelines(0).generation(), 1u);
  EXPECT_EQ(list.pipelines(0).groups(0).group_id(), "napt");
  for (unsigned c : {kCoreA, kCoreB}) EXPECT_EQ(engine_->plan(c)->groups.size(), 1u) << "core " << c;
  for (uint32_t f = 0; f < 8; ++f) Send(f);
  EXPECT_EQ(capture_->WaitFor(8).size(), 8u);

  // An update without state moves replaces the copies on every core; removal takes them all.
  pb::UpdatePipelineRequest plain;
  plain.set_pipeline_id("chain");
  *plain.add_groups() = Napt("napt2", kTag, kCoreA);
  s = backend_->UpdatePipeline(plain, &st);
  ASSERT_TRUE(s.ok()) << s.error_message();
  for (unsigned c : {kCoreA, kCoreB}) {
    ASSERT_EQ(engine_->plan(c)->groups.size(), 1u) << "core " << c;
    EXPECT_EQ(engine_->plan(c)->groups[0]->spec().group_id, "napt2") << "core " << c;
  }
  pb::RemovePipelineRequest r;
  r.set_pipeline_id("chain");
  pb::RemovePipelineReply rr;
  ASSERT_TRUE(backend_->RemovePipeline(r, &rr).ok());
  for (unsigned c : {kCoreA, kCoreB}) EXPECT_TRUE(engine_->plan(c)->groups.empty()) << "core " << c;
}

}  // namespace
}  // namespace metron

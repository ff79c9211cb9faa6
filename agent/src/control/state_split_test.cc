// Splitting a saturated stateful group (docs/scaling.md#steps, issue 6): UpdatePipeline keeps the group's tag and
// core for half of its classes and starts the other half on a second core, both with the group's NAPT table.
// Real parts: EngineBackend over a running Engine with two workers, tags dispatched by the kernel (FanoutPort on
// a veth in a private netns), SynthRewriter translating UDP flows, frames counted by sequence number and their
// translation read as they leave the pipeline's egress.
#include <gtest/gtest.h>
#include <poll.h>
#include <rte_cycles.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "core/engine.h"
#include "core/engine_backend.h"
#include "dispatch/fanout_port.h"
#include "dispatch/steering_table.h"
#include "dispatch/veth_fixture.h"
#include "veth_engine_fixture.h"
#include "test_env.h"

namespace metron {
namespace {

constexpr uint16_t kTagG = 7;  // the split group's tag
constexpr uint16_t kTagN = 8;  // the new half's tag
constexpr uint32_t kFlows = 32;
constexpr uint32_t kClasses = 4;
constexpr uint32_t kBacklog = 300;  // frames queued on the saturated core when the split starts

class StateSplitTest : public test::VethEngineTest {
 protected:
  // NAPT behind a per-packet cost of 2 ms: the core saturates with a few hundred frames per second.
  static pb::GroupSpec Group(const std::string& id, uint32_t tag, unsigned core, std::vector<uint32_t> classes) {
    return VethEngineTest::Group(id,
                                 "input -> SpinCycles(CYCLES " + std::to_string(rte_get_tsc_hz() / 500) +
                                     ") -> Strip(14) -> CheckIPHeader(CHECKSUM false) -> rw :: SynthRewriter(PATTERN "
                                     "192.0.2.1 20000-29999 - -) -> Unstrip(14) -> [0]output;",
                                 tag, core, classes);
  }
  void Send(uint32_t flow, uint16_t tag) {
    test::FrameSpec f = test::MacTagged(tag, flow % kClasses, seq_++);
    f.sport = static_cast<uint16_t>(1000 + flow);
    sender_->Send(f);
    flow_of_[f.seq] = flow;
  }

  uint32_t seq_ = 0;
  std::map<uint32_t, uint32_t> flow_of_;
};

TEST_F(StateSplitTest, SplitUnderBacklogKeepsEveryMappingLosesNothingAndDoesNotWaitForTheBusyCore) {
  grpc::Status s = DeployChain(Group("g0", kTagG, kCoreA, {0, 1, 2, 3}));
  ASSERT_TRUE(s.ok()) << s.error_message();

  // Every flow is mapped before the split ...
  for (uint32_t f = 0; f < kFlows; ++f) Send(f, kTagG);
  ASSERT_EQ(capture_->WaitFor(kFlows).size(), kFlows) << "flows not established before the split";
  // ... and the group's core has a backlog of ~0.6 s of work when it starts.
  for (uint32_t i = 0; i < kBacklog; ++i) Send(i % kFlows, kTagG);

  pb::UpdatePipelineRequest u;
  u.set_pipeline_id("chain");
  *u.add_groups() = Group("g0", kTagG, kCoreA, {0, 1});
  *u.add_groups() = Group("g0.1", kTagN, kCoreB, {2, 3});
  u.mutable_groups(0)->add_state_from("g0");
  u.mutable_groups(1)->add_state_from("g0");
  pb::PipelineStatus st;
  s = backend_->UpdatePipeline(u, &st);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const uint64_t rx_a_at_return = engine_->sample(kCoreA).rx;
  // Steering the new tag to core B takes no frame from core A: the update did not wait for A's backlog.
  EXPECT_LT(rx_a_at_return, kFlows + kBacklog - 50)
      << "UpdatePipeline returned only after the saturated core had worked through (almost) its whole backlog";

  // The switch's re-tag: the moved classes now carry the new tag.
  for (int round = 0; round < 2; ++round)
    for (uint32_t f = 0; f < kFlows; ++f) Send(f, f % kClasses >= 2 ? kTagN : kTagG);
  const uint32_t n = seq_;
  const auto frames = capture_->WaitFor(n);

  uint32_t lost = 0, dup = 0;
  std::map<uint32_t, std::vector<std::pair<uint32_t, uint16_t>>> translations;  // per flow, in send order
  for (uint32_t q = 0; q < n; ++q) {
    auto it = frames.find(q);
    if (it == frames.end()) {
      ++lost;
      continue;
    }
    if (it->second.size() > 1) ++dup;
    translations[flow_of_[q]].emplace_back(it->second[0].src_ip, it->second[0].sport);
  }
  EXPECT_EQ(lost, 0u) << "of " << n << " frames";
  EXPECT_EQ(dup, 0u);
  for (const auto& [flow, seen] : translations) {
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.front().first, 0xc0000201u) << "flow " << flow << " not translated";
    for (const auto& t : seen)
      EXPECT_EQ(t, seen.front()) << "flow " << flow << " (class " << flow % kClasses
                                 << ") changed its translation across the split: port " << seen.front().second
                                 << " then " << t.second;
  }
  // The moved classes' last frames were served by the new core, with the state it got from the split.
  EXPECT_GE(engine_->sample(kCoreB).rx, 2u * kFlows / 2);
  pb::Stats stats;
  ASSERT_TRUE(backend_->GetStats(pb::StatsRequest(), &stats).ok());
  for (const auto& c : stats.cores()) EXPECT_EQ(c.drops(), 0u) << "core " << c.core() << " dropped frames";
}

// Which queues a dispatch change makes wait for their backlog (FanoutPort::apply).
SteerRule TagTo(uint32_t tag, uint32_t queue) {
  SteerRule r;
  EXPECT_TRUE(TagRule(pb::TAG_MAC, tag, queue, "t", &r).ok());
  return r;
}

TEST(DrainScope, OnlyQueuesThatMayLoseFramesWait) {
  const std::vector<SteerRule> before{TagTo(7, 0), TagTo(9, 1)};
  // Adding a tag for queue 1 takes nothing from queue 0 (tags are disjoint).
  EXPECT_EQ(QueuesLosingFrames(before, {TagTo(7, 0), TagTo(9, 1), TagTo(8, 1)}, 2, 0),
            (std::vector<bool>{false, false}));
  EXPECT_EQ(QueuesLosingFrames(before, {TagTo(8, 1), TagTo(7, 0), TagTo(9, 1)}, 2, 0),
            (std::vector<bool>{false, false}));
  // Moving tag 7 from queue 0 to 1: queue 0 hands over its backlog.
  EXPECT_EQ(QueuesLosingFrames(before, {TagTo(7, 1), TagTo(9, 1)}, 2, 0), (std::vector<bool>{true, false}));
  // Removing a tag: its queue waits.
  EXPECT_EQ(QueuesLosingFrames(before, {TagTo(7, 0)}, 2, 0), (std::vector<bool>{false, true}));
  // A new rule ahead that may overlap (a UDP port rule to queue 1 before tag 7's rule) takes from queue 0.
  SteerRule udp;
  udp.match.ip_proto = 17;
  udp.match.ether_type = 0x0800;
  udp.match.l4_dst = {53, 0xffff};
  udp.action = {SteerActionKind::kQueue, 1};
  EXPECT_EQ(QueuesLosingFrames(before, {udp, TagTo(7, 0), TagTo(9, 1)}, 2, 0), (std::vector<bool>{true, true}));
  // Nothing changed: nobody waits.
  EXPECT_EQ(QueuesLosingFrames(before, before, 2, 0), (std::vector<bool>{false, false}));
}

}  // namespace
}  // namespace metron

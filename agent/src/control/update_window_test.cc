// The window of a make-before-break update (docs/updates.md): the next version's group runs beside the running one,
// takes its flow state (ExportState -> ImportState), and only then do the switches move traffic to its tag. A flow
// whose first frame reaches the running group after that copy (the steady flow of tests/e2e/test_update_e2e.py
// when its sender started during the update) is in neither the copy nor, until the sync after the move, the next
// group's table: its next frames, tagged for the next group, used to get a new mapping there, in the next group's
// port share, and the sync kept that one ("a flow the new group already holds keeps its mapping"): one flow, two
// NAPT ports. ImportStateRequest.follow_source makes the next group look such a flow up in the running one first.
// Real parts: EngineBackend over a running Engine, tags dispatched by the kernel (FanoutPort on a veth in a
// private netns), SynthRewriter translating UDP flows, frames read as they leave the pipeline.
#include <gtest/gtest.h>

#include <map>

#include "veth_engine_fixture.h"

namespace metron {
namespace {

constexpr uint16_t kOldTag = 7;
constexpr uint16_t kNewTag = 9;
constexpr uint16_t kLo = 20000;     // the pattern's range: 20000-20255 ...
constexpr uint32_t kShares = 16;    // ... in 16 shares of 16 ports
constexpr uint32_t kPerShare = 16;
constexpr uint32_t kPublic = 0xc0000201;  // 192.0.2.1
constexpr uint32_t kClient = 0x0a000001;

class UpdateWindowTest : public test::VethEngineTest {
 protected:
  static pb::GroupSpec Napt(const std::string& id, uint32_t tag, unsigned share, unsigned core) {
    return NaptGroup(id, tag, core, static_cast<int>(share), kShares);
  }
  grpc::Status Update(const std::vector<pb::GroupSpec>& groups) {
    pb::UpdatePipelineRequest u;
    u.set_pipeline_id("chain");
    for (const auto& g : groups) *u.add_groups() = g;
    pb::PipelineStatus st;
    return backend_->UpdatePipeline(u, &st);
  }
  // MakeBeforeBreak's copy: g0's tables into g0~v1, replacing them.
  grpc::Status Copy(bool follow, uint64_t* entries = nullptr) {
    pb::ExportStateRequest ex;
    ex.set_pipeline_id("chain");
    ex.set_group_id("g0");
    pb::ImportStateRequest im;
    grpc::Status s = backend_->ExportState(ex, im.mutable_snapshot());
    if (!s.ok()) return s;
    im.set_target_group_id("g0~v1");
    im.set_follow_source(follow);
    pb::ImportStateReply r;
    s = backend_->ImportState(im, &r);
    if (entries != nullptr) *entries = r.entries();
    return s;
  }
  // One frame of the flow from client port `sport`, tagged `tag`; the (source, port) it left with.
  std::pair<uint32_t, uint16_t> Forward(uint16_t tag, uint16_t sport) {
    test::FrameSpec fs = test::MacTagged(tag, 0, seq_++);
    fs.sport = sport;
    sender_->Send(fs);
    return Left(fs.seq);
  }
  // A reply of the server to external port `port`, tagged `tag`; the (destination, port) it was restored to.
  std::pair<uint32_t, uint16_t> Reply(uint16_t tag, uint16_t port) {
    test::FrameSpec fs = test::MacTagged(tag, 0, seq_++);
    fs.src_ip = 0x0a000002, fs.sport = 2000;
    fs.dst_ip = kPublic, fs.dport = port;
    sender_->Send(fs);
    const auto frames = capture_->WaitFor(++sent_);
    auto it = frames.find(fs.seq);
    if (it == frames.end()) return {0, 0};
    return {it->second[0].dst_ip, it->second[0].dport};
  }
  std::pair<uint32_t, uint16_t> Left(uint32_t seq) {
    const auto frames = capture_->WaitFor(++sent_);
    auto it = frames.find(seq);
    if (it == frames.end()) return {0, 0};
    return {it->second[0].src_ip, it->second[0].sport};
  }
  // g0~v1's rewriter figures.
  pb::FlowStateStats Figures(const std::string& group) {
    pb::Stats stats;
    EXPECT_TRUE(backend_->GetStats(pb::StatsRequest(), &stats).ok());
    for (const pb::GroupStats& g : stats.groups())
      if (g.group_id() == group && g.flow_state_size() == 1) return g.flow_state(0);
    ADD_FAILURE() << "no rewriter figures of " << group;
    return {};
  }
  static unsigned ShareOf(uint16_t port) { return (port - kLo) / kPerShare; }

  uint32_t seq_ = 0;
  size_t sent_ = 0;  // frames expected back so far
};

// The e2e failure, deterministic: the steady flow's first frame reaches the running group after the copy; its next
// frames, moved to the next group, keep that mapping, and so does a reply to it; once the running group retires the
// next one holds the flow on its own.
TEST_F(UpdateWindowTest, AFlowTheRunningGroupMapsAfterTheCopyKeepsItsPortWhenItsFramesMove) {
  ASSERT_TRUE(DeployChain(Napt("g0", kOldTag, 0, kCoreA)).ok());
  const auto open = Forward(kOldTag, 1000);  // a flow open before the update
  ASSERT_EQ(open.first, kPublic);
  ASSERT_EQ(ShareOf(open.second), 0u);

  grpc::Status s = Update({Napt("g0", kOldTag, 0, kCoreA), Napt("g0~v1", kNewTag, 1, kCoreA)});
  ASSERT_TRUE(s.ok()) << s.error_message();
  uint64_t copied = 0;
  s = Copy(/*follow=*/true, &copied);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(copied, 1u);

  // The window: traffic still carries the old tag; a new flow starts in the running group.
  const auto window = Forward(kOldTag, 1001);
  ASSERT_EQ(window.first, kPublic);
  EXPECT_EQ(ShareOf(window.second), 0u) << "the running group maps in its own share";

  // The switches move traffic to the new tag: both flows keep their ports, the reply finds its client.
  EXPECT_EQ(Forward(kNewTag, 1000), open) << "the copied flow";
  EXPECT_EQ(Forward(kNewTag, 1001), window) << "the window's flow got another translation in the next group";
  EXPECT_EQ(Reply(kNewTag, window.second), std::make_pair(kClient, uint16_t{1001}));
  // A frame tagged for the running group still on its way (the drain) is translated as before.
  EXPECT_EQ(Forward(kOldTag, 1001), window);
  // A flow that starts after the move is the next group's own, in its share.
  const auto fresh = Forward(kNewTag, 1002);
  EXPECT_EQ(ShareOf(fresh.second), 1u);
  const pb::FlowStateStats during = Figures("g0~v1");
  EXPECT_EQ(during.inherited(), 1u) << "only the window's flow was taken from the running group";
  EXPECT_EQ(during.inherit_failures(), 0u);
  EXPECT_EQ(during.flows(), 3u);

  // The running group retires (the follow ends with it); the next one keeps all three flows as they were.
  s = Update({Napt("g0~v1", kNewTag, 1, kCoreA)});
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(Forward(kNewTag, 1001), window);
  EXPECT_EQ(Forward(kNewTag, 1000), open);
  EXPECT_EQ(Forward(kNewTag, 1002), fresh);
  EXPECT_EQ(Figures("g0~v1").inherited(), 1u);
}

// What follow_source fixes: without it, the window's flow gets a second translation, from the next group's share,
// as soon as its frames move (the CI failure: 192.0.2.1:1037 then 192.0.2.1:5069 for one flow).
TEST_F(UpdateWindowTest, WithoutFollowingTheWindowsFlowGetsASecondTranslation) {
  ASSERT_TRUE(DeployChain(Napt("g0", kOldTag, 0, kCoreA)).ok());
  ASSERT_TRUE(Update({Napt("g0", kOldTag, 0, kCoreA), Napt("g0~v1", kNewTag, 1, kCoreA)}).ok());
  ASSERT_TRUE(Copy(/*follow=*/false).ok());
  const auto window = Forward(kOldTag, 1001);
  ASSERT_EQ(ShareOf(window.second), 0u);
  const auto moved = Forward(kNewTag, 1001);
  EXPECT_NE(moved, window);
  EXPECT_EQ(ShareOf(moved.second), 1u);
}

// The lookup reads the running group's table on the core's own thread: groups on two cores cannot follow one
// another, and the refusal changes nothing.
TEST_F(UpdateWindowTest, AGroupOnAnotherCoreCannotFollowAndNothingIsImported) {
  ASSERT_TRUE(DeployChain(Napt("g0", kOldTag, 0, kCoreA)).ok());
  const auto open = Forward(kOldTag, 1000);
  ASSERT_TRUE(Update({Napt("g0", kOldTag, 0, kCoreA), Napt("g0~v1", kNewTag, 1, kCoreB)}).ok());
  grpc::Status s = Copy(/*follow=*/true);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "follow_source: group 'g0' runs on core 0, group 'g0~v1' on core 1: a group can "
                               "look flows up only in one its core runs");
  EXPECT_EQ(Figures("g0~v1").flows(), 0u);
  const auto moved = Forward(kNewTag, 1000);
  EXPECT_EQ(ShareOf(moved.second), 1u) << "nothing was imported: " << open.second << " vs " << moved.second;
}

}  // namespace
}  // namespace metron

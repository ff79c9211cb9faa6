// Hitless tag moves: a group moved from core A to core B by UpdatePipeline, under traffic, loses no frame and
// A sees none of its tag once the update has returned. Real parts: EngineBackend over a running Engine with two
// workers, tags dispatched by the kernel (FanoutPort on a veth in a private netns), frames counted by sequence
// number as they leave the pipeline's egress.
#include <gtest/gtest.h>

#include <atomic>
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

constexpr uint16_t kMovedTag = 7;

class TagMoveTest : public test::VethEngineTest {
 protected:
  static pb::GroupSpec Group(const std::string& id, uint32_t tag, unsigned core) {
    return VethEngineTest::Group(id, "input -> [0]output;", tag, core);
  }
  // The moved group on `moved_core`, plus one idle group pinned on each core so both keep polling the NIC.
  static google::protobuf::RepeatedPtrField<pb::GroupSpec> Groups(unsigned moved_core) {
    google::protobuf::RepeatedPtrField<pb::GroupSpec> gs;
    *gs.Add() = Group("moved", kMovedTag, moved_core);
    *gs.Add() = Group("stay-a", 9, kCoreA);
    *gs.Add() = Group("stay-b", 8, kCoreB);
    return gs;
  }
  uint64_t CoreRx(unsigned core) const { return engine_->sample(core).rx; }

};

TEST_F(TagMoveTest, MovingATagBetweenCoresUnderTrafficLosesNoFrame) {
  grpc::Status s = DeployChain(Groups(kCoreA));
  ASSERT_TRUE(s.ok()) << s.error_message();

  // Paced traffic of the moved tag only, so a core's rx counter counts exactly the frames of that tag it got.
  std::atomic<bool> stop{false};
  std::atomic<uint32_t> sent{0};
  std::thread traffic([&] {
    while (!stop) {
      for (int i = 0; i < 4; ++i) sender_->Send(test::MacTagged(kMovedTag, 0, sent++));
      std::this_thread::sleep_for(std::chrono::microseconds(250));
    }
  });
  unsigned on = kCoreA;
  for (int move = 0; move < 8; ++move) {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    const unsigned to = on == kCoreA ? kCoreB : kCoreA;
    pb::UpdatePipelineRequest u;
    u.set_pipeline_id("chain");
    *u.mutable_groups() = Groups(to);
    pb::PipelineStatus st;
    s = backend_->UpdatePipeline(u, &st);
    ASSERT_TRUE(s.ok()) << "move " << move << ": " << s.error_message();
    ASSERT_EQ(steering_.tags("rx0", pb::TAG_MAC), (SteeringTable::TagMap{{kMovedTag, engine_->slot_of_core(to)},
                                                                          {8, engine_->slot_of_core(kCoreB)},
                                                                          {9, engine_->slot_of_core(kCoreA)}}));
    // Once the update returned, the old core gets nothing more of the tag while traffic goes on.
    const uint64_t old_rx = CoreRx(on);
    const uint64_t new_rx = CoreRx(to);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (CoreRx(to) < new_rx + 50 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_GE(CoreRx(to), new_rx + 50) << "move " << move << ": core " << to << " receives too little of the tag";
    EXPECT_EQ(CoreRx(on), old_rx) << "move " << move << ": core " << on << " still received the moved tag";
    on = to;
  }
  stop = true;
  traffic.join();

  const uint32_t n = sent.load();
  const auto frames = capture_->WaitFor(n);
  uint32_t lost = 0, dup = 0, first_lost = n;
  for (uint32_t q = 0; q < n; ++q) {
    const auto it = frames.find(q);
    const size_t c = it == frames.end() ? 0 : it->second.size();
    if (c == 0 && lost++ == 0) first_lost = q;
    if (c > 1) ++dup;
  }
  pb::Stats stats;
  ASSERT_TRUE(backend_->GetStats(pb::StatsRequest(), &stats).ok());
  uint64_t rx_dropped = 0;
  for (const auto& p : stats.ports()) rx_dropped += p.rx_dropped();
  EXPECT_EQ(lost, 0u) << "of " << n << " frames (first lost: seq " << first_lost
                      << "); the NIC's own rx drops: " << rx_dropped;
  EXPECT_EQ(dup, 0u) << "frames delivered twice";
  for (const auto& c : stats.cores())
    EXPECT_EQ(c.drops(), 0u) << "core " << c.core() << " dropped frames of a tag it did not run";
  EXPECT_GT(n, 1000u) << "too little traffic to exercise the moves";
}

}  // namespace
}  // namespace metron

// Copying a big flow table out of a core that forwards (issue 6/3, core/state_copy.h): ExportState and a
// checkpoint of a group with 200k NAPT flows, under a steady stream through that group. The copy runs in slices
// between batches, so frames keep leaving the pipeline while it runs: the longest stretch without an egress frame
// is measured in frames of the stream (a whole-table copy of 200k flows holds the core for ~150 ms, hundreds of
// frames of this stream). The copy holds every imported flow with its exact mapping although the core maps new
// flows and expires old ones while it walks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>
#include <vector>

#include "core/state_store.h"
#include "veth_engine_fixture.h"

namespace metron {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint16_t kTag = 9;
constexpr uint32_t kLongLived = 200000;  // TCP flows imported before the copy, idle 0, timeout 600 s
constexpr uint32_t kExpiring = 20000;    // UDP flows that time out (1 s) around the copy
constexpr uint32_t kStreamFlows = 500;   // the steady stream cycles over these (new mappings at first)
// Longest allowed stretch without egress, in frames of the stream (~4k pps): ~50 ms. The stretches of a quiet
// window on this shared machine (workers are threads among other engineers' builds) reach ~90 frames; a
// whole-table copy of 200k flows holds the core for ~150-250 ms, 600-1000 frames.
constexpr double kMaxGapFrames = 200;

const char* kClick =
    "input -> Strip(14) -> CheckIPHeader(CHECKSUM false) -> rw :: SynthRewriter(PATTERN 192.0.2.1 20000-65535 - -, "
    "CAPACITY 300000, TCP_TIMEOUT 600, UDP_TIMEOUT 1) -> Unstrip(14) -> [0]output;";

std::string ip4(uint32_t a) { return std::string{char(a >> 24), char(a >> 16), char(a >> 8), char(a)}; }
uint32_t ip4(const std::string& s) {
  return uint32_t(uint8_t(s[0])) << 24 | uint32_t(uint8_t(s[1])) << 16 | uint32_t(uint8_t(s[2])) << 8 | uint8_t(s[3]);
}
// The imported flows: flow i's key and mapping follow from i, so a torn or mixed-up entry shows.
void Flow(uint32_t i, uint8_t proto, pb::FlowEntry* e) {
  e->mutable_key()->set_src_ip(ip4(0x0a400000 + i));
  e->mutable_key()->set_dst_ip(ip4(0xc6336401));
  e->mutable_key()->set_src_port(1000 + i % 50000);
  e->mutable_key()->set_dst_port(80);
  e->mutable_key()->set_proto(proto);
  e->mutable_mapped()->set_src_ip(ip4(0x64400000 + i));
  e->mutable_mapped()->set_dst_ip(ip4(0xc6336401));
  e->mutable_mapped()->set_src_port(1024 + (i * 7) % 60000);
  e->mutable_mapped()->set_dst_port(80);
  e->mutable_mapped()->set_proto(proto);
}

class StateSliceTest : public test::VethEngineTest {
 protected:
  void SetUp() override {
    test::VethEngineTest::SetUp();
    if (IsSkipped()) return;
    // The idle worker (core B) sleeps instead of spinning: on a 2-CPU machine two spinning workers leave the
    // control thread, which builds the split's new 300k-entry table, only CPU time taken from the measured
    // core, and the gaps that makes (tens of ms) are not the copy's.
    engine_->set_idle_sleep_us(100);
    grpc::Status s = DeployChain(Group("g0", kClick, kTag, kCoreA, {0, 1}));
    ASSERT_TRUE(s.ok()) << s.error_message();
    pb::ImportStateRequest imp;
    pb::StateSnapshot* snap = imp.mutable_snapshot();
    snap->set_pipeline_id("chain");
    snap->set_group_id("g0");
    pb::StateTable* t = snap->add_tables();
    t->set_element("rw");
    t->set_kind("SynthRewriter");
    for (uint32_t i = 0; i < kLongLived + kExpiring; ++i) Flow(i, i < kLongLived ? 6 : 17, t->add_entries());
    pb::ImportStateReply r;
    s = backend_->ImportState(imp, &r);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(r.entries(), kLongLived + kExpiring);
    sender_thread_ = std::thread([this] {
      const auto t0 = Clock::now();
      while (!stop_) {
        test::FrameSpec f = test::MacTagged(kTag, 0, sent_);
        f.sport = static_cast<uint16_t>(2000 + sent_ % kStreamFlows);
        sender_->Send(f);
        ++sent_;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      rate_ = sent_ / std::chrono::duration<double>(Clock::now() - t0).count();
    });
    // Steady state: the stream's flows are mapped and it flows out.
    const auto frames = capture_->WaitFor(2 * kStreamFlows);
    ASSERT_GE(frames.size(), 2 * kStreamFlows) << "the stream does not cross the pipeline";
  }
  void TearDown() override {
    stop_ = true;
    if (sender_thread_.joinable()) sender_thread_.join();
    test::VethEngineTest::TearDown();
  }

  // Stops the stream and answers the longest stretch without an egress frame between `from` and `to`, in frames
  // of the stream.
  double LongestGapFrames(Clock::time_point from, Clock::time_point to) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop_ = true;
    sender_thread_.join();
    const auto arrivals = capture_->Arrivals();
    double longest = 0;
    for (size_t i = 1; i < arrivals.size(); ++i)
      if (arrivals[i] >= from && arrivals[i - 1] <= to)
        longest = std::max(longest, std::chrono::duration<double>(arrivals[i] - arrivals[i - 1]).count());
    return longest * rate_;
  }
  // The same measure over a window of the same length right before `from`, when nothing was copied: the
  // machine's own noise, recorded next to the figure.
  double QuietGapFrames(Clock::time_point from, Clock::time_point to) {
    const auto arrivals = capture_->Arrivals();
    double longest = 0;
    for (size_t i = 1; i < arrivals.size(); ++i)
      if (arrivals[i] >= from - (to - from) && arrivals[i - 1] <= from)
        longest = std::max(longest, std::chrono::duration<double>(arrivals[i] - arrivals[i - 1]).count());
    return longest * rate_;
  }

  // Every long-lived flow once, with its own mapping; entries that are not ours are the stream's or expiring ones.
  static void ExpectEveryLongLivedFlow(const pb::StateTable& t) {
    std::vector<int> seen(kLongLived, 0);
    pb::FlowEntry want;
    for (const pb::FlowEntry& e : t.entries()) {
      if (e.key().proto() != 6) continue;
      const uint32_t i = ip4(e.key().src_ip()) - 0x0a400000;
      ASSERT_LT(i, kLongLived) << "a TCP flow nobody imported";
      ++seen[i];
      Flow(i, 6, &want);
      ASSERT_EQ(e.key().SerializeAsString(), want.key().SerializeAsString()) << "flow " << i << ": torn key";
      ASSERT_EQ(e.mapped().SerializeAsString(), want.mapped().SerializeAsString()) << "flow " << i << ": torn mapping";
    }
    for (uint32_t i = 0; i < kLongLived; ++i) ASSERT_EQ(seen[i], 1) << "flow " << i << " in the copy " << seen[i] << " times";
  }

  pb::StateTable Export(const std::string& group) {
    pb::ExportStateRequest req;
    req.set_pipeline_id("chain");
    req.set_group_id(group);
    pb::StateSnapshot snap;
    grpc::Status s = backend_->ExportState(req, &snap);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return snap.tables_size() == 1 ? snap.tables(0) : pb::StateTable();
  }

  std::thread sender_thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint32_t> sent_{0};
  double rate_ = 0;
};

TEST_F(StateSliceTest, ExportOf200kFlowsKeepsTheCoreForwardingAndHoldsEveryLiveFlow) {
  pb::StateSnapshot snap;
  const auto t0 = Clock::now();
  *snap.add_tables() = Export("g0");
  const auto t1 = Clock::now();
  const double gap = LongestGapFrames(t0, t1);
  RecordProperty("export_ms", std::to_string(std::chrono::duration<double, std::milli>(t1 - t0).count()));
  RecordProperty("longest_gap_frames", std::to_string(gap));
  RecordProperty("quiet_gap_frames", std::to_string(QuietGapFrames(t0, t1)));
  RecordProperty("stream_pps", std::to_string(rate_));
  EXPECT_LE(gap, kMaxGapFrames) << "no frame left the pipeline for " << gap << " frames of the stream ("
                                << rate_ << " pps) while the state was exported";
  ASSERT_EQ(snap.tables_size(), 1);
  ExpectEveryLongLivedFlow(snap.tables(0));
  size_t stream = 0;
  for (const pb::FlowEntry& e : snap.tables(0).entries())
    stream += e.key().proto() == 17 && ip4(e.key().src_ip()) == test::FrameSpec().src_ip;
  EXPECT_EQ(stream, kStreamFlows) << "the stream's flows, mapped before the export, are in it";
}

TEST_F(StateSliceTest, CheckpointOf200kFlowsKeepsTheCoreForwardingAndSavesEveryLiveFlow) {
  const std::string dir = "/tmp/metron-state-slice-" + std::to_string(getpid());
  {
    StateStore store(dir);
    backend_->set_state_store(&store);
    const auto t0 = Clock::now();
    ASSERT_EQ(backend_->persist_state(), 1u);
    const auto t1 = Clock::now();
    const double gap = LongestGapFrames(t0, t1);
    RecordProperty("checkpoint_ms", std::to_string(std::chrono::duration<double, std::milli>(t1 - t0).count()));
    RecordProperty("longest_gap_frames", std::to_string(gap));
    RecordProperty("quiet_gap_frames", std::to_string(QuietGapFrames(t0, t1)));
    EXPECT_LE(gap, kMaxGapFrames) << "no frame left the pipeline for " << gap << " frames of the stream ("
                                  << rate_ << " pps) during the checkpoint";
    std::string why;
    auto saved = store.load("chain", "g0", kClick, &why);
    ASSERT_TRUE(saved.has_value()) << why;
    ASSERT_EQ(saved->tables_size(), 1);
    ExpectEveryLongLivedFlow(saved->tables(0));
    backend_->set_state_store(nullptr);
  }
  std::filesystem::remove_all(dir);
}

// A split of the 200k-flow group while the stream crosses it: the kept half (same core, same config) adopts the
// table at one batch boundary, the new half on the other core is filled from a sliced copy, so the stream never
// waits for a table copy; no stream frame is lost or translated differently, and both halves hold every flow.
TEST_F(StateSliceTest, SplitOf200kFlowsKeepsTheCoreForwardingAndEveryMapping) {
  pb::UpdatePipelineRequest u;
  u.set_pipeline_id("chain");
  *u.add_groups() = Group("g0", kClick, kTag, kCoreA, {0});
  *u.add_groups() = Group("g0.1", kClick, kTag + 1, kCoreB, {1});
  u.mutable_groups(0)->add_state_from("g0");
  u.mutable_groups(1)->add_state_from("g0");
  pb::PipelineStatus st;
  const auto t0 = Clock::now();
  grpc::Status s = backend_->UpdatePipeline(u, &st);
  const auto t1 = Clock::now();
  ASSERT_TRUE(s.ok()) << s.error_message();
  const double gap = LongestGapFrames(t0, t1);
  RecordProperty("update_ms", std::to_string(std::chrono::duration<double, std::milli>(t1 - t0).count()));
  RecordProperty("longest_gap_frames", std::to_string(gap));
  RecordProperty("quiet_gap_frames", std::to_string(QuietGapFrames(t0, t1)));
  EXPECT_LE(gap, kMaxGapFrames) << "no frame left the pipeline for " << gap << " frames of the stream ("
                                << rate_ << " pps) during the split";
  const uint32_t sent = sent_;
  const auto frames = capture_->WaitFor(sent);
  std::map<uint32_t, std::pair<uint32_t, uint16_t>> translation;  // stream flow -> its translation
  uint32_t lost = 0;
  for (uint32_t q = 0; q < sent; ++q) {
    auto it = frames.find(q);
    if (it == frames.end()) {
      ++lost;
      continue;
    }
    const auto seen = std::make_pair(it->second[0].src_ip, it->second[0].sport);
    const auto first = translation.emplace(q % kStreamFlows, seen).first->second;
    EXPECT_EQ(first, seen) << "stream flow " << q % kStreamFlows << " changed its translation (frame " << q << ")";
  }
  EXPECT_EQ(lost, 0u) << "of " << sent << " frames";
  ExpectEveryLongLivedFlow(Export("g0"));
  ExpectEveryLongLivedFlow(Export("g0.1"));
}

}  // namespace
}  // namespace metron

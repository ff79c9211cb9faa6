// The engine and its control backend against real ethdev ports (rings) and a real worker lcore.
#include "core/engine.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "core/engine_backend.h"
#include "one_group.h"
#include "ring_port.h"

namespace metron {
namespace {

using test::Flow;
using test::RingPort;

constexpr unsigned kWorker = 1;  // test EAL runs lcores 0-1

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    ++n;
    in_ = new RingPort("in" + std::to_string(n));
    out_ = new RingPort("out" + std::to_string(n));
    engine_ = std::make_unique<Engine>(std::vector<unsigned>{kWorker}, test::pool());
    in_port_ = engine_->add_port(std::move(in_->port));
    out_port_ = engine_->add_port(std::move(out_->port));
    backend_ = std::make_unique<EngineBackend>(engine_.get(), "test");
    engine_->start();
  }
  void TearDown() override {
    engine_->stop();
    backend_.reset();
    engine_.reset();
    delete in_;
    delete out_;
  }
  pb::DeployPipelineRequest pipeline(const std::string& id, const std::string& click, uint32_t tag,
                                     pb::TagType type = pb::TAG_MAC) {
    pb::DeployPipelineRequest r = test::OneGroupPipeline(*in_port_, *out_port_, click, kWorker, tag, type);
    r.set_pipeline_id(id);
    r.mutable_groups(0)->add_class_ids(3);
    r.mutable_groups(0)->add_class_ids(4);
    return r;
  }
  // Waits until `n` frames left through the egress ring (or 5 s).
  std::vector<std::vector<uint8_t>> collect(size_t n, int timeout_ms = 5000) {
    std::vector<std::vector<uint8_t>> all;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (all.size() < n && std::chrono::steady_clock::now() < deadline) {
      auto got = out_->drain();
      all.insert(all.end(), got.begin(), got.end());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto late = out_->drain();
    all.insert(all.end(), late.begin(), late.end());
    return all;
  }
  static Flow tagged(uint16_t group, uint16_t cls) {
    Flow f;
    char mac[32];
    std::snprintf(mac, sizeof mac, "02:4d:%02x:%02x:%02x:%02x", group >> 8, group & 0xff, cls >> 8, cls & 0xff);
    f.dst_mac = mac;
    return f;
  }

  // What the group's class counters should read, per class id, added up frame by frame.
  struct ClassExpect {
    std::map<uint32_t, uint64_t> packets, bytes, l4;
    std::map<uint32_t, std::array<uint64_t, 16>> ones;
    void count(uint32_t cls, size_t frame_bytes, bool has_sport, uint16_t sport) {
      packets[cls] += 1;
      bytes[cls] += frame_bytes;
      if (!has_sport) return;
      l4[cls] += 1;
      for (int k = 0; k < 16; ++k) ones[cls][k] += (sport >> k) & 1;
    }
  };
  // Waits for the `frames` injected to leave (all_leave) or to be counted, then checks the one group's counters
  // against `want` (`classes` classes, each listed with source-port bits only if it had a frame with a source port).
  void expect_class_counters(ClassExpect& want, int frames, int classes, bool all_leave = true) {
    pb::Stats stats;
    if (all_leave) {
      ASSERT_EQ(collect(frames).size(), static_cast<size_t>(frames));
      ASSERT_TRUE(backend_->GetStats(pb::StatsRequest(), &stats).ok());
    } else {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      do {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ASSERT_TRUE(backend_->GetStats(pb::StatsRequest(), &stats).ok());
      } while ((stats.groups_size() != 1 || stats.groups(0).packets() < static_cast<uint64_t>(frames)) &&
               std::chrono::steady_clock::now() < deadline);
    }
    ASSERT_EQ(stats.groups_size(), 1);
    EXPECT_EQ(stats.groups(0).packets(), static_cast<uint64_t>(frames));
    ASSERT_EQ(stats.groups(0).classes_size(), classes);
    for (const auto& c : stats.groups(0).classes()) {
      SCOPED_TRACE("class " + std::to_string(c.class_id()));
      EXPECT_EQ(c.packets(), want.packets[c.class_id()]);
      EXPECT_EQ(c.bytes(), want.bytes[c.class_id()]);
      EXPECT_EQ(c.l4_packets(), want.l4[c.class_id()]);
      ASSERT_EQ(c.sport_ones_size(), want.l4[c.class_id()] ? 16 : 0);
      for (int k = 0; k < c.sport_ones_size(); ++k)
        EXPECT_EQ(c.sport_ones(k), want.ones[c.class_id()][k]) << "bit " << k;
    }
  }

  RingPort* in_ = nullptr;
  RingPort* out_ = nullptr;
  Port* in_port_ = nullptr;
  Port* out_port_ = nullptr;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<EngineBackend> backend_;
};

TEST_F(EngineTest, DeployedGroupForwardsItsTagAndCountsClasses) {
  pb::PipelineStatus st;
  ASSERT_TRUE(backend_->DeployPipeline(pipeline("p", "input -> Counter -> [0]output;", 7), &st).ok());
  EXPECT_EQ(st.generation(), 1u);
  for (int i = 0; i < 10; ++i) in_->inject(test::frame(tagged(7, 3)));
  for (int i = 0; i < 5; ++i) in_->inject(test::frame(tagged(7, 4)));
  for (int i = 0; i < 4; ++i) in_->inject(test::frame(tagged(9, 3)));  // another group's tag: not ours
  auto out = collect(15);
  ASSERT_EQ(out.size(), 15u);
  for (const auto& f : out) EXPECT_EQ(f[0], 0xaa) << "egress dst MAC written";
  pb::Stats stats;
  ASSERT_TRUE(backend_->GetStats(pb::StatsRequest(), &stats).ok());
  ASSERT_EQ(stats.groups_size(), 1);
  EXPECT_EQ(stats.groups(0).packets(), 15u);
  EXPECT_EQ(stats.groups(0).classes(0).class_id(), 3u);
  EXPECT_EQ(stats.groups(0).classes(0).packets(), 10u);
  EXPECT_EQ(stats.groups(0).classes(1).packets(), 5u);
  EXPECT_EQ(stats.groups(0).classes(1).bytes(), 5 * test::frame(tagged(7, 4)).size());
  ASSERT_EQ(stats.cores_size(), 1);
  EXPECT_EQ(stats.cores(0).rx_packets(), 19u);
  EXPECT_EQ(stats.cores(0).tx_packets(), 15u);
  EXPECT_EQ(stats.cores(0).drops(), 4u);
  EXPECT_GT(stats.cores(0).busy_cycles(), 0u);
  EXPECT_GT(stats.cores(0).total_cycles(), stats.cores(0).busy_cycles());
}

// A full burst of one group's tag runs as it came (Engine::loop's one-tag burst); a burst with a frame of another
// tag, a VLAN-tagged one or one of no group's tag is dispatched frame by frame. Either way every frame of the
// group leaves, in order, counted in its class, and every other frame is a drop.
TEST_F(EngineTest, BurstsOfOneTagAndMixedBurstsDeliverTheSame) {
  pb::PipelineStatus st;
  ASSERT_TRUE(backend_->DeployPipeline(pipeline("p", "input -> Counter -> [0]output;", 7), &st).ok());
  std::vector<std::vector<uint8_t>> frames;
  std::vector<uint16_t> want;  // the source ports of the group's frames, in order
  ClassExpect classes;
  uint16_t sport = 1000;
  auto add = [&](uint16_t tag, uint16_t cls, uint16_t vlan = 0) {
    Flow f = tagged(tag, cls);
    f.sport = sport++;
    f.vlan = vlan;
    frames.push_back(test::frame(f));
    if (tag == 7 && vlan == 0) want.push_back(f.sport), classes.count(cls, frames.back().size(), true, f.sport);
  };
  for (int i = 0; i < 64; ++i) add(7, i % 3 == 0 ? 4 : 3);  // two whole bursts, both classes
  for (int i = 0; i < 31; ++i) add(7, 3);
  add(9, 3);                                                // the burst's last frame: another tag
  for (int i = 0; i < 32; ++i) add(9, 4);                   // a whole burst of no group's tag
  for (int i = 0; i < 32; ++i) add(7, 4, i == 16 ? 7 : 0);  // one frame VLAN-tagged
  for (int i = 0; i < 32; ++i) add(7, 3);
  in_->inject_all(frames);
  const auto out = collect(want.size());
  ASSERT_EQ(out.size(), want.size());
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i][0], 0xaa) << "egress dst MAC written, frame " << i;
    EXPECT_EQ(out[i][34] << 8 | out[i][35], want[i]) << "frame " << i << " out of order";
  }
  pb::Stats stats;
  ASSERT_TRUE(backend_->GetStats(pb::StatsRequest(), &stats).ok());
  EXPECT_EQ(stats.cores(0).rx_packets(), frames.size());
  EXPECT_EQ(stats.cores(0).drops(), frames.size() - want.size());
  expect_class_counters(classes, static_cast<int>(want.size()), 2, false);
}

// The class counters the controller's load monitor splits classes by (docs/scaling.md): per class packets, bytes,
// TCP/UDP packets and how many had each source-port bit set, exact when read, with classes interleaved in a
// burst, frames of no class of the group, and frames without a source port (ICMP, later fragments do not count).
// A group whose graph starts with a rewriter: it counts the group's telemetry in its own pass over the headers
// (Element::take_group_count); the counters must read exactly as the group's own walk.
constexpr const char* kRewriterGroup =
    "input -> Strip(14) -> CheckIPHeader -> SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -, CAPACITY 4096) -> "
    "Unstrip(14) -> [0]output;";

class ClassCountTest : public EngineTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(ClassCountTest, ClassCountersCountEverySourcePortBitExactly) {
  pb::PipelineStatus st;
  const bool all_leave = std::string(GetParam()) == "input -> [0]output;";
  pb::DeployPipelineRequest r = pipeline("p", GetParam(), 7);
  for (uint32_t c = 10; c < 20; ++c) r.mutable_groups(0)->add_class_ids(c);  // more classes than kept per batch
  ASSERT_TRUE(backend_->DeployPipeline(r, &st).ok());
  ClassExpect want;
  const int kFrames = 600;
  for (int i = 0; i < kFrames; ++i) {
    const uint16_t cls = i % 7 == 0 ? 5 : i % 5 == 0 ? 4 : i % 3 == 0 ? 3 : static_cast<uint16_t>(10 + i % 10);
    Flow f = tagged(7, cls);
    f.sport = static_cast<uint16_t>(i * 2654435761u >> 16);
    f.proto = i % 11 == 0 ? 1 : i % 2 ? 6 : 17;
    const auto bytes_of = test::frame(f);
    in_->inject(bytes_of);
    if (cls == 5) continue;  // not a class of the group: forwarded, counted as the group's packet only
    want.count(cls, bytes_of.size(), f.proto != 1, f.sport);
  }
  expect_class_counters(want, kFrames, 12, all_leave);
}

// The same counters on the frames the counting has to tell apart by their headers, each as the group sees it
// (its VLAN tag taken out by the dispatcher): later fragments (no source port) and first ones (one), IPv4 with
// options (the port after them), IPv6, frames cut short of the port or of the IPv4 header. Expected values from
// the rule itself (an IPv4 TCP/UDP frame with its L4 header's first two bytes and fragment offset 0).
TEST_P(ClassCountTest, ClassCountersReadEachFramesOwnHeader) {
  pb::PipelineStatus st;
  const bool all_leave = std::string(GetParam()) == "input -> [0]output;";
  ASSERT_TRUE(backend_->DeployPipeline(pipeline("p", GetParam(), 100, pb::TAG_VLAN), &st).ok());
  ClassExpect want;
  const int kFrames = 700;
  for (int i = 0; i < kFrames; ++i) {
    const uint16_t cls = i % 9 == 0 ? 6 : i % 2 ? 3 : 4;  // 6: no class of the group
    Flow f = tagged(0, cls);
    f.vlan = 100;
    f.sport = static_cast<uint16_t>(i * 2654435761u >> 13);
    f.proto = i % 13 == 0 ? 1 : i % 3 ? 6 : 17;
    f.ipv6 = i % 17 == 0;
    if (f.ipv6) f.src = "2001:db8::1", f.dst = "2001:db8::2";
    std::vector<uint8_t> fr = test::frame(f);
    const size_t l3 = 18;  // in the frame as injected
    const int kind = f.ipv6 ? -1 : i % 8;
    if (kind == 1) fr[l3 + 6] = 0x00, fr[l3 + 7] = 0xb9;  // a later fragment (offset 185 x 8)
    if (kind == 2) fr[l3 + 6] = 0x20, fr[l3 + 7] = 0x00;  // a first fragment (more fragments, offset 0)
    if (kind == 3) fr[l3 + 6] = 0x40;                     // don't fragment: a whole datagram
    if (kind == 4) {  // 8 bytes of options (NOPs): the port is 8 bytes further on
      fr.insert(fr.begin() + l3 + 20, 8, 0x01);
      fr[l3] = 0x47;
      const uint16_t tot = static_cast<uint16_t>((fr[l3 + 2] << 8 | fr[l3 + 3]) + 8);
      fr[l3 + 2] = static_cast<uint8_t>(tot >> 8), fr[l3 + 3] = static_cast<uint8_t>(tot);
    }
    if (kind == 5) fr.resize(l3 + 20 + 1);  // one byte of the port
    if (kind == 6 && i % 16 == 6) fr.resize(l3 + 10);  // not even the IPv4 header
    in_->inject(fr);
    if (cls == 6) continue;
    const bool no_sport = f.ipv6 || f.proto == 1 || kind == 1 || kind == 5 || (kind == 6 && i % 16 == 6);
    want.count(cls, fr.size() - 4, !no_sport, f.sport);  // the group's frame: without the tag
  }
  EXPECT_GT(want.l4[3], 0u);
  EXPECT_GT(want.l4[4], 0u);
  expect_class_counters(want, kFrames, 2, all_leave);
}

INSTANTIATE_TEST_SUITE_P(WalkOrRewriter, ClassCountTest, ::testing::Values("input -> [0]output;", kRewriterGroup));

// Many groups on one core, their frames interleaved in every burst: each frame reaches its own group (found by
// its tag), each group counts and sends exactly its frames, frames of no group are dropped and counted.
TEST_F(EngineTest, ManyGroupsOnACoreEachGetTheirFrames) {
  pb::PipelineStatus st;
  pb::DeployPipelineRequest r = pipeline("p", "input -> Counter -> [0]output;", 100);
  for (uint32_t tag = 101; tag < 140; ++tag) {
    pb::GroupSpec* g = r.add_groups();
    *g = r.groups(0);
    g->set_group_id("g" + std::to_string(tag));
    g->mutable_tag()->set_value(tag);
    g->clear_class_ids();
  }
  ASSERT_TRUE(backend_->DeployPipeline(r, &st).ok());
  std::map<std::string, uint64_t> want;
  const int kFrames = 2000;
  int strays = 0;
  for (int i = 0; i < kFrames; ++i) {
    const uint16_t tag = static_cast<uint16_t>(100 + (i * 7) % 41);  // 140 is no group's
    in_->inject(test::frame(tagged(tag, 3)));
    if (tag == 140) ++strays;
    else want["g" + std::to_string(tag)] += 1;
  }
  ASSERT_EQ(collect(kFrames - strays).size(), static_cast<size_t>(kFrames - strays));
  pb::Stats stats;
  ASSERT_TRUE(backend_->GetStats(pb::StatsRequest(), &stats).ok());
  ASSERT_EQ(stats.groups_size(), 40);
  for (const auto& g : stats.groups()) {
    EXPECT_EQ(g.packets(), want[g.group_id()]) << g.group_id();
    EXPECT_EQ(g.drops(), 0u) << g.group_id();
  }
  EXPECT_EQ(stats.cores(0).rx_packets(), static_cast<uint64_t>(kFrames));
  EXPECT_EQ(stats.cores(0).tx_packets(), static_cast<uint64_t>(kFrames - strays));
  EXPECT_EQ(stats.cores(0).drops(), static_cast<uint64_t>(strays));
}

// Frames a port refuses (its tx ring full) are freed and counted as drops of the group that sent them, with the
// groups' frames queued together for one tx_burst per burst (TxBuffer): what each group sent or lost adds up.
TEST(EngineTxTest, RefusedFramesAreDropsOfTheGroupThatSentThem) {
  test::RingPort in("txin"), out("txout", 16);  // the egress ring holds 15 frames: nobody drains it
  Engine engine({kWorker}, test::pool());
  Port* in_port = engine.add_port(std::move(in.port));
  Port* out_port = engine.add_port(std::move(out.port));
  EngineBackend backend(&engine, "test");
  engine.start();
  pb::DeployPipelineRequest r = test::OneGroupPipeline(*in_port, *out_port, "input -> [0]output;", kWorker, 7);
  *r.add_groups() = r.groups(0);
  r.mutable_groups(1)->set_group_id("g8");
  r.mutable_groups(1)->mutable_tag()->set_value(8);
  pb::PipelineStatus st;
  ASSERT_TRUE(backend.DeployPipeline(r, &st).ok());
  const int kFrames = 100;
  Flow f7, f8;
  f7.dst_mac = "02:4d:00:07:00:01";
  f8.dst_mac = "02:4d:00:08:00:01";
  for (int i = 0; i < kFrames; ++i) in.inject(test::frame(i % 3 ? f7 : f8));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (bool all = false; !all && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    pb::Stats now;
    ASSERT_TRUE(backend.GetStats(pb::StatsRequest(), &now).ok());
    all = now.cores(0).rx_packets() == kFrames;
  }
  engine.stop();
  pb::Stats stats;
  ASSERT_TRUE(backend.GetStats(pb::StatsRequest(), &stats).ok());
  EXPECT_EQ(stats.cores(0).rx_packets(), static_cast<uint64_t>(kFrames));
  EXPECT_EQ(stats.cores(0).tx_packets(), 15u);
  EXPECT_EQ(out.drain().size(), 15u);
  ASSERT_EQ(stats.groups_size(), 2);
  uint64_t dropped = 0;
  for (const auto& g : stats.groups()) {
    EXPECT_EQ(g.packets(), g.group_id() == "g7" ? 66u : 34u) << g.group_id();
    EXPECT_LE(g.drops(), g.packets()) << g.group_id();
    dropped += g.drops();
  }
  EXPECT_EQ(dropped, static_cast<uint64_t>(kFrames - 15));
}

TEST_F(EngineTest, VlanTaggedFramesReachTheirGroupUntagged) {
  pb::PipelineStatus st;
  ASSERT_TRUE(backend_->DeployPipeline(pipeline("p", "input -> [0]output;", 100, pb::TAG_VLAN), &st).ok());
  Flow f = tagged(0, 3);
  f.vlan = 100;
  in_->inject(test::frame(f));
  f.vlan = 101;
  in_->inject(test::frame(f));
  auto out = collect(1);
  ASSERT_EQ(out.size(), 1u);
  Flow plain = tagged(0, 3);
  auto expect = test::frame(plain);
  expect[0] = 0xaa, expect[1] = 0xbb, expect[2] = 0xcc, expect[3] = 0xdd, expect[4] = 0xee, expect[5] = 0xff;
  EXPECT_EQ(out[0], expect);
}

TEST_F(EngineTest, InvalidConfigIsRejectedAndRunningPipelineUntouched) {
  pb::PipelineStatus st;
  ASSERT_TRUE(backend_->DeployPipeline(pipeline("p", "input -> Counter -> [0]output;", 7), &st).ok());
  pb::UpdatePipelineRequest up;
  up.set_pipeline_id("p");
  *up.add_groups() = pipeline("p", "input -> Strip(14 -> [0]output;", 7).groups(0);
  grpc::Status s = backend_->UpdatePipeline(up, &st);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "groups[0].click_config: 1:15: missing ')' for '(' opened here");
  s = backend_->DeployPipeline(pipeline("q", "input -> Bogus -> [0]output;", 8), &st);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "groups[0].click_config: 1:10: unknown element class 'Bogus'");
  s = backend_->DeployPipeline(pipeline("r", "input -> [0]output;", 7), &st);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << s.error_message();
  auto bad_core = pipeline("r", "input -> [0]output;", 9);
  bad_core.mutable_groups(0)->set_core(5);
  s = backend_->DeployPipeline(bad_core, &st);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "groups[0].core: 5 is not a worker core (workers: 1)");

  pb::ListPipelinesReply list;
  ASSERT_TRUE(backend_->ListPipelines(pb::ListPipelinesRequest(), &list).ok());
  ASSERT_EQ(list.pipelines_size(), 1);
  EXPECT_EQ(list.pipelines(0).generation(), 1u);
  for (int i = 0; i < 8; ++i) in_->inject(test::frame(tagged(7, 3)));
  EXPECT_EQ(collect(8).size(), 8u);
}

TEST_F(EngineTest, GraphSwapsUnderTrafficLoseNoPacket) {
  pb::PipelineStatus st;
  ASSERT_TRUE(backend_->DeployPipeline(pipeline("p", "input -> Counter -> [0]output;", 7), &st).ok());
  const int kFrames = 20000;
  // At most this many frames between the producer and the consumer: fewer than the egress ring holds (4095), so a
  // consumer kept off the CPU makes the producer wait instead of filling that ring (the port refuses frames then,
  // counted as the group's drops: a loss no swap caused, seen once at load ~20).
  const size_t kInFlight = 2048;
  std::atomic<size_t> received{0};
  std::atomic<bool> done{false}, gave_up{false};
  std::thread producer([&] {
    const auto f = test::frame(tagged(7, 3));
    for (int i = 0; i < kFrames; ++i) {
      while (static_cast<size_t>(i) >= received.load() + kInFlight && !gave_up) std::this_thread::yield();
      in_->inject(f);
      if (i % 64 == 0) std::this_thread::yield();
    }
    done = true;
  });
  // The egress ring is drained concurrently, until every frame came out or none came for 2 s once the producer is
  // done (60 s before: a producer waiting for frames that were lost), so that only the swaps could lose packets.
  std::thread consumer([&] {
    auto last = std::chrono::steady_clock::now();
    while (received < static_cast<size_t>(kFrames) &&
           std::chrono::steady_clock::now() - last < std::chrono::seconds(done ? 2 : 60)) {
      const size_t n = out_->drain().size();
      received += n;
      if (n) last = std::chrono::steady_clock::now();
    }
    gave_up = true;
  });
  const char* configs[] = {"input -> Strip(14) -> Unstrip(14) -> [0]output;", "input -> Counter -> [0]output;"};
  for (int k = 0; k < 20; ++k) {
    pb::UpdatePipelineRequest up;
    up.set_pipeline_id("p");
    *up.add_groups() = pipeline("p", configs[k % 2], 7).groups(0);
    ASSERT_TRUE(backend_->UpdatePipeline(up, &st).ok());
  }
  producer.join();
  consumer.join();
  pb::Stats stats;
  ASSERT_TRUE(backend_->GetStats(pb::StatsRequest(), &stats).ok());
  const PortCounters egress = out_port_->counters();
  EXPECT_EQ(received.load(), static_cast<size_t>(kFrames))
      << stats.DebugString() << "egress port: tx " << egress.tx_packets << " refused " << egress.tx_dropped;
  EXPECT_EQ(stats.cores(0).drops(), 0u);
  EXPECT_EQ(st.generation(), 21u);
}

TEST_F(EngineTest, RemovedPipelineStopsReceiving) {
  pb::PipelineStatus st;
  ASSERT_TRUE(backend_->DeployPipeline(pipeline("p", "input -> [0]output;", 7), &st).ok());
  pb::RemovePipelineReply rr;
  ASSERT_TRUE(backend_->RemovePipeline([] { pb::RemovePipelineRequest r; r.set_pipeline_id("p"); return r; }(), &rr).ok());
  in_->inject(test::frame(tagged(7, 3)));
  EXPECT_EQ(collect(1, 300).size(), 0u);
  pb::RemovePipelineRequest again;
  again.set_pipeline_id("p");
  EXPECT_EQ(backend_->RemovePipeline(again, &rr).error_code(), grpc::StatusCode::NOT_FOUND);
}

// Reads must not wait behind a deployment: while DeployPipeline compiles a 2000-rule filter (~0.1 s idle,
// longer on a loaded machine),
// GetStats (the load monitor's call) keeps answering and sees the running pipeline.
TEST_F(EngineTest, StatsDoNotWaitBehindADeployment) {
  pb::PipelineStatus st;
  ASSERT_TRUE(backend_->DeployPipeline(pipeline("running", "input -> [0]output;", 7), &st).ok());
  // Rules shaped like the benchmark firewall's (mixed fields make the classifier's build the slow part).
  std::string rules;
  uint32_t x = 4242;
  auto rnd = [&x](uint32_t n) {
    x = x * 1103515245u + 12345u;
    return (x >> 8) % n;
  };
  for (int i = 0; i < 2000; ++i) {
    std::string r = "src net 10." + std::to_string(rnd(64)) + "." + std::to_string(rnd(256)) + ".0/24";
    if (rnd(2)) r += " && dst net 192.168." + std::to_string(rnd(256)) + ".0/24";
    if (rnd(5) < 3) r = (rnd(2) ? "tcp && " : "udp && ") + r + " && dst port " + std::to_string(1024 + rnd(60000));
    rules += (rnd(3) ? "deny " : "allow ") + r + ", ";
  }
  const std::string click =
      "input -> Strip(14) -> CheckIPHeader -> IPFilter(" + rules + "allow all) -> Unstrip(14) -> [0]output;";
  std::atomic<bool> started{false}, done{false};
  grpc::Status deployed;
  std::thread deploy([&] {
    pb::PipelineStatus out;
    const pb::DeployPipelineRequest req = pipeline("big", click, 8);
    started = true;
    deployed = backend_->DeployPipeline(req, &out);
    done = true;
  });
  while (!started) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  // Reads answered while the deployment was still in progress (counted only if it had not finished when the
  // read returned).
  int during = 0, seen_running = 0;
  while (!done) {
    pb::Stats stats;
    const bool ok = backend_->GetStats(pb::StatsRequest(), &stats).ok();
    EXPECT_TRUE(ok);
    if (done || !ok) break;
    ++during;
    for (const auto& g : stats.groups()) seen_running += g.pipeline_id() == "running";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  deploy.join();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  ASSERT_TRUE(deployed.ok()) << deployed.error_message();
  EXPECT_GE(during, 10) << "GetStats waited behind the deployment (" << ms.count() << " ms)";
  EXPECT_EQ(seen_running, during) << "a read during the deployment missed the running pipeline";
  pb::Stats after;
  ASSERT_TRUE(backend_->GetStats(pb::StatsRequest(), &after).ok());
  EXPECT_EQ(after.groups_size(), 2) << "the new pipeline is visible once deployed";
}

}  // namespace
}  // namespace metron

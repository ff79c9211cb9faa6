// Port shares (docs/scaling.md#port-shares): the controller gives each group of a chain its own share of the NAPT
// port ranges (GroupSpec.port_share), unique across every server, instead of the agent dividing the range by
// core slot. Two groups standing for the halves of a scale-out — each on core slot 0 of its own server, here both
// on the same worker of one agent, which is what made their per-core ranges equal — must never hand out the same
// external port, and a reply's port must name the group holding its mapping.
// Real parts: EngineBackend over a running Engine, tags dispatched by the kernel (FanoutPort on a veth in a
// private netns), SynthRewriter translating UDP flows, frames read as they leave the pipeline.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "veth_engine_fixture.h"

namespace metron {
namespace {

constexpr uint16_t kTagA = 7;
constexpr uint16_t kTagB = 8;
constexpr uint32_t kFlows = 16;     // per group
constexpr uint16_t kLo = 20000;     // the pattern's range: 20000-20255 ...
constexpr uint32_t kShares = 16;    // ... in 16 shares of 16 ports
constexpr uint32_t kPerShare = 16;
constexpr uint32_t kPublic = 0xc0000201;  // 192.0.2.1

class PortShareTest : public test::VethEngineTest {
 protected:
  static pb::GroupSpec Napt(const std::string& id, uint32_t tag, int share) {
    return NaptGroup(id, tag, kCoreA, share, kShares);
  }
  // kFlows new flows into each group (distinct clients, one server), the external port each got by group.
  std::map<uint16_t, std::map<uint16_t, uint16_t>> MapFlows() {
    std::map<uint32_t, std::pair<uint16_t, uint16_t>> sent;  // seq -> (tag, client port)
    for (uint16_t tag : {kTagA, kTagB})
      for (uint32_t f = 0; f < kFlows; ++f) {
        test::FrameSpec fs = test::MacTagged(tag, 0, seq_++);
        fs.sport = static_cast<uint16_t>((tag == kTagA ? 1000 : 3000) + f);
        sent[fs.seq] = {tag, fs.sport};
        sender_->Send(fs);
      }
    const auto frames = capture_->WaitFor(seq_);
    std::map<uint16_t, std::map<uint16_t, uint16_t>> ports;  // tag -> client port -> external port
    for (const auto& [seq, who] : sent) {
      auto it = frames.find(seq);
      EXPECT_TRUE(it != frames.end()) << "flow of client port " << who.second << " (tag " << who.first << ") lost";
      if (it == frames.end()) continue;
      EXPECT_EQ(it->second[0].src_ip, kPublic);
      ports[who.first][who.second] = it->second[0].sport;
    }
    return ports;
  }
  static std::set<uint16_t> External(const std::map<uint16_t, uint16_t>& flows) {
    std::set<uint16_t> out;
    for (const auto& [client, port] : flows) out.insert(port);
    return out;
  }
  // A reply from the server to external port `port`, tagged for group `tag`; its sequence number.
  uint32_t Reply(uint16_t tag, uint16_t port) {
    test::FrameSpec fs = test::MacTagged(tag, 0, seq_++);
    fs.src_ip = 0x0a000002, fs.sport = 2000;  // the flows' destination answers
    fs.dst_ip = kPublic, fs.dport = port;
    sender_->Send(fs);
    return fs.seq;
  }

  uint32_t seq_ = 0;
};

TEST_F(PortShareTest, GroupsWithTheirOwnSharesNeverHandOutTheSamePortAndARepliesPortNamesItsGroup) {
  google::protobuf::RepeatedPtrField<pb::GroupSpec> gs;
  *gs.Add() = Napt("g0", kTagA, 0);
  *gs.Add() = Napt("g0.1", kTagB, 1);
  grpc::Status s = DeployChain(gs);
  ASSERT_TRUE(s.ok()) << s.error_message();
  pb::ListPipelinesReply list;
  ASSERT_TRUE(backend_->ListPipelines(pb::ListPipelinesRequest(), &list).ok());
  ASSERT_EQ(list.pipelines(0).groups_size(), 2);
  EXPECT_EQ(list.pipelines(0).groups(1).port_share().index(), 1u) << "the share is reported back";
  EXPECT_EQ(list.pipelines(0).groups(1).port_share().count(), kShares);

  auto ports = MapFlows();
  ASSERT_EQ(ports[kTagA].size(), kFlows);
  ASSERT_EQ(ports[kTagB].size(), kFlows);
  const std::set<uint16_t> a = External(ports[kTagA]), b = External(ports[kTagB]);
  EXPECT_EQ(a.size(), kFlows);
  EXPECT_EQ(b.size(), kFlows);
  for (uint16_t p : a) {
    EXPECT_EQ((p - kLo) / kPerShare, 0u) << "g0 mapped to port " << p << ", outside its share 0";
    EXPECT_EQ(b.count(p), 0u) << "both groups handed out port " << p;
  }
  for (uint16_t p : b) EXPECT_EQ((p - kLo) / kPerShare, 1u) << "g0.1 mapped to port " << p << ", outside share 1";

  // A reply to each external port, sent to the group its share names, comes back to its client; the same reply
  // sent to the other group finds no mapping there (dropped and counted, not translated to another flow).
  std::map<uint32_t, std::pair<uint16_t, uint16_t>> owner_replies;  // seq -> (client port, external port)
  std::vector<uint32_t> stray_replies;
  for (uint16_t tag : {kTagA, kTagB})
    for (const auto& [client, port] : ports[tag]) {
      const uint16_t owner = (port - kLo) / kPerShare == 0 ? kTagA : kTagB;
      owner_replies[Reply(owner, port)] = {client, port};
      stray_replies.push_back(Reply(owner == kTagA ? kTagB : kTagA, port));
    }
  const auto frames = capture_->WaitFor(seq_);
  for (const auto& [seq, flow] : owner_replies) {
    auto it = frames.find(seq);
    ASSERT_TRUE(it != frames.end()) << "reply to port " << flow.second << " did not come back";
    EXPECT_EQ(it->second[0].dst_ip, 0x0a000001u) << "reply to port " << flow.second;
    EXPECT_EQ(it->second[0].dport, flow.first) << "reply to port " << flow.second << " reached another flow";
  }
  for (uint32_t seq : stray_replies) EXPECT_EQ(frames.count(seq), 0u) << "a group translated a port it never gave";
}

// What the shares replace: without them both groups divide the range by their core's slot, and the same slot on
// two servers (here: the same core) hands out the same ports. This is the collision the test above rules out.
TEST_F(PortShareTest, WithoutSharesGroupsOnTheSameCoreSlotHandOutTheSamePorts) {
  google::protobuf::RepeatedPtrField<pb::GroupSpec> gs;
  *gs.Add() = Napt("g0", kTagA, -1);
  *gs.Add() = Napt("g0.1", kTagB, -1);
  grpc::Status s = DeployChain(gs);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto ports = MapFlows();
  EXPECT_EQ(External(ports[kTagA]), External(ports[kTagB]));
}

// Click accepts any range, so a range with fewer ports than shares runs: each of the lowest shares gets one port
// of it, a share past the range none, and the flows a group cannot map are counted, not refused at deploy.
TEST_F(PortShareTest, ARangeWithFewerPortsThanItsSharesGivesOnePortPerShareAndCountsWhatItCannotMap) {
  google::protobuf::RepeatedPtrField<pb::GroupSpec> gs;
  *gs.Add() = Napt("g0", kTagA, 3);
  *gs.Add() = Napt("g0.1", kTagB, 300);
  for (pb::GroupSpec& g : gs) g.mutable_port_share()->set_count(1000);  // 256 ports cannot make 1000 shares
  grpc::Status s = DeployChain(gs);
  ASSERT_TRUE(s.ok()) << s.error_message();
  // Every flow goes to one server (10.0.0.2:2000), so share 3's one port maps one of them, share 300 none.
  std::map<uint32_t, uint16_t> sent;  // seq -> tag
  for (uint16_t tag : {kTagA, kTagB})
    for (uint32_t f = 0; f < 4; ++f) {
      test::FrameSpec fs = test::MacTagged(tag, 0, seq_++);
      fs.sport = static_cast<uint16_t>((tag == kTagA ? 1000 : 3000) + f);
      sent[fs.seq] = tag;
      sender_->Send(fs);
    }
  std::map<std::string, uint64_t> failures;  // group -> mapping failures, once all eight packets were handled
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    failures.clear();
    pb::Stats stats;
    ASSERT_TRUE(backend_->GetStats(pb::StatsRequest(), &stats).ok());
    for (const pb::GroupStats& g : stats.groups())
      for (const pb::FlowStateStats& f : g.flow_state()) failures[g.group_id()] += f.mapping_failures();
  } while (failures["g0"] + failures["g0.1"] < 7 && std::chrono::steady_clock::now() < deadline &&
           (std::this_thread::sleep_for(std::chrono::milliseconds(20)), true));
  std::map<uint16_t, std::set<uint16_t>> ports;
  for (const auto& [seq, fr] : capture_->WaitFor(1)) ports[sent.at(seq)].insert(fr[0].sport);
  EXPECT_EQ(ports[kTagA], std::set<uint16_t>{kLo + 3}) << "share 3 of 1000 is the range's fourth port";
  EXPECT_TRUE(ports[kTagB].empty()) << "share 300 holds no port of a 256-port range";
  EXPECT_EQ(failures["g0"], 3u) << "three flows to one destination found share 3's one port taken";
  EXPECT_EQ(failures["g0.1"], 4u) << "share 300 mapped none of its four flows";
}

}  // namespace
}  // namespace metron

// Dispatch on a real veth pair: frames carrying group tag X are only ever received by the worker polling the
// queue of X's core, for MAC and VLAN tags, across a re-map at runtime, with NIC rules layered on top.
#include "dispatch/fanout_port.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <map>
#include <thread>
#include <memory>

#include "dispatch/steering_table.h"
#include "dispatch/veth_fixture.h"
#include "test_env.h"

namespace metron {
namespace {

using test::FrameSpec;
using test::MacTagged;
using test::Seen;

constexpr uint16_t kQueues = 4;

uint16_t GroupOf(const Seen& s) { return static_cast<uint16_t>(s.dst[2] << 8 | s.dst[3]); }

class FanoutPortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: creates a netns, a veth pair and AF_PACKET sockets";
    ns_ = std::make_unique<test::VethNetns>();
    port_ = FanoutPort::open({"rx0", kQueues, 1024, 0}, test::pool());
    ASSERT_TRUE(table_.add_nic(port_.get()).ok());
    sender_ = std::make_unique<test::RawSender>("tx0");
    workers_ = std::make_unique<test::QueueWorkers>(*port_);
  }
  void TearDown() override {
    workers_.reset();
    sender_.reset();
    port_.reset();
    ns_.reset();
  }

  // Sends `rounds` frames of each MAC group tag (class = round, so the class bits vary), waits for them and
  // checks each arrived exactly once, on the queue `expected` names (unlisted tags: default queue 0).
  void SendAndCheckMac(const std::vector<uint16_t>& groups, int rounds, const std::map<uint16_t, uint16_t>& expected) {
    uint32_t seq = 0;
    for (int r = 0; r < rounds; ++r) {
      for (uint16_t g : groups) sender_->Send(MacTagged(g, static_cast<uint16_t>(r), seq++));
    }
    ASSERT_TRUE(workers_->WaitFor(seq)) << "received " << workers_->Total() << " of " << seq;
    const auto seen = workers_->Take();
    std::map<uint16_t, int> per_group;
    for (uint16_t q = 0; q < kQueues; ++q) {
      for (const Seen& s : seen[q]) {
        const uint16_t g = GroupOf(s);
        auto it = expected.find(g);
        EXPECT_EQ(q, it == expected.end() ? 0 : it->second) << "group tag " << g << " seen on queue " << q;
        ++per_group[g];
      }
    }
    for (uint16_t g : groups) EXPECT_EQ(per_group[g], rounds) << "group tag " << g;
  }

  std::unique_ptr<test::VethNetns> ns_;
  std::unique_ptr<FanoutPort> port_;
  SteeringTable table_;
  std::unique_ptr<test::RawSender> sender_;
  std::unique_ptr<test::QueueWorkers> workers_;
};

TEST_F(FanoutPortTest, MacTagsReachOnlyTheirCoreAcrossRemap) {
  const std::map<uint16_t, uint16_t> first = {{1, 0}, {2, 1}, {3, 2}, {0x0a0b, 3}, {5, 1}};
  ASSERT_TRUE(table_.set_tags("rx0", pb::TAG_MAC, {first.begin(), first.end()}).ok());
  SendAndCheckMac({1, 2, 3, 0x0a0b, 5, 77}, 50, first);

  // Re-map at runtime: every group moves to another core.
  const std::map<uint16_t, uint16_t> second = {{1, 3}, {2, 2}, {3, 1}, {0x0a0b, 0}, {5, 3}};
  ASSERT_TRUE(table_.set_tags("rx0", pb::TAG_MAC, {second.begin(), second.end()}).ok());
  SendAndCheckMac({1, 2, 3, 0x0a0b, 5, 77}, 50, second);
}

TEST_F(FanoutPortTest, VlanTagsReachOnlyTheirCoreWithTagReportedStripped) {
  ASSERT_TRUE(table_.set_tags("rx0", pb::TAG_VLAN, {{10, 1}, {20, 2}, {4094, 3}}).ok());
  const std::map<uint16_t, uint16_t> expected = {{10, 1}, {20, 2}, {4094, 3}, {30, 0}};
  uint32_t seq = 0;
  for (int r = 0; r < 40; ++r) {
    for (const auto& [vlan, q] : expected) {
      FrameSpec f = MacTagged(0, static_cast<uint16_t>(r), seq++);
      f.vlan = vlan;
      sender_->Send(f);
    }
  }
  ASSERT_TRUE(workers_->WaitFor(seq)) << "received " << workers_->Total() << " of " << seq;
  const auto seen = workers_->Take();
  std::map<uint16_t, int> per_vlan;
  for (uint16_t q = 0; q < kQueues; ++q) {
    for (const Seen& s : seen[q]) {
      ASSERT_TRUE(s.vlan_stripped) << "VLAN tag not reported on the mbuf";
      EXPECT_EQ(q, expected.at(s.vlan)) << "VLAN " << s.vlan << " seen on queue " << q;
      ++per_vlan[s.vlan];
    }
  }
  for (const auto& [vlan, q] : expected) EXPECT_EQ(per_vlan[vlan], 40) << "VLAN " << vlan;
}

// A queue no worker polls (no group of this NIC on that core) must not hold up dispatch changes: its backlog
// has no reader to wait for.
TEST_F(FanoutPortTest, ChangesDoNotWaitForQueuesNobodyReads) {
  workers_.reset();
  port_.reset();
  FanoutPortOptions o{"rx0", kQueues, 1024, 0};
  o.drain_timeout_ms = 5000;
  port_ = FanoutPort::open(o, test::pool());
  SteeringTable table;
  ASSERT_TRUE(table.add_nic(port_.get()).ok());
  for (int i = 0; i < 50; ++i) sender_->Send(MacTagged(77, 0, i));  // unknown tag: default queue, unread
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(table.set_tags("rx0", pb::TAG_MAC, {{1, 1}}).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2500))
      << "set_tags waited out the drain timeout for a queue without a reader";
  rte_mbuf* pkts[64];
  EXPECT_EQ(port_->rx_burst(0, pkts, 64), 50) << "the unread backlog must still be there, not discarded";
  rte_pktmbuf_free_bulk(pkts, 50);
}

// Hundreds of tags compile to a binary search; every one of them (and every miss) must still land right.
TEST_F(FanoutPortTest, HundredsOfMacAndVlanTagsEachReachTheirCore) {
  std::map<uint16_t, uint16_t> mac, vlan;
  for (uint32_t i = 0; i < 600; ++i) mac[static_cast<uint16_t>(i * 109 % 65521 + 1)] = i % kQueues;
  for (uint16_t v = 1; v <= 4094; v += 13) vlan[v] = (v / 13) % kQueues;
  ASSERT_TRUE(table_.set_tags("rx0", pb::TAG_MAC, {mac.begin(), mac.end()}).ok());
  ASSERT_TRUE(table_.set_tags("rx0", pb::TAG_VLAN, {vlan.begin(), vlan.end()}).ok());

  uint32_t seq = 0;
  std::map<uint32_t, int> expected_queue;  // seq -> queue
  for (const auto& [g, q] : mac) {
    expected_queue[seq] = q;
    sender_->Send(MacTagged(g, 1, seq++));
  }
  for (uint16_t miss : {uint16_t{65535}, uint16_t{2}, uint16_t{40000}}) {
    if (mac.count(miss)) continue;
    expected_queue[seq] = 0;
    sender_->Send(MacTagged(miss, 1, seq++));
  }
  for (const auto& [v, q] : vlan) {
    FrameSpec f = MacTagged(0, 1, seq);
    f.vlan = v;
    expected_queue[seq++] = q;
    sender_->Send(f);
  }
  FrameSpec untracked = MacTagged(0, 1, seq);
  untracked.vlan = 2;  // not in the table
  expected_queue[seq++] = 0;
  sender_->Send(untracked);

  ASSERT_TRUE(workers_->WaitFor(seq)) << "received " << workers_->Total() << " of " << seq;
  const auto seen = workers_->Take();
  size_t checked = 0;
  for (uint16_t q = 0; q < kQueues; ++q) {
    for (const Seen& s : seen[q]) {
      EXPECT_EQ(q, expected_queue.at(s.seq)) << "frame " << s.seq << " (group " << GroupOf(s) << ", vlan " << s.vlan << ")";
      ++checked;
    }
  }
  EXPECT_EQ(checked, seq);
}

// A tag moved under traffic: nothing is lost, and once apply() returned the old core never sees the tag again
// (its backlog was taken before), which is what lets the engine retire the group on the old core safely.
TEST_F(FanoutPortTest, RemapUnderTrafficLosesNothingAndTheOldCoreStopsWhenApplyReturns) {
  // Slow readers (slower than the RCU grace period the kernel waits when the program changes, but polling more
  // often than FanoutPort's idle-reader threshold of 50 ms): each ring holds a backlog when the tag moves.
  workers_.reset();
  workers_ = std::make_unique<test::QueueWorkers>(*port_, std::chrono::milliseconds(20));
  ASSERT_TRUE(table_.set_tags("rx0", pb::TAG_MAC, {{1, 0}}).ok());
  std::atomic<bool> stop{false};
  std::atomic<uint32_t> sent{0};
  std::thread tx([&] {
    test::RawSender s("tx0");
    while (!stop) {
      s.Send(MacTagged(1, 0, sent));
      ++sent;
      if (sent % 16 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  // Queue q owns tag 1 from the start of the set_tags() that gives it the tag to the return of the one that
  // takes it away.
  struct Ownership {
    uint16_t queue;
    int64_t from, to;
  };
  std::vector<Ownership> owned = {{0, 0, 0}};
  for (int k = 1; k <= 12; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    const uint16_t next = k % kQueues;
    const int64_t start = test::NowNs();
    ASSERT_TRUE(table_.set_tags("rx0", pb::TAG_MAC, {{1, next}}).ok());
    owned.back().to = test::NowNs();
    owned.push_back({next, start, 0});
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  stop = true;
  tx.join();
  owned.back().to = INT64_MAX;
  ASSERT_TRUE(workers_->WaitFor(sent)) << "received " << workers_->Total() << " of " << sent << ": frames lost";
  const auto seen = workers_->Take();
  size_t checked = 0;
  for (uint16_t q = 0; q < kQueues; ++q) {
    for (const Seen& s : seen[q]) {
      bool ok = false;
      for (const Ownership& o : owned) ok |= o.queue == q && s.polled_ns >= o.from && s.polled_ns <= o.to;
      EXPECT_TRUE(ok) << "frame " << s.seq << " read on queue " << q << " after that queue lost the tag";
      ++checked;
    }
  }
  EXPECT_EQ(checked, sent.load());
  EXPECT_GT(sent.load(), 500u) << "too little traffic to mean anything";
}

pb::NicRule UdpPortRule(uint64_t id, uint32_t dport, uint32_t queue) {
  pb::NicRule r;
  r.set_id(id);
  r.set_nic("rx0");
  r.set_priority(0);
  r.mutable_match()->set_ether_type(0x0800);
  r.mutable_match()->set_ip_proto(17);
  r.mutable_match()->set_l4_dst(dport);
  r.mutable_match()->set_l4_dst_mask(0xffff);
  r.mutable_action()->set_queue(queue);
  return r;
}

TEST_F(FanoutPortTest, NicRulesSteerAndDropAheadOfTags) {
  ASSERT_TRUE(table_.set_tags("rx0", pb::TAG_MAC, {{1, 0}, {2, 1}}).ok());
  pb::NicRuleBatch batch;
  const uint64_t kBigId = 0xfedcba9876543210ull;  // full 64-bit ids survive
  *batch.add_rules() = UdpPortRule(kBigId, 5000, 3);
  pb::NicRule* drop = batch.add_rules();
  drop->set_id(2);
  drop->set_nic("rx0");
  drop->set_priority(1);
  drop->mutable_match()->set_ip_src(std::string("\x0a\x09\x00\x00", 4));
  drop->mutable_match()->set_ip_src_prefix(16);
  drop->mutable_action()->set_drop(true);
  pb::NicRuleReply reply;
  grpc::Status s = table_.Install(batch, &reply);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(reply.applied(), 2u);

  uint32_t seq = 0;
  for (int r = 0; r < 30; ++r) {
    FrameSpec to_rule = MacTagged(1, 0, seq++);
    to_rule.dport = 5000;
    sender_->Send(to_rule);                  // rule kBigId: queue 3
    sender_->Send(MacTagged(2, 0, seq++));   // tag 2: queue 1
    FrameSpec dropped = MacTagged(2, 0, 1000000 + r);
    dropped.src_ip = 0x0a090101;             // 10.9.1.1: dropped
    sender_->Send(dropped);
  }
  ASSERT_TRUE(workers_->WaitFor(seq)) << "received " << workers_->Total() << " of " << seq;
  auto seen = workers_->Take();
  EXPECT_EQ(seen[3].size(), 30u);
  EXPECT_EQ(seen[1].size(), 30u);
  EXPECT_TRUE(seen[0].empty());
  EXPECT_TRUE(seen[2].empty());
  for (const auto& q : seen) {
    for (const Seen& x : q) EXPECT_LT(x.seq, 1000000u) << "a frame matching the drop rule was delivered";
  }

  pb::NicRuleIds ids;
  ids.add_ids(kBigId);
  ASSERT_TRUE(table_.Remove(ids, &reply).ok());
  FrameSpec f = MacTagged(1, 0, 0);
  f.dport = 5000;
  for (int r = 0; r < 20; ++r) sender_->Send(f);
  ASSERT_TRUE(workers_->WaitFor(20));
  seen = workers_->Take();
  EXPECT_EQ(seen[0].size(), 20u) << "after removing the rule, tag 1 goes back to its core";
}

TEST_F(FanoutPortTest, Ipv6PrefixAndPortRulesSteer) {
  pb::NicRuleBatch batch;
  pb::NicRule* r = batch.add_rules();
  r->set_id(1);
  r->set_nic("rx0");
  std::string net(16, '\0');
  const uint8_t prefix[6] = {0x20, 0x01, 0x0d, 0xb8, 0, 1};
  net.replace(0, 6, reinterpret_cast<const char*>(prefix), 6);
  r->mutable_match()->set_ip_dst(net);
  r->mutable_match()->set_ip_dst_prefix(48);
  r->mutable_match()->set_ip_proto(17);
  r->mutable_match()->set_l4_dst(4789);
  r->mutable_match()->set_l4_dst_mask(0xffff);
  r->mutable_action()->set_queue(2);
  pb::NicRuleReply reply;
  grpc::Status s = table_.Install(batch, &reply);
  ASSERT_TRUE(s.ok()) << s.error_message();

  FrameSpec hit = MacTagged(1, 0, 0);
  hit.ipv6 = true;
  hit.dport = 4789;
  FrameSpec other_port = hit;
  other_port.dport = 4790;
  FrameSpec other_net = hit;
  other_net.dst6[5] = 2;  // 2001:db8:2::/48
  FrameSpec v4 = MacTagged(1, 0, 0);
  v4.dport = 4789;
  for (int i = 0; i < 10; ++i) {
    sender_->Send(hit);
    sender_->Send(other_port);
    sender_->Send(other_net);
    sender_->Send(v4);
  }
  ASSERT_TRUE(workers_->WaitFor(40));
  const auto seen = workers_->Take();
  EXPECT_EQ(seen[2].size(), 10u) << "IPv6 frames in 2001:db8:1::/48 to UDP 4789 go to queue 2";
  EXPECT_EQ(seen[0].size(), 30u) << "the rest falls through to the default queue";
}

TEST_F(FanoutPortTest, TransmitsOnTheWire) {
  const int rx = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  ASSERT_GE(rx, 0);
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = if_nametoindex("tx0");
  ASSERT_EQ(bind(rx, reinterpret_cast<sockaddr*>(&sll), sizeof sll), 0);

  rte_mbuf* pkts[8];
  ASSERT_EQ(rte_pktmbuf_alloc_bulk(test::pool(), pkts, 8), 0);
  for (int i = 0; i < 8; ++i) {
    const std::vector<uint8_t> b = test::BuildFrame(MacTagged(9, 0, 500 + i));
    std::memcpy(rte_pktmbuf_append(pkts[i], b.size()), b.data(), b.size());
  }
  ASSERT_EQ(port_->tx_burst(2, pkts, 8), 8);

  std::vector<uint32_t> got;
  uint8_t buf[2048];
  pollfd p{rx, POLLIN, 0};
  while (got.size() < 8 && poll(&p, 1, 2000) > 0) {
    const ssize_t n = recv(rx, buf, sizeof buf, 0);
    ASSERT_GE(n, 46);
    if (buf[0] == 0x02 && buf[1] == 0x4d && buf[3] == 9) got.push_back(ntohl(*reinterpret_cast<uint32_t*>(buf + 42)));
  }
  close(rx);
  ASSERT_EQ(got.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], 500u + i) << "frames leave in order";
  EXPECT_EQ(port_->counters().tx_packets, 8u);
}

TEST_F(FanoutPortTest, InsertsTheVlanTagOfMbufsAskingForIt) {
  const int rx = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  ASSERT_GE(rx, 0);
  int on = 1;
  ASSERT_EQ(setsockopt(rx, SOL_PACKET, PACKET_AUXDATA, &on, sizeof on), 0);
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = if_nametoindex("tx0");
  ASSERT_EQ(bind(rx, reinterpret_cast<sockaddr*>(&sll), sizeof sll), 0);

  rte_mbuf* m = rte_pktmbuf_alloc(test::pool());
  ASSERT_NE(m, nullptr);
  const std::vector<uint8_t> b = test::BuildFrame(MacTagged(9, 0, 4242));
  std::memcpy(rte_pktmbuf_append(m, b.size()), b.data(), b.size());
  m->ol_flags |= RTE_MBUF_F_TX_VLAN;
  m->vlan_tci = 0x2123;  // PCP 1, VLAN 0x123
  ASSERT_EQ(port_->tx_burst(0, &m, 1), 1);

  // The receiving kernel takes the tag out of the frame again and reports it as auxiliary data.
  bool found = false;
  uint8_t buf[2048];
  alignas(cmsghdr) char control[256];
  pollfd p{rx, POLLIN, 0};
  while (!found && poll(&p, 1, 2000) > 0) {
    iovec iov{buf, sizeof buf};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(rx, &msg, 0);
    ASSERT_GE(n, 46);
    if (!(buf[0] == 0x02 && buf[3] == 9)) continue;
    found = true;
    EXPECT_EQ(ntohl(*reinterpret_cast<uint32_t*>(buf + 42)), 4242u) << "payload shifted by the inserted tag";
    bool vlan = false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA) continue;
      const auto* aux = reinterpret_cast<const tpacket_auxdata*>(CMSG_DATA(c));
      vlan = aux->tp_status & TP_STATUS_VLAN_VALID;
      EXPECT_EQ(aux->tp_vlan_tci, 0x2123);
    }
    EXPECT_TRUE(vlan) << "frame left without its VLAN tag";
  }
  close(rx);
  EXPECT_TRUE(found);
}

// Frames arriving while the port opens (its sockets bound, the group's program not there yet) are discarded,
// and the next frame is still seen. The discard used to leave each reader behind the kernel's position in its
// ring, blind to every later frame until the kernel came round the ring: in the e2e replies test a switch
// namespace's IPv6 noise reached an agent while it started, and a chain's TCP handshake never reached its core.
TEST(FanoutPortOpen, FramesArrivingWhileItOpensDoNotHideLaterOnes) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: creates a netns, a veth pair and AF_PACKET sockets";
  test::VethNetns ns;
  for (int round = 0; round < 10; ++round) {
    std::atomic<bool> opened{false};
    std::thread noise([&opened] {
      test::RawSender s("tx0");
      // A few frames per millisecond: some land in the opening's window, far fewer than a ring holds.
      for (uint32_t i = 0; !opened.load(); ++i) {
        s.Send(MacTagged(7, 0, i));
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    });
    std::unique_ptr<FanoutPort> port = FanoutPort::open({"rx0", 2, 1024, 0}, test::pool());
    opened = true;
    noise.join();
    test::QueueWorkers workers(*port);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    workers.Take();  // the noise that came after the opening
    test::RawSender("tx0").Send(MacTagged(7, 1, 0xfeed));
    ASSERT_TRUE(workers.WaitFor(1)) << "round " << round << ": the frame sent after the opening was not seen";
    const auto seen = workers.Take();
    ASSERT_EQ(seen[0].size(), 1u) << "round " << round;
    EXPECT_EQ(seen[0][0].seq, 0xfeedu);
  }
}

// The receive ring is the backlog a worker may leave while it does not run (agent --fanout-frames): 3000 frames
// sent before anybody reads all wait in a ring of 4096; a ring of 1024 keeps its first 1024 and the kernel drops
// the rest, counted as the port's rx drops. Emulated servers size it so that a worker waiting tens of
// milliseconds for a shared CPU loses nothing (topologies/metron_topo/agent.py).
TEST(FanoutPortOpen, TheReceiveRingHoldsTheBacklogOfAWorkerThatDoesNotRun) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: creates a netns, a veth pair and AF_PACKET sockets";
  constexpr uint32_t kSent = 3000;
  for (const uint32_t frames : {4096u, 1024u}) {
    test::VethNetns ns;
    FanoutPortOptions options{"rx0", 1};
    options.rx_frames = frames;
    std::unique_ptr<FanoutPort> port = FanoutPort::open(options, test::pool());
    test::RawSender sender("tx0");
    for (uint32_t i = 0; i < kSent; ++i) sender.Send(MacTagged(7, 0, i));
    const size_t held = std::min(kSent, frames);
    test::QueueWorkers workers(*port);
    EXPECT_TRUE(workers.WaitFor(held)) << frames << " frames: received " << workers.Total();
    EXPECT_EQ(port->counters().rx_dropped, kSent - held) << frames << " frames";
  }
  FanoutPortOptions odd{"rx0", 1};
  odd.rx_frames = 1000;
  test::VethNetns ns;
  try {
    FanoutPort::open(odd, test::pool());
    FAIL() << "opened a ring of 1000 frames";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("ring frames (1000) must be a positive multiple of 32"), std::string::npos)
        << e.what();
  }
}

TEST(FanoutPortOpen, UnknownInterfaceNamesIt) {
  try {
    FanoutPort::open({"no-such-if0", 2, 1024, 0}, test::pool());
    FAIL() << "opened a missing interface";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-if0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace metron

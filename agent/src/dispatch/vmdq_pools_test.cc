// VMDq MAC pools, the pure part: which class MACs a rule list puts in which pool (first match wins), the MAC table
// limit, what VMDq cannot express, and what a tag move adds and removes.
#include "dispatch/vmdq_pools.h"

#include <gtest/gtest.h>

namespace metron {
namespace {

MacAddr Mac(uint8_t g0, uint8_t g1, uint8_t c0, uint8_t c1) { return {0x02, 0x4d, g0, g1, c0, c1}; }

// The agent's rule for MAC group tag `tag` carrying `classes`, as SteeringTable builds it.
SteerRule Tag(uint32_t tag, uint32_t queue, std::vector<uint32_t> classes) {
  SteerRule r;
  EXPECT_TRUE(TagRule(pb::TAG_MAC, tag, queue, "tag", &r).ok());
  r.classes = std::move(classes);
  return r;
}

// A controller NIC rule as ParseNicRule gives it.
SteerRule Nic(uint64_t id, const std::string& eth_dst, const std::string& mask, uint32_t queue) {
  pb::NicRule p;
  p.set_id(id);
  p.set_nic("vmdq0");
  p.mutable_match()->set_eth_dst(eth_dst);
  p.mutable_match()->set_eth_dst_mask(mask);
  p.mutable_action()->set_queue(queue);
  SteerRule r;
  EXPECT_TRUE(ParseNicRule(p, "rules[0]", &r).ok());
  return r;
}

std::vector<VmdqEntry> Entries(const std::vector<SteerRule>& rules, uint16_t pools = 4, uint32_t limit = 127) {
  std::vector<VmdqEntry> e;
  grpc::Status s = VmdqEntries("vmdq0", rules, pools, limit, &e);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return e;
}

TEST(VmdqPools, EachClassOfAGroupAndItsUnclassifiedMarkersGetAnEntryInTheGroupsPool) {
  const std::vector<VmdqEntry> want{{Mac(0, 7, 0, 0), 0},       {Mac(0, 7, 0, 1), 0},       {Mac(0, 7, 1, 2), 0},
                                    {Mac(0, 7, 0xff, 0xfd), 0}, {Mac(0, 7, 0xff, 0xff), 0}, {Mac(0x12, 0x34, 0, 5), 1},
                                    {Mac(0x12, 0x34, 0xff, 0xfd), 1}, {Mac(0x12, 0x34, 0xff, 0xff), 1}};
  EXPECT_EQ(Entries({Tag(7, 0, {0, 1, 0x0102}), Tag(0x1234, 1, {5})}), want);
  EXPECT_EQ(ClassMac(0xabcd, 0xfffc), Mac(0xab, 0xcd, 0xff, 0xfc));
}

TEST(VmdqPools, ExactMacRulesTakeOneEntryAndTheFirstMatchKeepsAMac) {
  // The controller's exact rule for class 1 of tag 7 comes first: that class goes to queue 3, the rest to 0.
  const auto e = Entries({Nic(5, "02:4d:00:07:00:01", "", 3), Tag(7, 0, {0, 1})});
  EXPECT_EQ(e, (std::vector<VmdqEntry>{{Mac(0, 7, 0, 0), 0},
                                       {Mac(0, 7, 0, 1), 3},
                                       {Mac(0, 7, 0xff, 0xfd), 0},
                                       {Mac(0, 7, 0xff, 0xff), 0}}));
  // Any exact MAC, not only tag MACs.
  EXPECT_EQ(Entries({Nic(6, "aa:bb:cc:dd:ee:ff", "ff:ff:ff:ff:ff:ff", 2)}),
            (std::vector<VmdqEntry>{{{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}, 2}}));
}

TEST(VmdqPools, TheControllersGroupRuleReachesTheClassesOfTheAgentsGroupOfThatTag) {
  // Installed before the pipeline is deployed: no class known, nothing to add yet.
  EXPECT_TRUE(Entries({Nic(1, "02:4d:00:09:00:00", "ff:ff:ff:ff:00:00", 2)}).empty());
  // Deployed: the controller's rule comes first and wins where the queues differ.
  const auto e = Entries({Nic(1, "02:4d:00:09:00:00", "ff:ff:ff:ff:00:00", 2), Tag(9, 1, {4})});
  EXPECT_EQ(e, (std::vector<VmdqEntry>{{Mac(0, 9, 0, 4), 2}, {Mac(0, 9, 0xff, 0xfd), 2}, {Mac(0, 9, 0xff, 0xff), 2}}));
}

TEST(VmdqPools, TheMacTableLimitCountsEveryEntryAndNothingIsWrittenBeyondIt) {
  std::vector<uint32_t> hundred, thirty;
  for (uint32_t c = 0; c < 100; ++c) hundred.push_back(c);
  for (uint32_t c = 0; c < 30; ++c) thirty.push_back(c);
  std::vector<VmdqEntry> e{{Mac(0, 1, 0, 0), 0}};
  const std::vector<VmdqEntry> before = e;
  grpc::Status s = VmdqEntries("vmdq0", {Tag(1, 0, hundred), Tag(2, 1, thirty)}, 2, 127, &e);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(),
            "NIC vmdq0 (VMDq MAC pools): 134 class MACs, but its MAC table holds 127 (VMDq matches whole MACs: one "
            "entry per class of each group, 2 more per group tag)");
  EXPECT_EQ(e, before);
  EXPECT_EQ(Entries({Tag(1, 0, hundred), Tag(2, 1, thirty)}, 2, 134).size(), 134u);
}

TEST(VmdqPools, WhatVmdqCannotMatchIsRefusedNamingTheNicAndTheRule) {
  std::vector<VmdqEntry> e;
  SteerRule vlan;
  ASSERT_TRUE(TagRule(pb::TAG_VLAN, 10, 0, "tag", &vlan).ok());
  grpc::Status s = VmdqEntries("vmdq0", {vlan}, 4, 127, &e);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(),
            "NIC vmdq0 (VMDq MAC pools): VLAN tag 10: VMDq cannot select a pool by VLAN id (only by whole dst MAC): "
            "use MAC tags");

  pb::NicRule ip;
  ip.set_id(4);
  ip.set_nic("vmdq0");
  ip.mutable_match()->set_ip_dst(std::string("\x0a\0\0\0", 4));
  ip.mutable_match()->set_ip_dst_prefix(8);
  ip.mutable_action()->set_queue(1);
  SteerRule r;
  ASSERT_TRUE(ParseNicRule(ip, "rules[0]", &r).ok());
  s = VmdqEntries("vmdq0", {r}, 4, 127, &e);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(),
            "NIC vmdq0 (VMDq MAC pools): rule 4: VMDq selects a pool by dst MAC only, the rule matches ip_dst");

  s = VmdqEntries("vmdq0", {Nic(5, "02:4d:00:00:00:00", "ff:ff:00:00:00:00", 1)}, 4, 127, &e);
  EXPECT_EQ(s.error_message(),
            "NIC vmdq0 (VMDq MAC pools): rule 5: eth_dst 02:4d:00:00:00:00/ff:ff:00:00:00:00: VMDq matches whole MACs "
            "(an exact dst MAC, or a MAC tag's group ff:ff:ff:ff:00:00)");

  SteerRule drop = Nic(6, "02:4d:00:07:00:01", "", 1);
  drop.action = {SteerActionKind::kDrop, 0};
  s = VmdqEntries("vmdq0", {drop}, 4, 127, &e);
  EXPECT_EQ(s.error_message(), "NIC vmdq0 (VMDq MAC pools): rule 6: VMDq can only deliver to a pool, not drop");

  s = VmdqEntries("vmdq0", {Tag(7, 4, {0})}, 4, 127, &e);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "NIC vmdq0 (VMDq MAC pools): MAC tag 7: queue 4 but the NIC has 4 VMDq pools");
  EXPECT_TRUE(e.empty()) << "an error left entries behind";
}

TEST(VmdqPools, MovingATagMovesAllItsClassMacsAndNothingElse) {
  const auto before = Entries({Tag(7, 0, {0, 1}), Tag(9, 1, {0})}, 2);
  const auto after = Entries({Tag(7, 1, {0, 1}), Tag(9, 1, {0})}, 2);
  const VmdqChange c = VmdqDiff(before, after);
  EXPECT_EQ(c.remove, (std::vector<VmdqEntry>{{Mac(0, 7, 0, 0), 0}, {Mac(0, 7, 0, 1), 0}, {Mac(0, 7, 0xff, 0xfd), 0},
                                              {Mac(0, 7, 0xff, 0xff), 0}}));
  EXPECT_EQ(c.add, (std::vector<VmdqEntry>{{Mac(0, 7, 0, 0), 1}, {Mac(0, 7, 0, 1), 1}, {Mac(0, 7, 0xff, 0xfd), 1},
                                           {Mac(0, 7, 0xff, 0xff), 1}}));
  // A split: class 1 leaves tag 7 for a new tag 8 on the other pool; the rest of tag 7 stays where it is.
  const auto split = Entries({Tag(7, 0, {0}), Tag(8, 1, {1}), Tag(9, 1, {0})}, 2);
  const VmdqChange d = VmdqDiff(before, split);
  EXPECT_EQ(d.remove, (std::vector<VmdqEntry>{{Mac(0, 7, 0, 1), 0}}));
  EXPECT_EQ(d.add, (std::vector<VmdqEntry>{{Mac(0, 8, 0, 1), 1}, {Mac(0, 8, 0xff, 0xfd), 1}, {Mac(0, 8, 0xff, 0xff), 1}}));
  EXPECT_TRUE(VmdqDiff(before, before).remove.empty());
  EXPECT_EQ(VmdqDiff(before, {}).remove, before);
}

}  // namespace
}  // namespace metron

// SteeringTable semantics on real kernel dispatchers (two veths in a private netns): error codes naming the
// field, all-or-nothing batches across NICs, rule order, capacity.
#include "dispatch/steering_table.h"

#include <gtest/gtest.h>

#include "dispatch/fanout_port.h"
#include "dispatch/veth_fixture.h"
#include "test_env.h"

namespace metron {
namespace {

pb::NicRule MacRule(uint64_t id, const std::string& nic, uint16_t group, uint32_t queue, uint32_t priority = 0) {
  pb::NicRule r;
  r.set_id(id);
  r.set_nic(nic);
  r.set_priority(priority);
  char mac[18];
  std::snprintf(mac, sizeof mac, "02:4d:%02x:%02x:00:00", group >> 8, group & 0xff);
  r.mutable_match()->set_eth_dst(mac);
  r.mutable_match()->set_eth_dst_mask("ff:ff:ff:ff:00:00");
  r.mutable_action()->set_queue(queue);
  return r;
}

class SteeringTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: netns, veth, AF_PACKET";
    ns_ = std::make_unique<test::VethNetns>();
    ns_->AddPair("tx1", "rx1");
    a_ = FanoutPort::open({"rx0", 2, 1024, 0}, test::pool());
    b_ = FanoutPort::open({"rx1", 2, 1024, 0}, test::pool());
    ASSERT_TRUE(table_.add_nic(a_.get()).ok());
    ASSERT_TRUE(table_.add_nic(b_.get()).ok());
  }
  void TearDown() override {
    a_.reset();
    b_.reset();
    ns_.reset();
  }

  grpc::Status Install(std::initializer_list<pb::NicRule> rules) {
    pb::NicRuleBatch batch;
    for (const auto& r : rules) *batch.add_rules() = r;
    pb::NicRuleReply reply;
    return table_.Install(batch, &reply);
  }
  int Count(const std::string& nic = "") {
    pb::ListNicRulesRequest req;
    req.set_nic(nic);
    pb::NicRuleList list;
    EXPECT_TRUE(table_.List(req, &list).ok());
    return list.rules_size();
  }
  // Where frames of MAC group `group` sent into tx0 end up on rx0: queue index, or -1 if nowhere.
  int QueueOf(uint16_t group) {
    test::QueueWorkers w(*a_);
    test::RawSender("tx0").Send(test::MacTagged(group, 0, 1));
    w.WaitFor(1);
    const auto seen = w.Take();
    for (size_t q = 0; q < seen.size(); ++q) {
      if (!seen[q].empty()) return static_cast<int>(q);
    }
    return -1;
  }

  std::unique_ptr<test::VethNetns> ns_;
  std::unique_ptr<FanoutPort> a_, b_;
  SteeringTable table_;
};

TEST_F(SteeringTableTest, BatchesAreAllOrNothingAcrossNics) {
  pb::NicRule mark = MacRule(2, "rx1", 5, 0);
  mark.mutable_action()->set_mark(77);
  grpc::Status s = Install({MacRule(1, "rx0", 5, 1), mark});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("rule 2: action mark needs rte_flow"), std::string::npos) << s.error_message();
  EXPECT_EQ(Count(), 0);
  EXPECT_EQ(QueueOf(5), 0) << "rule 1 of the failed batch took effect";

  ASSERT_TRUE(Install({MacRule(1, "rx0", 5, 1), MacRule(2, "rx1", 5, 1)}).ok());
  EXPECT_EQ(Count("rx0"), 1);
  EXPECT_EQ(Count("rx1"), 1);
  EXPECT_EQ(QueueOf(5), 1);
}

TEST_F(SteeringTableTest, ErrorsNameTheRuleAndLeaveTheTableAsItWas) {
  ASSERT_TRUE(Install({MacRule(10, "rx0", 5, 1)}).ok());
  grpc::Status s = Install({MacRule(11, "rx0", 6, 1), MacRule(10, "rx1", 6, 1)});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(s.error_message(), "rules[1].id: 10 is already installed");
  s = Install({MacRule(11, "rx0", 6, 1), MacRule(11, "rx1", 6, 1)});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(s.error_message(), "rules[1].id: 11 repeats rules[0].id");
  s = Install({MacRule(12, "eth9", 6, 1)});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "rules[0].nic: \"eth9\" is not a NIC with a rule table on this server");
  EXPECT_EQ(Count(), 1);

  pb::NicRuleIds ids;
  ids.add_ids(10);
  ids.add_ids(99);
  pb::NicRuleReply reply;
  s = table_.Remove(ids, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "ids[1]: 99 is not an installed NIC rule");
  EXPECT_EQ(Count(), 1) << "rule 10 removed by a failed batch";
  EXPECT_EQ(QueueOf(5), 1);

  pb::ListNicRulesRequest req;
  req.set_nic("eth9");
  pb::NicRuleList list;
  EXPECT_EQ(table_.List(req, &list).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(table_.set_tags("eth9", pb::TAG_MAC, {{1, 0}}).error_code(), grpc::StatusCode::NOT_FOUND);
  s = table_.set_tags("rx0", pb::TAG_MAC, {{1, 0}, {2, 2}});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "tag 2: queue 2 but NIC rx0 has 2 rx queues");
  EXPECT_TRUE(table_.tags("rx0", pb::TAG_MAC).empty());
}

TEST_F(SteeringTableTest, RulesApplyInPriorityOrderAheadOfTags) {
  ASSERT_TRUE(table_.set_tags("rx0", pb::TAG_MAC, {{5, 0}}).ok());
  EXPECT_EQ(QueueOf(5), 0);
  // Same match, two priorities: the lower number wins whatever the install order.
  ASSERT_TRUE(Install({MacRule(1, "rx0", 5, 0, 7)}).ok());
  ASSERT_TRUE(Install({MacRule(2, "rx0", 5, 1, 3)}).ok());
  EXPECT_EQ(QueueOf(5), 1);
  pb::NicRuleIds ids;
  ids.add_ids(2);
  pb::NicRuleReply reply;
  ASSERT_TRUE(table_.Remove(ids, &reply).ok());
  EXPECT_EQ(QueueOf(5), 0);
}

TEST_F(SteeringTableTest, ReportedCapacityIsTheDispatchersAndIsEnforced) {
  EXPECT_EQ(table_.max_rules("rx0"), a_->max_rules());
  EXPECT_EQ(table_.max_rules("rx9"), 0u) << "a NIC the table does not steer holds no rules";
  const uint32_t max = table_.max_rules("rx0");
  ASSERT_GT(max, 0u);
  pb::NicRuleBatch batch;
  for (uint32_t i = 0; i <= max; ++i) *batch.add_rules() = MacRule(i + 1, "rx0", static_cast<uint16_t>(i + 1), 1);
  pb::NicRuleReply reply;
  grpc::Status s = table_.Install(batch, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("holds " + std::to_string(max)), std::string::npos) << s.error_message();
  EXPECT_EQ(Count(), 0);
}

TEST_F(SteeringTableTest, CapacityIsEnforcedByTheKernelProgramLimit) {
  // Each 5-tuple rule here compiles to ~17 instructions; 300 of them exceed BPF_MAXINSNS (4096).
  pb::NicRuleBatch batch;
  for (int i = 0; i < 300; ++i) {
    pb::NicRule* r = batch.add_rules();
    r->set_id(i + 1);
    r->set_nic("rx0");
    r->mutable_match()->set_eth_dst("02:4d:00:01:00:00");
    r->mutable_match()->set_ip_src(std::string("\x0a\x00\x00\x01", 4));
    r->mutable_match()->set_ip_src_prefix(32);
    r->mutable_match()->set_ip_dst(std::string("\x0a\x00\x00\x02", 4));
    r->mutable_match()->set_ip_dst_prefix(32);
    r->mutable_match()->set_ip_proto(17);
    r->mutable_match()->set_l4_src(1000 + i);
    r->mutable_match()->set_l4_src_mask(0xffff);
    r->mutable_match()->set_l4_dst(2000);
    r->mutable_match()->set_l4_dst_mask(0xffff);
    r->mutable_action()->set_queue(1);
  }
  pb::NicRuleReply reply;
  grpc::Status s = table_.Install(batch, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("BPF instructions"), std::string::npos) << s.error_message();
  EXPECT_EQ(Count(), 0);
  batch.mutable_rules()->DeleteSubrange(100, 200);
  s = table_.Install(batch, &reply);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(reply.applied(), 100u);
}

}  // namespace
}  // namespace metron

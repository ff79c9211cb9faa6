// VmdqDispatcher behind a SteeringTable: the MAC table calls that group tags and the controller's NIC rules make
// (recorded through VmdqMacOps: no PMD here has VMDq; the ethdev side is vmdq_port_test), removals before
// additions, a NIC refusal undone, refusals of what VMDq cannot do leaving everything as it was, and the drain
// wait of a pool that lost a MAC; and the agent's backend over a running engine reporting the NIC's mode and
// capacity and steering a deployed pipeline's classes into its core's pool.
#include "dispatch/vmdq_dispatcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cerrno>
#include <map>

#include "core/engine.h"
#include "core/engine_backend.h"
#include "dispatch/steering_table.h"
#include "drivers/dpdk_port.h"
#include "test_env.h"

namespace metron {
namespace {

// What the dispatcher asked of the NIC, in order: "add 02:4d:00:07:00:00 1", "remove 02:4d:00:07:00:00".
struct Calls {
  std::vector<std::string> log;
  int fail_at = -1;      // the index of the add/remove call that fails, -1 = none
  int fail_rc = -ENOSPC;
  std::map<uint16_t, int> backlog;  // per slot: frames left; each backlog() call takes one
  std::map<uint16_t, int> backlog_polls;
};

class RecordingOps final : public VmdqMacOps {
 public:
  explicit RecordingOps(Calls* c) : c_(c) {}
  int add(const MacAddr& mac, uint16_t slot) override { return record("add " + FormatMac(mac) + " " + std::to_string(slot)); }
  int remove(const MacAddr& mac) override { return record("remove " + FormatMac(mac)); }
  int backlog(uint16_t slot) override {
    ++c_->backlog_polls[slot];
    int& left = c_->backlog[slot];
    return left > 0 ? left-- : 0;
  }

 private:
  int record(std::string call) {
    const bool fail = static_cast<int>(c_->log.size()) == c_->fail_at;
    c_->log.push_back(std::move(call) + (fail ? " REFUSED" : ""));
    return fail ? c_->fail_rc : 0;
  }
  Calls* c_;
};

std::string Mac(uint16_t tag, uint16_t cls) { return FormatMac(ClassMac(tag, cls)); }
std::vector<std::string> Adds(uint16_t tag, std::vector<uint16_t> classes, uint16_t slot) {
  std::vector<std::string> out;
  for (uint16_t c : classes) out.push_back("add " + Mac(tag, c) + " " + std::to_string(slot));
  return out;
}

class VmdqDispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    d_ = std::make_unique<VmdqDispatcher>("vmdq0", 4, 127, std::make_unique<RecordingOps>(&calls_));
    ASSERT_TRUE(table_.add_nic(d_.get()).ok());
    ASSERT_TRUE(calls_.log.empty());
  }
  grpc::Status Tags(SteeringTable::TagMap tags, SteeringTable::TagClasses classes) {
    calls_.log.clear();
    return table_.set_tags("vmdq0", pb::TAG_MAC, tags, classes);
  }
  grpc::Status Install(const std::string& eth_dst, const std::string& mask, uint64_t id, uint32_t queue) {
    pb::NicRuleBatch batch;
    pb::NicRule* r = batch.add_rules();
    r->set_id(id);
    r->set_nic("vmdq0");
    r->mutable_match()->set_eth_dst(eth_dst);
    r->mutable_match()->set_eth_dst_mask(mask);
    r->mutable_action()->set_queue(queue);
    pb::NicRuleReply reply;
    calls_.log.clear();
    return table_.Install(batch, &reply);
  }

  Calls calls_;
  std::unique_ptr<VmdqDispatcher> d_;
  SteeringTable table_;
};

TEST_F(VmdqDispatcherTest, ReportsItsModePoolsAndMacCapacity) {
  EXPECT_EQ(d_->mode(), pb::DISPATCH_VMDQ);
  EXPECT_EQ(d_->steerable_queues(), 4);
  EXPECT_EQ(d_->max_rules(), 127u);
  EXPECT_EQ(table_.max_rules("vmdq0"), 127u);
}

TEST_F(VmdqDispatcherTest, AGroupTagAddsItsClassMacsToItsPoolAndAMoveRemovesBeforeAdding) {
  ASSERT_TRUE(Tags({{7, 1}}, {{7, {0, 1}}}).ok());
  EXPECT_EQ(calls_.log, Adds(7, {0, 1, 0xfffd, 0xffff}, 1));
  EXPECT_EQ(d_->entries().size(), 4u);

  ASSERT_TRUE(Tags({{7, 3}}, {{7, {0, 1}}}).ok());
  std::vector<std::string> want{"remove " + Mac(7, 0), "remove " + Mac(7, 1), "remove " + Mac(7, 0xfffd),
                                "remove " + Mac(7, 0xffff)};
  for (const std::string& a : Adds(7, {0, 1, 0xfffd, 0xffff}, 3)) want.push_back(a);
  EXPECT_EQ(calls_.log, want);

  // Unchanged tags make no call; a split adds the new tag's MACs and removes only the class that left.
  ASSERT_TRUE(Tags({{7, 3}}, {{7, {0, 1}}}).ok());
  EXPECT_TRUE(calls_.log.empty());
  ASSERT_TRUE(Tags({{7, 3}, {8, 0}}, {{7, {0}}, {8, {1}}}).ok());
  want = {"remove " + Mac(7, 1)};
  for (const std::string& a : Adds(8, {1, 0xfffd, 0xffff}, 0)) want.push_back(a);
  EXPECT_EQ(calls_.log, want);

  ASSERT_TRUE(Tags({}, {}).ok());
  EXPECT_EQ(calls_.log.size(), 6u);
  EXPECT_TRUE(d_->entries().empty());
}

TEST_F(VmdqDispatcherTest, ControllerRulesExactAndByGroupTagGoThroughTheSameTable) {
  ASSERT_TRUE(Install("aa:bb:cc:dd:ee:01", "", 11, 2).ok());
  EXPECT_EQ(calls_.log, (std::vector<std::string>{"add aa:bb:cc:dd:ee:01 2"}));
  // The controller installs its group rule before deploying: no class of tag 9 here yet.
  ASSERT_TRUE(Install("02:4d:00:09:00:00", "ff:ff:ff:ff:00:00", 12, 1).ok());
  EXPECT_TRUE(calls_.log.empty());
  ASSERT_TRUE(Tags({{9, 1}}, {{9, {4}}}).ok());
  EXPECT_EQ(calls_.log, Adds(9, {4, 0xfffd, 0xffff}, 1));
  pb::NicRuleList list;
  ASSERT_TRUE(table_.List({}, &list).ok());
  EXPECT_EQ(list.rules_size(), 2);
}

TEST_F(VmdqDispatcherTest, WhatVmdqCannotDoIsRefusedWithoutTouchingTheNic) {
  ASSERT_TRUE(Tags({{7, 1}}, {{7, {0}}}).ok());
  calls_.log.clear();
  grpc::Status s = table_.set_tags("vmdq0", pb::TAG_VLAN, {{10, 0}});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("NIC vmdq0 (VMDq MAC pools): VLAN tag 10"), std::string::npos) << s.error_message();
  EXPECT_TRUE(table_.tags("vmdq0", pb::TAG_VLAN).empty());

  std::vector<uint32_t> many;
  for (uint32_t c = 0; c < 200; ++c) many.push_back(c);
  s = Tags({{7, 1}, {8, 2}}, {{7, {0}}, {8, many}});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_EQ(table_.tags("vmdq0", pb::TAG_MAC), (SteeringTable::TagMap{{7, 1}}));

  s = Install("02:4d:00:00:00:00", "ff:ff:ff:00:00:00", 13, 1);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("rule 13: eth_dst 02:4d:00:00:00:00/ff:ff:ff:00:00:00"), std::string::npos)
      << s.error_message();
  EXPECT_TRUE(calls_.log.empty()) << "the NIC was written: " << calls_.log.front();
  EXPECT_EQ(d_->entries().size(), 3u);
}

TEST_F(VmdqDispatcherTest, ANicRefusalIsUndoneAndNamedWithTheDriversReason) {
  ASSERT_TRUE(Tags({{7, 1}}, {{7, {0}}}).ok());
  const std::vector<VmdqEntry> before = d_->entries();
  calls_.log.clear();
  calls_.fail_at = 5;  // 3 removals, 2 additions done, the third refused
  grpc::Status s = table_.set_tags("vmdq0", pb::TAG_MAC, {{7, 2}}, {{7, {0}}});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "NIC vmdq0 refused to add class MAC " + Mac(7, 0xffff) +
                                   " (pool of worker slot 2): No space left on device");
  std::vector<std::string> want{"remove " + Mac(7, 0), "remove " + Mac(7, 0xfffd), "remove " + Mac(7, 0xffff)};
  for (const std::string& a : Adds(7, {0, 0xfffd}, 2)) want.push_back(a);
  want.push_back("add " + Mac(7, 0xffff) + " 2 REFUSED");
  // Undo: what was added goes, what was removed comes back to its pool.
  want.push_back("remove " + Mac(7, 0));
  want.push_back("remove " + Mac(7, 0xfffd));
  for (const std::string& a : Adds(7, {0, 0xfffd, 0xffff}, 1)) want.push_back(a);
  EXPECT_EQ(calls_.log, want);
  EXPECT_EQ(d_->entries(), before);
  EXPECT_EQ(table_.tags("vmdq0", pb::TAG_MAC), (SteeringTable::TagMap{{7, 1}}));
}

TEST_F(VmdqDispatcherTest, APoolThatLostAMacIsDrainedBeforeTheChangeReturns) {
  ASSERT_TRUE(Tags({{7, 1}}, {{7, {0}}}).ok());
  calls_.backlog[1] = 5;  // frames of tag 7 still queued on slot 1
  ASSERT_TRUE(Tags({{7, 2}}, {{7, {0}}}).ok());
  EXPECT_EQ(calls_.backlog[1], 0) << "returned with frames still queued for the old pool";
  EXPECT_EQ(calls_.backlog_polls.count(2), 0u) << "waited for a pool that lost nothing";
  // A queue that never drains (no reader) holds the change up only for the bounded wait.
  calls_.backlog[2] = 1 << 30;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(Tags({}, {}).ok());
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, std::chrono::milliseconds(100));
  EXPECT_LT(waited, std::chrono::seconds(5));
}

TEST_F(VmdqDispatcherTest, ProbeAddsAndRemovesOneMacAndTheDestructorRemovesWhatIsLeft) {
  ASSERT_TRUE(d_->probe().ok());
  EXPECT_EQ(calls_.log, (std::vector<std::string>{"add " + Mac(1, 0) + " 3", "remove " + Mac(1, 0)}));
  ASSERT_TRUE(Tags({{5, 0}}, {{5, {3}}}).ok());
  calls_.log.clear();
  d_.reset();
  EXPECT_EQ(calls_.log, (std::vector<std::string>{"remove " + Mac(5, 3), "remove " + Mac(5, 0xfffd),
                                                  "remove " + Mac(5, 0xffff)}));
}

// EngineBackend (what the gRPC service calls) over a running Engine whose ingress is a real DPDK port (net_ring: no
// VMDq, so the dispatcher's NIC calls are recorded) dispatched by VMDq.
class VmdqBackendTest : public ::testing::Test {
 protected:
  static constexpr unsigned kCore = 1;  // lcore 1 of the test EAL; lcore 0 is this thread
  void SetUp() override {
    engine_ = std::make_unique<Engine>(std::vector<unsigned>{kCore}, test::pool());
    engine_->set_idle_sleep_us(100);
    engine_->add_port(DpdkPort::open("net_ring41", 1, 1, test::pool()));
    d_ = std::make_unique<VmdqDispatcher>("net_ring41", 1, 127, std::make_unique<RecordingOps>(&calls_));
    ASSERT_TRUE(steering_.add_nic(d_.get()).ok());
    backend_ = std::make_unique<EngineBackend>(engine_.get(), "test");
    backend_->set_nic_rules(&steering_);
    backend_->add_steered_nic("net_ring41", pb::DISPATCH_VMDQ);
    engine_->start();
  }
  void TearDown() override {
    if (engine_) engine_->stop();
    backend_.reset();
    engine_.reset();
  }
  grpc::Status Deploy(const std::string& id, pb::TagType type, uint32_t tag, std::vector<uint32_t> classes) {
    pb::DeployPipelineRequest r;
    r.set_pipeline_id(id);
    r.set_ingress_nic("net_ring41");
    r.add_egress()->set_nic("net_ring41");
    pb::GroupSpec* g = r.add_groups();
    g->set_group_id("g");
    g->set_click_config("input -> [0]output;");
    g->mutable_tag()->set_type(type);
    g->mutable_tag()->set_value(tag);
    g->set_core(kCore);
    for (uint32_t c : classes) g->add_class_ids(c);
    pb::PipelineStatus st;
    calls_.log.clear();
    return backend_->DeployPipeline(r, &st);
  }

  Calls calls_;
  SteeringTable steering_;
  std::unique_ptr<VmdqDispatcher> d_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<EngineBackend> backend_;
};

TEST_F(VmdqBackendTest, ResourcesReportTheModeMacTagsOnlyAndTheMacCapacity) {
  pb::ServerResources res;
  ASSERT_TRUE(backend_->GetResources({}, &res).ok());
  const pb::Nic* nic = nullptr;
  for (const auto& n : res.nics())
    if (n.name() == "net_ring41") nic = &n;
  ASSERT_NE(nic, nullptr) << res.DebugString();
  EXPECT_EQ(nic->active_mode(), pb::DISPATCH_VMDQ);
  ASSERT_EQ(nic->tag_types_size(), 1) << "VLAN tags cannot select a VMDq pool";
  EXPECT_EQ(nic->tag_types(0), pb::TAG_MAC);
  EXPECT_EQ(nic->max_nic_rules(), 127u);
  EXPECT_EQ(nic->rx_queues(), 1u) << "one pool per worker";
}

TEST_F(VmdqBackendTest, ADeployedGroupsClassesGoToItsCoresPoolAndLeaveWithIt) {
  ASSERT_TRUE(Deploy("chain1", pb::TAG_MAC, 7, {3, 4}).ok());
  EXPECT_EQ(calls_.log, Adds(7, {3, 4, 0xfffd, 0xffff}, 0));

  grpc::Status s = Deploy("chain2", pb::TAG_VLAN, 10, {0});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("NIC net_ring41 (VMDq MAC pools): VLAN tag 10"), std::string::npos)
      << s.error_message();
  EXPECT_TRUE(calls_.log.empty());
  pb::ListPipelinesReply list;
  ASSERT_TRUE(backend_->ListPipelines({}, &list).ok());
  EXPECT_EQ(list.pipelines_size(), 1) << "the refused pipeline was deployed anyway";

  calls_.log.clear();
  pb::RemovePipelineRequest rm;
  rm.set_pipeline_id("chain1");
  pb::RemovePipelineReply reply;
  ASSERT_TRUE(backend_->RemovePipeline(rm, &reply).ok());
  EXPECT_EQ(calls_.log.size(), 4u);
  EXPECT_TRUE(d_->entries().empty());
}

}  // namespace
}  // namespace metron

// The whole control path of a running agent: gRPC client -> ControlServer -> EngineBackend -> Engine worker,
// with group tags dispatched by the kernel (FanoutPort on a veth in a private netns) and real frames.
// An invalid configuration over gRPC must return INVALID_ARGUMENT and leave the running pipeline untouched:
// same status, same generation, and still counting its packets.
#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "control/server.h"
#include "core/engine.h"
#include "core/engine_backend.h"
#include "dispatch/fanout_port.h"
#include "dispatch/steering_table.h"
#include "dispatch/veth_fixture.h"
#include "metron/agent/v1/agent.grpc.pb.h"
#include "test_env.h"

namespace metron {
namespace {

constexpr unsigned kWorkerCore = 1;  // lcore 1 of the test EAL (lcores 0-1); lcore 0 is this thread

class EngineApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: netns, veth, AF_PACKET";
    engine_ = std::make_unique<Engine>(std::vector<unsigned>{kWorkerCore}, test::pool());
    backend_ = std::make_unique<EngineBackend>(engine_.get(), "test");
    backend_->set_nic_rules(&steering_);
    ControlOptions o;
    o.listen = "127.0.0.1:0";
    server_ = StartControlServer(o, backend_.get());
    stub_ = pb::MetronAgent::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials()));
    // Connect (and so bind the server) before this thread moves into the test namespace, whose loopback is down.
    grpc::ClientContext ctx;
    pb::HealthReply h;
    ASSERT_TRUE(stub_->Health(&ctx, pb::HealthRequest(), &h).ok());

    ns_ = std::make_unique<test::VethNetns>();
    auto port = FanoutPort::open({"rx0", static_cast<uint16_t>(engine_->slot_count()), 1024, 0}, test::pool());
    port_ = port.get();
    engine_->add_port(std::move(port));
    ASSERT_TRUE(steering_.add_nic(port_).ok());
    backend_->add_steered_nic("rx0", pb::DISPATCH_FANOUT_CBPF);
    engine_->start();
    sender_ = std::make_unique<test::RawSender>("tx0");
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
    if (engine_) engine_->stop();
    sender_.reset();
    server_.reset();
    backend_.reset();
    engine_.reset();  // closes the FanoutPort before its interface goes away with the namespace
    ns_.reset();
  }

  static pb::GroupSpec Group(const std::string& id, uint32_t tag, const std::string& click) {
    pb::GroupSpec g;
    g.set_group_id(id);
    g.set_click_config(click);
    g.mutable_tag()->set_type(pb::TAG_MAC);
    g.mutable_tag()->set_value(tag);
    g.set_core(kWorkerCore);
    g.add_class_ids(3);
    return g;
  }

  grpc::Status Deploy(const std::string& id, const pb::GroupSpec& g, pb::PipelineStatus* out, uint64_t token = 0) {
    pb::DeployPipelineRequest r;
    r.set_pipeline_id(id);
    r.set_owner_token(token);
    r.set_ingress_nic("rx0");
    r.add_egress()->set_nic("rx0");
    *r.add_groups() = g;
    grpc::ClientContext ctx;
    const grpc::Status s = stub_->DeployPipeline(&ctx, r, out);
    if (!s.ok()) std::fprintf(stderr, "DeployPipeline %s: %s\n", id.c_str(), s.error_message().c_str());
    return s;
  }

  // Packets the group has counted, polled until it reaches `want` (or 5 s).
  uint64_t WaitGroupPackets(const std::string& group, uint64_t want) {
    uint64_t got = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    do {
      grpc::ClientContext ctx;
      pb::Stats stats;
      EXPECT_TRUE(stub_->GetStats(&ctx, pb::StatsRequest(), &stats).ok());
      for (const auto& g : stats.groups()) {
        if (g.group_id() == group) got = g.packets();
      }
      if (got >= want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } while (std::chrono::steady_clock::now() < deadline);
    return got;
  }

  std::string Pipelines() {
    grpc::ClientContext ctx;
    pb::ListPipelinesReply list;
    EXPECT_TRUE(stub_->ListPipelines(&ctx, pb::ListPipelinesRequest(), &list).ok());
    return list.DebugString();
  }

  void SendTagged(uint16_t group, int n) {
    for (int i = 0; i < n; ++i) sender_->Send(test::MacTagged(group, 3, i));
  }

  SteeringTable steering_;
  FanoutPort* port_ = nullptr;  // owned by engine_
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<EngineBackend> backend_;
  std::unique_ptr<ControlServer> server_;
  std::unique_ptr<pb::MetronAgent::Stub> stub_;
  std::unique_ptr<test::VethNetns> ns_;
  std::unique_ptr<test::RawSender> sender_;
};

TEST_F(EngineApiTest, InvalidConfigIsRejectedAndTheRunningPipelineIsUntouched) {
  pb::PipelineStatus st;
  grpc::Status s = Deploy("chain1", Group("g1", 7, "input -> [0]output;"), &st);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(st.state(), pb::PIPELINE_RUNNING);
  EXPECT_EQ(st.generation(), 1u);
  EXPECT_EQ(steering_.tags("rx0", pb::TAG_MAC), (SteeringTable::TagMap{{7, 0}})) << "tag 7 steered to core 1's queue";

  SendTagged(7, 20);
  ASSERT_EQ(WaitGroupPackets("g1", 20), 20u);
  const std::string before = Pipelines();

  // A Click error in a new pipeline, then in an update of the running one: both INVALID_ARGUMENT.
  s = Deploy("chain2", Group("h1", 8, "input -> NoSuchElement -> [0]output;"), &st);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("NoSuchElement"), std::string::npos) << s.error_message();
  {
    pb::UpdatePipelineRequest u;
    u.set_pipeline_id("chain1");
    *u.add_groups() = Group("g1", 7, "input -> [0]output;\n  -> -> ;");
    grpc::ClientContext ctx;
    s = stub_->UpdatePipeline(&ctx, u, &st);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("2:"), std::string::npos) << "no line:col in: " << s.error_message();
  }
  // Caught by the control layer before the engine: a tag that cannot exist.
  s = Deploy("chain3", Group("k1", 0, "input -> [0]output;"), &st);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "groups[0].tag.value: 0 is not a MAC group tag 1..65535");

  EXPECT_EQ(Pipelines(), before) << "a failed call changed the running pipelines";
  EXPECT_EQ(steering_.tags("rx0", pb::TAG_MAC), (SteeringTable::TagMap{{7, 0}})) << "a failed call changed dispatch";
  SendTagged(7, 20);
  EXPECT_EQ(WaitGroupPackets("g1", 40), 40u) << "the running pipeline stopped processing";
}

TEST_F(EngineApiTest, UpdateMovesTheGroupToANewTag) {
  pb::PipelineStatus st;
  ASSERT_TRUE(Deploy("chain1", Group("g1", 7, "input -> [0]output;"), &st).ok());
  pb::UpdatePipelineRequest u;
  u.set_pipeline_id("chain1");
  *u.add_groups() = Group("g2", 9, "input -> [0]output;");
  grpc::ClientContext ctx;
  grpc::Status s = stub_->UpdatePipeline(&ctx, u, &st);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(st.generation(), 2u);
  ASSERT_EQ(st.groups_size(), 1);
  EXPECT_EQ(st.groups(0).group_id(), "g2");
  EXPECT_EQ(steering_.tags("rx0", pb::TAG_MAC), (SteeringTable::TagMap{{9, 0}}));
  SendTagged(9, 15);
  EXPECT_EQ(WaitGroupPackets("g2", 15), 15u);

  pb::RemovePipelineRequest rm;
  rm.set_pipeline_id("chain1");
  pb::RemovePipelineReply rr;
  grpc::ClientContext ctx2;
  ASSERT_TRUE(stub_->RemovePipeline(&ctx2, rm, &rr).ok());
  EXPECT_TRUE(steering_.tags("rx0", pb::TAG_MAC).empty()) << "removed pipeline's tag still steered";
  grpc::ClientContext ctx3;
  EXPECT_EQ(stub_->RemovePipeline(&ctx3, rm, &rr).error_code(), grpc::StatusCode::NOT_FOUND);
}

// Fencing (agent.proto, owner_token): a controller instance that lost the chain (term 5) acts late, after the new
// owner (term 6) redeployed the chain's pipeline here. Its remove, update, state import and deploy are refused
// with ABORTED naming the pipeline and both tokens; the new owner's pipeline keeps its groups, dispatch and
// counters. Tokens are per pipeline, outlive the pipeline's removal, and 0 (unfenced) is admitted.
TEST_F(EngineApiTest, ALateFormerOwnerCannotUndoTheNewOwnersPipeline) {
  pb::PipelineStatus st;
  ASSERT_TRUE(Deploy("web", Group("g1", 7, "input -> [0]output;"), &st, 5).ok());
  EXPECT_EQ(st.owner_token(), 5u);
  // the new owner takes the chain over: removes what it finds and deploys its own
  pb::RemovePipelineRequest rm;
  rm.set_pipeline_id("web");
  rm.set_owner_token(6);
  pb::RemovePipelineReply rr;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->RemovePipeline(&ctx, rm, &rr).ok());
  }
  grpc::Status s = Deploy("web", Group("n1", 8, "input -> [0]output;"), &st, 6);
  ASSERT_TRUE(s.ok()) << s.error_message();
  SendTagged(8, 10);
  ASSERT_EQ(WaitGroupPackets("n1", 10), 10u);
  const std::string before = Pipelines();

  // the former owner, late
  rm.set_owner_token(5);
  {
    grpc::ClientContext ctx;
    s = stub_->RemovePipeline(&ctx, rm, &rr);
  }
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_EQ(s.error_message(), "RemovePipeline of pipeline web refused: owner token 5 is older than 6, the newest "
                               "this agent has seen for it (another controller instance owns the chain)");
  pb::UpdatePipelineRequest u;
  u.set_pipeline_id("web");
  u.set_owner_token(5);
  *u.add_groups() = Group("g1", 7, "input -> [0]output;");
  {
    grpc::ClientContext ctx;
    s = stub_->UpdatePipeline(&ctx, u, &st);
  }
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message();
  pb::ImportStateRequest imp;
  imp.mutable_snapshot()->set_pipeline_id("web");
  imp.mutable_snapshot()->set_group_id("n1");
  imp.set_owner_token(5);
  pb::ImportStateReply ir;
  {
    grpc::ClientContext ctx;
    s = stub_->ImportState(&ctx, imp, &ir);
  }
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message();
  s = Deploy("web", Group("g1", 7, "input -> [0]output;"), &st, 5);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message();

  EXPECT_EQ(Pipelines(), before) << "a refused call changed the running pipelines";
  EXPECT_NE(before.find("owner_token: 6"), std::string::npos) << before;
  EXPECT_EQ(steering_.tags("rx0", pb::TAG_MAC), (SteeringTable::TagMap{{8, 0}})) << "a refused call changed dispatch";
  SendTagged(8, 10);
  EXPECT_EQ(WaitGroupPackets("n1", 20), 20u) << "the new owner's pipeline stopped processing";

  // another pipeline has tokens of its own; 0 is unfenced and changes nothing
  ASSERT_TRUE(Deploy("db", Group("d1", 9, "input -> [0]output;"), &st, 2).ok());
  u.set_pipeline_id("web");
  u.set_owner_token(0);
  u.clear_groups();
  *u.add_groups() = Group("n1", 8, "input -> [0]output;");
  {
    grpc::ClientContext ctx;
    s = stub_->UpdatePipeline(&ctx, u, &st);
  }
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(st.owner_token(), 6u);

  // the new owner moves the chain away; the late former owner's deploy is still refused
  rm.set_owner_token(6);
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->RemovePipeline(&ctx, rm, &rr).ok());
  }
  s = Deploy("web", Group("g1", 7, "input -> [0]output;"), &st, 5);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message();
  EXPECT_EQ(Pipelines().find("web"), std::string::npos) << Pipelines();
}

// A chain update make-before-break (docs/updates.md): the next version's group runs beside the running one under
// its own tag, with the same class, and the pipeline takes the update's egress; the running group is kept as it
// was (its counters go on: not rebuilt) until a later update retires it.
TEST_F(EngineApiTest, ANextVersionRunsBesideTheRunningOneUntilItIsRetired) {
  pb::PipelineStatus st;
  ASSERT_TRUE(Deploy("chain1", Group("g1", 7, "input -> [0]output;"), &st).ok());
  SendTagged(7, 10);
  ASSERT_EQ(WaitGroupPackets("g1", 10), 10u);

  pb::UpdatePipelineRequest both;
  both.set_pipeline_id("chain1");
  *both.add_groups() = Group("g1", 7, "input -> [0]output;");
  *both.add_groups() = Group("g1~v1", 9, "input -> [0]output;");  // class 3 in both
  pb::Egress* e = both.add_egress();
  e->set_nic("rx0");
  e->set_dst_mac("02:4d:00:09:ff:fe");
  grpc::ClientContext ctx;
  grpc::Status s = stub_->UpdatePipeline(&ctx, both, &st);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(st.groups_size(), 2);
  EXPECT_EQ(steering_.tags("rx0", pb::TAG_MAC), (SteeringTable::TagMap{{7, 0}, {9, 0}}));
  SendTagged(7, 5);
  SendTagged(9, 15);
  EXPECT_EQ(WaitGroupPackets("g1", 15), 15u) << "the running group was rebuilt";
  EXPECT_EQ(WaitGroupPackets("g1~v1", 15), 15u);

  pb::UpdatePipelineRequest next;
  next.set_pipeline_id("chain1");
  *next.add_groups() = Group("g1~v1", 9, "input -> [0]output;");
  grpc::ClientContext ctx2;
  s = stub_->UpdatePipeline(&ctx2, next, &st);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(st.groups_size(), 1);
  EXPECT_EQ(steering_.tags("rx0", pb::TAG_MAC), (SteeringTable::TagMap{{9, 0}}));
  SendTagged(9, 5);
  EXPECT_EQ(WaitGroupPackets("g1~v1", 20), 20u) << "the next version's group was rebuilt when the old one went";

  // a deployment still refuses a class in two groups
  pb::DeployPipelineRequest dup;
  dup.set_pipeline_id("chain2");
  dup.set_ingress_nic("rx0");
  *dup.add_groups() = Group("a", 11, "input -> [0]output;");
  *dup.add_groups() = Group("b", 12, "input -> [0]output;");
  grpc::ClientContext ctx3;
  EXPECT_EQ(stub_->DeployPipeline(&ctx3, dup, &st).error_message(), "groups[1].class_ids[0]: 3 already belongs to groups[0] (a class in several groups needs a disjoint slice in each)");
}

// NicAction.queue names a worker core (agent.proto); the worker here is core 1 polling queue 0 of a
// one-queue NIC, so the rule must be accepted, listed back with the core id, and a non-worker core refused.
TEST_F(EngineApiTest, NicRuleQueuesNameWorkerCoresNotQueueIndexes) {
  auto rule = [](uint64_t id, uint32_t core) {
    pb::NicRule r;
    r.set_id(id);
    r.set_nic("rx0");
    r.mutable_match()->set_eth_dst("02:4d:00:09:00:00");
    r.mutable_match()->set_eth_dst_mask("ff:ff:ff:ff:00:00");
    r.mutable_action()->set_queue(core);
    return r;
  };
  {
    pb::NicRuleBatch b;
    *b.add_rules() = rule(0x1234567890abcdefULL, kWorkerCore);
    grpc::ClientContext ctx;
    pb::NicRuleReply reply;
    const grpc::Status s = stub_->InstallNicRules(&ctx, b, &reply);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  {
    grpc::ClientContext ctx;
    pb::ListNicRulesRequest req;
    req.set_nic("rx0");
    pb::NicRuleList list;
    ASSERT_TRUE(stub_->ListNicRules(&ctx, req, &list).ok());
    ASSERT_EQ(list.rules_size(), 1) << list.DebugString();
    EXPECT_EQ(list.rules(0).id(), 0x1234567890abcdefULL);
    EXPECT_EQ(list.rules(0).action().queue(), kWorkerCore);
  }
  {
    pb::NicRuleBatch b;
    *b.add_rules() = rule(2, 0);  // core 0 runs no worker here
    grpc::ClientContext ctx;
    pb::NicRuleReply reply;
    const grpc::Status s = stub_->InstallNicRules(&ctx, b, &reply);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("core 0"), std::string::npos) << s.error_message();
  }
}

// NIC rules are fenced like pipelines (agent.proto NicRuleBatch.owner_token): the new owner (term 6) installed the
// chain's rule; the former owner (term 5), late, can neither remove it nor install its own; tokens are the chain's
// (a rule call with term 6 also fences that chain's pipeline calls) and an empty pipeline is unfenced.
TEST_F(EngineApiTest, ALateFormerOwnerCannotInstallOrRemoveTheNewOwnersNicRules) {
  auto batch = [](uint64_t id, uint64_t token) {
    pb::NicRuleBatch b;
    pb::NicRule* r = b.add_rules();
    r->set_id(id);
    r->set_nic("rx0");
    r->mutable_match()->set_eth_dst("02:4d:00:09:00:00");
    r->mutable_match()->set_eth_dst_mask("ff:ff:ff:ff:00:00");
    r->mutable_action()->set_queue(kWorkerCore);
    b.set_pipeline_id("web");
    b.set_owner_token(token);
    return b;
  };
  auto install = [this](const pb::NicRuleBatch& b) {
    grpc::ClientContext ctx;
    pb::NicRuleReply reply;
    return stub_->InstallNicRules(&ctx, b, &reply);
  };
  auto remove = [this](uint64_t id, const std::string& pipeline, uint64_t token) {
    pb::NicRuleIds ids;
    ids.add_ids(id);
    ids.set_pipeline_id(pipeline);
    ids.set_owner_token(token);
    grpc::ClientContext ctx;
    pb::NicRuleReply reply;
    return stub_->RemoveNicRules(&ctx, ids, &reply);
  };
  auto listed = [this]() {
    grpc::ClientContext ctx;
    pb::NicRuleList list;
    EXPECT_TRUE(stub_->ListNicRules(&ctx, pb::ListNicRulesRequest(), &list).ok());
    std::vector<uint64_t> ids;
    for (const auto& r : list.rules()) ids.push_back(r.id());
    return ids;
  };
  grpc::Status s = install(batch(6001, 6));
  ASSERT_TRUE(s.ok()) << s.error_message();

  s = remove(6001, "web", 5);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message();
  EXPECT_EQ(s.error_message(), "RemoveNicRules of pipeline web refused: owner token 5 is older than 6, the newest "
                               "this agent has seen for it (another controller instance owns the chain)");
  s = install(batch(5001, 5));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << s.error_message();
  EXPECT_EQ(listed(), std::vector<uint64_t>{6001}) << "a refused call changed the NIC rules";
  pb::PipelineStatus st;
  s = Deploy("web", Group("g1", 7, "input -> [0]output;"), &st, 5);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED) << "the chain's token is one, pipelines and NIC rules alike";

  // unfenced (no pipeline named) is admitted; the new owner removes its rule
  s = remove(6001, "", 0);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(listed().empty());
}

TEST_F(EngineApiTest, ResourcesAndLoadStreamDescribeTheRunningAgent) {
  pb::PipelineStatus st;
  ASSERT_TRUE(Deploy("chain1", Group("g1", 7, "input -> [0]output;"), &st).ok());
  {
    grpc::ClientContext ctx;
    pb::ServerResources res;
    ASSERT_TRUE(stub_->GetResources(&ctx, pb::GetResourcesRequest(), &res).ok());
    const pb::Nic* rx0 = nullptr;
    for (const auto& n : res.nics()) {
      if (n.name() == "rx0") rx0 = &n;
    }
    ASSERT_NE(rx0, nullptr) << res.DebugString();
    EXPECT_EQ(rx0->active_mode(), pb::DISPATCH_FANOUT_CBPF);
    EXPECT_EQ(rx0->rx_queues(), engine_->slot_count());
    EXPECT_EQ(rx0->max_nic_rules(), port_->max_rules()) << "capacity must be the dispatcher's own";
    ASSERT_EQ(res.tags_in_use_size(), 1);
    EXPECT_EQ(res.tags_in_use(0), 7u);
  }
  std::atomic<bool> stop{false};
  std::thread traffic([&] {
    while (!stop) {
      SendTagged(7, 10);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  grpc::ClientContext ctx;
  pb::LoadStreamRequest req;
  req.set_interval_ms(50);
  auto reader = stub_->StreamLoad(&ctx, req);
  std::vector<pb::Stats> reports(5);
  for (auto& r : reports) ASSERT_TRUE(reader->Read(&r));
  ctx.TryCancel();
  pb::Stats rest;
  while (reader->Read(&rest)) {
  }
  stop = true;
  traffic.join();
  for (size_t i = 0; i < reports.size(); ++i) {
    const pb::Stats& r = reports[i];
    ASSERT_EQ(r.cores_size(), 1) << r.DebugString();
    EXPECT_EQ(r.cores(0).core(), kWorkerCore);
    EXPECT_GE(r.cores(0).load(), 0.0);
    EXPECT_LE(r.cores(0).load(), 1.0);
    if (i > 0) {
      EXPECT_GT(r.timestamp_ns(), reports[i - 1].timestamp_ns());
      EXPECT_GE(r.cores(0).total_cycles(), reports[i - 1].cores(0).total_cycles());
    }
  }
  uint64_t first = 0, last = 0;
  for (const auto& g : reports.front().groups()) first = g.group_id() == "g1" ? g.packets() : first;
  for (const auto& g : reports.back().groups()) last = g.group_id() == "g1" ? g.packets() : last;
  EXPECT_GT(last, first) << "the stream's group counters did not move under traffic";
}

// A declared flow-table capacity: the memory it reserves leaves GetResources' flow memory, a full table's shed
// flows are counted in GetStats per element, and a capacity the memory cannot hold is refused at deploy with
// RESOURCE_EXHAUSTED naming the element, the capacity and the memory available.
TEST_F(EngineApiTest, DeclaredFlowCapacityIsReservedAndItsShedsAreExported) {
  auto resources = [&] {
    grpc::ClientContext ctx;
    pb::ServerResources res;
    EXPECT_TRUE(stub_->GetResources(&ctx, pb::GetResourcesRequest(), &res).ok());
    return res;
  };
  const pb::ServerResources before = resources();
  EXPECT_GT(before.flow_memory_free_bytes(), 0u);
  EXPECT_GT(before.flow_entry_bytes(), before.flow_entry_bytes_ipv4());
  EXPECT_GT(before.flow_entry_bytes_ipv4(), 100u);
  const std::string napt = "input -> Strip(14) -> MarkIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -, "
                           "GUARANTEE 60, CAPACITY ";
  pb::PipelineStatus st;
  grpc::Status s = Deploy("chain1", Group("g1", 7, napt + "200000) -> Unstrip(14) -> [0]output;"), &st);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_LT(resources().flow_memory_free_bytes() + 200000ull * 100, before.flow_memory_free_bytes())
      << "200,000 declared flows were not reserved";
  pb::UpdatePipelineRequest u;
  u.set_pipeline_id("chain1");
  *u.add_groups() = Group("g1", 7, napt + "16) -> Unstrip(14) -> [0]output;");
  {
    grpc::ClientContext ctx;
    s = stub_->UpdatePipeline(&ctx, u, &st);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  for (uint32_t i = 0; i < 40; ++i) {  // 40 flows into 16: every flow is within its guarantee, 24 are refused
    test::FrameSpec f = test::MacTagged(7, 3, i);
    f.sport = static_cast<uint16_t>(1000 + i);
    sender_->Send(f);
  }
  ASSERT_EQ(WaitGroupPackets("g1", 40), 40u);
  grpc::ClientContext ctx;
  pb::Stats stats;
  ASSERT_TRUE(stub_->GetStats(&ctx, pb::StatsRequest(), &stats).ok());
  ASSERT_EQ(stats.groups_size(), 1);
  ASSERT_EQ(stats.groups(0).flow_state_size(), 1) << stats.DebugString();
  const pb::FlowStateStats& fs = stats.groups(0).flow_state(0);
  EXPECT_EQ(fs.element(), "rw");
  EXPECT_EQ(fs.kind(), "SynthRewriter");
  EXPECT_EQ(fs.flows(), 16u);
  EXPECT_EQ(fs.capacity(), 16u);
  EXPECT_EQ(fs.declared_capacity(), 16u);
  EXPECT_EQ(fs.refused(), 24u);
  EXPECT_EQ(fs.evicted(), 0u);
  EXPECT_EQ(fs.mapping_failures(), 24u);
  EXPECT_GT(fs.memory_bytes(), 0u);

  s = Deploy("chain2", Group("h1", 8, napt + "60000000) -> Unstrip(14) -> [0]output;"), &st);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("groups[0].click_config: 1:"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("element 'rw' (SynthRewriter): CAPACITY 60000000 (flows per core) needs "),
            std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find(" MB available on NUMA node 0"), std::string::npos) << s.error_message();
}

TEST_F(EngineApiTest, StreamLoadAlertsAsSoonAsACoreOverloads) {
  // 2 ms per frame: 100 frames keep the core busy for 200 ms.
  const uint64_t cycles = rte_get_tsc_hz() / 500;
  pb::PipelineStatus st;
  ASSERT_TRUE(Deploy("chain1", Group("g1", 7, "input -> SpinCycles(CYCLES " + std::to_string(cycles) +
                                                  ") -> [0]output;"), &st).ok());
  // An hour between regular reports: any report after the first is an alert's.
  pb::LoadStreamRequest req;
  req.set_interval_ms(3600 * 1000);
  req.set_alert_load(0.8);
  {
    // Idle core: no alert.
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(400));
    auto reader = stub_->StreamLoad(&ctx, req);
    pb::Stats r;
    ASSERT_TRUE(reader->Read(&r));
    EXPECT_FALSE(reader->Read(&r)) << "an idle core raised an alert: " << r.DebugString();
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto reader = stub_->StreamLoad(&ctx, req);
  pb::Stats first, alert;
  ASSERT_TRUE(reader->Read(&first));
  SendTagged(7, 100);
  ASSERT_TRUE(reader->Read(&alert)) << "no alert while the core worked through 200 ms of frames";
  ASSERT_EQ(alert.cores_size(), 1);
  EXPECT_GE(alert.cores(0).load(), 0.8) << "the alert report's load (since the first report) is below the alert";
  // Ticks are an hour apart: the alert came long before the next, after the frames had kept the core busy.
  EXPECT_LT(alert.timestamp_ns() - first.timestamp_ns(), 10'000'000'000ull);
  ctx.TryCancel();
  while (reader->Read(&alert)) {
  }
  WaitGroupPackets("g1", 100);
}


// On a CPU shared with other threads the kernel preempts a busy worker in the middle of a batch; the batch's rdtsc
// interval then holds the time it waited, and a short alert window holding it read overloaded (the policy splits on
// one such report: at load the emulated servers split groups carrying ~0.15). A thread of higher priority, pinned to
// the worker's CPU, takes it for 40 ms while the worker spins through a frame of 4 ms: the batch then reads 44 ms
// busy, but no alert comes, and the report says how long the worker waited. (A core busy for 200 ms of frames with no
// rival still alerts: StreamLoadAlertsAsSoonAsACoreOverloads.)
TEST_F(EngineApiTest, AWorkerPreemptedInsideABatchRaisesNoOverloadAlert) {
  const uint64_t hz = rte_get_tsc_hz();
  pb::PipelineStatus st;
  // 4 ms as two spins of 2 ms: SpinCycles takes at most 10M cycles, under 4 ms on a TSC above 2.5 GHz.
  const std::string spin = "SpinCycles(CYCLES " + std::to_string(hz / 500) + ")";
  ASSERT_TRUE(Deploy("chain1", Group("g1", 7, "input -> " + spin + " -> " + spin + " -> [0]output;"), &st).ok());
  SendTagged(7, 1);
  ASSERT_EQ(WaitGroupPackets("g1", 1), 1u);
  rte_cpuset_t cpus = rte_lcore_cpuset(kWorkerCore);
  std::atomic<bool> go{false};
  std::atomic<int> ready{0};  // 1: pinned at real-time priority, -1: could not be
  std::thread rival([&] {
    sched_param sp{};
    sp.sched_priority = 1;
    const bool ok = pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0 &&
                    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
    ready = ok ? 1 : -1;
    if (!ok) return;
    while (!go.load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    const uint64_t end = rte_rdtsc() + hz / 25;  // 40 ms on the worker's CPU
    while (rte_rdtsc() < end) {
    }
  });
  while (ready.load() == 0) std::this_thread::yield();
  ASSERT_EQ(ready.load(), 1) << "cannot pin a SCHED_FIFO thread to the worker's CPU (needs root)";
  pb::LoadStreamRequest req;
  req.set_interval_ms(3600 * 1000);  // an hour between regular reports: any report after the first is an alert's
  req.set_alert_load(0.8);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  auto reader = stub_->StreamLoad(&ctx, req);
  pb::Stats first, second;
  ASSERT_TRUE(reader->Read(&first));
  SendTagged(7, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the worker is inside its frame
  go = true;
  rival.join();
  EXPECT_FALSE(reader->Read(&second)) << "an alert for a worker preempted inside its batch: " << second.DebugString();
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  ASSERT_EQ(WaitGroupPackets("g1", 2), 2u);
  grpc::ClientContext sctx;
  pb::Stats now;
  ASSERT_TRUE(stub_->GetStats(&sctx, pb::StatsRequest(), &now).ok());
  ASSERT_EQ(now.cores_size(), 1);
  const double waited_ms = static_cast<double>(now.cores(0).unscheduled_cycles() - first.cores(0).unscheduled_cycles()) *
                           1e3 / static_cast<double>(hz);
  EXPECT_GE(waited_ms, 30.0) << "the report says how long the worker waited for its CPU";
}

}  // namespace
}  // namespace metron

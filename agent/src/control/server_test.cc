// The control server over a real gRPC channel on loopback.
#include "control/server.h"

#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "control/recording_backend.h"
#include "dispatch/fanout_port.h"
#include "dispatch/veth_fixture.h"
#include "metron/agent/v1/agent.grpc.pb.h"
#include "test_env.h"

namespace metron {
namespace {

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ControlOptions o;
    o.listen = "127.0.0.1:0";
    server_ = StartControlServer(o, &backend_);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials());
    stub_ = pb::MetronAgent::NewStub(channel_);
  }
  void TearDown() override { server_.reset(); }

  pb::DeployPipelineRequest GoodDeploy() {
    pb::DeployPipelineRequest r;
    r.set_pipeline_id("fw-napt-lb");
    r.set_ingress_nic("eth1");
    pb::Egress* e = r.add_egress();
    e->set_nic("eth2");
    e->set_dst_mac("aa:bb:cc:dd:ee:ff");
    for (int i = 0; i < 2; ++i) {
      pb::GroupSpec* g = r.add_groups();
      g->set_group_id("g" + std::to_string(i));
      g->set_click_config("input -> [0]output;");
      g->mutable_tag()->set_type(pb::TAG_MAC);
      g->mutable_tag()->set_value(7 + i);
      g->set_core(i);
      g->add_class_ids(i);
    }
    return r;
  }

  // Adds class `cls` to the group (if missing) with the slice sport & mask == value.
  static void Slice(pb::GroupSpec* g, uint32_t cls, uint32_t mask, uint32_t value) {
    if (std::find(g->class_ids().begin(), g->class_ids().end(), cls) == g->class_ids().end()) g->add_class_ids(cls);
    pb::ClassSlice* sl = g->add_slices();
    sl->set_class_id(cls);
    sl->mutable_sport()->set_mask(mask);
    sl->mutable_sport()->set_value(value);
  }

  grpc::Status Deploy(const pb::DeployPipelineRequest& r) {
    grpc::ClientContext ctx;
    pb::PipelineStatus out;
    return stub_->DeployPipeline(&ctx, r, &out);
  }

  test::RecordingBackend backend_;
  std::unique_ptr<ControlServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::MetronAgent::Stub> stub_;
};

TEST_F(ServerTest, ListensOnLoopbackByDefault) {
  EXPECT_EQ(ControlOptions().listen, "127.0.0.1:50051");
  EXPECT_FALSE(server_->tls());
  grpc::ClientContext ctx;
  pb::HealthReply reply;
  ASSERT_TRUE(stub_->Health(&ctx, pb::HealthRequest(), &reply).ok());
  EXPECT_TRUE(reply.serving());
  EXPECT_EQ(reply.boot_id(), 0xabcdef0123456789ull);
}

TEST_F(ServerTest, ValidDeployReachesBackend) {
  grpc::ClientContext ctx;
  pb::PipelineStatus out;
  grpc::Status s = stub_->DeployPipeline(&ctx, GoodDeploy(), &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(out.pipeline_id(), "fw-napt-lb");
  EXPECT_EQ(out.state(), pb::PIPELINE_RUNNING);
  EXPECT_EQ(backend_.deploys, 1);
}

TEST_F(ServerTest, InvalidRequestsAreRejectedNamingFieldAndValueBeforeTheBackend) {
  struct Case {
    std::function<void(pb::DeployPipelineRequest&)> mutate;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& r) { r.clear_pipeline_id(); }, "pipeline_id: empty"},
      {[](auto& r) { r.set_pipeline_id(std::string("a\nb")); }, "pipeline_id: \"a?b\" contains a control character"},
      {[](auto& r) { r.clear_ingress_nic(); }, "ingress_nic: empty"},
      {[](auto& r) { r.clear_groups(); }, "groups: empty: a pipeline needs a group"},
      {[](auto& r) { r.mutable_groups(1)->mutable_tag()->set_value(0); },
       "groups[1].tag.value: 0 is not a MAC group tag 1..65535"},
      {[](auto& r) { r.mutable_groups(1)->mutable_tag()->set_value(7); },
       "groups[1].tag.value: 7 is also the tag of groups[0]"},
      {[](auto& r) {
         r.mutable_groups(0)->mutable_tag()->set_type(pb::TAG_VLAN);
         r.mutable_groups(0)->mutable_tag()->set_value(4095);
       },
       "groups[0].tag.value: 4095 is not a VLAN id 1..4094"},
      {[](auto& r) { r.mutable_groups(0)->mutable_tag()->set_type(pb::TAG_TYPE_UNSPECIFIED); },
       "groups[0].tag.type: 0 is not TAG_MAC or TAG_VLAN"},
      {[](auto& r) { r.mutable_groups(1)->set_group_id("g0"); }, "groups[1].group_id: \"g0\" repeats groups[0]"},
      {[](auto& r) { r.mutable_groups(0)->set_click_config("  \n"); }, "groups[0].click_config: empty"},
      {[](auto& r) { r.mutable_groups(1)->add_class_ids(0); },
       "groups[1].class_ids[1]: 0 already belongs to groups[0]"},
      {[](auto& r) { Slice(r.mutable_groups(1), 0, 1, 1); },
       "groups[1].class_ids[1]: 0 already belongs to groups[0] (a class in several groups needs a disjoint slice"},
      {[](auto& r) {
         Slice(r.mutable_groups(0), 0, 1, 0);
         Slice(r.mutable_groups(1), 0, 2, 0);
       },
       "groups[1].class_ids[1]: the slice of class 0 overlaps that of groups[0]"},
      {[](auto& r) { r.mutable_groups(0)->add_slices()->set_class_id(5); },
       "groups[0].slices[0].sport.mask: 0: a slice needs at least one bit"},
      {[](auto& r) {
         pb::ClassSlice* sl = r.mutable_groups(0)->add_slices();
         sl->set_class_id(0);
         sl->mutable_sport()->set_mask(1);
         sl->mutable_sport()->set_value(2);
       },
       "groups[0].slices[0].sport: mask 1 value 2: need a 16-bit mask and value bits within it"},
      {[](auto& r) {
         pb::ClassSlice* sl = r.mutable_groups(0)->add_slices();
         sl->set_class_id(5);
         sl->mutable_sport()->set_mask(1);
       },
       "groups[0].slices[0].class_id: 5 is not among the group's class_ids"},
      {[](auto& r) { r.mutable_groups(0)->mutable_state_filter()->set_mask(0x10000); },
       "groups[0].state_filter: mask 65536 value 0: need a 16-bit mask"},
      {[](auto& r) { r.mutable_groups(0)->mutable_port_share()->set_index(2); },
       "groups[0].port_share.count: 0 is not in 1..65536"},
      {[](auto& r) {
         r.mutable_groups(0)->mutable_port_share()->set_index(16);
         r.mutable_groups(0)->mutable_port_share()->set_count(16);
       },
       "groups[0].port_share.index: 16 is not below count 16"},
      {[](auto& r) {
         for (int g : {0, 1}) {
           r.mutable_groups(g)->mutable_port_share()->set_index(3);
           r.mutable_groups(g)->mutable_port_share()->set_count(16);
         }
       },
       "groups[1].port_share: share 3 of 16 is also that of groups[0]"},
      {[](auto& r) { r.mutable_groups(0)->add_class_ids(70000); },
       "groups[0].class_ids[1]: 70000 exceeds 65535"},
      {[](auto& r) { r.mutable_groups(0)->add_state_from("g1"); },
       "groups[0].state_from: \"g1\": only UpdatePipeline initialises state"},
      {[](auto& r) { r.mutable_egress(0)->set_dst_mac("aa:bb"); },
       "egress[0].dst_mac: \"aa:bb\" is not a MAC address"},
      {[](auto& r) { r.mutable_egress(0)->set_vlan(5000); }, "egress[0].vlan: 5000 is not a VLAN id 1..4094"},
  };
  for (const Case& c : cases) {
    pb::DeployPipelineRequest r = GoodDeploy();
    c.mutate(r);
    grpc::Status s = Deploy(r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.message;
    EXPECT_EQ(s.error_message().rfind(c.message, 0), 0u) << "got: " << s.error_message();
  }
  EXPECT_EQ(backend_.mutations, 0) << "an invalid request reached the backend";
}

TEST_F(ServerTest, AClassDividedIntoDisjointSlicesMayBeInSeveralGroups) {
  pb::DeployPipelineRequest r = GoodDeploy();
  Slice(r.mutable_groups(0), 0, 1, 0);
  Slice(r.mutable_groups(1), 0, 1, 1);
  pb::GroupSpec* g = r.add_groups();
  *g = r.groups(1);
  g->set_group_id("g2");
  g->mutable_tag()->set_value(9);
  g->clear_class_ids();
  g->clear_slices();
  Slice(g, 0, 3, 2);  // bit 0 clear, like groups[0]'s slice, but bit 1 set: groups[0] would overlap it
  grpc::Status s = Deploy(r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "groups[2].class_ids[0]: the slice of class 0 overlaps that of groups[0]");
  r.mutable_groups(0)->mutable_slices(0)->mutable_sport()->set_mask(3);  // now bit 0 and 1 clear
  s = Deploy(r);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(backend_.mutations, 1);
}

TEST_F(ServerTest, OtherInvalidRequestsNameTheirField) {
  {
    grpc::ClientContext ctx;
    pb::UpdatePipelineRequest r;
    r.set_pipeline_id("p");
    pb::GroupSpec* g = r.add_groups();
    g->set_group_id("b");
    g->set_click_config("input -> [0]output;");
    g->mutable_tag()->set_type(pb::TAG_MAC);
    g->mutable_tag()->set_value(9);
    g->add_state_from("a");
    g->add_state_from("a");
    pb::PipelineStatus out;
    grpc::Status s = stub_->UpdatePipeline(&ctx, r, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "groups[0].state_from[1]: \"a\" is listed twice");
  }
  {
    grpc::ClientContext ctx;
    pb::NicRuleBatch b;
    pb::NicRuleReply out;
    grpc::Status s = stub_->InstallNicRules(&ctx, b, &out);
    EXPECT_EQ(s.error_message(), "rules: empty batch");
  }
  {
    grpc::ClientContext ctx;
    pb::NicRuleIds ids;
    ids.add_ids(5);
    ids.add_ids(5);
    pb::NicRuleReply out;
    grpc::Status s = stub_->RemoveNicRules(&ctx, ids, &out);
    EXPECT_EQ(s.error_message(), "ids[1]: 5 repeats ids[0]");
  }
  {
    grpc::ClientContext ctx;
    pb::ImportStateRequest r;
    r.mutable_snapshot()->set_pipeline_id("p");
    r.mutable_snapshot()->set_group_id("g");
    pb::StateTable* t = r.mutable_snapshot()->add_tables();
    t->set_element("rw");
    t->set_kind("SynthRewriter");
    pb::FlowEntry* e = t->add_entries();
    e->mutable_key()->set_src_ip(std::string(4, '\1'));
    e->mutable_key()->set_dst_ip(std::string(4, '\2'));
    e->mutable_key()->set_src_port(70000);
    pb::ImportStateReply out;
    grpc::Status s = stub_->ImportState(&ctx, r, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "snapshot.tables[0].entries[0].key.src_port: 70000 exceeds 65535");
  }
  {
    grpc::ClientContext ctx;
    pb::ExportStateRequest r;
    r.set_pipeline_id("p");
    pb::StateSnapshot out;
    EXPECT_EQ(stub_->ExportState(&ctx, r, &out).error_message(), "group_id: empty");
  }
  EXPECT_EQ(backend_.mutations, 0);
}

TEST_F(ServerTest, BackendStatusTravelsUnchanged) {
  grpc::ClientContext ctx;
  pb::RemovePipelineRequest r;
  r.set_pipeline_id("ghost");
  pb::RemovePipelineReply out;
  grpc::Status s = stub_->RemovePipeline(&ctx, r, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "pipeline_id: \"ghost\" is not deployed");
}

TEST_F(ServerTest, MutationsAreSerialisedAndHealthDoesNotWaitForThem) {
  backend_.deploy_time = std::chrono::milliseconds(300);
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([this, i] {
      pb::DeployPipelineRequest r = GoodDeploy();
      r.set_pipeline_id("p" + std::to_string(i));
      EXPECT_TRUE(Deploy(r).ok());
    });
  }
  while (backend_.in_flight == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // A deployment is running right now; Health must still answer, well before the 4 x 300 ms queue drains.
  grpc::ClientContext ctx;
  pb::HealthReply h;
  ASSERT_TRUE(stub_->Health(&ctx, pb::HealthRequest(), &h).ok());
  EXPECT_GT(backend_.deploys.load() + backend_.in_flight.load(), 0);
  EXPECT_LT(backend_.deploys, 4) << "Health waited behind the deployments";
  for (auto& t : clients) t.join();
  EXPECT_EQ(backend_.deploys, 4);
  EXPECT_EQ(backend_.max_in_flight, 1) << "two deployments ran at once";
}

TEST_F(ServerTest, StreamLoadReportsEveryIntervalWithIntervalLoad) {
  // The first sample is late, as on a loaded machine: the schedule must not shift by it.
  backend_.first_stats_stall = std::chrono::milliseconds(25);
  grpc::ClientContext ctx;
  pb::LoadStreamRequest req;
  req.set_interval_ms(40);
  const uint64_t opened = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now().time_since_epoch()).count();
  auto reader = stub_->StreamLoad(&ctx, req);
  std::vector<pb::Stats> reports(6);
  for (auto& r : reports) ASSERT_TRUE(reader->Read(&r));
  ctx.TryCancel();
  pb::Stats rest;
  while (reader->Read(&rest)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_DOUBLE_EQ(reports[0].cores(0).load(), 0.99) << "first report has no interval: backend's figure";
  for (size_t i = 1; i < reports.size(); ++i) {
    EXPECT_DOUBLE_EQ(reports[i].cores(0).load(), 0.3) << "report " << i;
    EXPECT_GT(reports[i].timestamp_ns(), reports[i - 1].timestamp_ns()) << "report " << i;
    // Ticks are scheduled from the stream's start (no drift; a late tick is followed by a quicker one). The
    // start is after the client opened the stream but may be well before report 0's sample (which can be
    // late), so what holds on any machine is: report i is no earlier than i intervals after the opening.
    EXPECT_GE(reports[i].timestamp_ns(), opened + i * 40'000'000u) << "report " << i << " ahead of the schedule";
  }
}

TEST_F(ServerTest, StreamLoadStopsWhenTheClientCancels) {
  {
    grpc::ClientContext ctx;
    pb::LoadStreamRequest req;
    req.set_interval_ms(10);
    auto reader = stub_->StreamLoad(&ctx, req);
    pb::Stats s;
    ASSERT_TRUE(reader->Read(&s));
    ctx.TryCancel();
    while (reader->Read(&s)) {
    }
    reader->Finish();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int calls = backend_.stats_calls;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(backend_.stats_calls, calls) << "the stream kept sampling after its client left";
}

TEST_F(ServerTest, StreamLoadDefaultsAndRejectsBadIntervalsAndAlerts) {
  // A refused stream ends before its first report, with the field and value named.
  auto refusal = [this](const pb::LoadStreamRequest& req) {
    grpc::ClientContext ctx;
    auto reader = stub_->StreamLoad(&ctx, req);
    pb::Stats s;
    EXPECT_FALSE(reader->Read(&s));
    const grpc::Status st = reader->Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    return st.error_message();
  };
  pb::LoadStreamRequest req;
  req.set_interval_ms(5);
  EXPECT_EQ(refusal(req), "interval_ms: 5 is outside 10..3600000 (0 = 100)");
  req.set_interval_ms(0);
  req.set_alert_load(1.5);
  EXPECT_EQ(refusal(req), "alert_load: 1.500000 is outside 0..1 (0 = no alert)");
  req.set_alert_load(-0.1);
  EXPECT_EQ(refusal(req), "alert_load: -0.100000 is outside 0..1 (0 = no alert)");

  grpc::ClientContext ctx2;
  auto def = stub_->StreamLoad(&ctx2, pb::LoadStreamRequest());
  pb::Stats a, b;
  ASSERT_TRUE(def->Read(&a));
  ASSERT_TRUE(def->Read(&b));
  EXPECT_GE(b.timestamp_ns() - a.timestamp_ns(), 60'000'000u) << "default interval is 100 ms";
  ctx2.TryCancel();
  while (def->Read(&a)) {
  }
}

TEST_F(ServerTest, ShutdownEndsOpenStreams) {
  grpc::ClientContext ctx;
  pb::LoadStreamRequest req;
  req.set_interval_ms(10000);
  auto reader = stub_->StreamLoad(&ctx, req);
  pb::Stats s;
  ASSERT_TRUE(reader->Read(&s));
  const auto t0 = std::chrono::steady_clock::now();
  server_->Shutdown();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(5000))
      << "shutdown waited for the stream's next tick";
  while (reader->Read(&s)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST(ServerStart, BadAddressAndOptionsNameTheProblem) {
  test::RecordingBackend backend;
  ControlOptions o;
  o.listen = "256.1.1.1:1";
  try {
    StartControlServer(o, &backend);
    FAIL() << "served on an invalid address";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--listen 256.1.1.1:1"), std::string::npos) << e.what();
  }
  std::string err;
  ControlOptions parsed;
  EXPECT_TRUE(ParseControlFlag("--listen", "0.0.0.0:6000", &parsed, &err));
  EXPECT_EQ(parsed.listen, "0.0.0.0:6000");
  EXPECT_FALSE(ParseControlFlag("--tls-ca", "", &parsed, &err));
  EXPECT_EQ(err, "--tls-ca: needs a value");
  EXPECT_FALSE(ParseControlFlag("--cores", "1", &parsed, &err));
  EXPECT_TRUE(err.empty());
}

// NIC rule RPCs end to end: gRPC -> validation -> SteeringTable -> kernel fanout program on a real veth.
TEST_F(ServerTest, NicRulesOverGrpcReachTheKernelDispatcher) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: netns + veth";
  {
    // Connect before this thread enters the test namespace (whose loopback is down).
    grpc::ClientContext ctx;
    pb::HealthReply h;
    ASSERT_TRUE(stub_->Health(&ctx, pb::HealthRequest(), &h).ok());
  }
  test::VethNetns ns;
  auto port = FanoutPort::open({"rx0", 2, 1024, 0}, test::pool());
  ASSERT_TRUE(backend_.nic_rules.add_nic(port.get()).ok());

  pb::NicRuleBatch batch;
  pb::NicRule* good = batch.add_rules();
  good->set_id(0x8000000000000001ull);
  good->set_nic("rx0");
  good->mutable_match()->set_eth_dst("02:4d:00:05:00:00");
  good->mutable_match()->set_eth_dst_mask("ff:ff:ff:ff:00:00");
  good->mutable_action()->set_queue(1);
  pb::NicRule* bad = batch.add_rules();
  *bad = *good;
  bad->set_id(2);
  bad->mutable_match()->set_eth_dst("02:4d:00:05:00:zz");
  pb::NicRuleReply reply;
  {
    grpc::ClientContext ctx;
    grpc::Status s = stub_->InstallNicRules(&ctx, batch, &reply);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message().rfind("rules[1].match.eth_dst: \"02:4d:00:05:00:zz\"", 0), 0u) << s.error_message();
  }
  batch.mutable_rules()->RemoveLast();
  pb::NicRule* far = batch.add_rules();
  *far = *good;
  far->set_id(3);
  far->mutable_action()->set_queue(2);  // the NIC has 2 queues: 0 and 1
  {
    grpc::ClientContext ctx;
    grpc::Status s = stub_->InstallNicRules(&ctx, batch, &reply);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "rules[1].action.queue: 2 but NIC rx0 has 2 rx queues");
  }
  pb::NicRuleList list;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->ListNicRules(&ctx, pb::ListNicRulesRequest(), &list).ok());
    EXPECT_EQ(list.rules_size(), 0) << "a failed batch left rules behind";
  }

  // Frames of group 5 go to queue 0 (default) before, queue 1 after the rule.
  test::RawSender sender("tx0");
  test::QueueWorkers workers(*port);
  for (int i = 0; i < 10; ++i) sender.Send(test::MacTagged(5, 1, i));
  ASSERT_TRUE(workers.WaitFor(10));
  EXPECT_EQ(workers.Take()[0].size(), 10u);

  batch.mutable_rules()->RemoveLast();
  {
    grpc::ClientContext ctx;
    grpc::Status s = stub_->InstallNicRules(&ctx, batch, &reply);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(reply.applied(), 1u);
  }
  for (int i = 0; i < 10; ++i) sender.Send(test::MacTagged(5, 1, i));
  ASSERT_TRUE(workers.WaitFor(10));
  EXPECT_EQ(workers.Take()[1].size(), 10u);
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->InstallNicRules(&ctx, batch, &reply).error_code() == grpc::StatusCode::ALREADY_EXISTS);
  }
  {
    grpc::ClientContext ctx;
    list.Clear();
    ASSERT_TRUE(stub_->ListNicRules(&ctx, pb::ListNicRulesRequest(), &list).ok());
    ASSERT_EQ(list.rules_size(), 1);
    EXPECT_EQ(list.rules(0).id(), 0x8000000000000001ull);
    EXPECT_EQ(list.rules(0).action().queue(), 1u);
  }
  {
    grpc::ClientContext ctx;
    pb::NicRuleIds ids;
    ids.add_ids(99);
    grpc::Status s = stub_->RemoveNicRules(&ctx, ids, &reply);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(s.error_message(), "ids[0]: 99 is not an installed NIC rule");
  }
  workers.Stop();
}

}  // namespace
}  // namespace metron

// Test fixture: an engine with two workers (core 0 is the main lcore, run on a thread of the fixture's) reading
// the kernel veth "rx0" of a private namespace through the fanout dispatch (by tag unless a test attaches rx0
// otherwise, AttachRx0), with the egress "tx0" captured and a raw sender on it. Deep rings and a long drain bound: on a loaded machine a worker may be descheduled for a
// while, and only frames lost to what a test does may count (a ring overflowing is not its doing).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/engine.h"
#include "core/engine_backend.h"
#include "dispatch/fanout_port.h"
#include "dispatch/steering_table.h"
#include "dispatch/veth_fixture.h"
#include "egress_capture.h"
#include "test_env.h"

namespace metron::test {

class VethEngineTest : public ::testing::Test {
 protected:
  static constexpr unsigned kCoreA = 0;
  static constexpr unsigned kCoreB = 1;

  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: netns, veth, AF_PACKET";
    engine_ = std::make_unique<Engine>(std::vector<unsigned>{kCoreA, kCoreB}, pool());
    backend_ = std::make_unique<EngineBackend>(engine_.get(), "test");
    ns_ = std::make_unique<VethNetns>();
    AttachRx0();
    if (HasFatalFailure()) return;
    engine_->start();
    main_worker_ = std::thread([this] { engine_->run_main_worker(); });
    capture_ = std::make_unique<EgressCapture>("tx0");
    sender_ = std::make_unique<RawSender>("tx0");
  }
  void TearDown() override {
    sender_.reset();
    capture_.reset();
    if (engine_) engine_->stop();
    if (main_worker_.joinable()) main_worker_.join();
    backend_.reset();
    engine_.reset();  // closes the FanoutPort before its interface goes away with the namespace
    ns_.reset();
  }

  // How rx0 feeds the workers: by default dispatched by group tag (fanout with a classic BPF program).
  virtual void AttachRx0() {
    backend_->set_nic_rules(&steering_);
    FanoutPortOptions o{"rx0", static_cast<uint16_t>(engine_->slot_count()), 16384, 0};
    o.drain_timeout_ms = 10000;
    auto port = FanoutPort::open(o, pool());
    FanoutPort* raw = port.get();
    engine_->add_port(std::move(port));
    ASSERT_TRUE(steering_.add_nic(raw).ok());
    backend_->add_steered_nic("rx0", pb::DISPATCH_FANOUT_CBPF);
  }

  // A MAC-tagged group running `click` on `core`.
  static pb::GroupSpec Group(const std::string& id, const std::string& click, uint32_t tag, unsigned core,
                             const std::vector<uint32_t>& classes = {}) {
    pb::GroupSpec g;
    g.set_group_id(id);
    g.set_click_config(click);
    g.mutable_tag()->set_type(pb::TAG_MAC);
    g.mutable_tag()->set_value(tag);
    g.set_core(core);
    for (uint32_t c : classes) g.add_class_ids(c);
    return g;
  }
  // A MAC-tagged NAPT group of class 0: forward flows to 192.0.2.1, sequential ports of 20000-20255 (of share
  // `share` of `shares` when share >= 0); replies (to 192.0.2.1) restored by the same table.
  static pb::GroupSpec NaptGroup(const std::string& id, uint32_t tag, unsigned core, int share, uint32_t shares) {
    pb::GroupSpec g = Group(
        id,
        "input -> Strip(14) -> CheckIPHeader(CHECKSUM false) -> c :: IPClassifier(dst host 192.0.2.1, -);"
        "c[1] -> [0]rw :: SynthRewriter(PATTERN 192.0.2.1 20000-20255 - -); c[0] -> [1]rw;"
        "rw[0] -> Unstrip(14) -> [0]output; rw[1] -> Unstrip(14) -> [0]output;",
        tag, core, {0});
    if (share >= 0) {
      g.mutable_port_share()->set_index(static_cast<uint32_t>(share));
      g.mutable_port_share()->set_count(shares);
    }
    return g;
  }
  // Deploys pipeline "chain", reading rx0 and sending back out of it, with `groups`.
  grpc::Status DeployChain(const google::protobuf::RepeatedPtrField<pb::GroupSpec>& groups) {
    pb::DeployPipelineRequest d;
    d.set_pipeline_id("chain");
    d.set_ingress_nic("rx0");
    d.add_egress()->set_nic("rx0");
    *d.mutable_groups() = groups;
    pb::PipelineStatus st;
    return backend_->DeployPipeline(d, &st);
  }
  grpc::Status DeployChain(const pb::GroupSpec& group) {
    google::protobuf::RepeatedPtrField<pb::GroupSpec> gs;
    *gs.Add() = group;
    return DeployChain(gs);
  }

  SteeringTable steering_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<EngineBackend> backend_;
  std::unique_ptr<VethNetns> ns_;
  std::thread main_worker_;
  std::unique_ptr<EgressCapture> capture_;
  std::unique_ptr<RawSender> sender_;
};

}  // namespace metron::test

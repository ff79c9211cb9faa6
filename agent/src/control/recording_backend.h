// Test backend for what the control layer alone is responsible for: transport, validation before delegation,
// status codes passed through unchanged, serialisation of mutations, StreamLoad timing/cancellation, TLS.
// It records what reached it; NIC rule RPCs go to a real SteeringTable. Pipeline behaviour itself (graphs,
// "an invalid config leaves running pipelines untouched") is tested against the real Engine.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "core/backend.h"
#include "dispatch/steering_table.h"

namespace metron::test {

class RecordingBackend : public AgentBackend {
 public:
  std::atomic<int> deploys{0};
  std::atomic<int> mutations{0};
  std::atomic<int> stats_calls{0};
  // The first GetStats stalls this long before taking its timestamp, as a descheduled thread would.
  std::chrono::milliseconds first_stats_stall{0};
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  std::chrono::milliseconds deploy_time{0};
  SteeringTable nic_rules;

  grpc::Status GetResources(const pb::GetResourcesRequest&, pb::ServerResources* out) override {
    out->set_hostname("test-host");
    out->add_cores()->set_id(3);
    return grpc::Status::OK;
  }
  grpc::Status Health(const pb::HealthRequest&, pb::HealthReply* out) override {
    out->set_serving(true);
    out->set_agent_version("test");
    out->set_boot_id(0xabcdef0123456789ull);
    return grpc::Status::OK;
  }
  grpc::Status DeployPipeline(const pb::DeployPipelineRequest& req, pb::PipelineStatus* out) override {
    ++deploys;
    Mutate();
    out->set_pipeline_id(req.pipeline_id());
    out->set_state(pb::PIPELINE_RUNNING);
    out->set_generation(deploys);
    return grpc::Status::OK;
  }
  grpc::Status UpdatePipeline(const pb::UpdatePipelineRequest&, pb::PipelineStatus*) override {
    Mutate();
    return grpc::Status::OK;
  }
  grpc::Status RemovePipeline(const pb::RemovePipelineRequest& req, pb::RemovePipelineReply*) override {
    Mutate();
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "pipeline_id: \"" + req.pipeline_id() + "\" is not deployed");
  }
  grpc::Status ListPipelines(const pb::ListPipelinesRequest&, pb::ListPipelinesReply*) override {
    return grpc::Status::OK;
  }
  grpc::Status InstallNicRules(const pb::NicRuleBatch& req, pb::NicRuleReply* out) override {
    Mutate();
    return nic_rules.Install(req, out);
  }
  grpc::Status RemoveNicRules(const pb::NicRuleIds& req, pb::NicRuleReply* out) override {
    Mutate();
    return nic_rules.Remove(req, out);
  }
  grpc::Status ListNicRules(const pb::ListNicRulesRequest& req, pb::NicRuleList* out) override {
    return nic_rules.List(req, out);
  }
  // Cumulative counters: core 0 is busy 30 of every 100 cycles between two calls.
  grpc::Status GetStats(const pb::StatsRequest&, pb::Stats* out) override {
    const int n = ++stats_calls;
    if (n == 1) std::this_thread::sleep_for(first_stats_stall);
    out->set_timestamp_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now().time_since_epoch()).count());
    pb::CoreStats* c = out->add_cores();
    c->set_core(0);
    c->set_busy_cycles(30ull * n);
    c->set_total_cycles(100ull * n);
    c->set_load(0.99);  // the backend's own (longer-window) figure; the stream replaces it
    return grpc::Status::OK;
  }
  grpc::Status ExportState(const pb::ExportStateRequest& req, pb::StateSnapshot* out) override {
    out->set_pipeline_id(req.pipeline_id());
    return grpc::Status::OK;
  }
  grpc::Status ImportState(const pb::ImportStateRequest&, pb::ImportStateReply*) override {
    Mutate();
    return grpc::Status::OK;
  }

 private:
  void Mutate() {
    ++mutations;
    const int now = ++in_flight;
    int seen = max_in_flight.load();
    while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(deploy_time);
    --in_flight;
  }
};

}  // namespace metron::test

// AgentService: the MetronAgent gRPC service as a thin adapter over AgentBackend.
//
// Every request is validated (request_validation.h) before the backend sees it, so malformed input gets
// INVALID_ARGUMENT naming field and value and never reaches running pipelines. Mutating RPCs are serialised per
// resource they change (pipelines, NIC rules) so two controllers' requests cannot interleave half-way; reads
// (Health, GetResources, List*, GetStats, ExportState, StreamLoad) take no lock, so Health never waits behind a
// deployment. Requests that change a chain's pipeline (Deploy/Update/Remove, ImportState) are fenced by their
// owner token (owner_tokens.h): a controller instance that lost the chain cannot undo its new owner's work.
#pragma once

#include <condition_variable>
#include <mutex>

#include "control/owner_tokens.h"
#include "core/backend.h"
#include "metron/agent/v1/agent.grpc.pb.h"

namespace metron {

class AgentService final : public pb::MetronAgent::Service {
 public:
  explicit AgentService(AgentBackend* backend) : backend_(backend) {}

  // Makes every running StreamLoad return promptly (server shutdown).
  void EndStreams();

  grpc::Status GetResources(grpc::ServerContext*, const pb::GetResourcesRequest*, pb::ServerResources*) override;
  grpc::Status Health(grpc::ServerContext*, const pb::HealthRequest*, pb::HealthReply*) override;
  grpc::Status DeployPipeline(grpc::ServerContext*, const pb::DeployPipelineRequest*, pb::PipelineStatus*) override;
  grpc::Status UpdatePipeline(grpc::ServerContext*, const pb::UpdatePipelineRequest*, pb::PipelineStatus*) override;
  grpc::Status RemovePipeline(grpc::ServerContext*, const pb::RemovePipelineRequest*,
                              pb::RemovePipelineReply*) override;
  grpc::Status ListPipelines(grpc::ServerContext*, const pb::ListPipelinesRequest*, pb::ListPipelinesReply*) override;
  grpc::Status InstallNicRules(grpc::ServerContext*, const pb::NicRuleBatch*, pb::NicRuleReply*) override;
  grpc::Status RemoveNicRules(grpc::ServerContext*, const pb::NicRuleIds*, pb::NicRuleReply*) override;
  grpc::Status ListNicRules(grpc::ServerContext*, const pb::ListNicRulesRequest*, pb::NicRuleList*) override;
  grpc::Status GetStats(grpc::ServerContext*, const pb::StatsRequest*, pb::Stats*) override;
  grpc::Status StreamLoad(grpc::ServerContext*, const pb::LoadStreamRequest*, grpc::ServerWriter<pb::Stats>*) override;
  grpc::Status ExportState(grpc::ServerContext*, const pb::ExportStateRequest*, pb::StateSnapshot*) override;
  grpc::Status ImportState(grpc::ServerContext*, const pb::ImportStateRequest*, pb::ImportStateReply*) override;

 private:
  // Validates, takes `mu` (the lock of the state the call changes), admits `token` for `pipeline`, then calls. An
  // empty pipeline is unfenced (NIC rule calls of tools and older controllers name none).
  template <typename Req, typename Reply, typename Call>
  grpc::Status Fenced(const char* rpc, const std::string& pipeline, uint64_t token, const Req& req, Reply* reply,
                      std::mutex& mu, Call call);

  AgentBackend* const backend_;
  OwnerTokens tokens_;
  // Deploy/Update/Remove pipeline and ImportState (which rewrites a running group's tables).
  std::mutex pipelines_mu_;
  // Install/Remove NIC rules.
  std::mutex nic_rules_mu_;

  std::mutex stream_mu_;
  std::condition_variable stream_cv_;
  bool ending_ = false;
};

}  // namespace metron

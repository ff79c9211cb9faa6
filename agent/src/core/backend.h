// What the gRPC service (src/control) calls: one method per RPC of agent/proto/metron/agent/v1/agent.proto,
// taking and returning the generated types. The service stays a thin adapter; every rule (validation, error
// codes naming field and value, all-or-nothing semantics) lives behind this interface.
//
// Threading: methods may be called concurrently from gRPC threads; implementations serialise mutations
// themselves. None of them blocks the data path: graphs are built off the workers and swapped at a batch
// boundary.
//
// StreamLoad has no method here: the service calls GetStats every interval and streams the result.
#pragma once

#include <grpcpp/support/status.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "metron/agent/v1/agent.pb.h"

namespace metron {

namespace pb = ::metron::agent::v1;

// NIC rule table (tag/flow -> queue). Provided by the dispatch side (src/dispatch) and handed to the Engine with
// Engine::set_nic_rules(); without one, the NIC rule RPCs answer FAILED_PRECONDITION ("no NIC rule table").
// Install and Remove are all-or-nothing per batch.
class NicRuleTable {
 public:
  virtual ~NicRuleTable() = default;
  virtual grpc::Status Install(const pb::NicRuleBatch& batch, pb::NicRuleReply* reply) = 0;
  virtual grpc::Status Remove(const pb::NicRuleIds& ids, pb::NicRuleReply* reply) = 0;
  virtual grpc::Status List(const pb::ListNicRulesRequest& req, pb::NicRuleList* out) = 0;
  // Steers every group tag of one NIC (all tag types; a type left out steers none) to an rx queue (= the worker
  // slot of the group's core, see core/port.h). The Engine calls it with the complete maps on every pipeline
  // deploy/update/remove, only for NICs registered as steered (EngineBackend::add_steered_nic), after the new
  // groups run on their cores and before the old ones are retired; it returns only once frames steered under
  // the previous maps have been read from their queues. One call is one change of the NIC's dispatcher (none
  // when the maps are what it already steers). On error nothing changed and the Engine aborts the operation.
  // `classes`: the classes (GroupSpec.class_ids) of each MAC group tag, which a NIC matching whole MACs (VMDq)
  // needs.
  virtual grpc::Status set_tags(const std::string& nic,
                                const std::map<pb::TagType, std::map<uint32_t, uint16_t>>& tags,
                                const std::map<uint32_t, std::vector<uint32_t>>& classes) = 0;
  // How many NIC rules `nic` holds (its dispatcher's capacity); 0 if this table does not steer it.
  virtual uint32_t max_rules(const std::string& nic) const = 0;
};

class AgentBackend {
 public:
  virtual ~AgentBackend() = default;

  virtual grpc::Status GetResources(const pb::GetResourcesRequest& req, pb::ServerResources* out) = 0;
  virtual grpc::Status Health(const pb::HealthRequest& req, pb::HealthReply* out) = 0;

  virtual grpc::Status DeployPipeline(const pb::DeployPipelineRequest& req, pb::PipelineStatus* out) = 0;
  virtual grpc::Status UpdatePipeline(const pb::UpdatePipelineRequest& req, pb::PipelineStatus* out) = 0;
  virtual grpc::Status RemovePipeline(const pb::RemovePipelineRequest& req, pb::RemovePipelineReply* out) = 0;
  virtual grpc::Status ListPipelines(const pb::ListPipelinesRequest& req, pb::ListPipelinesReply* out) = 0;

  virtual grpc::Status InstallNicRules(const pb::NicRuleBatch& req, pb::NicRuleReply* out) = 0;
  virtual grpc::Status RemoveNicRules(const pb::NicRuleIds& req, pb::NicRuleReply* out) = 0;
  virtual grpc::Status ListNicRules(const pb::ListNicRulesRequest& req, pb::NicRuleList* out) = 0;

  virtual grpc::Status GetStats(const pb::StatsRequest& req, pb::Stats* out) = 0;
  // Cumulative busy and total cycles of every worker core (CoreStats core/busy_cycles/total_cycles only),
  // cheap enough for StreamLoad's overload alert to sample every few milliseconds. By default read out of
  // GetStats.
  virtual grpc::Status CoreCycles(pb::Stats* out) { return GetStats(pb::StatsRequest(), out); }

  virtual grpc::Status ExportState(const pb::ExportStateRequest& req, pb::StateSnapshot* out) = 0;
  virtual grpc::Status ImportState(const pb::ImportStateRequest& req, pb::ImportStateReply* out) = 0;
};

}  // namespace metron

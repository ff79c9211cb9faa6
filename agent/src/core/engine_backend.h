// EngineBackend: the AgentBackend (core/backend.h) over a running Engine. Owns the deployed pipelines and turns
// every change into per-core WorkerPlans:
//   validate everything -> build the new groups' graphs (off the data path) -> copy the state sources in slices
//   between batches of their cores and fill the new groups -> a new group taking over its source's tag on the
//   same core swaps in at that core's batch boundary with the source's tables, adopted or copied
//   (core/state_copy.h; Engine::publish handoff: one wait for the busy core) -> publish transition plans (old and new groups side by side on cores that get a
//   new tag) -> steer tags (NicRuleTable::set_tags, which returns once the queues that lost a tag have handed
//   over their backlog) -> publish the final plans, retiring the old groups.
// A tag that moves from core A to core B is therefore served on both cores while the NIC switches over and no
// frame of it is dropped; no worker ever stops polling. Any failure returns its status with the pipelines and the
// dispatch as they were (a group that had already taken over goes back to its source, which gets back the tables
// the group adopted but did not see the flows mapped in between by a group that copied them).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/engine.h"
#include "core/state_store.h"

namespace metron {

class EngineBackend final : public AgentBackend {
 public:
  EngineBackend(Engine* engine, std::string version);

  // The dispatch side's rule table (not owned). Without one, NIC rule RPCs answer FAILED_PRECONDITION.
  void set_nic_rules(NicRuleTable* table) { nic_rules_ = table; }
  // NICs whose rx queues are filled by tag steering (FanoutPort, rte_flow NICs): their group tags are pushed to
  // the NicRuleTable on every change.
  void add_steered_nic(const std::string& nic, pb::DispatchMode mode);
  // NICs in RSS compatibility mode (DISPATCH_RSS): their rx queues are filled by a flow hash, with no tag
  // affinity, so every group of a pipeline entering there runs on every worker core, each copy with its own flow
  // state (a flow stays on one core because the hash is per flow). GroupSpec.core is ignored for them.
  void add_rss_nic(const std::string& nic);
  // How NIC `nic`'s dispatch was chosen at start (dispatch/dispatch_choice.h): the possible modes, what was
  // asked, the probed capabilities and the refusals, reported as they are in GetResources. A NIC with a report
  // that is neither steered nor RSS runs SINGLE (its driver's own queue filling).
  void set_nic_report(const std::string& nic, const pb::Nic& report);
  // Flow state kept across agent restarts (core/state_store.h; not owned). The files already in the store are
  // the previous process's: each is offered once, to the first deployment of its group (DeployPipeline or
  // UpdatePipeline building it without state_from), imported before the group runs, and deleted once that
  // change succeeded. RSS pipelines are not persisted (their state is one table per core).
  void set_state_store(StateStore* store);
  // Writes every running group's flow state to the store: at shutdown (after the workers stopped) and, with
  // --state-checkpoint-ms, periodically. Each group is snapshotted between two batches of its core; files are
  // written outside the change lock. Files this process wrote for groups that no longer run are removed.
  // Returns the groups written; never throws (I/O errors are logged, the previous file stays).
  size_t persist_state();

  grpc::Status GetResources(const pb::GetResourcesRequest& req, pb::ServerResources* out) override;
  grpc::Status Health(const pb::HealthRequest& req, pb::HealthReply* out) override;
  grpc::Status DeployPipeline(const pb::DeployPipelineRequest& req, pb::PipelineStatus* out) override;
  grpc::Status UpdatePipeline(const pb::UpdatePipelineRequest& req, pb::PipelineStatus* out) override;
  grpc::Status RemovePipeline(const pb::RemovePipelineRequest& req, pb::RemovePipelineReply* out) override;
  grpc::Status ListPipelines(const pb::ListPipelinesRequest& req, pb::ListPipelinesReply* out) override;
  grpc::Status InstallNicRules(const pb::NicRuleBatch& req, pb::NicRuleReply* out) override;
  grpc::Status RemoveNicRules(const pb::NicRuleIds& req, pb::NicRuleReply* out) override;
  grpc::Status ListNicRules(const pb::ListNicRulesRequest& req, pb::NicRuleList* out) override;
  grpc::Status GetStats(const pb::StatsRequest& req, pb::Stats* out) override;
  grpc::Status CoreCycles(pb::Stats* out) override;
  grpc::Status ExportState(const pb::ExportStateRequest& req, pb::StateSnapshot* out) override;
  grpc::Status ImportState(const pb::ImportStateRequest& req, pb::ImportStateReply* out) override;

 private:
  struct Pipeline {
    std::string id;
    std::string ingress;
    std::vector<pb::Egress> egress_spec;
    std::vector<EgressTarget> egress;
    std::vector<std::shared_ptr<GroupRuntime>> groups;
    uint64_t generation = 0;
  };
  using GroupList = std::vector<std::shared_ptr<GroupRuntime>>;
  // One UpdatePipeline call, in named steps (core/pipeline_update.cc).
  class PipelineUpdate;

  // Parses `egress` into p's egress targets. Status names the field.
  grpc::Status set_egress(const google::protobuf::RepeatedPtrField<pb::Egress>& egress, Pipeline* p) const;
  // Builds (or reuses, when unchanged) the runtime of each requested group. Status names the field.
  grpc::Status build_groups(const Pipeline& p, const google::protobuf::RepeatedPtrField<pb::GroupSpec>& specs,
                            const Pipeline* current, GroupList* out);
  // One runtime of spec `s` (field path `f`) on `core`, appended to `out`.
  grpc::Status build_group(const Pipeline& p, const pb::GroupSpec& s, pb::TagType tt, unsigned core,
                           const std::string& f, const Pipeline* current, GroupList* out);
  // Tags every steered NIC must carry if `replace` (pipeline id -> groups) were in force.
  grpc::Status steer(const std::map<std::string, const GroupList*>& replace);
  void publish_cores(const std::set<unsigned>& cores);
  // The core's plan from the deployed pipelines, plus `extra` groups (not yet deployed) after them: during a
  // transition an old group keeps its tag on its core until the final plan drops it.
  // `without`: deployed groups left out (taken over by a new group during an update).
  std::unique_ptr<WorkerPlan> plan_for(unsigned core, const GroupList* extra = nullptr,
                                       const std::set<const GroupRuntime*>* without = nullptr) const;
  // Publishes the transition plans for `groups`, then steers to `replace`; on a steering failure restores
  // the cores' plans from the (unchanged) pipelines.
  grpc::Status publish_then_steer(const GroupList& groups, const std::map<std::string, const GroupList*>& replace);
  // Whether two plans run the same groups in the same order (publishing one over the other changes nothing).
  static bool same_groups(const WorkerPlan& a, const WorkerPlan& b);
  void fill_status(const Pipeline& p, pb::PipelineStatus* out) const;
  bool rss(const std::string& ingress) const { return rss_nics_.count(ingress) > 0; }
  // Fills a freshly built group from its saved state if a previous process left some (set_state_store).
  void restore_state(GroupRuntime& g);
  // After a successful Deploy/Update: the saved state its groups claimed is consumed.
  void consume_restored();
  // FAILED_PRECONDITION naming the pipeline's RSS NIC and what it cannot do there (per-core copies of a group).
  grpc::Status rss_refusal(const Pipeline& p, const std::string& what) const;
  // Ends every follow (ImportStateRequest.follow_source) whose source or target no longer runs, on the target's
  // core; called by each change that removes groups, before it lets them go.
  void end_follows();

  Engine* const engine_;
  const std::string version_;
  const uint64_t boot_id_;
  const std::chrono::steady_clock::time_point started_;
  NicRuleTable* nic_rules_ = nullptr;
  std::map<std::string, pb::DispatchMode> steered_;
  std::set<std::string> rss_nics_;
  std::map<std::string, pb::Nic> nic_reports_;
  // Two locks so that reads never wait behind a deployment (building a large filter takes ~1 s):
  // change_mu_ serialises every change (validate, build, copy state, publish, steer) from start to end, so a
  // change sees pipelines_ stable without mu_; mu_ is held only to read pipelines_ from outside a change and,
  // by a change, for the short swap that makes its result visible.
  std::mutex change_mu_;
  mutable std::mutex mu_;
  std::map<std::string, Pipeline> pipelines_;
  StateStore* state_ = nullptr;
  // (pipeline, group) of the saved files left by the previous process and not claimed yet; those the change in
  // progress claimed (guarded by change_mu_).
  std::set<std::pair<std::string, std::string>> waiting_, claimed_;
  std::mutex persist_mu_;  // one persist_state at a time; guards written_
  std::set<std::pair<std::string, std::string>> written_;
  std::mutex stats_mu_;
  std::map<unsigned, CoreSample> last_sample_;
  // Elements that look up the flows they miss in another group's element (ImportStateRequest.follow_source),
  // with both groups, kept alive until end_follows() ends it (guarded by change_mu_).
  struct Follow {
    std::shared_ptr<GroupRuntime> target, source;
    Element* target_element;
    const Element* source_element;
  };
  std::vector<Follow> follows_;
};

}  // namespace metron

#include "control/agent_service.h"

#include <chrono>

#include "control/load_report.h"
#include "control/request_validation.h"

namespace metron {
namespace {

// How often a waiting StreamLoad notices that its client went away.
constexpr std::chrono::milliseconds kCancelPoll{20};
// How often a StreamLoad with an overload alert samples the cores between reports, and the shortest window it
// judges, in wall-clock time and in the cycles a core's counters cover (AlertLoadReached): a few milliseconds
// hold only a few batches of an expensive pipeline, whose busy share is noise.
constexpr std::chrono::milliseconds kAlertCheck{5};
constexpr std::chrono::milliseconds kAlertMinWindow{10};

template <typename Req, typename Reply, typename Call>
grpc::Status Checked(const Req& req, Reply* reply, std::mutex& mu, Call call) {
  grpc::Status s = ValidateRequest(req);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu);
  return call(req, reply);
}

}  // namespace

template <typename Req, typename Reply, typename Call>
grpc::Status AgentService::Fenced(const char* rpc, const std::string& pipeline, uint64_t token, const Req& req,
                                  Reply* reply, std::mutex& mu, Call call) {
  return Checked(req, reply, mu, [&](const Req& r, Reply* o) {
    grpc::Status s = pipeline.empty() ? grpc::Status::OK : tokens_.Admit(rpc, pipeline, token);
    return s.ok() ? call(r, o) : s;
  });
}

void AgentService::EndStreams() {
  {
    std::lock_guard<std::mutex> lock(stream_mu_);
    ending_ = true;
  }
  stream_cv_.notify_all();
}

grpc::Status AgentService::GetResources(grpc::ServerContext*, const pb::GetResourcesRequest* req,
                                        pb::ServerResources* out) {
  return backend_->GetResources(*req, out);
}

grpc::Status AgentService::Health(grpc::ServerContext*, const pb::HealthRequest* req, pb::HealthReply* out) {
  return backend_->Health(*req, out);
}

grpc::Status AgentService::DeployPipeline(grpc::ServerContext*, const pb::DeployPipelineRequest* req,
                                          pb::PipelineStatus* out) {
  grpc::Status s = Fenced("DeployPipeline", req->pipeline_id(), req->owner_token(), *req, out, pipelines_mu_,
                           [this](const auto& r, auto* o) { return backend_->DeployPipeline(r, o); });
  if (s.ok()) out->set_owner_token(tokens_.Newest(req->pipeline_id()));
  return s;
}

grpc::Status AgentService::UpdatePipeline(grpc::ServerContext*, const pb::UpdatePipelineRequest* req,
                                          pb::PipelineStatus* out) {
  grpc::Status s = Fenced("UpdatePipeline", req->pipeline_id(), req->owner_token(), *req, out, pipelines_mu_,
                           [this](const auto& r, auto* o) { return backend_->UpdatePipeline(r, o); });
  if (s.ok()) out->set_owner_token(tokens_.Newest(req->pipeline_id()));
  return s;
}

grpc::Status AgentService::RemovePipeline(grpc::ServerContext*, const pb::RemovePipelineRequest* req,
                                          pb::RemovePipelineReply* out) {
  return Fenced("RemovePipeline", req->pipeline_id(), req->owner_token(), *req, out, pipelines_mu_,
                [this](const auto& r, auto* o) { return backend_->RemovePipeline(r, o); });
}

grpc::Status AgentService::ListPipelines(grpc::ServerContext*, const pb::ListPipelinesRequest* req,
                                         pb::ListPipelinesReply* out) {
  grpc::Status s = backend_->ListPipelines(*req, out);
  if (s.ok())
    for (auto& p : *out->mutable_pipelines()) p.set_owner_token(tokens_.Newest(p.pipeline_id()));
  return s;
}

grpc::Status AgentService::InstallNicRules(grpc::ServerContext*, const pb::NicRuleBatch* req, pb::NicRuleReply* out) {
  return Fenced("InstallNicRules", req->pipeline_id(), req->owner_token(), *req, out, nic_rules_mu_,
                [this](const auto& r, auto* o) { return backend_->InstallNicRules(r, o); });
}

grpc::Status AgentService::RemoveNicRules(grpc::ServerContext*, const pb::NicRuleIds* req, pb::NicRuleReply* out) {
  return Fenced("RemoveNicRules", req->pipeline_id(), req->owner_token(), *req, out, nic_rules_mu_,
                [this](const auto& r, auto* o) { return backend_->RemoveNicRules(r, o); });
}

grpc::Status AgentService::ListNicRules(grpc::ServerContext*, const pb::ListNicRulesRequest* req,
                                        pb::NicRuleList* out) {
  return backend_->ListNicRules(*req, out);
}

grpc::Status AgentService::GetStats(grpc::ServerContext*, const pb::StatsRequest* req, pb::Stats* out) {
  return backend_->GetStats(*req, out);
}

grpc::Status AgentService::StreamLoad(grpc::ServerContext* ctx, const pb::LoadStreamRequest* req,
                                      grpc::ServerWriter<pb::Stats>* writer) {
  std::chrono::milliseconds interval;
  grpc::Status s = LoadInterval(*req, &interval);
  if (!s.ok()) return s;
  double alert = 0;
  s = LoadAlert(*req, &alert);
  if (!s.ok()) return s;
  uint64_t min_window_cycles = 0;  // a backend that does not know its clock rate: wall-clock windows only
  if (pb::ServerResources r; alert > 0 && backend_->GetResources(pb::GetResourcesRequest(), &r).ok())
    min_window_cycles = r.cpu_hz() / 1000 * static_cast<uint64_t>(kAlertMinWindow.count());
  const pb::StatsRequest everything;
  pb::Stats prev;
  bool have_prev = false;
  bool alerted = false;  // the report about to go out is an alert's
  // Ticks are scheduled from the start, so a slow GetStats does not make the reports drift.
  auto next = std::chrono::steady_clock::now();
  while (true) {
    pb::Stats stats;
    s = backend_->GetStats(everything, &stats);
    if (!s.ok()) return s;
    if (have_prev) SetIntervalLoad(prev, &stats);
    if (!writer->Write(stats)) return grpc::Status::OK;  // client gone
    prev = std::move(stats);
    have_prev = true;
    // An alert report comes before the tick that is still due, and at most once per interval: an overload
    // lasting longer than one check would otherwise send a report every check.
    const bool early = alerted;
    if (!early) next += interval;
    alerted = false;
    auto check = std::chrono::steady_clock::now() + kAlertMinWindow;
    std::unique_lock<std::mutex> lock(stream_mu_);
    while (!ending_ && !ctx->IsCancelled()) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= next) break;
      if (alert > 0 && !early && now >= check) {
        lock.unlock();
        pb::Stats cycles;
        alerted = backend_->CoreCycles(&cycles).ok() && AlertLoadReached(prev, cycles, alert, min_window_cycles);
        lock.lock();
        if (alerted) break;
        check = now + kAlertCheck;
      }
      const auto until = alert > 0 && !early ? std::min(next, check) : next;
      stream_cv_.wait_for(lock, std::min<std::chrono::steady_clock::duration>(until - now, kCancelPoll));
    }
    if (ending_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "agent control server is shutting down");
    if (ctx->IsCancelled()) return grpc::Status::CANCELLED;
  }
}

grpc::Status AgentService::ExportState(grpc::ServerContext*, const pb::ExportStateRequest* req,
                                       pb::StateSnapshot* out) {
  grpc::Status s = ValidateRequest(*req);
  if (!s.ok()) return s;
  return backend_->ExportState(*req, out);
}

grpc::Status AgentService::ImportState(grpc::ServerContext*, const pb::ImportStateRequest* req,
                                       pb::ImportStateReply* out) {
  return Fenced("ImportState", req->snapshot().pipeline_id(), req->owner_token(), *req, out, pipelines_mu_,
                [this](const auto& r, auto* o) { return backend_->ImportState(r, o); });
}

}  // namespace metron

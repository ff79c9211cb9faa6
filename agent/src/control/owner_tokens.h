// OwnerTokens: the fencing rule of the control API (agent.proto, DeployPipelineRequest.owner_token).
//
// A controller instance that lost a chain's ownership without knowing it (a GC pause, a partition, a slow call)
// may still send requests for the chain's pipeline; they carry its leadership term, older than the new owner's.
// The agent keeps, per pipeline id, the newest token it has seen and refuses an older one, so such a late request
// can neither remove nor overwrite what the new owner deployed. Token 0 is unfenced (tools, older controllers):
// admitted, and it changes nothing. Tokens are kept for the agent's lifetime, also after the pipeline goes: a late
// deploy after the new owner removed the pipeline here (the chain moved away) is refused too.
//
// Thread-safe. The caller admits a request under the lock that serialises the mutation it guards
// (AgentService::pipelines_mu_), so a request admitted runs before any newer owner's request is admitted.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include <grpcpp/grpcpp.h>

namespace metron {

class OwnerTokens {
 public:
  // OK when `token` is 0 or not older than the newest seen for `pipeline` (a newer one becomes the newest);
  // ABORTED naming the pipeline, the token held and the token given otherwise. `rpc` names the call.
  grpc::Status Admit(const std::string& rpc, const std::string& pipeline, uint64_t token);

  // The newest token seen for `pipeline`; 0 when none.
  uint64_t Newest(const std::string& pipeline) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, uint64_t> newest_;
};

}  // namespace metron

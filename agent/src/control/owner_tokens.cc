#include "control/owner_tokens.h"

namespace metron {

grpc::Status OwnerTokens::Admit(const std::string& rpc, const std::string& pipeline, uint64_t token) {
  if (token == 0) return grpc::Status::OK;
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t& held = newest_[pipeline];
  if (token < held) {
    return grpc::Status(grpc::StatusCode::ABORTED,
                        rpc + " of pipeline " + pipeline + " refused: owner token " + std::to_string(token) +
                            " is older than " + std::to_string(held) +
                            ", the newest this agent has seen for it (another controller instance owns the chain)");
  }
  held = token;
  return grpc::Status::OK;
}

uint64_t OwnerTokens::Newest(const std::string& pipeline) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = newest_.find(pipeline);
  return it == newest_.end() ? 0 : it->second;
}

}  // namespace metron

// Field checks the control layer makes before a request reaches the backend: everything decidable from the
// request alone (presence, ranges, formats, uniqueness inside the request). Checks that need the server's
// state (does core 7 exist, is tag 12 free, does the Click config parse) belong to the backend.
//
// Errors are INVALID_ARGUMENT with "<field path>: <value> <what is wrong>", e.g.
// "groups[1].tag.value: 0 is not a MAC group tag 1..65535".
#pragma once

#include <chrono>

#include <grpcpp/support/status.h>

#include "metron/agent/v1/agent.pb.h"

namespace metron {

namespace pb = ::metron::agent::v1;

grpc::Status ValidateRequest(const pb::DeployPipelineRequest& req);
grpc::Status ValidateRequest(const pb::UpdatePipelineRequest& req);
grpc::Status ValidateRequest(const pb::RemovePipelineRequest& req);
grpc::Status ValidateRequest(const pb::NicRuleBatch& req);
grpc::Status ValidateRequest(const pb::NicRuleIds& req);
grpc::Status ValidateRequest(const pb::ExportStateRequest& req);
grpc::Status ValidateRequest(const pb::ImportStateRequest& req);

// StreamLoad's reporting interval: 0 means the default 100 ms; accepted range 10 ms .. 1 h.
inline constexpr std::chrono::milliseconds kDefaultLoadInterval{100};
inline constexpr std::chrono::milliseconds kMinLoadInterval{10};
inline constexpr std::chrono::milliseconds kMaxLoadInterval{3600 * 1000};
grpc::Status LoadInterval(const pb::LoadStreamRequest& req, std::chrono::milliseconds* out);
// StreamLoad's overload alert: 0 = off, else 0 < alert_load <= 1.
grpc::Status LoadAlert(const pb::LoadStreamRequest& req, double* out);

}  // namespace metron

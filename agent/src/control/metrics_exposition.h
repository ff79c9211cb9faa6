// The agent's counters in Prometheus text exposition format (version 0.0.4), for the /metrics endpoint
// (metrics_server.h). One source: the pb::Stats snapshot GetStats answers the controller with, so a scrape and the
// controller's load reports read the same counters and nothing is counted twice.
//
// Names follow Prometheus conventions: metron_agent_<what>_<unit>, counters end in _total, labels pipeline, group,
// core, class, nic, element, kind. A counter of the agent is cumulative since its start (or since the group was
// deployed: a redeployed group starts again from 0, which rate() treats as a counter reset).
#pragma once

#include <string>

#include "metron/agent/v1/agent.pb.h"

namespace metron {

// Escapes a label value: backslash, double quote and newline (the exposition format's three escapes).
std::string EscapeLabelValue(const std::string& v);

// The whole exposition: build info, per-core cycles and packets, per-NIC counters, per-group and per-class
// packets/bytes/drops, per stateful element its flow table (flows held, capacity, memory, shed flows).
std::string FormatAgentMetrics(const ::metron::agent::v1::Stats& stats, const std::string& version);

}  // namespace metron

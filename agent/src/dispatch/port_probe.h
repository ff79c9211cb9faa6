// What a DPDK port can do for dispatch, asked of its driver at agent start (before any mode is set up): the
// rte_flow features Metron's rules use (isolate, QUEUE, MARK, groups/JUMP), VMDq pools, RSS, the MAC filter
// table, VLAN filtering. rte_flow is asked with rte_flow_validate only, so nothing is installed (isolated mode is
// switched on and straight back off). The answer goes to GetResources (Nic.capabilities) and to the choice of
// the port's dispatch mode (dispatch_choice.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "metron/agent/v1/agent.pb.h"

namespace metron {

namespace pb = ::metron::agent::v1;

struct PortProbe {
  pb::NicCapabilities caps;
  // For each dispatch mode the port lacks a capability for: why, naming the port ("port X has no ..."). A mode
  // absent here has what it needs on paper; setting it up may still fail (dispatch_choice.h).
  std::map<pb::DispatchMode, std::string> missing;
};

// Probes the started DPDK port `port_id`, named `name`, for dispatch to `workers` worker rx queues (the port has
// them set up: the rte_flow rules validated steer to the last one).
PortProbe ProbePort(const std::string& name, uint16_t port_id, uint16_t workers);

}  // namespace metron

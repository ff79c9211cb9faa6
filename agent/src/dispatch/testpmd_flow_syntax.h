// SteerRules in dpdk-testpmd's flow syntax, both ways: to log what a NIC is asked to do in a form an operator
// can paste into testpmd, and to take rules written that way (e.g. tried by hand on a NIC) into the agent.
//
//   flow create <port> ingress priority <P> pattern eth [dst spec MAC dst mask MAC] [type is N]
//        [/ vlan tci spec VID tci mask 0x0fff [inner_type is N]] [/ ipv4|ipv6 [src|dst spec IP src|dst mask IP]
//        [proto is N]] [/ tcp|udp|sctp [src|dst spec PORT src|dst mask M]] / end
//        actions queue index Q | drop | mark id M / queue index Q / end
//
// Fields also accept testpmd's "is" (exact). Only what a NicRule can express is accepted; anything else is an
// error naming the column.
#pragma once

#include <cstdint>
#include <string>

#include <grpcpp/support/status.h>

#include "dispatch/steer_rule.h"

namespace metron {

std::string ToTestpmd(const SteerRule& rule, uint16_t port_id, uint16_t default_queue);

// Parses one "flow create" line into a rule for `nic` with `id` (the syntax has neither), validated like any
// NicRule (ParseNicRule). INVALID_ARGUMENT names the column and the offending word.
grpc::Status ParseTestpmd(const std::string& line, const std::string& nic, uint64_t id, SteerRule* out,
                          uint16_t* port_id);

}  // namespace metron

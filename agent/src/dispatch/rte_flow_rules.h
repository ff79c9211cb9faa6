// rte_flow rules for NICs that dispatch in hardware (DISPATCH_RTE_FLOW): one SteerRule -> one rte_flow rule
// (attr + pattern + actions). Its testpmd spelling is in testpmd_flow_syntax.h.
//
// Pattern: ETH [/ VLAN] [/ IPV4|IPV6 [/ TCP|UDP|SCTP]] / END, each item with spec and mask only for the fields
// the rule matches (a null spec matches any header of that type). Actions: QUEUE index | DROP |
// MARK id + QUEUE default (marked frames still need a fate on most PMDs) / END. Priority = rule priority,
// 0 = highest, as in SteerRule.
//
// No NIC here can create rte_flow rules (net_tap validates but cannot create them: the kernel lacks the tc
// multiq/flower pieces; null/ring answer ENOSYS, see shared/notes/dataplane.md). Tested here: how rules are
// built, and that net_tap's validator accepts them; creating them needs real hardware.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <rte_flow.h>

#include "dispatch/steer_rule.h"

namespace metron {

// Owns the item specs and masks its pattern points into: not copyable or movable, handed out by pointer.
class RteFlowRule {
 public:
  // INVALID_ARGUMENT for matches rte_flow cannot express (none today); *out untouched on error.
  static grpc::Status Build(const SteerRule& rule, uint16_t default_queue, std::unique_ptr<RteFlowRule>* out);

  RteFlowRule(const RteFlowRule&) = delete;
  RteFlowRule& operator=(const RteFlowRule&) = delete;

  const rte_flow_attr& attr() const { return attr_; }
  // Terminated by RTE_FLOW_ITEM_TYPE_END / RTE_FLOW_ACTION_TYPE_END.
  const std::vector<rte_flow_item>& pattern() const { return pattern_; }
  const std::vector<rte_flow_action>& actions() const { return actions_; }

 private:
  RteFlowRule() = default;
  rte_flow_attr attr_{};
  rte_flow_item_eth eth_spec_{}, eth_mask_{};
  rte_flow_item_vlan vlan_spec_{}, vlan_mask_{};
  rte_flow_item_ipv4 ipv4_spec_{}, ipv4_mask_{};
  rte_flow_item_ipv6 ipv6_spec_{}, ipv6_mask_{};
  rte_flow_item_tcp tcp_spec_{}, tcp_mask_{};
  rte_flow_item_udp udp_spec_{}, udp_mask_{};
  rte_flow_item_sctp sctp_spec_{}, sctp_mask_{};
  rte_flow_action_queue queue_{};
  rte_flow_action_mark mark_{};
  std::vector<rte_flow_item> pattern_;
  std::vector<rte_flow_action> actions_;
};

}  // namespace metron

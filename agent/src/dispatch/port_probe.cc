#include "dispatch/port_probe.h"

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>

#include <cstdio>
#include <memory>

#include "dispatch/rss_port.h"
#include "dispatch/rte_flow_rules.h"
#include "drivers/vmdq_conf.h"

namespace metron {
namespace {

// The driver's message, with the errno's text when it says something else.
std::string FlowError(int rc, const rte_flow_error& err) {
  const std::string code = rte_strerror(rc < 0 ? -rc : rc);
  if (err.message == nullptr || code == err.message) return code;
  return std::string(err.message) + " (" + code + ")";
}

// Validates `rule` (a group-tag rule built as the rte_flow dispatcher builds it) with its attributes in `group`;
// records the driver's answer under `what` when it refuses.
bool Validates(uint16_t port_id, const RteFlowRule& rule, uint32_t group, const char* what, int* rc_out,
               pb::NicCapabilities* caps) {
  rte_flow_attr attr = rule.attr();
  attr.group = group;
  rte_flow_error err{};
  const int rc = rte_flow_validate(port_id, &attr, rule.pattern().data(), rule.actions().data(), &err);
  if (rc_out) *rc_out = rc;
  if (rc != 0) caps->add_rte_flow_errors(std::string(what) + ": " + FlowError(rc, err));
  return rc == 0;
}

std::unique_ptr<RteFlowRule> TagRuleFor(const std::string& name, uint16_t queue, SteerActionKind action) {
  SteerRule r;
  if (!TagRule(pb::TAG_MAC, 1, queue, "probe", &r).ok()) return nullptr;
  r.nic = name;
  r.action.kind = action;
  r.action.value = action == SteerActionKind::kMark ? 1 : queue;
  std::unique_ptr<RteFlowRule> out;
  if (!RteFlowRule::Build(r, queue, &out).ok()) return nullptr;
  return out;
}

void ProbeRteFlow(const std::string& name, uint16_t port_id, uint16_t workers, pb::NicCapabilities* caps) {
  const uint16_t last = static_cast<uint16_t>(workers ? workers - 1 : 0);
  auto queue = TagRuleFor(name, last, SteerActionKind::kQueue);
  auto mark = TagRuleFor(name, last, SteerActionKind::kMark);
  if (!queue || !mark) return;  // cannot happen: tag 1 is valid
  int rc = 0;
  caps->set_rte_flow_queue(Validates(port_id, *queue, 0, "queue", &rc, caps));
  // A driver without rte_flow answers ENOSYS (ethdev has no flow ops for it): nothing else to ask.
  caps->set_rte_flow(rc != -ENOSYS);
  if (!caps->rte_flow()) return;
  caps->set_rte_flow_mark(Validates(port_id, *mark, 0, "mark", nullptr, caps));
  // Groups: a catch-all JUMP from group 0 to group 1, and the queue rule in group 1.
  rte_flow_attr attr{};
  attr.ingress = 1;
  rte_flow_item pattern[2] = {};
  pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
  pattern[1].type = RTE_FLOW_ITEM_TYPE_END;
  rte_flow_action_jump jump{};
  jump.group = 1;
  rte_flow_action actions[2] = {};
  actions[0].type = RTE_FLOW_ACTION_TYPE_JUMP;
  actions[0].conf = &jump;
  actions[1].type = RTE_FLOW_ACTION_TYPE_END;
  rte_flow_error err{};
  rc = rte_flow_validate(port_id, &attr, pattern, actions, &err);
  if (rc != 0) caps->add_rte_flow_errors("jump: " + FlowError(rc, err));
  caps->set_rte_flow_jump(rc == 0 && Validates(port_id, *queue, 1, "group 1", nullptr, caps));
  // Isolated mode is a port setting, not a rule: switched on, and off again straight away when it took.
  err = {};
  rc = rte_flow_isolate(port_id, 1, &err);
  if (rc == 0) {
    rte_flow_isolate(port_id, 0, &err);
  } else {
    caps->add_rte_flow_errors("isolate: " + FlowError(rc, err));
  }
  caps->set_rte_flow_isolate(rc == 0);
}

}  // namespace

PortProbe ProbePort(const std::string& name, uint16_t port_id, uint16_t workers) {
  PortProbe p;
  pb::NicCapabilities& caps = p.caps;
  rte_eth_dev_info info{};
  const int rc = rte_eth_dev_info_get(port_id, &info);
  if (rc != 0) {
    const std::string why = "port " + name + ": its driver answered no device info (" + rte_strerror(-rc) + ")";
    for (auto m : {pb::DISPATCH_RTE_FLOW, pb::DISPATCH_VMDQ, pb::DISPATCH_RSS}) p.missing[m] = why;
    return p;
  }
  caps.set_driver(info.driver_name ? info.driver_name : "");
  caps.set_max_rx_queues(info.max_rx_queues);
  caps.set_vmdq_pools(info.max_vmdq_pools);
  caps.set_rss_offloads(info.flow_type_rss_offloads);
  caps.set_reta_size(info.reta_size);
  caps.set_max_mac_addrs(info.max_mac_addrs);
  caps.set_vlan_filter((info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_VLAN_FILTER) != 0);
  ProbeRteFlow(name, port_id, workers, &caps);

  if (!caps.rte_flow()) {
    p.missing[pb::DISPATCH_RTE_FLOW] = "port " + name + " has no rte_flow (its driver " + caps.driver() +
                                       " answers ENOSYS)";
  } else if (!caps.rte_flow_queue()) {
    p.missing[pb::DISPATCH_RTE_FLOW] = "port " + name + " has no rte_flow QUEUE action for a dst MAC match (" +
                                       caps.rte_flow_errors(0) + ")";
  }
  rte_eth_conf current{}, vmdq{};
  VmdqLayout layout;
  if (rte_eth_dev_conf_get(port_id, &current) != 0) {
    p.missing[pb::DISPATCH_VMDQ] = "port " + name + ": its configuration cannot be read";
  } else if (grpc::Status s = VmdqPortConf(name, info, current, workers, &vmdq, &layout); !s.ok()) {
    p.missing[pb::DISPATCH_VMDQ] = s.error_message();
  }
  if (RssHashFunctions(info.flow_type_rss_offloads) == 0) p.missing[pb::DISPATCH_RSS] = RssMissing(name, info.flow_type_rss_offloads);
  return p;
}

}  // namespace metron

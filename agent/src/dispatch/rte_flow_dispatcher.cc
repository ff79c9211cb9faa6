#include "dispatch/rte_flow_dispatcher.h"

#include <memory>

#include <rte_flow.h>

#include "dispatch/rte_flow_rules.h"
#include "dispatch/testpmd_flow_syntax.h"

namespace metron {
namespace {

// Rule `index` of the ordered list as the NIC sees it: priority = position, so first match wins.
grpc::Status BuildAt(const std::vector<SteerRule>& rules, size_t index, uint16_t default_queue,
                     std::unique_ptr<RteFlowRule>* out) {
  SteerRule r = rules[index];
  r.priority = static_cast<uint32_t>(index);
  return RteFlowRule::Build(r, default_queue, out);
}

grpc::Status NicRefused(const std::string& nic, const std::string& step, const SteerRule& rule, uint16_t port,
                        uint16_t default_queue, const rte_flow_error& err) {
  const std::string id = rule.id ? "rule " + std::to_string(rule.id) : "a group-tag rule";
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "NIC " + nic + " refused " + id + " (" + step + ": " +
                          (err.message ? err.message : "no reason given") + "): " +
                          ToTestpmd(rule, port, default_queue));
}

}  // namespace

RteFlowDispatcher::RteFlowDispatcher(std::string nic, uint16_t port_id, uint16_t queues, uint16_t default_queue,
                                     uint32_t max_rules)
    : nic_(std::move(nic)), port_id_(port_id), queues_(queues), default_queue_(default_queue), max_rules_(max_rules) {}

RteFlowDispatcher::~RteFlowDispatcher() {
  rte_flow_error err{};
  for (rte_flow* f : flows_) rte_flow_destroy(port_id_, f, &err);
}

grpc::Status RteFlowDispatcher::check(const std::vector<SteerRule>& ordered_rules) const {
  if (ordered_rules.size() > max_rules_) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "NIC " + nic_ + ": " + std::to_string(ordered_rules.size()) + " rules, its table holds " +
                            std::to_string(max_rules_));
  }
  for (size_t i = 0; i < ordered_rules.size(); ++i) {
    std::unique_ptr<RteFlowRule> f;
    grpc::Status s = BuildAt(ordered_rules, i, default_queue_, &f);
    if (!s.ok()) return s;
    rte_flow_error err{};
    if (rte_flow_validate(port_id_, &f->attr(), f->pattern().data(), f->actions().data(), &err) != 0) {
      return NicRefused(nic_, "validate", ordered_rules[i], port_id_, default_queue_, err);
    }
  }
  return grpc::Status::OK;
}

grpc::Status RteFlowDispatcher::apply(const std::vector<SteerRule>& ordered_rules) {
  grpc::Status s = check(ordered_rules);
  if (!s.ok()) return s;
  std::vector<rte_flow*> created;
  for (size_t i = 0; i < ordered_rules.size(); ++i) {
    std::unique_ptr<RteFlowRule> f;
    s = BuildAt(ordered_rules, i, default_queue_, &f);
    rte_flow_error err{};
    rte_flow* flow = s.ok() ? rte_flow_create(port_id_, &f->attr(), f->pattern().data(), f->actions().data(), &err)
                            : nullptr;
    if (flow == nullptr) {
      for (rte_flow* c : created) rte_flow_destroy(port_id_, c, &err);
      return s.ok() ? NicRefused(nic_, "create", ordered_rules[i], port_id_, default_queue_, err) : s;
    }
    created.push_back(flow);
  }
  rte_flow_error err{};
  for (rte_flow* old : flows_) rte_flow_destroy(port_id_, old, &err);
  flows_ = std::move(created);
  return grpc::Status::OK;
}

grpc::Status RteFlowDispatcher::probe() {
  SteerRule r;
  grpc::Status s = TagRule(pb::TAG_MAC, 1, static_cast<uint32_t>(queues_ - 1), "probe", &r);
  if (!s.ok()) return s;
  r.nic = nic_;
  s = apply({r});
  if (!s.ok()) return s;
  return apply({});
}

}  // namespace metron

// RteFlowDispatcher: tag -> queue dispatch done by the NIC itself (DISPATCH_RTE_FLOW), for DPDK ports whose PMD
// implements rte_flow. The SteeringTable hands it the NIC's full ordered rule list; it validates every rule
// with the PMD before changing anything, creates the new rules before destroying the old ones (frames always
// meet one complete set), and leaves the old set in force if the NIC refuses any new rule.
//
// First match wins in SteeringTable order; rte_flow only orders by priority, so rule i of the list gets
// priority i (the NIC's own priority levels are the limit on the list length).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dispatch/dispatcher.h"

struct rte_flow;

namespace metron {

class RteFlowDispatcher final : public Dispatcher {
 public:
  // port_id: a started DPDK port with `queues` rx queues. max_rules: what the NIC's rule table holds.
  RteFlowDispatcher(std::string nic, uint16_t port_id, uint16_t queues, uint16_t default_queue, uint32_t max_rules);
  ~RteFlowDispatcher() override;  // destroys the rules it created
  RteFlowDispatcher(const RteFlowDispatcher&) = delete;
  RteFlowDispatcher& operator=(const RteFlowDispatcher&) = delete;

  const std::string& nic() const override { return nic_; }
  pb::DispatchMode mode() const override { return pb::DISPATCH_RTE_FLOW; }
  uint16_t steerable_queues() const override { return queues_; }
  uint32_t max_rules() const override { return max_rules_; }
  grpc::Status check(const std::vector<SteerRule>& ordered_rules) const override;
  grpc::Status apply(const std::vector<SteerRule>& ordered_rules) override;

  // Whether the NIC can really steer: creates and removes one group-tag rule (dst MAC tag -> last queue); call
  // before handing the dispatcher to a SteeringTable (it replaces the whole list).
  // Validation alone proves little: net_tap validates rules its kernel then refuses to create. Run at startup
  // so a port that cannot dispatch is refused there, not at the controller's first deployment.
  grpc::Status probe();

  size_t installed() const { return flows_.size(); }

 private:
  const std::string nic_;
  const uint16_t port_id_;
  const uint16_t queues_;
  const uint16_t default_queue_;
  const uint32_t max_rules_;
  std::vector<rte_flow*> flows_;
};

}  // namespace metron

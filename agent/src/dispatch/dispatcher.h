// One NIC's tag -> queue dispatch, as the SteeringTable drives it.
//
// The SteeringTable owns what must be dispatched (the controller's NIC rules and the group tags of deployed
// pipelines) and hands each NIC its complete ordered rule list; a Dispatcher only knows how to make its NIC
// (or the kernel, in emulation) deliver frames that way. Implementations: FanoutPort (DISPATCH_FANOUT_CBPF,
// kernel AF_PACKET fanout steered by classic BPF), RteFlowDispatcher (DISPATCH_RTE_FLOW, NIC rules) and
// VmdqDispatcher (DISPATCH_VMDQ, class MACs in per-core pools).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "dispatch/steer_rule.h"

namespace metron {

class Dispatcher {
 public:
  virtual ~Dispatcher() = default;

  virtual const std::string& nic() const = 0;
  virtual pb::DispatchMode mode() const = 0;
  // Rx queues frames can be steered to (= worker slots of the engine, see core/port.h).
  virtual uint16_t steerable_queues() const = 0;
  virtual uint32_t max_rules() const = 0;

  // Whether `ordered_rules` (first match wins) can be applied; no side effect.
  virtual grpc::Status check(const std::vector<SteerRule>& ordered_rules) const = 0;
  // Replaces the NIC's whole rule list. On error the previous list stays in force. On success it returns once
  // every frame steered under the previous list has been taken from its queue by that queue's reader (or a
  // bounded wait expired because a queue has no reader), so a caller that moves a tag from core A to core B can
  // retire the group on A without losing A's backlog: after apply(), A gets no more frames of that tag.
  virtual grpc::Status apply(const std::vector<SteerRule>& ordered_rules) = 0;
};

}  // namespace metron

#include "dispatch/dispatch_choice.h"

namespace metron {
namespace {

// Best first: hardware tag dispatch for MAC and VLAN tags, for MAC tags only, hash spreading, one queue.
constexpr pb::DispatchMode kOrder[] = {pb::DISPATCH_RTE_FLOW, pb::DISPATCH_VMDQ, pb::DISPATCH_RSS,
                                       pb::DISPATCH_SINGLE};

}  // namespace

bool ParseDispatchMode(const std::string& text, DispatchRequest* out) {
  if (text == "auto") {
    out->mode = pb::DISPATCH_MODE_UNSPECIFIED;
    out->automatic = true;
    return true;
  }
  for (pb::DispatchMode m : kOrder) {
    if (text == DispatchModeName(m)) {
      out->mode = m;
      out->automatic = false;
      return true;
    }
  }
  return false;
}

std::string DispatchModeName(pb::DispatchMode mode) {
  switch (mode) {
    case pb::DISPATCH_RTE_FLOW: return "rte-flow";
    case pb::DISPATCH_VMDQ: return "vmdq";
    case pb::DISPATCH_RSS: return "rss";
    case pb::DISPATCH_SINGLE: return "single";
    case pb::DISPATCH_FANOUT_CBPF: return "fanout";
    default: return "unspecified";
  }
}

std::vector<pb::DispatchMode> PossibleModes(const PortProbe& probe) {
  std::vector<pb::DispatchMode> out;
  for (pb::DispatchMode m : kOrder)
    if (!probe.missing.count(m)) out.push_back(m);
  return out;
}

void DescribeProbe(const PortProbe& probe, pb::Nic* report) {
  report->clear_dispatch_modes();
  for (pb::DispatchMode m : PossibleModes(probe)) report->add_dispatch_modes(m);
  *report->mutable_capabilities() = probe.caps;
}

grpc::Status ChooseDispatch(const PortProbe& probe, const DispatchRequest& req, const EnableMode& enable,
                            pb::Nic* report) {
  DescribeProbe(probe, report);
  report->set_requested_mode(req.mode);
  report->set_auto_mode(req.automatic);
  report->clear_refusals();
  std::vector<pb::DispatchMode> tries;
  if (!req.automatic) tries.push_back(req.mode);
  // auto: every mode, best first; fallback: the modes below the asked one.
  bool below = req.automatic;
  if (req.automatic || req.fallback)
    for (pb::DispatchMode m : kOrder) {
      if (below) tries.push_back(m);
      below = below || m == req.mode;
    }
  for (pb::DispatchMode m : tries) {
    auto missing = probe.missing.find(m);
    grpc::Status s = missing != probe.missing.end()
                         ? grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, missing->second)
                         : enable(m);
    if (s.ok()) {
      report->set_active_mode(m);
      return grpc::Status::OK;
    }
    pb::DispatchRefusal* r = report->add_refusals();
    r->set_mode(m);
    r->set_reason(s.error_message());
    if (!req.automatic && !req.fallback) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, s.error_message());
  }
  // SINGLE needs nothing of the port, so only an enable that refuses it gets here.
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "no dispatch mode could be set up: " + report->refusals().rbegin()->reason());
}

}  // namespace metron

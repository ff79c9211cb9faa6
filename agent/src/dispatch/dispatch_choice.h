// Which dispatch mode a DPDK port runs: the one asked on the command line (--dispatch PORT=MODE, or the older
// --rte-flow/--vmdq/--rss PORT), or with --dispatch PORT=auto the best one the port can set up, in the order
// rte_flow > VMDq > RSS > SINGLE (tag affinity in hardware with any tag type, then with MAC tags only, then
// none). A mode the probe (port_probe.h) found a capability missing for is refused without being tried; the
// others are set up by `enable`, whose failure is a refusal too. An asked mode that is refused stops the agent
// naming the port and the reason, unless fallback is on: then the port runs the best mode below the asked one it can set up, and the
// refusal is reported (Nic.refusals) instead of hidden.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "dispatch/port_probe.h"

namespace metron {

struct DispatchRequest {
  pb::DispatchMode mode = pb::DISPATCH_MODE_UNSPECIFIED;  // asked; UNSPECIFIED with automatic
  bool automatic = false;
  bool fallback = false;  // an asked mode that is refused falls back to the best mode that can be set up
};

// "rte-flow", "vmdq", "rss", "single" <-> modes (the command line's spelling); "auto" parses to automatic.
bool ParseDispatchMode(const std::string& text, DispatchRequest* out);
std::string DispatchModeName(pb::DispatchMode mode);

// The modes the probe found no capability missing for, best first (always ends with SINGLE).
std::vector<pb::DispatchMode> PossibleModes(const PortProbe& probe);

// Fills report's dispatch_modes (PossibleModes) and capabilities: all that is said of a port nothing was asked of.
void DescribeProbe(const PortProbe& probe, pb::Nic* report);

// Sets the mode up on the port: OK, or why it could not (the port is left as it was).
using EnableMode = std::function<grpc::Status(pb::DispatchMode)>;

// Chooses and sets up the port's mode for `req`; fills report as DescribeProbe does, and active_mode,
// requested_mode, auto_mode, capabilities and refusals. FAILED_PRECONDITION with the asked mode's
// refusal ("port X has no ...") when it was refused and fallback is off; nothing is set up then.
grpc::Status ChooseDispatch(const PortProbe& probe, const DispatchRequest& req, const EnableMode& enable,
                            pb::Nic* report);

}  // namespace metron

// Classic BPF programs that steer frames by SteerRules, run by the kernel outside the worker cores.
//
// In emulation mode (DISPATCH_FANOUT_CBPF) one AF_PACKET socket per worker queue joins a fanout group of type
// PACKET_FANOUT_CBPF; the kernel runs the kFanout program on every frame and delivers it to the socket whose
// index the program returns. Drop rules cannot be expressed by a fanout program (it always picks a socket),
// so the same rules are also compiled as a kSocketFilter program attached to every socket, which returns 0
// (drop) for them. Rules are tried in the given order, first match wins; unmatched frames go to the default
// queue. A NIC rule is a straight line of load/compare instructions whose failure jumps to the next rule (every
// conditional jump is short: cBPF jump offsets are 8 bits). Group-tag rules (MAC group bits or VLAN id only,
// the bulk of a program) are compiled per run of consecutive ones into one load and a binary search over the
// sorted tags, so per-frame cost grows with log2 of the number of groups, not linearly.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <vector>

#include <grpcpp/support/status.h>

#include "dispatch/steer_rule.h"

namespace metron {

enum class ProgramRole { kFanout, kSocketFilter };

// Returns RESOURCE_EXHAUSTED when the rules do not fit in BPF_MAXINSNS instructions and FAILED_PRECONDITION
// for actions the kernel cannot perform (mark); *out is only written on success.
grpc::Status CompileSteeringProgram(const std::vector<SteerRule>& ordered_rules, uint32_t default_queue,
                                    ProgramRole role, std::vector<sock_filter>* out);

// True when some rule drops frames, i.e. the kSocketFilter program is needed at all.
bool HasDropRules(const std::vector<SteerRule>& rules);

}  // namespace metron

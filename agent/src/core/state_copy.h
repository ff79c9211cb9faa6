// Copying a group's flow state (its NAPT/LB tables) out of a running core and into another group.
//
// A table of a million flows takes most of a second to copy; a core that copies it forwards nothing meanwhile,
// and a NIC ring overflows after about a millisecond at line rate. So copies that may be fuzzy - checkpoints,
// ExportState, a split or merge's sources on other cores (docs/scaling.md#state-copy) - run in slices of about
// one batch's worth of time between batches of the core; only a take-over's copy, which must be exact at one
// batch boundary, holds the core for the whole table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "core/engine.h"
#include "core/group.h"
#include "metron/agent/v1/agent.pb.h"

namespace metron {

// A group's flow state: one table per stateful element, named and typed so it can be imported elsewhere.
using Snapshot = std::vector<agent::v1::StateTable>;

// How long one slice may hold a core: the engine's batch budget, so a copy delays packets no more than a batch
// of a busy core does.
constexpr uint64_t kStateSliceUs = Engine::kDefaultBatchBudgetUs;

// The whole state at once, on the calling thread: the caller holds the group's core (or it is not running).
Snapshot snapshot_of(const GroupRuntime& g);

struct SliceStats {
  uint64_t slices = 0;
  uint64_t longest_cycles = 0;  // TSC cycles of the longest slice: how long the core was held at most
  // CPU time the worker spent in its longest slice: the wall time less what the OS took from it meanwhile (on a
  // shared machine, a descheduled worker makes a slice look long).
  uint64_t longest_cpu_ns = 0;
};

// The state in slices of about `slice_us`, each run by the group's core between two of its batches. Fuzzy: an
// entry that lives through the copy is in it exactly as it is (a slice never stops inside an entry); one the core
// adds or removes meanwhile may or may not be.
Snapshot sliced_snapshot_of(Engine& engine, const GroupRuntime& g, uint64_t slice_us = kStateSliceUs,
                            SliceStats* stats = nullptr);

// Exchanges the flow state of two groups built from the same Click configuration, table for table, in O(1): a
// take-over's successor adopts its source's tables at the handoff instead of copying them. All or nothing: false,
// both groups as they were, if some table cannot be exchanged. The caller holds both groups' cores.
bool swap_state(GroupRuntime& a, GroupRuntime& b);

// Fills `dst` from `from` in order: the first snapshot replaces its tables, later ones merge in (a flow already
// there keeps its mapping). Tables go to the element of the same name and kind; others are ignored (the group's
// config may have dropped an element). With `dst.spec().state_filter` set, only flows whose key's source port has
// its bits are imported (a class split's new half takes the flows of its slice). `where` prefixes error messages.
grpc::Status copy_state(GroupRuntime& dst, const std::vector<const Snapshot*>& from,
                        const std::vector<std::string>& names, const std::string& where, uint64_t* imported = nullptr);

// The flows of `t` whose key's source port has `bits`' bits, with t's element, kind and allocator state.
agent::v1::StateTable filtered(const agent::v1::StateTable& t, PortBits bits);

}  // namespace metron

// VMDq MAC pools (DISPATCH_VMDQ): which destination MACs a NIC configured with RTE_ETH_MQ_RX_VMDQ_ONLY (one pool
// per worker slot, drivers/vmdq_conf.h) must deliver to which pool, and what a change adds and removes.
//
// A VMDq NIC matches whole MAC addresses, not the group bits of a tag, so a group is dispatched by one entry per
// class it holds: 02:4d:GG:GG:CC:CC for each class id CC of group tag GG (docs/contracts.md#tags), plus the
// reserved classes ffff and fffd (frames the switch could not classify, sent to the chain's classifying group:
// the agent is not told which group that is, so every group tag gets them). Entries come from the NIC's MAC
// address table (rte_eth_dev_info.max_mac_addrs, one of which is the port's own address): 127 on an 82599, far
// below the 65536 classes a tag can address. Beyond the limit a rule list is refused (RESOURCE_EXHAUSTED naming
// the count and the limit), as are VLAN tags (VMDq selects pools by VLAN only in its static configure-time pool
// map) and any match or action VMDq cannot express.
//
// Pure: no DPDK call here. VmdqDispatcher adds and removes the entries in the order VmdqDiff gives (removals
// first: a moved class's MAC is in one pool at a time).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "dispatch/steer_rule.h"

namespace metron {

// Classes every MAC group tag is given an entry for on top of its own (docs/contracts.md#tags).
inline constexpr uint32_t kUnclassifiedClass = 0xffff;
inline constexpr uint32_t kReplyUnclassifiedClass = 0xfffd;

struct VmdqEntry {
  MacAddr mac{};
  uint16_t pool = 0;  // worker slot
  bool operator==(const VmdqEntry& o) const { return mac == o.mac && pool == o.pool; }
  bool operator<(const VmdqEntry& o) const { return mac != o.mac ? mac < o.mac : pool < o.pool; }
};

// The class MAC of class `class_id` of group tag `tag`: 02:4d:GG:GG:CC:CC.
MacAddr ClassMac(uint32_t tag, uint32_t class_id);

// The entries that make NIC `nic` dispatch like `ordered_rules` (SteeringTable order, first match wins), sorted
// by MAC. A rule may match an exact dst MAC (one entry) or a MAC group tag (mask ff:ff:ff:ff:00:00): a group-tag
// rule of the agent's own (SteerRule.classes) takes one entry per class; the controller's NIC rule for a group
// tag takes the classes the agent's rule for that tag lists (none while no group of that tag is deployed here).
// A MAC claimed by an earlier rule stays with it. FAILED_PRECONDITION naming the NIC and the rule for anything
// else (VLAN tags, IP/L4/EtherType matches, other masks, drop/mark actions), INVALID_ARGUMENT for a queue >=
// `pools`, RESOURCE_EXHAUSTED beyond `limit` entries; *out is untouched on error.
grpc::Status VmdqEntries(const std::string& nic, const std::vector<SteerRule>& ordered_rules, uint16_t pools,
                         uint32_t limit, std::vector<VmdqEntry>* out);

// What turns the NIC's entries `prev` into `next`: entries to remove (gone, or their MAC moves to another pool)
// and entries to add, each sorted by MAC. A MAC staying in its pool is in neither.
struct VmdqChange {
  std::vector<VmdqEntry> remove;
  std::vector<VmdqEntry> add;
};
VmdqChange VmdqDiff(const std::vector<VmdqEntry>& prev, const std::vector<VmdqEntry>& next);

}  // namespace metron

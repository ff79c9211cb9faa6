// VMDq MAC pools (DISPATCH_VMDQ): which destination MACs a NIC configured with RTE_ETH_MQ_RX_VMDQ_ONLY (one pool
// per worker core) must deliver to which pool, and what a change adds and removes.
//
// A VMDq NIC matches whole MAC addresses, not the group bits of a tag, so a group is dispatched by one entry per
// class it holds: 02:4d:GG:GG:CC:CC for each class id CC of group tag GG (docs/contracts.md#tags). Entries come
// from the NIC's MAC address table (rte_eth_dev_info.max_mac_addrs, one of which is the port's own address), so
// the classes of all groups on a VMDq NIC together are limited to max_mac_addrs - 1: 127 on an 82599 (128 RAR
// entries), far below the 65536 classes a tag can address. A set of groups beyond the limit is refused
// (RESOURCE_EXHAUSTED naming the count and the limit), as are VLAN tags (VMDq selects pools by VLAN only in its
// static configure-time pool map) and a pool the NIC does not have.
//
// Pure: no DPDK call here. The port side adds and removes the entries with rte_eth_dev_mac_addr_add(port, mac,
// pool) / rte_eth_dev_mac_addr_remove in the order VmdqChange gives (removals first: a moved class's MAC is in
// one pool at a time). Not built yet: that port side. It also needs the port to poll, for worker slot i, the first
// queue of pool i (dev_info.vmdq_queue_base + i * queues per pool: 2 per pool with 64 pools on an 82599), not
// queue i as DpdkPort does; so --vmdq stops at the capability check today.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

namespace metron {

using MacAddr = std::array<uint8_t, 6>;

// One group as dispatched on a VMDq NIC: its MAC group tag, its classes and the pool (= worker slot) it runs on.
struct VmdqGroup {
  uint32_t tag = 0;
  std::vector<uint32_t> class_ids;
  uint16_t pool = 0;
};

struct VmdqEntry {
  MacAddr mac{};
  uint16_t pool = 0;
  bool operator==(const VmdqEntry& o) const { return mac == o.mac && pool == o.pool; }
  bool operator<(const VmdqEntry& o) const { return mac != o.mac ? mac < o.mac : pool < o.pool; }
};

// Entries available to group classes on a NIC with `max_mac_addrs` MAC table entries (the port keeps its own).
uint32_t VmdqEntryLimit(uint32_t max_mac_addrs);

// The class MAC of class `class_id` of group tag `tag`: 02:4d:GG:GG:CC:CC.
MacAddr ClassMac(uint32_t tag, uint32_t class_id);

// Every (class MAC, pool) entry for `groups`, sorted by MAC. INVALID_ARGUMENT for a tag outside 1..65535, a class
// id outside 0..65535, a pool >= `pools`, or a class MAC claimed by two groups; RESOURCE_EXHAUSTED when the entries
// exceed `limit`. Errors name the group (by index, prefixed with `where`) and the value; *out is untouched then.
grpc::Status VmdqEntries(const std::vector<VmdqGroup>& groups, uint16_t pools, uint32_t limit,
                         const std::string& where, std::vector<VmdqEntry>* out);

// What turns the NIC's entries `prev` into `next`: entries to remove (gone, or their MAC moves to another pool)
// and entries to add, each sorted by MAC. A MAC staying in its pool is in neither.
struct VmdqChange {
  std::vector<VmdqEntry> remove;
  std::vector<VmdqEntry> add;
};
VmdqChange VmdqDiff(const std::vector<VmdqEntry>& prev, const std::vector<VmdqEntry>& next);

// The startup check for a port given to --vmdq: OK when the NIC has `max_vmdq_pools` >= `pools` (one per worker)
// and at least one MAC entry to spare; otherwise FAILED_PRECONDITION naming the port and the missing capability.
grpc::Status VmdqCapable(const std::string& port, uint16_t max_vmdq_pools, uint32_t max_mac_addrs, uint16_t pools);

}  // namespace metron

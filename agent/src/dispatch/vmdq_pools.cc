#include "dispatch/vmdq_pools.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "dispatch/steer_rule.h"

namespace metron {

namespace {

using grpc::Status;
using grpc::StatusCode;

std::string MacText(const MacAddr& m) {
  char b[18];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}

}  // namespace

uint32_t VmdqEntryLimit(uint32_t max_mac_addrs) { return max_mac_addrs > 0 ? max_mac_addrs - 1 : 0; }

MacAddr ClassMac(uint32_t tag, uint32_t class_id) {
  return {kMacTagByte0,
          kMacTagByte1,
          static_cast<uint8_t>(tag >> 8),
          static_cast<uint8_t>(tag),
          static_cast<uint8_t>(class_id >> 8),
          static_cast<uint8_t>(class_id)};
}

Status VmdqEntries(const std::vector<VmdqGroup>& groups, uint16_t pools, uint32_t limit, const std::string& where,
                   std::vector<VmdqEntry>* out) {
  size_t wanted = 0;
  for (const VmdqGroup& g : groups) wanted += g.class_ids.size();
  // Refuse before building anything: a large request must not cost a large allocation to be told no.
  if (wanted > limit)
    return Status(StatusCode::RESOURCE_EXHAUSTED,
                  where + ": " + std::to_string(wanted) + " class MACs for " + std::to_string(groups.size()) +
                      " groups, but the NIC's MAC table holds " + std::to_string(limit) +
                      " (VMDq matches whole MACs: one entry per class)");
  std::map<MacAddr, size_t> owner;  // class MAC -> group index
  std::vector<VmdqEntry> entries;
  entries.reserve(wanted);
  for (size_t i = 0; i < groups.size(); ++i) {
    const VmdqGroup& g = groups[i];
    const std::string f = where + "[" + std::to_string(i) + "]";
    if (g.tag < 1 || g.tag > kMaxMacGroupTag)
      return Status(StatusCode::INVALID_ARGUMENT,
                    f + ".tag: " + std::to_string(g.tag) + " outside 1.." + std::to_string(kMaxMacGroupTag));
    if (g.pool >= pools)
      return Status(StatusCode::INVALID_ARGUMENT, f + ".pool: " + std::to_string(g.pool) + " but the NIC has " +
                                                      std::to_string(pools) + " VMDq pools");
    for (uint32_t c : g.class_ids) {
      if (c > 0xffff)
        return Status(StatusCode::INVALID_ARGUMENT, f + ".class_ids: " + std::to_string(c) + " outside 0..65535");
      const MacAddr mac = ClassMac(g.tag, c);
      auto [it, fresh] = owner.emplace(mac, i);
      if (!fresh) {
        if (it->second == i) continue;  // a class listed twice in one group needs one entry
        return Status(StatusCode::INVALID_ARGUMENT, f + ": class MAC " + MacText(mac) + " already belongs to " +
                                                        where + "[" + std::to_string(it->second) + "]");
      }
      entries.push_back({mac, g.pool});
    }
  }
  std::sort(entries.begin(), entries.end());
  *out = std::move(entries);
  return Status::OK;
}

VmdqChange VmdqDiff(const std::vector<VmdqEntry>& prev, const std::vector<VmdqEntry>& next) {
  std::vector<VmdqEntry> a = prev, b = next;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  VmdqChange c;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(c.remove));
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(c.add));
  return c;
}

Status VmdqCapable(const std::string& port, uint16_t max_vmdq_pools, uint32_t max_mac_addrs, uint16_t pools) {
  if (max_vmdq_pools == 0)
    return Status(StatusCode::FAILED_PRECONDITION,
                  "port " + port + " has no VMDq (its driver reports max_vmdq_pools 0): dispatch it with --rte-flow instead");
  if (max_vmdq_pools < pools)
    return Status(StatusCode::FAILED_PRECONDITION, "port " + port + " has " + std::to_string(max_vmdq_pools) +
                                                       " VMDq pools but there are " + std::to_string(pools) +
                                                       " worker cores (one pool each)");
  if (VmdqEntryLimit(max_mac_addrs) == 0)
    return Status(StatusCode::FAILED_PRECONDITION,
                  "port " + port + " has no MAC table entry beyond its own address (max_mac_addrs " +
                      std::to_string(max_mac_addrs) + "): no class MAC can be added to a pool");
  return Status::OK;
}

}  // namespace metron

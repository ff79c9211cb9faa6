#include "dispatch/vmdq_pools.h"

#include <algorithm>
#include <iterator>
#include <map>

namespace metron {

namespace {

using grpc::Status;
using grpc::StatusCode;

constexpr MacAddr kExact{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
constexpr MacAddr kGroupMask{0xff, 0xff, 0xff, 0xff, 0x00, 0x00};

bool IsMacTag(const MacAddr& m) { return m[0] == kMacTagByte0 && m[1] == kMacTagByte1; }
uint32_t GroupOf(const MacAddr& m) { return uint32_t{m[2]} << 8 | m[3]; }

std::string Describe(const SteerRule& r) {
  if (r.id != 0) return "rule " + std::to_string(r.id);
  if (r.match.vlan != 0) return "VLAN tag " + std::to_string(r.match.vlan);
  return "MAC tag " + std::to_string(GroupOf(r.match.eth_dst));
}

// What of `m` VMDq cannot match, or empty: it selects a pool by the dst MAC alone.
std::string UnmatchableField(const SteerMatch& m) {
  if (m.ip_src.version != 0 || m.ip_src.len != 0) return "ip_src";
  if (m.ip_dst.version != 0 || m.ip_dst.len != 0) return "ip_dst";
  if (m.ip_proto != 0) return "ip_proto";
  if (m.l4_src.mask != 0) return "l4_src";
  if (m.l4_dst.mask != 0) return "l4_dst";
  if (m.ether_type != 0) return "ether_type";
  if (!m.has_eth_dst) return "no eth_dst";
  return {};
}

}  // namespace

MacAddr ClassMac(uint32_t tag, uint32_t class_id) {
  return {kMacTagByte0,
          kMacTagByte1,
          static_cast<uint8_t>(tag >> 8),
          static_cast<uint8_t>(tag),
          static_cast<uint8_t>(class_id >> 8),
          static_cast<uint8_t>(class_id)};
}

Status VmdqEntries(const std::string& nic, const std::vector<SteerRule>& ordered_rules, uint16_t pools,
                   uint32_t limit, std::vector<VmdqEntry>* out) {
  const std::string where = "NIC " + nic + " (VMDq MAC pools): ";
  // The controller's rule for a group tag reaches the same classes as the agent's own rule for it (which comes
  // later in the list, so it is the one kept).
  std::map<uint32_t, const std::vector<uint32_t>*> tag_classes;
  for (const SteerRule& r : ordered_rules)
    if (r.id == 0 && r.match.vlan == 0 && r.match.has_eth_dst) tag_classes[GroupOf(r.match.eth_dst)] = &r.classes;

  std::map<MacAddr, uint16_t> owner;  // first match wins
  for (const SteerRule& r : ordered_rules) {
    const std::string what = where + Describe(r);
    if (r.match.vlan != 0)
      return Status(StatusCode::FAILED_PRECONDITION,
                    what + ": VMDq cannot select a pool by VLAN id (only by whole dst MAC): use MAC tags");
    if (r.action.kind != SteerActionKind::kQueue)
      return Status(StatusCode::FAILED_PRECONDITION,
                    what + ": VMDq can only deliver to a pool, not " +
                        (r.action.kind == SteerActionKind::kDrop ? "drop" : "mark"));
    if (const std::string f = UnmatchableField(r.match); !f.empty())
      return Status(StatusCode::FAILED_PRECONDITION, what + ": VMDq selects a pool by dst MAC only, the rule matches " +
                                                         (f == "no eth_dst" ? "no dst MAC" : f));
    if (r.action.value >= pools)
      return Status(StatusCode::INVALID_ARGUMENT, what + ": queue " + std::to_string(r.action.value) +
                                                      " but the NIC has " + std::to_string(pools) + " VMDq pools");
    const auto pool = static_cast<uint16_t>(r.action.value);
    if (r.match.eth_dst_mask == kExact) {
      owner.emplace(r.match.eth_dst, pool);
      continue;
    }
    if (r.match.eth_dst_mask != kGroupMask || !IsMacTag(r.match.eth_dst))
      return Status(StatusCode::FAILED_PRECONDITION,
                    what + ": eth_dst " + FormatMac(r.match.eth_dst) + "/" + FormatMac(r.match.eth_dst_mask) +
                        ": VMDq matches whole MACs (an exact dst MAC, or a MAC tag's group " +
                        FormatMac(kGroupMask) + ")");
    const uint32_t tag = GroupOf(r.match.eth_dst);
    auto known = tag_classes.find(tag);
    if (known == tag_classes.end()) continue;  // no group of that tag here yet: no class to deliver
    for (uint32_t c : *known->second) owner.emplace(ClassMac(tag, c), pool);
    owner.emplace(ClassMac(tag, kUnclassifiedClass), pool);
    owner.emplace(ClassMac(tag, kReplyUnclassifiedClass), pool);
  }
  if (owner.size() > limit)
    return Status(StatusCode::RESOURCE_EXHAUSTED,
                  where + std::to_string(owner.size()) + " class MACs, but its MAC table holds " + std::to_string(limit) +
                      " (VMDq matches whole MACs: one entry per class of each group, 2 more per group tag)");
  out->clear();
  for (const auto& [mac, pool] : owner) out->push_back({mac, pool});
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

}  // namespace metron

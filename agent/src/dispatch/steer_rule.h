// Steering rules: which rx queue (= core) a frame is delivered to.
//
// A NicRule from the controller is parsed and validated once into a SteerRule; every dispatch backend (the
// kernel fanout program in emulation, rte_flow on real NICs) consumes that same value, so the meaning of a
// match field is defined in one place. Group tags (docs/contracts.md#tags) are expressed as SteerRules too.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "metron/agent/v1/agent.pb.h"

namespace metron {

namespace pb = ::metron::agent::v1;

using MacAddr = std::array<uint8_t, 6>;

// MAC tags are 02:4d:GG:GG:CC:CC: GGGG = group tag, CCCC = traffic class.
inline constexpr uint8_t kMacTagByte0 = 0x02;
inline constexpr uint8_t kMacTagByte1 = 0x4d;
inline constexpr uint32_t kMaxMacGroupTag = 0xffff;
inline constexpr uint32_t kMaxVlanId = 4094;

struct IpPrefix {
  uint8_t version = 0;  // 0 = any (also after ParseNicRule for prefix length 0), 4 or 6
  std::array<uint8_t, 16> addr{};  // network order; IPv4 uses the first 4 bytes
  uint8_t len = 0;
};

struct PortMatch {
  uint16_t value = 0;
  uint16_t mask = 0;  // 0 = any
};

struct SteerMatch {
  bool has_eth_dst = false;
  MacAddr eth_dst{};
  MacAddr eth_dst_mask{};
  uint16_t vlan = 0;        // 0 = any
  uint16_t ether_type = 0;  // 0 = any; ParseNicRule sets 0x0800/0x86dd whenever an IP field is matched
  IpPrefix ip_src;
  IpPrefix ip_dst;
  uint8_t ip_proto = 0;  // 0 = any
  PortMatch l4_src;
  PortMatch l4_dst;

  // IP version the rule needs (4, 6) or 0 when it looks at no IP field.
  uint8_t ip_version() const;
};

enum class SteerActionKind { kQueue, kDrop, kMark };

struct SteerAction {
  SteerActionKind kind = SteerActionKind::kQueue;
  uint32_t value = 0;  // queue index or mark
};

struct SteerRule {
  uint64_t id = 0;
  std::string nic;
  uint32_t priority = 0;  // 0 = highest, as rte_flow
  SteerMatch match;
  SteerAction action;
  // Group-tag rules of MAC tags only: the classes (CCCC) the group's frames carry, for a NIC that matches whole
  // MACs (VMDq: one entry per class). Empty for the controller's NIC rules.
  std::vector<uint32_t> classes;
};

// Validates `rule`; on error returns INVALID_ARGUMENT naming `where` + field and the offending value
// (e.g. "rules[2].match.eth_dst: \"zz\" is not a MAC address") and leaves *out untouched.
grpc::Status ParseNicRule(const pb::NicRule& rule, const std::string& where, SteerRule* out);

// The inverse of ParseNicRule, for ListNicRules (canonical spelling: lower-case MACs, masks always set).
pb::NicRule ToProto(const SteerRule& rule);

// The rule that steers one group tag to `queue` on `nic`: MAC tags match the group bits of the dst MAC only
// (mask ff:ff:ff:ff:00:00), VLAN tags the VLAN id. Validates the tag value.
grpc::Status TagRule(pb::TagType type, uint32_t tag, uint32_t queue, const std::string& where, SteerRule* out);

// Whether two rules steer the same frames the same way (their ids and NICs aside).
bool SameMatch(const SteerMatch& a, const SteerMatch& b);
bool SameRule(const SteerRule& a, const SteerRule& b);

// Writes the network-order mask of a prefix of `len` bits over `bytes` bytes (4 for IPv4, 16 for IPv6).
void PrefixMask(uint8_t len, uint8_t* mask, size_t bytes);

// "aa:bb:cc:dd:ee:ff" <-> bytes; ParseMac returns false on anything else.
bool ParseMac(const std::string& text, MacAddr* out);
std::string FormatMac(const MacAddr& mac);

}  // namespace metron

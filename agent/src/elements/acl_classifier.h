// AclClassifier: first-match IPv4 classification compiled to DPDK's rte_acl (a multi-bit trie
// classifying a whole burst with SIMD), replacing the linear filter program that made FastClick's 1000-rule
// IPFilter run at 0.2 Mpps.
//
// Each rule's expression is flattened to terms (ip_rules.h); each term becomes rte_acl rules (ranges split into
// prefixes/bit blocks where the field type needs it) that carry the rule's priority, so the highest-priority
// match is the first matching rule. Building is slow (~1 s and hundreds of MB of scratch for 1000 rules):
// it happens once, off the data path, when the graph is built.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "elements/ip_rules.h"

struct rte_acl_ctx;
struct rte_mbuf;

namespace metron {

class AclClassifier {
 public:
  // outputs[i] is rule i's result (-1 = drop). Throws ConfigError (too many terms) or std::runtime_error.
  AclClassifier(const std::string& name, const std::vector<IpRule>& rules, int socket_id);
  ~AclClassifier();
  AclClassifier(const AclClassifier&) = delete;
  AclClassifier& operator=(const AclClassifier&) = delete;

  // For each key, the first matching rule's output, or -1.
  void classify(const FlowKey* const* keys, int* out, unsigned n) const;
  size_t acl_rules() const { return acl_rules_; }

 private:
  rte_acl_ctx* ctx_ = nullptr;
  std::vector<int> result_of_;  // rte_acl userdata (rule index + 1) -> output
  size_t acl_rules_ = 0;
};


}  // namespace metron

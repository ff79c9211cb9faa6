// AclClassifier: first-match classification of IPv4 or IPv6 packets compiled to DPDK's rte_acl (a multi-bit trie
// classifying a whole burst with SIMD), replacing the linear filter program that made FastClick's 1000-rule
// IPFilter run at 0.2 Mpps.
//
// Each rule's expression is flattened to terms for the classifier's IP version (ip_rules.h); each term becomes
// rte_acl rules (ranges split into prefixes/bit blocks where the field type needs it; IPv6 addresses as four
// 32-bit prefix words) that carry the rule's priority, so the highest-priority match is the first matching rule. Building is slow (~1 s and hundreds of MB of scratch for 1000 rules):
// it happens once, off the data path, when the graph is built.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "elements/ip_rules.h"

struct rte_acl_ctx;
struct rte_mbuf;

namespace metron {

// rte_acl's classify implementations the agent chooses from (rte_acl_classify_alg's x86 ones).
enum class AclAlgorithm : uint8_t { kSse, kAvx2, kAvx512x16, kAvx512x32 };
const char* acl_algorithm_name(AclAlgorithm alg);

class AclClassifier {
 public:
  // Classifies packets of IP `version` (4: FlowKey, 6: FlowKey6). Rule i's output is its result (-1 = drop).
  // Throws ConfigError (too many terms) or std::runtime_error.
  AclClassifier(const std::string& name, const std::vector<IpRule>& rules, int socket_id, uint8_t version = 4);
  ~AclClassifier();
  AclClassifier(const AclClassifier&) = delete;
  AclClassifier& operator=(const AclClassifier&) = delete;

  // For each key, the first matching rule's output, or -1. The key type must match the version.
  void classify(const FlowKey* const* keys, int* out, unsigned n) const;
  void classify(const FlowKey6* const* keys, int* out, unsigned n) const;
  // The same over keys' bytes: FlowKeys (version 4) or FlowKey6s, and, where header_is_key(), headers that
  // ipv4_header_key gave, in any mix.
  void classify_bytes(const uint8_t* const* keys, int* out, unsigned n) const;
  // Whether the IPv4 rules test neither ICMP types, TCP flags nor later fragments: the trie then reads only bytes an
  // IPv4 header without options has where FlowKey has them, and such a packet's header is its own key.
  bool header_is_key() const { return header_is_key_; }
  size_t acl_rules() const { return acl_rules_; }
  // The classify implementation in use: AVX512 with 32 searches at once where the CPU has AVX512 and the EAL
  // allows 512-bit vector code (eal_init does, unless --force-max-simd-bitwidth says less), SSE otherwise.
  AclAlgorithm algorithm() const { return alg_; }
  // Runs classify with alg from now on; false (and nothing changed) when the CPU or the EAL's SIMD width does not
  // allow it. Every algorithm gives the same results (tests compare each one this CPU has with first match).
  bool use(AclAlgorithm alg);
  uint8_t version() const { return version_; }

 private:
  uint8_t version_;
  bool header_is_key_ = false;
  rte_acl_ctx* ctx_ = nullptr;
  AclAlgorithm alg_ = AclAlgorithm::kSse;
  // A rule's rte_acl userdata is its output + 2 (outputs are >= -1, a drop; userdata 0 is rte_acl's "no rule
  // matched"): what classify returns is then the output by arithmetic the compiler vectorizes, not a table read
  // per packet (rte_acl picks the matching rule by its priority, never by its userdata).
  static uint32_t userdata_of(int output) { return static_cast<uint32_t>(output + 2); }
  static int output_of(uint32_t userdata) { return static_cast<int>(userdata) - 2 + (userdata == 0); }
  size_t acl_rules_ = 0;
};


}  // namespace metron

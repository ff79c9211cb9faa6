// The IPRewriter family: NAPT and load balancing over a per-core FlowTable.
//
// RewritePattern is Click's `SADDR SPORT DADDR DPORT` (each `-` = keep; SPORT may be a range `lo-hi` from which
// each new flow gets a free port, the range split evenly between the cores running the configuration).
// FlowRewriter holds what SynthRewriter and IPRewriter share: the table, the patterns, backend selection
// (round robin or Maglev), checksum-preserving rewriting, timeouts and state export/import.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/element.h"
#include "elements/flow_table.h"

namespace metron {

struct RewritePattern {
  bool set_src = false, set_dst = false, set_sport = false, set_dport = false;
  uint8_t v6 = 0;  // family of the addresses it sets
  uint8_t src[16] = {}, dst[16] = {};
  uint16_t sport_lo = 0, sport_hi = 0;
  uint16_t dport = 0;
  uint8_t fout = 0, rout = 1;  // IPRewriter outputs for new flows and their replies
  std::string text;
};

// Parses "SADDR SPORT DADDR DPORT" (4 words). Throws ConfigError.
RewritePattern parse_rewrite_pattern(const std::vector<std::string>& words, const std::string& what);

// Whether any of these patterns can map an IPv6 flow.
bool maps_ipv6(const std::vector<RewritePattern>& patterns);

enum class Select { kRoundRobin, kMaglev };

// Maglev consistent hashing (Eisenbud et al., NSDI'16): a lookup table of prime size in which each backend
// owns ~1/N of the slots, and removing a backend only moves the flows that were on it.
class MaglevTable {
 public:
  static constexpr uint32_t kSize = 65537;
  explicit MaglevTable(const std::vector<std::string>& backends);
  uint32_t pick(uint32_t hash) const { return table_[hash % kSize]; }

 private:
  std::vector<uint16_t> table_;
};

// Chooses a pattern for a new flow. Implemented by SynthRewriter's pool and the *IPMapper elements.
class PatternSelector {
 public:
  virtual ~PatternSelector() = default;
  virtual const std::vector<RewritePattern>& patterns() const = 0;
  virtual uint32_t select(const Tuple& flow, uint32_t hash) = 0;
};

class PatternPool final : public PatternSelector {
 public:
  PatternPool(std::vector<RewritePattern> patterns, Select how);
  const std::vector<RewritePattern>& patterns() const override { return patterns_; }
  uint32_t select(const Tuple& flow, uint32_t hash) override;
  uint32_t rr_cursor() const { return rr_; }
  void set_rr_cursor(uint32_t c) { rr_ = c; }

 private:
  std::vector<RewritePattern> patterns_;
  Select how_;
  uint32_t rr_ = 0;
  std::unique_ptr<MaglevTable> maglev_;
};

// Reads the tuple of a packet with a marked IP header; false if it is not TCP/UDP over IPv4/IPv6 or truncated.
bool tuple_of(rte_mbuf* m, Tuple* t, uint8_t** l4);
// Rewrites the packet's addresses/ports to `to` (same family), updating IPv4 and TCP/UDP checksums
// incrementally.
void rewrite_packet(rte_mbuf* m, const Tuple& from, const Tuple& to, uint8_t* l4);

class FlowRewriter {
 public:
  struct Options {
    uint32_t capacity = 65536;  // flows per core
    double timeout_s = 300;
    double tcp_timeout_s = 0;  // 0 = timeout_s
    double udp_timeout_s = 0;
  };
  // Parses TIMEOUT, TCP_TIMEOUT, UDP_TIMEOUT, CAPACITY.
  static Options parse_options(Args& args);

  // patterns: every pattern the element may map new flows with; they decide whether the table must hold IPv6
  // flows (compact IPv4-only tables take half the memory per flow).
  void initialize(const std::string& name, const Options& o, const GraphEnv& env,
                  const std::vector<RewritePattern>& patterns);
  FlowTable& table() { return *table_; }
  const FlowTable& table() const { return *table_; }

  // Creates the mapping of a new forward flow from pattern p (index `backend`); -1 if no port is free.
  int32_t create(const Tuple& t, const RewritePattern& p, uint32_t backend, uint64_t now);
  void touch(uint32_t idx, uint64_t now) { table_->meta(idx).last_tsc = now; }
  void expire(uint64_t now);

  // Element::export_state_slice over the table's records (positions are record indexes); `allocator` is the
  // element's allocator state, written with every slice so the last one's is kept.
  uint64_t export_slice(agent::v1::StateTable* out, const std::string& allocator, uint64_t from,
                        uint64_t deadline_tsc) const;
  // Returns entries imported; validates everything first and throws ConfigError leaving the table unchanged.
  // Entries idle longer than their protocol's timeout are skipped (not counted).
  uint64_t import_state(const agent::v1::StateTable& in, bool merge);

  // Exchanges tables and port cursors with `o` (Element::swap_state); false, nothing changed, if the tables
  // differ in capacity or address family.
  bool swap_table(FlowRewriter& o);

  uint16_t port_cursor() const { return cursor_; }
  void set_port_cursor(uint16_t c) { cursor_ = c; }

 private:
  std::unique_ptr<FlowTable> table_;
  uint64_t tcp_timeout_ = 0, udp_timeout_ = 0;
  uint64_t tsc_hz_ = 1;
  unsigned slot_ = 0, slots_ = 1;
  uint16_t cursor_ = 0;
};

}  // namespace metron

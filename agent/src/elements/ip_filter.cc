// IPFilter and IPClassifier over the compiled classifier (acl_classifier.h).
//   IPFilter(ACTION EXPR, ...): ACTION is allow (output 0), deny/drop, or an output number; unmatched: dropped.
//   IPClassifier(EXPR, ...): packets matching EXPR i go to output i; unmatched: dropped.
// COMPILE false evaluates the rules one after the other instead (the reference semantics, and what a linear
// filter program like FastClick's costs: the benchmarks' baseline).
// Packets must have their IP header marked (CheckIPHeader/MarkIPHeader); others are dropped.
#include <memory>

#include "core/element.h"
#include "elements/acl_classifier.h"

namespace metron {

namespace {

class IpClassifierBase : public Element {
 public:
  PortCountRange output_range() const override { return {1, -1}; }
  void initialize(const GraphEnv& env) override {
    for (const IpRule& r : rules_)
      if (r.output >= noutputs())
        throw ConfigError("rule '" + r.text + "' sends to output " + std::to_string(r.output) + " but only " +
                          std::to_string(noutputs()) + " output(s) are connected");
    if (!compile_) return;
    acl_ = std::make_unique<AclClassifier>(name(), rules_, env.socket_id, 4);
    try {
      acl6_ = std::make_unique<AclClassifier>(name(), rules_, env.socket_id, 6);
    } catch (const ConfigError&) {
      // Negated IPv6 prefixes multiply terms; rules whose IPv6 form is too big keep first-match for IPv6.
      acl6_.reset();
    }
  }
  // Each IP version's packets are classified by its compiled classifier in one call per batch (IPv6 by the rules
  // in order when it could not be compiled, or with COMPILE false).
  void push(int, PacketBatch& b) override {
    FlowKey keys[kBurst];
    const FlowKey* ptrs[kBurst];
    FlowKey6 keys6[kBurst];
    const FlowKey6* ptrs6[kBurst];
    int res[kBurst];
    uint16_t at[kBurst], at6[kBurst];
    unsigned nk = 0, nk6 = 0;
    PacketFacts f;
    for (uint16_t i = 0; i < b.n; ++i) {
      res[i] = -1;
      if (compile_ && ipv4_flow_key(b.pkts[i], &keys[nk])) {
        ptrs[nk] = &keys[nk];
        at[nk++] = i;
        continue;
      }
      if (acl6_ != nullptr && ipv6_flow_key(b.pkts[i], &keys6[nk6])) {
        ptrs6[nk6] = &keys6[nk6];
        at6[nk6++] = i;
        continue;
      }
      if (packet_facts(b.pkts[i], &f)) res[i] = first_match(rules_, f);  // not IP: dropped
    }
    int out[kBurst];
    if (nk) {
      acl_->classify(ptrs, out, nk);
      for (unsigned k = 0; k < nk; ++k) res[at[k]] = out[k];
    }
    if (nk6) {
      acl6_->classify(ptrs6, out, nk6);
      for (unsigned k = 0; k < nk6; ++k) res[at6[k]] = out[k];
    }
    push_to_outputs(b, res);
  }

 protected:
  void configure_common(Args& args) {
    if (auto v = args.take("COMPILE")) compile_ = parse_bool(*v, "COMPILE");
  }
  bool compile_ = true;
  std::vector<IpRule> rules_;
  std::unique_ptr<AclClassifier> acl_, acl6_;
};

class IPFilter final : public IpClassifierBase {
 public:
  const char* class_name() const override { return "IPFilter"; }
  void configure(Args& args) override {
    configure_common(args);
    if (args.positional_count() == 0) throw ConfigError("expected at least one rule");
    for (size_t i = 0; i < args.positional_count(); ++i) {
      try {
        rules_.push_back(parse_ipfilter_rule(args.positional(i)));
      } catch (const ConfigError& e) {
        throw ConfigError("rule " + std::to_string(i) + ": " + e.what());
      }
    }
  }
};

class IPClassifier final : public IpClassifierBase {
 public:
  const char* class_name() const override { return "IPClassifier"; }
  void configure(Args& args) override {
    configure_common(args);
    if (args.positional_count() == 0) throw ConfigError("expected at least one pattern");
    for (size_t i = 0; i < args.positional_count(); ++i) {
      IpRule r;
      r.output = static_cast<int>(i);
      r.text = args.positional(i);
      try {
        r.expr = parse_ip_expr(r.text);
      } catch (const ConfigError& e) {
        throw ConfigError("pattern " + std::to_string(i) + ": " + e.what());
      }
      rules_.push_back(std::move(r));
    }
  }
  void initialize(const GraphEnv& env) override {
    if (static_cast<size_t>(noutputs()) != rules_.size())
      throw ConfigError(std::to_string(rules_.size()) + " patterns but " + std::to_string(noutputs()) +
                        " outputs connected");
    IpClassifierBase::initialize(env);
  }
};

}  // namespace

METRON_EXPORT_ELEMENT(IPFilter)
METRON_EXPORT_ELEMENT(IPClassifier)

}  // namespace metron

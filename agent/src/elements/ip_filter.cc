// IPFilter and IPClassifier over the compiled classifier (acl_classifier.h).
//   IPFilter(ACTION EXPR, ...): ACTION is allow (output 0), deny/drop, or an output number; unmatched: dropped.
//   IPClassifier(EXPR, ...): packets matching EXPR i go to output i; unmatched: dropped.
// Any argument may be FastClick's `file PATH` (standalone configurations only): the file's non-empty lines, in
// order, stand in its place, one rule (IPFilter) or pattern (IPClassifier, an extension) per line.
// COMPILE false evaluates the rules one after the other instead (the reference semantics, and what a linear
// filter program like FastClick's costs: the benchmarks' baseline).
// Packets must have their IP header marked (CheckIPHeader/MarkIPHeader); others are dropped.
#include <fstream>
#include <memory>

#include "core/element.h"
#include "elements/acl_classifier.h"
#include "elements/check_ip_header.h"

namespace metron {

namespace {

struct RuleText {
  std::string text;
  std::string where;  // for errors: "rule 3", "rule 0: file rules.txt line 12"
};

// The element's arguments with every `file PATH` replaced by the file's lines (FastClick's IPFilter reads them
// so: each line trimmed, empty ones skipped; a trailing comma, as FastClick's GenerateIPFilterRules writes its
// rules, is dropped). `what` names an argument ("rule", "pattern").
std::vector<RuleText> expand_files(const Args& args, const std::string& what) {
  std::vector<RuleText> out;
  for (size_t i = 0; i < args.positional_count(); ++i) {
    const std::string where = what + " " + std::to_string(i);
    const auto w = split_words(args.positional(i));
    if (w.empty() || w[0] != "file") {
      out.push_back({args.positional(i), where});
      continue;
    }
    if (w.size() != 2) throw ConfigError(where + ": file takes a single argument, the file name");
    const std::string path = unquote(w[1]);
    if (!args.files_allowed())
      throw ConfigError(where + ": file " + path + ": rule files are read in standalone configurations only (a "
                        "group configuration carries its rules inline)");
    std::ifstream in(path);
    if (!in) throw ConfigError(where + ": file " + path + ": cannot open it");
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      const size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
      if (b == std::string::npos) continue;
      std::string rule = line.substr(b, e - b + 1);
      if (rule.back() == ',') rule.pop_back();
      out.push_back({rule, where + ": file " + path + " line " + std::to_string(line_no)});
    }
  }
  return out;
}

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
  // The CheckIPHeader that is all that feeds it runs here (CheckIPHeader::Fold), in the pass that reads the keys.
  bool fold_input(int, Element& feeder) override { return check_.take(feeder); }
  void push(int, PacketBatch& b) override {
    if (check_.check != nullptr) classify<true>(b);
    else classify<false>(b);
  }
  std::vector<const char*> stage_names() const override { return {"keys", "classify"}; }
  // Which rte_acl classify implementation runs (AVX512 where the CPU and the EAL allow it: acl_classifier.h).
  void report(std::ostream& os) const override {
    if (acl_ != nullptr) os << "classify " << acl_algorithm_name(acl_->algorithm()) << "\n";
  }

 protected:
  void configure_common(Args& args) {
    if (auto v = args.take("COMPILE")) compile_ = parse_bool(*v, "COMPILE");
    // FastClick's flow cache in front of its filter program: the compiled classifier needs none.
    if (auto v = args.take("CACHING")) parse_bool(*v, "CACHING");
  }
  bool compile_ = true;
  std::vector<IpRule> rules_;
  std::unique_ptr<AclClassifier> acl_, acl6_;

 private:
  // Each IP version's packets are classified by its compiled classifier in one call per batch (IPv6 by the rules
  // in order when it could not be compiled, or with COMPILE false). kChecked: the packets come unchecked, each
  // one's CheckIPHeader step run first.
  template <bool kChecked>
  void classify(PacketBatch& b) {
    FlowKey keys[kBurst];
    const uint8_t* ptrs[kBurst];
    FlowKey6 keys6[kBurst];
    const FlowKey6* ptrs6[kBurst];
    int res[kBurst];
    uint16_t at[kBurst], at6[kBurst];
    unsigned nk = 0, nk6 = 0;
    PacketFacts f;
    const bool compiled = compile_;
    const bool in_place_keys = compiled && acl_->header_is_key();
    uint64_t bad_headers = 0;
    // The settings and the annotation's offset in locals: the annotation and key stores could alias them, and each
    // would be loaded again per packet. (The batch's size in a local too spilled a register here: more
    // instructions.)
    const int check_offset = check_.offset;
    const CheckIPHeader::Sum check_sum = check_.sum;
    const int anno_offset = g_anno_offset;
    // res[i] is written for every packet: here for those without a key, after the classify for the others.
    for (uint16_t i = 0; i < b.n; ++i) {
      // A header without options is read in place where the rules allow it (header_is_key); others get a key.
      const uint8_t* in_place = nullptr;
      if constexpr (kChecked) {  // the key from the header the check found
        uint8_t* ip;
        int left;
        const uint8_t ver = CheckIPHeader::step(b.pkts[i], check_offset, check_sum, anno_offset, &ip, &left);
        if (ver == 0) {
          res[i] = -1;
          ++bad_headers;
          continue;
        }
        if (in_place_keys && ver == 4) in_place = ipv4_header_key_at(ip, left);
      } else {
        if (in_place_keys) in_place = ipv4_header_key(b.pkts[i]);
      }
      if (compiled) {
        if (in_place != nullptr || ipv4_flow_key(b.pkts[i], &keys[nk])) {
          ptrs[nk] = in_place != nullptr ? in_place : reinterpret_cast<const uint8_t*>(&keys[nk]);
          at[nk++] = i;
          continue;
        }
      }
      res[i] = -1;
      if (acl6_ != nullptr && ipv6_flow_key(b.pkts[i], &keys6[nk6])) {
        ptrs6[nk6] = &keys6[nk6];
        at6[nk6++] = i;
        continue;
      }
      if (packet_facts(b.pkts[i], &f)) res[i] = first_match(rules_, f);  // not IP: dropped
    }
    if (bad_headers) check_.check->count_bad(bad_headers);
    profile_stage(0);
    int out[kBurst];
    if (nk != 0 && nk == b.n) {  // every packet has its key (nearly every batch): the results are the packets' own
      acl_->classify_bytes(ptrs, res, nk);
    } else if (nk) {
      acl_->classify_bytes(ptrs, out, nk);
      for (unsigned k = 0; k < nk; ++k) res[at[k]] = out[k];
    }
    if (nk6) {
      acl6_->classify(ptrs6, out, nk6);
      for (unsigned k = 0; k < nk6; ++k) res[at6[k]] = out[k];
    }
    profile_stage(1);
    push_to_outputs(b, res);
  }
  CheckIPHeader::Fold check_;
};

class IPFilter final : public IpClassifierBase {
 public:
  const char* class_name() const override { return "IPFilter"; }
  void configure(Args& args) override {
    configure_common(args);
    for (const RuleText& r : expand_files(args, "rule")) {
      try {
        rules_.push_back(parse_ipfilter_rule(r.text));
      } catch (const ConfigError& e) {
        throw ConfigError(r.where + ": " + e.what());
      }
    }
    if (rules_.empty()) throw ConfigError("expected at least one rule");
  }
};

class IPClassifier final : public IpClassifierBase {
 public:
  const char* class_name() const override { return "IPClassifier"; }
  void configure(Args& args) override {
    configure_common(args);
    for (const RuleText& t : expand_files(args, "pattern")) {
      IpRule r;
      r.output = static_cast<int>(rules_.size());
      r.text = t.text;
      try {
        r.expr = parse_ip_expr(r.text);
      } catch (const ConfigError& e) {
        throw ConfigError(t.where + ": " + e.what());
      }
      rules_.push_back(std::move(r));
    }
    if (rules_.empty()) throw ConfigError("expected at least one pattern");
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

// Classifier(PATTERN, ...): Click's byte-pattern classifier. A pattern is "-" (everything) or space-separated
// clauses OFFSET/HEX[%MASK], optionally negated with "!"; '?' in HEX is a wildcard nibble. A packet goes to
// the output of the first pattern it matches, or is dropped. Patterns are few (ethertype splits), so a
// first-match scan over precompiled clauses is the right structure here.
#include <cctype>

#include "core/element.h"

namespace metron {

namespace {

struct Clause {
  uint16_t offset;
  bool negated;
  std::vector<uint8_t> value;  // already masked
  std::vector<uint8_t> mask;
};

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Clause parse_clause(const std::string& text, const std::string& what) {
  Clause c{};
  std::string t = text;
  if (!t.empty() && t[0] == '!') c.negated = true, t = t.substr(1);
  const size_t slash = t.find('/');
  if (slash == std::string::npos) throw ConfigError(what + ": expected OFFSET/HEX, got '" + text + "'");
  c.offset = static_cast<uint16_t>(parse_uint(t.substr(0, slash), what + " offset", 1500));
  std::string val = t.substr(slash + 1), msk;
  const size_t pct = val.find('%');
  if (pct != std::string::npos) msk = val.substr(pct + 1), val = val.substr(0, pct);
  if (val.empty() || val.size() % 2) throw ConfigError(what + ": hex value needs an even number of digits, got '" + val + "'");
  if (!msk.empty() && msk.size() != val.size())
    throw ConfigError(what + ": mask '" + msk + "' must have as many digits as value '" + val + "'");
  for (size_t i = 0; i < val.size(); i += 2) {
    uint8_t v = 0, m = 0;
    for (size_t j = 0; j < 2; ++j) {
      const char ch = val[i + j];
      int nib = ch == '?' ? 0 : hexval(ch);
      int nm = ch == '?' ? 0 : 0xf;
      if (nib < 0) throw ConfigError(what + ": bad hex digit '" + std::string(1, ch) + "' in '" + val + "'");
      if (!msk.empty()) {
        const int mm = hexval(msk[i + j]);
        if (mm < 0) throw ConfigError(what + ": bad hex digit in mask '" + msk + "'");
        nm &= mm;
      }
      v = static_cast<uint8_t>(v << 4 | (nib & nm));
      m = static_cast<uint8_t>(m << 4 | nm);
    }
    c.value.push_back(v);
    c.mask.push_back(m);
  }
  return c;
}

class Classifier final : public Element {
 public:
  const char* class_name() const override { return "Classifier"; }
  PortCountRange output_range() const override { return {1, -1}; }
  bool passes_frames_unchanged() const override { return true; }
  void configure(Args& args) override {
    if (args.positional_count() == 0) throw ConfigError("expected at least one pattern");
    for (size_t i = 0; i < args.positional_count(); ++i) {
      const std::string what = "pattern " + std::to_string(i);
      std::vector<Clause> p;
      const std::string& text = args.positional(i);
      if (text != "-")
        for (const std::string& w : split_words(text)) p.push_back(parse_clause(w, what));
      patterns_.push_back(std::move(p));
    }
  }
  void initialize(const GraphEnv&) override {
    if (static_cast<size_t>(noutputs()) != patterns_.size())
      throw ConfigError(std::to_string(patterns_.size()) + " patterns but " + std::to_string(noutputs()) +
                        " outputs connected");
  }
  void push(int, PacketBatch& b) override {
    classify_push(b, [this](rte_mbuf* m) { return match(m); });
  }

 private:
  int match(rte_mbuf* m) const {
    const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
    const size_t len = rte_pktmbuf_data_len(m);
    for (size_t k = 0; k < patterns_.size(); ++k) {
      bool all = true;
      for (const Clause& c : patterns_[k]) {
        bool eq = c.offset + c.value.size() <= len;
        for (size_t i = 0; eq && i < c.value.size(); ++i) eq = (d[c.offset + i] & c.mask[i]) == c.value[i];
        if (eq == c.negated) {
          all = false;
          break;
        }
      }
      if (all) return static_cast<int>(k);
    }
    return -1;
  }
  std::vector<std::vector<Clause>> patterns_;
};

}  // namespace

METRON_EXPORT_ELEMENT(Classifier)

}  // namespace metron

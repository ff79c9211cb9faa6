// HyperscanDPI(REGEX, ..., [OFFSET n]): deep packet inspection with Hyperscan. The patterns are compiled into one
// database when the graph is built; each core's instance owns its scratch space. A packet whose bytes from the
// IP payload on (IPv6: behind the extension headers; or from OFFSET, when the IP header is not marked) match any
// pattern goes to output 1 if it is connected, else it is dropped; other packets go to output 0. Patterns are
// PCRE-style, quoted if they contain commas: HyperscanDPI("attack[0-9]+", "/etc/passwd").
#include <hs/hs.h>

#include "core/annotations.h"
#include "core/element.h"
#include "elements/ipv6_ext.h"

namespace metron {

namespace {

class HyperscanDPI final : public Element {
 public:
  const char* class_name() const override { return "HyperscanDPI"; }
  PortCountRange output_range() const override { return {1, 2}; }
  ~HyperscanDPI() override {
    if (scratch_ != nullptr) hs_free_scratch(scratch_);
    if (db_ != nullptr) hs_free_database(db_);
  }
  void configure(Args& args) override {
    if (auto v = args.take("OFFSET")) offset_ = static_cast<uint16_t>(parse_uint(*v, "OFFSET", 1500));
    if (args.positional_count() == 0) throw ConfigError("expected at least one pattern");
    std::vector<std::string> pats;
    std::vector<const char*> exprs;
    std::vector<unsigned> flags, ids;
    for (size_t i = 0; i < args.positional_count(); ++i) pats.push_back(unquote(args.positional(i)));
    for (size_t i = 0; i < pats.size(); ++i) {
      exprs.push_back(pats[i].c_str());
      flags.push_back(HS_FLAG_DOTALL | HS_FLAG_SINGLEMATCH);
      ids.push_back(static_cast<unsigned>(i));
    }
    hs_compile_error_t* err = nullptr;
    if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK,
                         nullptr, &db_, &err) != HS_SUCCESS) {
      const std::string msg = err != nullptr ? err->message : "unknown error";
      const int which = err != nullptr ? err->expression : -1;
      hs_free_compile_error(err);
      throw ConfigError("pattern " + (which >= 0 ? std::to_string(which) + " '" + pats[which] + "'" : std::string("set")) +
                        ": " + msg);
    }
  }
  void initialize(const GraphEnv&) override {
    if (hs_alloc_scratch(db_, &scratch_) != HS_SUCCESS) throw std::runtime_error("cannot allocate Hyperscan scratch");
  }
  void push(int, PacketBatch& b) override {
    const int hit_out = noutputs() > 1 ? 1 : -1;
    classify_push(b, [&](rte_mbuf* m) {
      const uint8_t* data;
      int len;
      const PacketAnno a = anno(m);
      if (a.ip_ver == 4 || a.ip_ver == 6) {
        const uint8_t* ip = ip_header(m);
        const int hl = a.ip_ver == 4 ? (ip[0] & 0xf) * 4 : ipv6_upper_layer(ip, ip_bytes_left(m)).l4;
        data = ip + hl;
        len = ip_bytes_left(m) - hl;
      } else {
        data = rte_pktmbuf_mtod(m, const uint8_t*) + offset_;
        len = static_cast<int>(rte_pktmbuf_data_len(m)) - offset_;
      }
      if (len <= 0) return 0;
      bool matched = false;
      hs_scan(db_, reinterpret_cast<const char*>(data), static_cast<unsigned>(len), 0, scratch_,
              [](unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) -> int {
                *static_cast<bool*>(ctx) = true;
                return 1;  // stop at the first match
              },
              &matched);
      if (!matched) return 0;
      ++matches_;
      return hit_out;
    });
  }
  void report(std::ostream& os) const override { os << "matches " << matches_ << "\n"; }

 private:
  hs_database_t* db_ = nullptr;
  hs_scratch_t* scratch_ = nullptr;
  uint16_t offset_ = 0;
  uint64_t matches_ = 0;
};

}  // namespace

METRON_EXPORT_ELEMENT(HyperscanDPI)

}  // namespace metron

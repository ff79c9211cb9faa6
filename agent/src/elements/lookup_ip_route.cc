// LookupIPRoute(ADDR/LEN [GW] OUT, ...): longest-prefix match on the destination address, IPv4 routes in an
// rte_lpm and IPv6 routes in an rte_lpm6 (one element takes both), looked up a whole batch at a time. The packet
// leaves on the matching route's output; unmatched packets are dropped. GW is accepted for Click compatibility
// (there is no gateway annotation here).
#include <arpa/inet.h>
#include <rte_errno.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

#include <atomic>
#include <cstring>

#include "core/annotations.h"
#include "core/element.h"
#include "utils/checksum.h"

namespace metron {

namespace {

std::atomic<unsigned> g_lpm_seq{0};

class LookupIPRoute final : public Element {
 public:
  const char* class_name() const override { return "LookupIPRoute"; }
  PortCountRange output_range() const override { return {1, -1}; }
  void configure(Args& args) override {
    if (args.positional_count() == 0) throw ConfigError("expected at least one route");
    for (size_t i = 0; i < args.positional_count(); ++i) {
      const std::string what = "route " + std::to_string(i);
      auto w = split_words(args.positional(i));
      if (w.size() != 2 && w.size() != 3) throw ConfigError(what + ": expected ADDR/LEN [GW] OUT, got '" + args.positional(i) + "'");
      Route r;
      r.out = static_cast<int>(parse_uint(w.back(), what + " OUT", 255));
      const std::string& pfx = w[0];
      const size_t slash = pfx.find('/');
      const std::string addr = pfx.substr(0, slash);
      if (addr.find(':') != std::string::npos) {
        r.v6 = true;
        parse_ipv6(addr, what, r.a6);
        r.depth = slash == std::string::npos ? 128 : static_cast<uint8_t>(parse_uint(pfx.substr(slash + 1), what + " length", 128));
      } else {
        uint32_t a, m;
        parse_ipv4_prefix(pfx, what, &a, &m);
        r.a4 = a;
        r.depth = static_cast<uint8_t>(__builtin_popcount(m));
      }
      if (r.depth == 0 && !r.v6) r.depth = 0;
      routes_.push_back(r);
    }
  }
  void initialize(const GraphEnv& env) override {
    for (const Route& r : routes_)
      if (r.out >= noutputs())
        throw ConfigError("a route uses output " + std::to_string(r.out) + " but " + std::to_string(noutputs()) +
                          " output(s) are connected");
    const std::string n = "lpm" + std::to_string(g_lpm_seq++);
    rte_lpm_config c4{};
    c4.max_rules = static_cast<uint32_t>(routes_.size()) + 1;
    c4.number_tbl8s = 256 + static_cast<uint32_t>(routes_.size());
    lpm_ = rte_lpm_create(n.c_str(), env.socket_id, &c4);
    rte_lpm6_config c6{};
    c6.max_rules = static_cast<uint32_t>(routes_.size()) + 1;
    c6.number_tbl8s = 256 + 16 * static_cast<uint32_t>(routes_.size());
    lpm6_ = rte_lpm6_create((n + "v6").c_str(), env.socket_id, &c6);
    if (lpm_ == nullptr || lpm6_ == nullptr) throw std::runtime_error("cannot allocate route tables: " + std::string(rte_strerror(rte_errno)));
    for (const Route& r : routes_) {
      int rc;
      if (r.v6) {
        rc = r.depth == 0 ? (default6_ = r.out, 0) : rte_lpm6_add(lpm6_, r.a6, r.depth, static_cast<uint32_t>(r.out));
      } else {
        rc = r.depth == 0 ? (default4_ = r.out, 0) : rte_lpm_add(lpm_, r.a4, r.depth, static_cast<uint32_t>(r.out));
      }
      if (rc < 0) throw std::runtime_error("route table add failed: " + std::string(rte_strerror(-rc)));
    }
  }
  ~LookupIPRoute() override {
    if (lpm_ != nullptr) rte_lpm_free(lpm_);
    if (lpm6_ != nullptr) rte_lpm6_free(lpm6_);
  }
  void push(int, PacketBatch& b) override {
    uint32_t ip4[kBurst], hop4[kBurst];
    uint8_t ip6[kBurst][16];
    int32_t hop6[kBurst];
    uint16_t at4[kBurst], at6[kBurst];
    unsigned n4 = 0, n6 = 0;
    int res[kBurst];
    for (uint16_t i = 0; i < b.n; ++i) {
      res[i] = -1;
      const PacketAnno a = anno(b.pkts[i]);
      const uint8_t* ip = ip_header(b.pkts[i]);
      if (a.ip_ver == 4) {
        ip4[n4] = load32(ip + 16);
        at4[n4++] = i;
      } else if (a.ip_ver == 6) {
        std::memcpy(ip6[n6], ip + 24, 16);
        at6[n6++] = i;
      }
    }
    if (n4) {
      rte_lpm_lookup_bulk(lpm_, ip4, hop4, n4);
      for (unsigned j = 0; j < n4; ++j)
        res[at4[j]] = (hop4[j] & RTE_LPM_LOOKUP_SUCCESS) ? static_cast<int>(hop4[j] & 0xffffff) : default4_;
    }
    if (n6) {
      rte_lpm6_lookup_bulk_func(lpm6_, ip6, hop6, n6);
      for (unsigned j = 0; j < n6; ++j) res[at6[j]] = hop6[j] >= 0 ? hop6[j] : default6_;
    }
    uint16_t i = 0;
    classify_push(b, [&](rte_mbuf*) { return res[i++]; });
  }

 private:
  struct Route {
    bool v6 = false;
    uint32_t a4 = 0;
    uint8_t a6[16] = {};
    uint8_t depth = 0;
    int out = 0;
  };
  std::vector<Route> routes_;
  rte_lpm* lpm_ = nullptr;
  rte_lpm6* lpm6_ = nullptr;
  int default4_ = -1, default6_ = -1;  // /0 routes: rte_lpm needs depth >= 1
};

}  // namespace

METRON_EXPORT_ELEMENT(LookupIPRoute)

}  // namespace metron

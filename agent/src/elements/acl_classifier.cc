#include "elements/acl_classifier.h"

#include <rte_acl.h>
#include <rte_errno.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "core/annotations.h"
#include "utils/args.h"

namespace metron {

namespace {

RTE_ACL_RULE_DEF(AclRule, kFields);

// Field layout over FlowKey. rte_acl wants the first field to be one byte and groups inputs in 4-byte words:
// proto | src | dst | sport+dport.
const rte_acl_field_def kFieldDefs[kFields] = {
    {RTE_ACL_FIELD_TYPE_BITMASK, sizeof(uint8_t), 0, 0, offsetof(FlowKey, proto)},
    {RTE_ACL_FIELD_TYPE_MASK, sizeof(uint32_t), 1, 1, offsetof(FlowKey, src)},
    {RTE_ACL_FIELD_TYPE_MASK, sizeof(uint32_t), 2, 2, offsetof(FlowKey, dst)},
    {RTE_ACL_FIELD_TYPE_RANGE, sizeof(uint16_t), 3, 3, offsetof(FlowKey, sport)},
    {RTE_ACL_FIELD_TYPE_RANGE, sizeof(uint16_t), 4, 3, offsetof(FlowKey, dport)},
};

// Splits [lo, hi] into maximal aligned power-of-two blocks: (base, prefix length in `bits`).
std::vector<std::pair<uint32_t, int>> blocks(Interval iv, int bits) {
  std::vector<std::pair<uint32_t, int>> out;
  uint64_t lo = iv.lo;
  const uint64_t hi = iv.hi;
  while (lo <= hi) {
    int k = 0;
    while (k < bits && (lo & ((uint64_t{1} << (k + 1)) - 1)) == 0 && lo + (uint64_t{1} << (k + 1)) - 1 <= hi) ++k;
    out.emplace_back(static_cast<uint32_t>(lo), bits - k);
    lo += uint64_t{1} << k;
  }
  return out;
}

std::atomic<unsigned> g_ctx_seq{0};

}  // namespace

AclClassifier::AclClassifier(const std::string& name, const std::vector<IpRule>& rules, int socket_id) {
  std::vector<AclRule> acl;
  result_of_.push_back(-1);
  for (size_t i = 0; i < rules.size(); ++i) {
    result_of_.push_back(rules[i].output);
    for (const Term& t : to_terms(*rules[i].expr)) {
      for (auto [pv, plen] : blocks(t[0], 8))
        for (auto [sv, slen] : blocks(t[1], 32))
          for (auto [dv, dlen] : blocks(t[2], 32)) {
            AclRule r{};
            r.data.category_mask = 1;
            r.data.priority = static_cast<int32_t>(rules.size() - i);  // earlier rule = higher priority
            r.data.userdata = static_cast<uint32_t>(i + 1);
            r.field[0].value.u8 = static_cast<uint8_t>(pv);
            r.field[0].mask_range.u8 = static_cast<uint8_t>(plen == 0 ? 0 : 0xff << (8 - plen));
            r.field[1].value.u32 = sv;
            r.field[1].mask_range.u32 = static_cast<uint32_t>(slen);
            r.field[2].value.u32 = dv;
            r.field[2].mask_range.u32 = static_cast<uint32_t>(dlen);
            r.field[3].value.u16 = static_cast<uint16_t>(t[3].lo);
            r.field[3].mask_range.u16 = static_cast<uint16_t>(t[3].hi);
            r.field[4].value.u16 = static_cast<uint16_t>(t[4].lo);
            r.field[4].mask_range.u16 = static_cast<uint16_t>(t[4].hi);
            acl.push_back(r);
            if (acl.size() > (1u << 20)) throw ConfigError("rules expand to more than 2^20 classifier entries");
          }
    }
  }
  acl_rules_ = acl.size();
  if (acl.empty()) return;  // nothing can match
  const std::string ctx_name = "acl" + std::to_string(g_ctx_seq++);
  rte_acl_param p{};
  p.name = ctx_name.c_str();
  p.socket_id = socket_id;
  p.rule_size = RTE_ACL_RULE_SZ(kFields);
  p.max_rule_num = static_cast<uint32_t>(acl.size());
  ctx_ = rte_acl_create(&p);
  if (ctx_ == nullptr) throw std::runtime_error(name + ": rte_acl_create: " + rte_strerror(rte_errno));
  int rc = rte_acl_add_rules(ctx_, reinterpret_cast<const rte_acl_rule*>(acl.data()), static_cast<uint32_t>(acl.size()));
  rte_acl_config cfg{};
  cfg.num_categories = 1;
  cfg.num_fields = kFields;
  std::memcpy(cfg.defs, kFieldDefs, sizeof kFieldDefs);
  if (rc == 0) rc = rte_acl_build(ctx_, &cfg);
  if (rc != 0) {
    rte_acl_free(ctx_);
    ctx_ = nullptr;
    throw std::runtime_error(name + ": rte_acl build of " + std::to_string(acl.size()) + " entries failed: " +
                             rte_strerror(-rc));
  }
  // SSE beats AVX2 on this class of CPU (measured, shared/notes/dataplane.md); keep the default if unavailable.
  rte_acl_set_ctx_classify(ctx_, RTE_ACL_CLASSIFY_SSE);
}

AclClassifier::~AclClassifier() {
  if (ctx_ != nullptr) rte_acl_free(ctx_);
}

void AclClassifier::classify(const FlowKey* const* keys, int* out, unsigned n) const {
  if (ctx_ == nullptr) {
    for (unsigned i = 0; i < n; ++i) out[i] = -1;
    return;
  }
  uint32_t res[256];
  for (unsigned done = 0; done < n;) {
    const unsigned chunk = std::min(n - done, 256u);
    rte_acl_classify(ctx_, reinterpret_cast<const uint8_t**>(const_cast<const FlowKey**>(keys + done)), res, chunk, 1);
    for (unsigned i = 0; i < chunk; ++i) out[done + i] = result_of_[res[i]];
    done += chunk;
  }
}

bool flow_key_of(rte_mbuf* m, FlowKey* k) {
  const PacketAnno a = anno(m);
  if (a.ip_ver != 4) return false;
  const uint8_t* ip = ip_header(m);
  const int left = ip_bytes_left(m);
  if (left < 20) return false;
  const int hl = (ip[0] & 0xf) * 4;
  k->proto = ip[9];
  std::memcpy(&k->src, ip + 12, 4);
  std::memcpy(&k->dst, ip + 16, 4);
  const bool first_frag = (((ip[6] & 0x1f) << 8) | ip[7]) == 0;
  if (first_frag && (k->proto == 6 || k->proto == 17) && hl >= 20 && left >= hl + 4) {
    std::memcpy(&k->sport, ip + hl, 2);
    std::memcpy(&k->dport, ip + hl + 2, 2);
  } else {
    k->sport = k->dport = 0;
  }
  return true;
}

}  // namespace metron

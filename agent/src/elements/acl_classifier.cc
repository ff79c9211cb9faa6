#include "elements/acl_classifier.h"

#include <rte_acl.h>
#include <rte_errno.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "utils/args.h"

namespace metron {

namespace {

constexpr int kAclFields = kFields + 1;  // the intervals plus the TCP flags bit test
RTE_ACL_RULE_DEF(AclRule, kAclFields);

// Field layout over FlowKey. rte_acl wants the first field to be one byte, alone in its word, and reads the
// rest in 4-byte groups (input_index): proto | first_frag ttl tos mf | src | dst | sport dport | icmp tcp_flags.
#define METRON_ACL_FIELD(type, member, group) \
  {RTE_ACL_FIELD_TYPE_##type, sizeof(FlowKey::member), 0, group, offsetof(FlowKey, member)}
const rte_acl_field_def kFieldDefs[kAclFields] = {
    // In input_index order: rte_acl starts a new 4-byte input whenever input_index changes.
    METRON_ACL_FIELD(BITMASK, proto, 0), METRON_ACL_FIELD(RANGE, first_frag, 1), METRON_ACL_FIELD(RANGE, ttl, 1),
    METRON_ACL_FIELD(RANGE, tos, 1),     METRON_ACL_FIELD(RANGE, mf, 1),         METRON_ACL_FIELD(MASK, src, 2),
    METRON_ACL_FIELD(MASK, dst, 3),      METRON_ACL_FIELD(RANGE, sport, 4),      METRON_ACL_FIELD(RANGE, dport, 4),
    METRON_ACL_FIELD(RANGE, icmp_type, 5), METRON_ACL_FIELD(BITMASK, tcp_flags, 5),
};
#undef METRON_ACL_FIELD

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
      auto iv = [&](Field f) { return t.iv[static_cast<int>(f)]; };
      for (auto [pv, plen] : blocks(iv(Field::kProto), 8))
        for (auto [sv, slen] : blocks(iv(Field::kSrc), 32))
          for (auto [dv, dlen] : blocks(iv(Field::kDst), 32)) {
            AclRule r{};
            r.data.category_mask = 1;
            r.data.priority = static_cast<int32_t>(rules.size() - i);  // earlier rule = higher priority
            r.data.userdata = static_cast<uint32_t>(i + 1);
            r.field[0].value.u8 = static_cast<uint8_t>(pv);
            r.field[0].mask_range.u8 = static_cast<uint8_t>(plen == 0 ? 0 : 0xff << (8 - plen));
            auto range8 = [&](int k, Field f) {
              r.field[k].value.u8 = static_cast<uint8_t>(iv(f).lo);
              r.field[k].mask_range.u8 = static_cast<uint8_t>(iv(f).hi);
            };
            range8(1, Field::kFirstFrag);
            range8(2, Field::kTtl);
            range8(3, Field::kTos);
            range8(4, Field::kMf);
            r.field[5].value.u32 = sv;
            r.field[5].mask_range.u32 = static_cast<uint32_t>(slen);
            r.field[6].value.u32 = dv;
            r.field[6].mask_range.u32 = static_cast<uint32_t>(dlen);
            r.field[7].value.u16 = static_cast<uint16_t>(iv(Field::kSport).lo);
            r.field[7].mask_range.u16 = static_cast<uint16_t>(iv(Field::kSport).hi);
            r.field[8].value.u16 = static_cast<uint16_t>(iv(Field::kDport).lo);
            r.field[8].mask_range.u16 = static_cast<uint16_t>(iv(Field::kDport).hi);
            r.field[9].value.u16 = static_cast<uint16_t>(iv(Field::kIcmpType).lo);
            r.field[9].mask_range.u16 = static_cast<uint16_t>(iv(Field::kIcmpType).hi);
            r.field[10].value.u16 = t.flags_set;
            r.field[10].mask_range.u16 = static_cast<uint16_t>(t.flags_set | t.flags_clear);
            acl.push_back(r);
            if (acl.size() > (1u << 20)) throw ConfigError("rules expand to more than 2^20 classifier entries");
          }
    }
  }
  acl_rules_ = acl.size();
  if (acl.empty()) return;  // nothing can match
  // Only the 4-byte groups some rule constrains go into the trie: every group costs a transition per packet,
  // and most rule sets never test TTL, TOS, fragments, ICMP types or TCP flags.
  auto unconstrained = [&](int k) {
    const rte_acl_field_def& d = kFieldDefs[k];
    for (const AclRule& r : acl) {
      const rte_acl_field& f = r.field[k];
      const bool any = d.type == RTE_ACL_FIELD_TYPE_BITMASK ? f.mask_range.u64 == 0
                       : d.type == RTE_ACL_FIELD_TYPE_MASK  ? f.mask_range.u32 == 0
                       : d.size == 1 ? (f.value.u8 == 0 && f.mask_range.u8 == kFieldMax[k == 4 ? 8 : k])
                                     : (f.value.u16 == 0 && f.mask_range.u16 == 0xff);  // icmp_type
      if (!any) return false;
    }
    return true;
  };
  std::vector<int> used;
  for (int k = 0; k < kAclFields;) {
    int end = k;
    while (end < kAclFields && kFieldDefs[end].input_index == kFieldDefs[k].input_index) ++end;
    bool keep = k == 0 || kFieldDefs[k].type == RTE_ACL_FIELD_TYPE_MASK || kFieldDefs[k].input_index == 4;
    for (int j = k; j < end && !keep; ++j) keep = !unconstrained(j);
    for (int j = k; j < end && keep; ++j) used.push_back(j);
    k = end;
  }
  const size_t rule_sz = RTE_ACL_RULE_SZ(used.size());
  std::vector<uint8_t> packed(acl.size() * rule_sz);
  for (size_t i = 0; i < acl.size(); ++i) {
    auto* r = reinterpret_cast<rte_acl_rule*>(packed.data() + i * rule_sz);
    r->data = acl[i].data;
    for (size_t j = 0; j < used.size(); ++j) r->field[j] = acl[i].field[used[j]];
  }
  const std::string ctx_name = "acl" + std::to_string(g_ctx_seq++);
  rte_acl_param p{};
  p.name = ctx_name.c_str();
  p.socket_id = socket_id;
  p.rule_size = static_cast<uint32_t>(rule_sz);
  p.max_rule_num = static_cast<uint32_t>(acl.size());
  ctx_ = rte_acl_create(&p);
  if (ctx_ == nullptr) throw std::runtime_error(name + ": rte_acl_create: " + rte_strerror(rte_errno));
  int rc = rte_acl_add_rules(ctx_, reinterpret_cast<const rte_acl_rule*>(packed.data()), static_cast<uint32_t>(acl.size()));
  rte_acl_config cfg{};
  cfg.num_categories = 1;
  cfg.num_fields = static_cast<uint32_t>(used.size());
  for (size_t j = 0; j < used.size(); ++j) {
    cfg.defs[j] = kFieldDefs[used[j]];
    cfg.defs[j].field_index = static_cast<uint8_t>(j);
  }
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

}  // namespace metron

#include "elements/acl_classifier.h"

#include <rte_acl.h>
#include <rte_errno.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

#include "utils/args.h"

namespace metron {

namespace {

constexpr int kMaxAclFields = 17;  // the IPv6 layout: 5 header fields, 8 address words, 2 ports, icmp, tcp flags
RTE_ACL_RULE_DEF(AclRule, kMaxAclFields);

// Field layouts over FlowKey and FlowKey6. rte_acl wants the first field to be one byte, alone in its group, and
// reads the rest in 4-byte groups (input_index) that their fields fill exactly, each group at its first field's
// offset.
// - IPv4 (FlowKey: an IPv4 header's first 20 bytes, the ports and ICMP type/TCP flags words, then first_frag and
//   mf): proto | version/IHL, TOS, total length | fragment word, TTL, proto again | source | destination | sport
//   dport | icmp tcp_flags | first_frag mf. The version/IHL, total length, second proto and last two bytes only
//   fill their groups and are never constrained. A classifier tests fragments one of two ways (frag_word below):
//   as bit tests on the fragment word where the header has it, or on first_frag and mf, which only a built key has.
// - IPv6 (FlowKey6): proto | first_frag ttl tos mf | source words | destination words | sport dport | icmp
//   tcp_flags.
#define METRON_ACL_FIELD(key, type, member, size, off, group) \
  {RTE_ACL_FIELD_TYPE_##type, size, 0, group, static_cast<uint32_t>(offsetof(key, member) + (off))}
#define METRON_ACL_TAIL(key, ports_group)                                                                   \
  METRON_ACL_FIELD(key, RANGE, sport, 2, 0, ports_group), METRON_ACL_FIELD(key, RANGE, dport, 2, 0, ports_group), \
      METRON_ACL_FIELD(key, RANGE, icmp_type, 2, 0, ports_group + 1),                                        \
      METRON_ACL_FIELD(key, BITMASK, tcp_flags, 2, 0, ports_group + 1)

struct Layout {
  int fields;
  int addr;         // the first address field
  int addr_words;   // per address: 1 (IPv4) or 4 (IPv6)
  uint32_t one_bit;  // fields (bits by index) whose full range is 0-1, not 0-255
  rte_acl_field_def defs[kMaxAclFields];
};

// IPv4 field indices (kLayout4); fields 1, 3, 6 and 15 (version/IHL, total length, proto again, padding) stay zero
// in every rule: bit tests with an empty mask.
constexpr int kV4Tos = 2, kV4Frag = 4, kV4Ttl = 5, kV4FirstFrag = 13, kV4Mf = 14;

const Layout kLayout4 = {16, 7, 1, 1u << kV4FirstFrag | 1u << kV4Mf,
                         {METRON_ACL_FIELD(FlowKey, BITMASK, proto, 1, 0, 0),
                          METRON_ACL_FIELD(FlowKey, BITMASK, ver_ihl, 1, 0, 1), METRON_ACL_FIELD(FlowKey, RANGE, tos, 1, 0, 1),
                          METRON_ACL_FIELD(FlowKey, BITMASK, tot_len, 2, 0, 1),
                          METRON_ACL_FIELD(FlowKey, BITMASK, frag, 2, 0, 2), METRON_ACL_FIELD(FlowKey, RANGE, ttl, 1, 0, 2),
                          METRON_ACL_FIELD(FlowKey, BITMASK, proto, 1, 0, 2),
                          METRON_ACL_FIELD(FlowKey, MASK, src, 4, 0, 3), METRON_ACL_FIELD(FlowKey, MASK, dst, 4, 0, 4),
                          METRON_ACL_TAIL(FlowKey, 5),
                          METRON_ACL_FIELD(FlowKey, RANGE, first_frag, 1, 0, 7), METRON_ACL_FIELD(FlowKey, RANGE, mf, 1, 0, 7),
                          METRON_ACL_FIELD(FlowKey, BITMASK, pad, 2, 0, 7)}};
const Layout kLayout6 = {
    17, 5, 4, 1u << 1 | 1u << 4,
    {METRON_ACL_FIELD(FlowKey6, BITMASK, proto, 1, 0, 0), METRON_ACL_FIELD(FlowKey6, RANGE, first_frag, 1, 0, 1),
     METRON_ACL_FIELD(FlowKey6, RANGE, ttl, 1, 0, 1), METRON_ACL_FIELD(FlowKey6, RANGE, tos, 1, 0, 1),
     METRON_ACL_FIELD(FlowKey6, RANGE, mf, 1, 0, 1), METRON_ACL_FIELD(FlowKey6, MASK, src, 4, 0, 2),
     METRON_ACL_FIELD(FlowKey6, MASK, src, 4, 4, 3), METRON_ACL_FIELD(FlowKey6, MASK, src, 4, 8, 4),
     METRON_ACL_FIELD(FlowKey6, MASK, src, 4, 12, 5), METRON_ACL_FIELD(FlowKey6, MASK, dst, 4, 0, 6),
     METRON_ACL_FIELD(FlowKey6, MASK, dst, 4, 4, 7), METRON_ACL_FIELD(FlowKey6, MASK, dst, 4, 8, 8),
     METRON_ACL_FIELD(FlowKey6, MASK, dst, 4, 12, 9), METRON_ACL_TAIL(FlowKey6, 10)}};
#undef METRON_ACL_TAIL
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

// Word w (0-3) of an IPv6 prefix as an rte_acl MASK field: host-order value and the prefix length inside it.
void prefix_word(const Prefix6& p, int w, rte_acl_field* f) {
  f->value.u32 = static_cast<uint32_t>(p.addr[4 * w]) << 24 | p.addr[4 * w + 1] << 16 | p.addr[4 * w + 2] << 8 |
                 p.addr[4 * w + 3];
  f->mask_range.u32 = static_cast<uint32_t>(std::clamp(static_cast<int>(p.len) - 32 * w, 0, 32));
}

// The IPv4 fragment word's bit test (value, mask; host order) for a term's first-fragment and MF intervals, where
// the term tests no later fragment (first_frag 0, a non-zero offset: no single bit test).
std::pair<uint16_t, uint16_t> frag_word_test(Interval first_frag, Interval mf) {
  constexpr uint16_t kOffset = 0x1fff, kMf = 0x2000;
  uint16_t v = 0, m = first_frag.lo == 1 ? kOffset : 0;
  if (mf.lo == mf.hi) v |= mf.lo ? kMf : 0, m |= kMf;
  return {v, m};
}

// Whether field k of layout L is unconstrained in every rule (a full range, an empty mask).
bool unconstrained(const Layout& L, const std::vector<AclRule>& acl, int k) {
  const rte_acl_field_def& d = L.defs[k];
  for (const AclRule& r : acl) {
    const rte_acl_field& f = r.field[k];
    bool any;
    if (d.type == RTE_ACL_FIELD_TYPE_BITMASK) any = f.mask_range.u64 == 0;
    else if (d.type == RTE_ACL_FIELD_TYPE_MASK) any = f.mask_range.u32 == 0;
    else if (d.size == 1) any = f.value.u8 == 0 && f.mask_range.u8 == (L.one_bit >> k & 1 ? 1 : 0xff);
    else any = f.value.u16 == 0 && f.mask_range.u16 == 0xff;  // icmp type (ports are always kept)
    if (!any) return false;
  }
  return true;
}

std::atomic<unsigned> g_ctx_seq{0};

// rte_acl_build splits a rule set into up to 8 tries whenever one trie passes a node limit, and every trie is a
// walk per packet. With max_size 0 ("no limit") the limit is its minimum, 2048 nodes: fw1000's sw classifier
// (1,394 IPv4 entries) built 3 tries. Any max_size starts at 16384 nodes and halves only while the runtime tables
// exceed it: one trie, +37% packet rate, for +0.7 s of build (1.6 -> 2.2 s) and a 33 MB table instead of 3 MB.
// Bigger sets pay far more build for it (fw4000's sw, 2,394 patterns: 2.5 -> 6.7 s; 4,786: 2.9 -> 13.6 s) and
// the build runs inside DeployPipeline, so they keep DPDK's split (agent/README.md has the measurements).
constexpr size_t kOneTrieMaxEntries = 2048;
constexpr size_t kMaxRuntimeBytes = size_t{256} << 20;

}  // namespace

AclClassifier::AclClassifier(const std::string& name, const std::vector<IpRule>& rules, int socket_id,
                             uint8_t version)
    : version_(version) {
  const Layout& L = version == 6 ? kLayout6 : kLayout4;
  const int a = L.addr;                     // first address field
  const int p = a + 2 * L.addr_words;       // sport; dport, icmp type and flags follow
  std::vector<std::vector<Term>> terms;
  for (const IpRule& r : rules) terms.push_back(to_terms(*r.expr, 4096, version));
  // IPv4 fragments are tested on the header's fragment word where that lets packets be read in place: no term tests
  // ICMP types or TCP flags (bytes a header does not have where FlowKey has them) or asks for a later fragment (a
  // non-zero offset is no single bit test; every negated port test asks for one). Otherwise on a built key's
  // first_frag and mf, which rte_acl also builds faster (a 1,561-entry set with TCP flag tests: 0.5 s against
  // 6.1 s on the fragment word).
  const bool frag_word = version == 4 && std::none_of(terms.begin(), terms.end(), [](const std::vector<Term>& ts) {
    return std::any_of(ts.begin(), ts.end(), [](const Term& t) {
      const Interval icmp = t.iv[static_cast<int>(Field::kIcmpType)];
      return t.iv[static_cast<int>(Field::kFirstFrag)].hi == 0 || t.flags_set != 0 || t.flags_clear != 0 ||
             icmp.lo != 0 || icmp.hi != kFieldMax[static_cast<int>(Field::kIcmpType)];
    });
  });
  // The trie then reads only groups an IPv4 header without options has where FlowKey has them: the ICMP type/TCP
  // flags and first_frag/mf groups stay unconstrained, and dropped.
  header_is_key_ = frag_word;
  std::vector<AclRule> acl;
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].output < -1) throw std::invalid_argument("acl: rule " + std::to_string(i) + " has output " +
                                                          std::to_string(rules[i].output));
    for (const Term& t : terms[i]) {
      auto iv = [&](Field f) { return t.iv[static_cast<int>(f)]; };
      // IPv4 addresses are intervals split into prefixes; IPv6 ones are prefixes already (one block each).
      const auto src_blocks = version == 6 ? std::vector<std::pair<uint32_t, int>>{{0, 0}} : blocks(iv(Field::kSrc), 32);
      const auto dst_blocks = version == 6 ? std::vector<std::pair<uint32_t, int>>{{0, 0}} : blocks(iv(Field::kDst), 32);
      for (auto [pv, plen] : blocks(iv(Field::kProto), 8))
        for (auto [sv, slen] : src_blocks)
          for (auto [dv, dlen] : dst_blocks) {
            AclRule r{};
            r.data.category_mask = 1;
            r.data.priority = static_cast<int32_t>(rules.size() - i);  // earlier rule = higher priority
            r.data.userdata = userdata_of(rules[i].output);
            r.field[0].value.u8 = static_cast<uint8_t>(pv);
            r.field[0].mask_range.u8 = static_cast<uint8_t>(plen == 0 ? 0 : 0xff << (8 - plen));
            auto range8 = [&](int k, Field f) {
              r.field[k].value.u8 = static_cast<uint8_t>(iv(f).lo);
              r.field[k].mask_range.u8 = static_cast<uint8_t>(iv(f).hi);
            };
            if (version == 6) {
              range8(1, Field::kFirstFrag);
              range8(2, Field::kTtl);
              range8(3, Field::kTos);
              range8(4, Field::kMf);
              for (int w = 0; w < 4; ++w) prefix_word(t.src6, w, &r.field[a + w]), prefix_word(t.dst6, w, &r.field[a + 4 + w]);
            } else {
              range8(kV4Tos, Field::kTos);
              range8(kV4Ttl, Field::kTtl);
              if (frag_word) {
                const auto [fv, fmask] = frag_word_test(iv(Field::kFirstFrag), iv(Field::kMf));
                r.field[kV4Frag].value.u16 = fv;
                r.field[kV4Frag].mask_range.u16 = fmask;
                r.field[kV4FirstFrag].mask_range.u8 = r.field[kV4Mf].mask_range.u8 = 1;  // 0-1: any
              } else {
                range8(kV4FirstFrag, Field::kFirstFrag);
                range8(kV4Mf, Field::kMf);
              }
              r.field[a].value.u32 = sv;
              r.field[a].mask_range.u32 = static_cast<uint32_t>(slen);
              r.field[a + 1].value.u32 = dv;
              r.field[a + 1].mask_range.u32 = static_cast<uint32_t>(dlen);
            }
            r.field[p].value.u16 = static_cast<uint16_t>(iv(Field::kSport).lo);
            r.field[p].mask_range.u16 = static_cast<uint16_t>(iv(Field::kSport).hi);
            r.field[p + 1].value.u16 = static_cast<uint16_t>(iv(Field::kDport).lo);
            r.field[p + 1].mask_range.u16 = static_cast<uint16_t>(iv(Field::kDport).hi);
            r.field[p + 2].value.u16 = static_cast<uint16_t>(iv(Field::kIcmpType).lo);
            r.field[p + 2].mask_range.u16 = static_cast<uint16_t>(iv(Field::kIcmpType).hi);
            r.field[p + 3].value.u16 = t.flags_set;
            r.field[p + 3].mask_range.u16 = static_cast<uint16_t>(t.flags_set | t.flags_clear);
            acl.push_back(r);
            if (acl.size() > (1u << 20)) throw ConfigError("rules expand to more than 2^20 classifier entries");
          }
    }
  }
  acl_rules_ = acl.size();
  if (acl.empty()) return;  // nothing can match
  // Only the 4-byte groups some rule constrains go into the trie: every group costs a transition per packet,
  // and most rule sets never test TTL, TOS, fragments, ICMP types, TCP flags or the low words of IPv6 addresses.
  // The ports group always stays (rte_acl wants a field past the first byte).
  std::vector<int> used;
  for (int k = 0; k < L.fields;) {
    int end = k;
    while (end < L.fields && L.defs[end].input_index == L.defs[k].input_index) ++end;
    bool keep = k == 0 || k == p || (version != 6 && L.defs[k].type == RTE_ACL_FIELD_TYPE_MASK);
    for (int j = k; j < end && !keep; ++j) keep = !unconstrained(L, acl, j);
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
  rte_acl_param prm{};
  prm.name = ctx_name.c_str();
  prm.socket_id = socket_id;
  prm.rule_size = static_cast<uint32_t>(rule_sz);
  prm.max_rule_num = static_cast<uint32_t>(acl.size());
  ctx_ = rte_acl_create(&prm);
  if (ctx_ == nullptr) throw std::runtime_error(name + ": rte_acl_create: " + rte_strerror(rte_errno));
  int rc = rte_acl_add_rules(ctx_, reinterpret_cast<const rte_acl_rule*>(packed.data()), static_cast<uint32_t>(acl.size()));
  rte_acl_config cfg{};
  cfg.num_categories = 1;
  cfg.max_size = acl.size() <= kOneTrieMaxEntries ? kMaxRuntimeBytes : 0;
  cfg.num_fields = static_cast<uint32_t>(used.size());
  for (size_t j = 0; j < used.size(); ++j) {
    cfg.defs[j] = L.defs[used[j]];
    cfg.defs[j].field_index = static_cast<uint8_t>(j);
  }
  if (rc == 0) rc = rte_acl_build(ctx_, &cfg);
  if (rc != 0) {
    rte_acl_free(ctx_);
    ctx_ = nullptr;
    throw std::runtime_error(name + ": rte_acl build of " + std::to_string(acl.size()) + " entries failed: " +
                             rte_strerror(-rc));
  }
  // AVX512 with 32 searches at once classified the 1000-rule firewall in about half SSE's cycles on an AVX512
  // Xeon; without AVX512, SSE beat AVX2 by 5-15% on a Zen3 (BENCHMARKS.md, shared/notes/dataplane.md).
  if (!use(AclAlgorithm::kAvx512x32)) use(AclAlgorithm::kSse);
}

const char* acl_algorithm_name(AclAlgorithm alg) {
  switch (alg) {
    case AclAlgorithm::kSse: return "sse";
    case AclAlgorithm::kAvx2: return "avx2";
    case AclAlgorithm::kAvx512x16: return "avx512x16";
    case AclAlgorithm::kAvx512x32: return "avx512x32";
  }
  return "?";
}

bool AclClassifier::use(AclAlgorithm alg) {
  static constexpr enum rte_acl_classify_alg kDpdk[] = {RTE_ACL_CLASSIFY_SSE, RTE_ACL_CLASSIFY_AVX2,
                                                   RTE_ACL_CLASSIFY_AVX512X16, RTE_ACL_CLASSIFY_AVX512X32};
  // rte_acl checks the CPU's flags and rte_vect_get_max_simd_bitwidth() and refuses (-ENOTSUP) what either lacks.
  if (ctx_ == nullptr || rte_acl_set_ctx_classify(ctx_, kDpdk[static_cast<int>(alg)]) != 0) return false;
  alg_ = alg;
  return true;
}

AclClassifier::~AclClassifier() {
  if (ctx_ != nullptr) rte_acl_free(ctx_);
}

void AclClassifier::classify(const FlowKey* const* keys, int* out, unsigned n) const {
  classify_bytes(reinterpret_cast<const uint8_t* const*>(keys), out, n);
}

void AclClassifier::classify(const FlowKey6* const* keys, int* out, unsigned n) const {
  classify_bytes(reinterpret_cast<const uint8_t* const*>(keys), out, n);
}

void AclClassifier::classify_bytes(const uint8_t* const* keys, int* out, unsigned n) const {
  if (ctx_ == nullptr) {
    for (unsigned i = 0; i < n; ++i) out[i] = -1;
    return;
  }
  uint32_t res[256];
  for (unsigned done = 0; done < n;) {
    const unsigned chunk = std::min(n - done, 256u);
    rte_acl_classify(ctx_, const_cast<const uint8_t**>(keys + done), res, chunk, 1);
    int* const o = out + done;  // one base pointer: a loop the compiler vectorizes
    for (unsigned i = 0; i < chunk; ++i) o[i] = output_of(res[i]);
    done += chunk;
  }
}

}  // namespace metron

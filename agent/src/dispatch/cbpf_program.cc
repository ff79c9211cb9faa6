#include "dispatch/cbpf_program.h"

#include <algorithm>
#include <string>

namespace metron {
namespace {

// Snap length returned by the socket filter for accepted frames: the whole frame.
constexpr uint32_t kAcceptAll = 0x40000;

// Frame offsets with the outer VLAN tag already taken out of the frame by the kernel (it is read through the
// SKF_AD_VLAN_TAG ancillary loads instead). Every load is relative to the link-layer header (SKF_LL_OFF):
// the fanout program runs while skb->data points at the network header, the socket filter after AF_PACKET
// has pushed it back to the MAC header, and SKF_LL_OFF means the same bytes in both.
constexpr uint32_t kLL = static_cast<uint32_t>(SKF_LL_OFF);
constexpr uint32_t kOffEtherType = 12;
constexpr uint32_t kOffL3 = 14;
constexpr uint32_t kOffIpv4FragOff = kOffL3 + 6;
constexpr uint32_t kOffIpv4Proto = kOffL3 + 9;
constexpr uint32_t kOffIpv4Src = kOffL3 + 12;
constexpr uint32_t kOffIpv4Dst = kOffL3 + 16;
constexpr uint32_t kOffIpv6Next = kOffL3 + 6;
constexpr uint32_t kOffIpv6Src = kOffL3 + 8;
constexpr uint32_t kOffIpv6Dst = kOffL3 + 24;
constexpr uint32_t kOffIpv6L4 = kOffL3 + 40;

// Builds one rule: every check's failure branch is patched to the first instruction after the rule.
class RuleEmitter {
 public:
  void Load(uint16_t size, uint32_t offset) { code_.push_back(BPF_STMT(BPF_LD | size | BPF_ABS, kLL + offset)); }
  void LoadAncillary(uint32_t what) { code_.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + what)); }
  void LoadInd(uint16_t size, uint32_t offset) { code_.push_back(BPF_STMT(BPF_LD | size | BPF_IND, kLL + offset)); }
  void LoadIpv4HeaderLenToX() { code_.push_back(BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, kLL + kOffL3)); }
  void And(uint32_t mask) { code_.push_back(BPF_STMT(BPF_ALU | BPF_AND | BPF_K, mask)); }
  // Continue when A == k, else fail.
  void ExpectEq(uint32_t k) {
    fail_jf_.push_back(code_.size());
    code_.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 0));
  }
  // Continue when (A & k) == 0, else fail.
  void ExpectClear(uint32_t k) {
    fail_jt_.push_back(code_.size());
    code_.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, k, 0, 0));
  }
  // Continue when A != 0, else fail.
  void ExpectNonZero() {
    fail_jt_.push_back(code_.size());
    code_.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0));
  }
  // Load `size` bytes at `offset`, mask, compare; skipped entirely when the mask is 0.
  void MatchField(uint16_t size, uint32_t offset, uint32_t value, uint32_t mask, uint32_t full_mask) {
    if (mask == 0) return;
    Load(size, offset);
    Compare(value, mask, full_mask);
  }
  void Compare(uint32_t value, uint32_t mask, uint32_t full_mask) {
    if (mask != full_mask) And(mask);
    ExpectEq(value & mask);
  }
  std::vector<sock_filter> Finish(uint32_t ret) {
    code_.push_back(BPF_STMT(BPF_RET | BPF_K, ret));
    const size_t end = code_.size();
    for (size_t i : fail_jf_) code_[i].jf = static_cast<uint8_t>(end - i - 1);
    for (size_t i : fail_jt_) code_[i].jt = static_cast<uint8_t>(end - i - 1);
    return std::move(code_);
  }

 private:
  std::vector<sock_filter> code_;
  std::vector<size_t> fail_jf_;
  std::vector<size_t> fail_jt_;
};

uint32_t Be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

uint32_t PrefixWordMask(uint8_t len, int word) {
  const int bits = std::clamp(static_cast<int>(len) - 32 * word, 0, 32);
  return bits == 0 ? 0 : bits == 32 ? 0xffffffffu : ~(0xffffffffu >> bits);
}

void EmitPrefix(RuleEmitter& e, const IpPrefix& p, uint32_t offset) {
  if (!p.version) return;
  const int words = p.version == 4 ? 1 : 4;
  for (int w = 0; w < words; ++w) {
    e.MatchField(BPF_W, offset + 4 * w, Be32(&p.addr[4 * w]), PrefixWordMask(p.len, w), 0xffffffffu);
  }
}

void EmitMatch(RuleEmitter& e, const SteerMatch& m) {
  if (m.has_eth_dst) {
    const uint8_t* v = m.eth_dst.data();
    const uint8_t* k = m.eth_dst_mask.data();
    e.MatchField(BPF_W, 0, Be32(v), Be32(k), 0xffffffffu);
    e.MatchField(BPF_H, 4, uint32_t{v[4]} << 8 | v[5], uint32_t{k[4]} << 8 | k[5], 0xffff);
  }
  if (m.vlan) {
    e.LoadAncillary(SKF_AD_VLAN_TAG_PRESENT);
    e.ExpectNonZero();
    e.LoadAncillary(SKF_AD_VLAN_TAG);
    e.Compare(m.vlan, 0x0fff, 0);
  }
  const uint8_t version = m.ip_version();
  const uint16_t ether_type = m.ether_type ? m.ether_type : version == 4 ? 0x0800 : version == 6 ? 0x86dd : 0;
  if (ether_type) e.MatchField(BPF_H, kOffEtherType, ether_type, 0xffff, 0xffff);
  if (version == 4) {
    EmitPrefix(e, m.ip_src, kOffIpv4Src);
    EmitPrefix(e, m.ip_dst, kOffIpv4Dst);
    if (m.ip_proto) e.MatchField(BPF_B, kOffIpv4Proto, m.ip_proto, 0xff, 0xff);
    if (m.l4_src.mask || m.l4_dst.mask) {
      // Only first fragments carry ports.
      e.Load(BPF_H, kOffIpv4FragOff);
      e.ExpectClear(0x1fff);
      e.LoadIpv4HeaderLenToX();
      if (m.l4_src.mask) {
        e.LoadInd(BPF_H, kOffL3);
        if (m.l4_src.mask != 0xffff) e.And(m.l4_src.mask);
        e.ExpectEq(m.l4_src.value);
      }
      if (m.l4_dst.mask) {
        e.LoadInd(BPF_H, kOffL3 + 2);
        if (m.l4_dst.mask != 0xffff) e.And(m.l4_dst.mask);
        e.ExpectEq(m.l4_dst.value);
      }
    }
  } else if (version == 6) {
    EmitPrefix(e, m.ip_src, kOffIpv6Src);
    EmitPrefix(e, m.ip_dst, kOffIpv6Dst);
    // Extension headers are not walked: a rule on proto/ports matches packets whose first next-header is it.
    if (m.ip_proto) e.MatchField(BPF_B, kOffIpv6Next, m.ip_proto, 0xff, 0xff);
    e.MatchField(BPF_H, kOffIpv6L4, m.l4_src.value, m.l4_src.mask, 0xffff);
    e.MatchField(BPF_H, kOffIpv6L4 + 2, m.l4_dst.value, m.l4_dst.mask, 0xffff);
  }
}

}  // namespace

bool HasDropRules(const std::vector<SteerRule>& rules) {
  return std::any_of(rules.begin(), rules.end(),
                     [](const SteerRule& r) { return r.action.kind == SteerActionKind::kDrop; });
}

namespace {

// Group tags are the bulk of every program: rules that match nothing but the group bits of the dst MAC, or
// nothing but the VLAN id, and steer to a queue. A run of consecutive such rules is compiled as one load of
// the key and a binary search over the sorted keys (about log2(n) compares instead of n loads), so the cost
// per frame hardly grows with the number of groups on the server.
enum class KeyKind { kNone, kMacGroup, kVlan };

KeyKind TagKey(const SteerRule& r, uint32_t* key) {
  const SteerMatch& m = r.match;
  if (r.action.kind != SteerActionKind::kQueue || m.ether_type || m.ip_version() || m.ip_proto) return KeyKind::kNone;
  static constexpr MacAddr kGroupMask = {0xff, 0xff, 0xff, 0xff, 0, 0};
  if (m.has_eth_dst && m.eth_dst_mask == kGroupMask && !m.vlan) {
    *key = Be32(m.eth_dst.data());
    return KeyKind::kMacGroup;
  }
  if (!m.has_eth_dst && m.vlan) {
    *key = m.vlan;
    return KeyKind::kVlan;
  }
  return KeyKind::kNone;
}

struct KeyedReturn {
  uint32_t key;
  uint32_t ret;
};

constexpr size_t kLeafSize = 4;

// Binary search over sorted[lo, hi): every conditional jump is 0 or 1 ahead (8-bit offsets never overflow);
// long jumps use BPF_JA, whose offset is 32 bits. Misses jump to `miss_fixups` patched by the caller.
void EmitSearch(const std::vector<KeyedReturn>& sorted, size_t lo, size_t hi, std::vector<sock_filter>& code,
                std::vector<size_t>& miss_fixups) {
  if (hi - lo <= kLeafSize) {
    for (size_t i = lo; i < hi; ++i) {
      code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, sorted[i].key, 0, 1));
      code.push_back(BPF_STMT(BPF_RET | BPF_K, sorted[i].ret));
    }
    miss_fixups.push_back(code.size());
    code.push_back(BPF_STMT(BPF_JMP | BPF_JA, 0));
    return;
  }
  const size_t mid = lo + (hi - lo) / 2;
  // A > last key of the left half: take the BPF_JA to the right half; else fall through into the left half.
  code.push_back(BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, sorted[mid - 1].key, 0, 1));
  const size_t to_right = code.size();
  code.push_back(BPF_STMT(BPF_JMP | BPF_JA, 0));
  EmitSearch(sorted, lo, mid, code, miss_fixups);
  code[to_right].k = static_cast<uint32_t>(code.size() - to_right - 1);
  EmitSearch(sorted, mid, hi, code, miss_fixups);
}

void EmitTagRun(KeyKind kind, std::vector<KeyedReturn> entries, std::vector<sock_filter>& program) {
  // First match wins: of equal keys keep the earliest rule.
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  entries.erase(std::unique(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.key == b.key; }),
                entries.end());
  std::vector<sock_filter> code;
  std::vector<size_t> miss;
  if (kind == KeyKind::kMacGroup) {
    code.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kLL + 0));
  } else {
    code.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_VLAN_TAG_PRESENT)));
    code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1));  // untagged: take the BPF_JA to the miss
    miss.push_back(code.size());
    code.push_back(BPF_STMT(BPF_JMP | BPF_JA, 0));
    code.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_VLAN_TAG)));
    code.push_back(BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x0fff));
  }
  EmitSearch(entries, 0, entries.size(), code, miss);
  for (size_t i : miss) code[i].k = static_cast<uint32_t>(code.size() - i - 1);
  program.insert(program.end(), code.begin(), code.end());
}

}  // namespace

grpc::Status CompileSteeringProgram(const std::vector<SteerRule>& ordered_rules, uint32_t default_queue,
                                    ProgramRole role, std::vector<sock_filter>* out) {
  std::vector<sock_filter> program;
  for (size_t i = 0; i < ordered_rules.size();) {
    const SteerRule& rule = ordered_rules[i];
    uint32_t key = 0;
    const KeyKind kind = TagKey(rule, &key);
    if (kind != KeyKind::kNone) {
      std::vector<KeyedReturn> run;
      for (uint32_t k; i < ordered_rules.size() && TagKey(ordered_rules[i], &k) == kind; ++i) {
        run.push_back({k, role == ProgramRole::kFanout ? ordered_rules[i].action.value : kAcceptAll});
      }
      EmitTagRun(kind, std::move(run), program);
      continue;
    }
    uint32_t ret = 0;
    switch (rule.action.kind) {
      case SteerActionKind::kQueue:
        ret = role == ProgramRole::kFanout ? rule.action.value : kAcceptAll;
        break;
      case SteerActionKind::kDrop:
        // The fanout program must still pick a socket; that socket's filter then drops the frame.
        ret = role == ProgramRole::kFanout ? default_queue : 0;
        break;
      case SteerActionKind::kMark:
        return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                            "rule " + std::to_string(rule.id) + ": action mark needs rte_flow; the kernel "
                            "fanout dispatch of NIC " + rule.nic + " can only steer to a queue or drop");
    }
    RuleEmitter e;
    EmitMatch(e, rule.match);
    std::vector<sock_filter> code = e.Finish(ret);
    program.insert(program.end(), code.begin(), code.end());
    ++i;
  }
  program.push_back(BPF_STMT(BPF_RET | BPF_K, role == ProgramRole::kFanout ? default_queue : kAcceptAll));
  if (program.size() > BPF_MAXINSNS) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        std::to_string(ordered_rules.size()) + " steering rules need " +
                            std::to_string(program.size()) + " BPF instructions, more than the kernel's " +
                            std::to_string(BPF_MAXINSNS));
  }
  *out = std::move(program);
  return grpc::Status::OK;
}

}  // namespace metron

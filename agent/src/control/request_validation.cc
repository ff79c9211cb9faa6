#include "control/request_validation.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/steer_rule.h"

namespace metron {
namespace {

constexpr size_t kMaxIdBytes = 256;
constexpr uint32_t kMaxClassId = 0xffff;  // CCCC of the MAC tag

grpc::Status Invalid(const std::string& field, const std::string& what) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, field + ": " + what);
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s.substr(0, 64)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return out + (s.size() > 64 ? "...\"" : "\"");
}

grpc::Status CheckId(const std::string& field, const std::string& id) {
  if (id.empty()) return Invalid(field, "empty");
  if (id.size() > kMaxIdBytes) {
    return Invalid(field, Quote(id) + " is " + std::to_string(id.size()) + " bytes, the limit is " +
                              std::to_string(kMaxIdBytes));
  }
  for (unsigned char c : id) {
    if (c < 0x20 || c == 0x7f) return Invalid(field, Quote(id) + " contains a control character");
  }
  return grpc::Status::OK;
}

// Bits of a 16-bit port: value within mask; a slice needs at least one bit.
grpc::Status CheckBits(const std::string& field, const pb::PortBits& b, bool nonzero) {
  if (b.mask() > 0xffff || (b.value() & ~b.mask()) != 0) {
    return Invalid(field, "mask " + std::to_string(b.mask()) + " value " + std::to_string(b.value()) +
                              ": need a 16-bit mask and value bits within it");
  }
  if (nonzero && b.mask() == 0) return Invalid(field + ".mask", "0: a slice needs at least one bit");
  return grpc::Status::OK;
}

// Checks that hold for the group set of a Deploy and of an Update alike.
grpc::Status CheckGroups(const google::protobuf::RepeatedPtrField<pb::GroupSpec>& groups, bool update) {
  if (groups.empty()) {
    return Invalid("groups", update ? "empty: use RemovePipeline to retire every group" : "empty: a pipeline needs a group");
  }
  std::map<std::string, int> ids;
  std::map<std::pair<int, uint32_t>, int> tags;
  std::map<std::pair<uint32_t, uint32_t>, int> shares;  // (index, count) -> group
  std::map<uint32_t, std::vector<std::pair<int, std::optional<pb::PortBits>>>> classes;
  for (int i = 0; i < groups.size(); ++i) {
    const pb::GroupSpec& g = groups[i];
    const std::string where = "groups[" + std::to_string(i) + "]";
    grpc::Status s = CheckId(where + ".group_id", g.group_id());
    if (!s.ok()) return s;
    if (auto [it, fresh] = ids.emplace(g.group_id(), i); !fresh) {
      return Invalid(where + ".group_id", Quote(g.group_id()) + " repeats groups[" + std::to_string(it->second) + "]");
    }
    if (g.click_config().find_first_not_of(" \t\r\n") == std::string::npos) {
      return Invalid(where + ".click_config", "empty");
    }
    SteerRule unused;
    s = TagRule(g.tag().type(), g.tag().value(), 0, where + ".tag", &unused);
    if (!s.ok()) return s;
    if (auto [it, fresh] = tags.emplace(std::make_pair(g.tag().type(), g.tag().value()), i); !fresh) {
      return Invalid(where + ".tag.value", std::to_string(g.tag().value()) + " is also the tag of groups[" +
                                               std::to_string(it->second) + "]");
    }
    std::map<uint32_t, pb::PortBits> sliced;
    for (int k = 0; k < g.slices_size(); ++k) {
      const pb::ClassSlice& sl = g.slices(k);
      const std::string kw = where + ".slices[" + std::to_string(k) + "]";
      s = CheckBits(kw + ".sport", sl.sport(), /*nonzero=*/true);
      if (!s.ok()) return s;
      if (std::find(g.class_ids().begin(), g.class_ids().end(), sl.class_id()) == g.class_ids().end())
        return Invalid(kw + ".class_id", std::to_string(sl.class_id()) + " is not among the group's class_ids");
      if (!sliced.emplace(sl.class_id(), sl.sport()).second)
        return Invalid(kw + ".class_id", std::to_string(sl.class_id()) + " is sliced twice in this group");
    }
    for (int c = 0; c < g.class_ids_size(); ++c) {
      const uint32_t cls = g.class_ids(c);
      const std::string cw = where + ".class_ids[" + std::to_string(c) + "]";
      if (cls > kMaxClassId) return Invalid(cw, std::to_string(cls) + " exceeds 65535 (the CCCC of a MAC tag)");
      // A class in several groups: each holds a slice of it, disjoint from the others' (a packet has one home).
      // An update may also hold a class whole in two groups: a chain's running version and its next one, side by
      // side under their own tags while traffic moves from one to the other (docs/updates.md).
      const auto mine = sliced.find(cls);
      for (const auto& [j, theirs] : classes[cls]) {
        if (mine == sliced.end() || !theirs.has_value()) {
          if (update) continue;
          return Invalid(cw, std::to_string(cls) + " already belongs to groups[" + std::to_string(j) + "]" +
                                 " (a class in several groups needs a disjoint slice in each)");
        }
        if (((mine->second.value() ^ theirs->value()) & mine->second.mask() & theirs->mask()) == 0) {
          return Invalid(cw, "the slice of class " + std::to_string(cls) + " overlaps that of groups[" +
                                 std::to_string(j) + "]");
        }
      }
      classes[cls].emplace_back(i, mine == sliced.end() ? std::nullopt : std::optional<pb::PortBits>(mine->second));
    }
    s = CheckBits(where + ".state_filter", g.state_filter(), /*nonzero=*/false);
    if (!s.ok()) return s;
    if (const pb::PortShare& ps = g.port_share(); ps.count() > 0 || ps.index() > 0) {
      if (ps.count() == 0 || ps.count() > 65536)
        return Invalid(where + ".port_share.count", std::to_string(ps.count()) + " is not in 1..65536");
      if (ps.index() >= ps.count())
        return Invalid(where + ".port_share.index", std::to_string(ps.index()) + " is not below count " +
                                                        std::to_string(ps.count()));
      // Two groups with one share would hand out the same external ports (docs/scaling.md#port-shares).
      if (auto [it, fresh] = shares.emplace(std::make_pair(ps.index(), ps.count()), i); !fresh)
        return Invalid(where + ".port_share", "share " + std::to_string(ps.index()) + " of " +
                                                  std::to_string(ps.count()) + " is also that of groups[" +
                                                  std::to_string(it->second) + "]");
    }
    if (!update && g.state_from_size() > 0) {
      return Invalid(where + ".state_from", Quote(g.state_from(0)) + ": only UpdatePipeline initialises state");
    }
    std::set<std::string> sources;
    for (int k = 0; k < g.state_from_size(); ++k) {
      const std::string sw = where + ".state_from[" + std::to_string(k) + "]";
      s = CheckId(sw, g.state_from(k));
      if (!s.ok()) return s;
      if (!sources.insert(g.state_from(k)).second) return Invalid(sw, Quote(g.state_from(k)) + " is listed twice");
    }
  }
  return grpc::Status::OK;
}

grpc::Status CheckTuple(const std::string& where, const pb::FiveTuple& t, bool required) {
  if (!required && t.ByteSizeLong() == 0) return grpc::Status::OK;
  for (const auto& [name, ip] : {std::make_pair("src_ip", &t.src_ip()), std::make_pair("dst_ip", &t.dst_ip())}) {
    if (ip->size() != 4 && ip->size() != 16) {
      return Invalid(where + "." + name, std::to_string(ip->size()) + " bytes, expected 4 (IPv4) or 16 (IPv6)");
    }
  }
  if (t.src_ip().size() != t.dst_ip().size()) return Invalid(where + ".dst_ip", "IP version differs from src_ip");
  if (t.src_port() > 0xffff) return Invalid(where + ".src_port", std::to_string(t.src_port()) + " exceeds 65535");
  if (t.dst_port() > 0xffff) return Invalid(where + ".dst_port", std::to_string(t.dst_port()) + " exceeds 65535");
  if (t.proto() > 0xff) return Invalid(where + ".proto", std::to_string(t.proto()) + " exceeds 255");
  return grpc::Status::OK;
}

}  // namespace

// The egress of a Deploy, and of an Update that sets one.
static grpc::Status CheckEgress(const google::protobuf::RepeatedPtrField<pb::Egress>& egress) {
  for (int i = 0; i < egress.size(); ++i) {
    const pb::Egress& e = egress.Get(i);
    const std::string where = "egress[" + std::to_string(i) + "]";
    grpc::Status s = CheckId(where + ".nic", e.nic());
    if (!s.ok()) return s;
    MacAddr mac;
    if (!e.dst_mac().empty() && !ParseMac(e.dst_mac(), &mac)) {
      return Invalid(where + ".dst_mac", Quote(e.dst_mac()) + " is not a MAC address aa:bb:cc:dd:ee:ff");
    }
    if (e.vlan() > kMaxVlanId) return Invalid(where + ".vlan", std::to_string(e.vlan()) + " is not a VLAN id 1..4094");
  }
  return grpc::Status::OK;
}

grpc::Status ValidateRequest(const pb::DeployPipelineRequest& req) {
  grpc::Status s = CheckId("pipeline_id", req.pipeline_id());
  if (!s.ok()) return s;
  s = CheckId("ingress_nic", req.ingress_nic());
  if (!s.ok()) return s;
  s = CheckEgress(req.egress());
  if (!s.ok()) return s;
  return CheckGroups(req.groups(), /*update=*/false);
}

grpc::Status ValidateRequest(const pb::UpdatePipelineRequest& req) {
  grpc::Status s = CheckId("pipeline_id", req.pipeline_id());
  if (!s.ok()) return s;
  s = CheckEgress(req.egress());
  if (!s.ok()) return s;
  return CheckGroups(req.groups(), /*update=*/true);
}

grpc::Status ValidateRequest(const pb::RemovePipelineRequest& req) { return CheckId("pipeline_id", req.pipeline_id()); }

grpc::Status ValidateRequest(const pb::NicRuleBatch& req) {
  if (req.rules().empty()) return Invalid("rules", "empty batch");
  // Id clashes (within the batch or with installed rules) are the rule table's to report: ALREADY_EXISTS.
  for (int i = 0; i < req.rules_size(); ++i) {
    SteerRule parsed;
    grpc::Status s = ParseNicRule(req.rules(i), "rules[" + std::to_string(i) + "]", &parsed);
    if (!s.ok()) return s;
  }
  return grpc::Status::OK;
}

grpc::Status ValidateRequest(const pb::NicRuleIds& req) {
  if (req.ids().empty()) return Invalid("ids", "empty");
  std::map<uint64_t, int> seen;
  for (int i = 0; i < req.ids_size(); ++i) {
    if (auto [it, fresh] = seen.emplace(req.ids(i), i); !fresh) {
      return Invalid("ids[" + std::to_string(i) + "]", std::to_string(req.ids(i)) + " repeats ids[" +
                                                           std::to_string(it->second) + "]");
    }
  }
  return grpc::Status::OK;
}

grpc::Status ValidateRequest(const pb::ExportStateRequest& req) {
  grpc::Status s = CheckId("pipeline_id", req.pipeline_id());
  if (!s.ok()) return s;
  return CheckId("group_id", req.group_id());
}

grpc::Status ValidateRequest(const pb::ImportStateRequest& req) {
  const pb::StateSnapshot& snap = req.snapshot();
  grpc::Status s = CheckId("snapshot.pipeline_id", snap.pipeline_id());
  if (!s.ok()) return s;
  s = req.target_group_id().empty() ? CheckId("snapshot.group_id", snap.group_id())
                                    : CheckId("target_group_id", req.target_group_id());
  if (!s.ok()) return s;
  for (int t = 0; t < snap.tables_size(); ++t) {
    const pb::StateTable& table = snap.tables(t);
    const std::string tw = "snapshot.tables[" + std::to_string(t) + "]";
    s = CheckId(tw + ".element", table.element());
    if (!s.ok()) return s;
    s = CheckId(tw + ".kind", table.kind());
    if (!s.ok()) return s;
    for (int e = 0; e < table.entries_size(); ++e) {
      const std::string ew = tw + ".entries[" + std::to_string(e) + "]";
      s = CheckTuple(ew + ".key", table.entries(e).key(), /*required=*/true);
      if (!s.ok()) return s;
      s = CheckTuple(ew + ".mapped", table.entries(e).mapped(), /*required=*/false);
      if (!s.ok()) return s;
    }
  }
  return grpc::Status::OK;
}

grpc::Status LoadInterval(const pb::LoadStreamRequest& req, std::chrono::milliseconds* out) {
  if (req.interval_ms() == 0) {
    *out = kDefaultLoadInterval;
    return grpc::Status::OK;
  }
  const std::chrono::milliseconds ms(req.interval_ms());
  if (ms < kMinLoadInterval || ms > kMaxLoadInterval) {
    return Invalid("interval_ms", std::to_string(req.interval_ms()) + " is outside " +
                                      std::to_string(kMinLoadInterval.count()) + ".." +
                                      std::to_string(kMaxLoadInterval.count()) + " (0 = 100)");
  }
  *out = ms;
  return grpc::Status::OK;
}

grpc::Status LoadAlert(const pb::LoadStreamRequest& req, double* out) {
  const double a = req.alert_load();
  if (!(a >= 0.0 && a <= 1.0)) {  // also NaN
    return Invalid("alert_load", std::to_string(a) + " is outside 0..1 (0 = no alert)");
  }
  *out = a;
  return grpc::Status::OK;
}

}  // namespace metron

#include "dispatch/steering_table.h"

#include <algorithm>
#include <set>

namespace metron {
namespace {

grpc::Status Error(grpc::StatusCode code, const std::string& msg) { return grpc::Status(code, msg); }

}  // namespace

grpc::Status SteeringTable::add_nic(Dispatcher* nic) {
  std::lock_guard<std::mutex> lock(mu_);
  if (nics_.count(nic->nic())) {
    return Error(grpc::StatusCode::ALREADY_EXISTS, "NIC " + nic->nic() + " is already registered");
  }
  grpc::Status s = nic->apply({});
  if (!s.ok()) return s;
  nics_[nic->nic()].dispatcher = nic;
  return grpc::Status::OK;
}

std::vector<SteerRule> SteeringTable::ordered_rules(const std::string& nic, const RuleMap& rules,
                                                    const std::map<pb::TagType, TagMap>& tags,
                                                    const TagClasses& classes) const {
  std::vector<SteerRule> out;
  for (const auto& [id, r] : rules) {
    if (r.nic == nic) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SteerRule& a, const SteerRule& b) { return a.priority < b.priority; });
  for (const auto& [type, map] : tags) {
    for (const auto& [tag, queue] : map) {
      SteerRule r;
      // Validated by set_tags before it reaches the table.
      TagRule(type, tag, queue, "tag", &r);
      r.nic = nic;
      if (auto c = classes.find(tag); type == pb::TAG_MAC && c != classes.end()) r.classes = c->second;
      out.push_back(std::move(r));
    }
  }
  return out;
}

grpc::Status SteeringTable::commit(const std::vector<std::string>& nics, RuleMap rules,
                                   const std::map<std::string, std::map<pb::TagType, TagMap>>& new_tags,
                                   const std::map<std::string, TagClasses>& new_classes) {
  auto tags_of = [&](const std::string& nic) -> const std::map<pb::TagType, TagMap>& {
    auto it = new_tags.find(nic);
    return it != new_tags.end() ? it->second : nics_.at(nic).tags;
  };
  auto classes_of = [&](const std::string& nic) -> const TagClasses& {
    auto it = new_classes.find(nic);
    return it != new_classes.end() ? it->second : nics_.at(nic).classes;
  };
  auto same = [](const std::vector<SteerRule>& a, const std::vector<SteerRule>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const SteerRule& x, const SteerRule& y) { return SameRule(x, y) && x.classes == y.classes; });
  };
  std::vector<std::string> changed;
  std::vector<std::vector<SteerRule>> lists;
  for (const std::string& nic : nics) {
    std::vector<SteerRule> list = ordered_rules(nic, rules, tags_of(nic), classes_of(nic));
    if (same(list, nics_.at(nic).applied)) continue;
    grpc::Status s = nics_.at(nic).dispatcher->check(list);
    if (!s.ok()) return s;
    changed.push_back(nic);
    lists.push_back(std::move(list));
  }
  for (size_t i = 0; i < changed.size(); ++i) {
    grpc::Status s = nics_.at(changed[i]).dispatcher->apply(lists[i]);
    if (s.ok()) continue;
    for (size_t j = 0; j < i; ++j) {
      // Re-applying a list that was in force a moment ago; nothing better to do if even that fails.
      nics_.at(changed[j]).dispatcher->apply(nics_.at(changed[j]).applied);
    }
    return s;
  }
  for (size_t i = 0; i < changed.size(); ++i) nics_.at(changed[i]).applied = std::move(lists[i]);
  rules_ = std::move(rules);
  for (const auto& [nic, tags] : new_tags) nics_.at(nic).tags = tags;
  for (const auto& [nic, classes] : new_classes) nics_.at(nic).classes = classes;
  return grpc::Status::OK;
}

grpc::Status SteeringTable::Install(const pb::NicRuleBatch& batch, pb::NicRuleReply* reply) {
  std::lock_guard<std::mutex> lock(mu_);
  RuleMap rules = rules_;
  std::map<uint64_t, int> batch_index;
  std::set<std::string> affected;
  for (int i = 0; i < batch.rules_size(); ++i) {
    const std::string where = "rules[" + std::to_string(i) + "]";
    SteerRule r;
    grpc::Status s = ParseNicRule(batch.rules(i), where, &r);
    if (!s.ok()) return s;
    auto nic = nics_.find(r.nic);
    if (nic == nics_.end()) {
      return Error(grpc::StatusCode::INVALID_ARGUMENT,
                   where + ".nic: \"" + r.nic + "\" is not a NIC with a rule table on this server");
    }
    if (auto dup = batch_index.find(r.id); dup != batch_index.end()) {
      return Error(grpc::StatusCode::ALREADY_EXISTS, where + ".id: " + std::to_string(r.id) + " repeats rules[" +
                                                         std::to_string(dup->second) + "].id");
    }
    if (rules.count(r.id)) {
      return Error(grpc::StatusCode::ALREADY_EXISTS, where + ".id: " + std::to_string(r.id) + " is already installed");
    }
    const Dispatcher* d = nic->second.dispatcher;
    if (r.action.kind == SteerActionKind::kQueue && r.action.value >= d->steerable_queues()) {
      return Error(grpc::StatusCode::INVALID_ARGUMENT,
                   where + ".action.queue: " + std::to_string(r.action.value) + " but NIC " + r.nic + " has " +
                       std::to_string(d->steerable_queues()) + " rx queues");
    }
    batch_index[r.id] = i;
    affected.insert(r.nic);
    rules.emplace(r.id, std::move(r));
  }
  for (const std::string& nic : affected) {
    const uint32_t n = std::count_if(rules.begin(), rules.end(), [&](const auto& kv) { return kv.second.nic == nic; });
    const uint32_t max = nics_.at(nic).dispatcher->max_rules();
    if (n > max) {
      return Error(grpc::StatusCode::RESOURCE_EXHAUSTED,
                   "NIC " + nic + ": " + std::to_string(n) + " rules requested, its table holds " + std::to_string(max));
    }
  }
  grpc::Status s = commit({affected.begin(), affected.end()}, std::move(rules), {});
  if (s.ok()) reply->set_applied(batch.rules_size());
  return s;
}

grpc::Status SteeringTable::Remove(const pb::NicRuleIds& ids, pb::NicRuleReply* reply) {
  std::lock_guard<std::mutex> lock(mu_);
  RuleMap rules = rules_;
  std::set<std::string> affected;
  for (int i = 0; i < ids.ids_size(); ++i) {
    auto it = rules.find(ids.ids(i));
    if (it == rules.end()) {
      const bool repeated = rules_.count(ids.ids(i)) > 0;
      return Error(repeated ? grpc::StatusCode::INVALID_ARGUMENT : grpc::StatusCode::NOT_FOUND,
                   "ids[" + std::to_string(i) + "]: " + std::to_string(ids.ids(i)) +
                       (repeated ? " is listed twice" : " is not an installed NIC rule"));
    }
    affected.insert(it->second.nic);
    rules.erase(it);
  }
  grpc::Status s = commit({affected.begin(), affected.end()}, std::move(rules), {});
  if (s.ok()) reply->set_applied(ids.ids_size());
  return s;
}

grpc::Status SteeringTable::List(const pb::ListNicRulesRequest& req, pb::NicRuleList* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!req.nic().empty() && !nics_.count(req.nic())) {
    return Error(grpc::StatusCode::NOT_FOUND, "nic: \"" + req.nic() + "\" is not a NIC with a rule table on this server");
  }
  std::vector<const SteerRule*> sorted;
  for (const auto& [id, r] : rules_) {
    if (req.nic().empty() || r.nic == req.nic()) sorted.push_back(&r);
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const SteerRule* a, const SteerRule* b) {
    return a->nic != b->nic ? a->nic < b->nic : a->priority < b->priority;
  });
  for (const SteerRule* r : sorted) *out->add_rules() = ToProto(*r);
  return grpc::Status::OK;
}

grpc::Status SteeringTable::set_tags(const std::string& nic, const std::map<pb::TagType, TagMap>& tags,
                                     const TagClasses& classes) {
  std::lock_guard<std::mutex> lock(mu_);
  return set_tags_locked(nic, tags, classes);
}

grpc::Status SteeringTable::set_tags(const std::string& nic, pb::TagType type, const TagMap& tags,
                                     const TagClasses& classes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nics_.find(nic);
  std::map<pb::TagType, TagMap> all = it != nics_.end() ? it->second.tags : std::map<pb::TagType, TagMap>{};
  all[type] = tags;
  return set_tags_locked(nic, all, type == pb::TAG_MAC || it == nics_.end() ? classes : it->second.classes);
}

grpc::Status SteeringTable::set_tags_locked(const std::string& nic, const std::map<pb::TagType, TagMap>& tags,
                                            const TagClasses& classes) {
  auto it = nics_.find(nic);
  if (it == nics_.end()) {
    return Error(grpc::StatusCode::NOT_FOUND, "nic: \"" + nic + "\" has no tag dispatch on this server");
  }
  const Dispatcher* d = it->second.dispatcher;
  std::map<pb::TagType, TagMap> new_tags;
  for (const auto& [type, map] : tags) {
    for (const auto& [tag, queue] : map) {
      SteerRule r;
      grpc::Status s = TagRule(type, tag, queue, "tag", &r);
      if (!s.ok()) return s;
      if (queue >= d->steerable_queues()) {
        return Error(grpc::StatusCode::INVALID_ARGUMENT, "tag " + std::to_string(tag) + ": queue " +
                                                             std::to_string(queue) + " but NIC " + nic + " has " +
                                                             std::to_string(d->steerable_queues()) + " rx queues");
      }
    }
    if (!map.empty()) new_tags[type] = map;
  }
  return commit({nic}, rules_, {{nic, new_tags}}, {{nic, classes}});
}

uint32_t SteeringTable::max_rules(const std::string& nic) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nics_.find(nic);
  return it == nics_.end() ? 0 : it->second.dispatcher->max_rules();
}

SteeringTable::TagMap SteeringTable::tags(const std::string& nic, pb::TagType type) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nics_.find(nic);
  if (it == nics_.end()) return {};
  auto t = it->second.tags.find(type);
  return t == it->second.tags.end() ? TagMap{} : t->second;
}

}  // namespace metron

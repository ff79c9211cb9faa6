// SteeringTable: every NIC rule and group tag of this server, and the one place that turns them into each
// NIC's ordered rule list.
//
// Order per NIC (first match wins): the controller's NIC rules by (priority, id), then group-tag rules by tag,
// then the dispatcher's default queue. Every mutation is all-or-nothing across NICs: new lists are built and
// checked on every affected NIC before any is applied, and an apply that fails rolls the NICs already
// switched back to their previous list. A NIC whose list comes out unchanged is left alone: an apply is not
// free (the fanout dispatcher's program swap waits for an RCU grace period in the kernel).
//
// It implements NicRuleTable (core/backend.h) for the NIC rule RPCs; the Engine calls set_tags() when a
// pipeline's groups are deployed, updated or removed. Like Dispatcher::apply(), every successful mutation
// returns only once frames steered under the previous rules have been taken by their queues' readers: when a
// tag moves from core A to core B, A sees no frame of it after set_tags() returns. That is what makes moves
// lossless: EngineBackend publishes B's plan (with the group) before set_tags() and retires the group on A
// after it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend.h"
#include "dispatch/dispatcher.h"
#include "dispatch/steer_rule.h"

namespace metron {

class SteeringTable final : public NicRuleTable {
 public:
  // Group tag -> rx queue, for one NIC and one tag type.
  using TagMap = std::map<uint32_t, uint16_t>;
  // MAC group tag -> its classes (GroupSpec.class_ids), for dispatchers matching whole MACs (VMDq).
  using TagClasses = std::map<uint32_t, std::vector<uint32_t>>;

  // Registers a NIC (not owned; must outlive the table). Applies its current (empty) list.
  grpc::Status add_nic(Dispatcher* nic);

  // Replaces the group tags steered on `nic`, every type at once. Used by the Engine on deploy/update/remove.
  grpc::Status set_tags(const std::string& nic, const std::map<pb::TagType, TagMap>& tags,
                        const TagClasses& classes) override;
  // Replaces one type's tags (and, for MAC tags, their classes), keeping the other type's.
  grpc::Status set_tags(const std::string& nic, pb::TagType type, const TagMap& tags, const TagClasses& classes);
  grpc::Status set_tags(const std::string& nic, pb::TagType type, const TagMap& tags) {
    return set_tags(nic, type, tags, {});
  }
  TagMap tags(const std::string& nic, pb::TagType type) const;
  uint32_t max_rules(const std::string& nic) const override;

  grpc::Status Install(const pb::NicRuleBatch& batch, pb::NicRuleReply* reply) override;
  grpc::Status Remove(const pb::NicRuleIds& ids, pb::NicRuleReply* reply) override;
  grpc::Status List(const pb::ListNicRulesRequest& req, pb::NicRuleList* out) override;

 private:
  struct NicState {
    Dispatcher* dispatcher = nullptr;
    std::map<pb::TagType, TagMap> tags;
    TagClasses classes;  // of its MAC tags
    std::vector<SteerRule> applied;  // the dispatcher's list: an unchanged list is not applied again
  };
  using RuleMap = std::map<uint64_t, SteerRule>;

  std::vector<SteerRule> ordered_rules(const std::string& nic, const RuleMap& rules,
                                       const std::map<pb::TagType, TagMap>& tags, const TagClasses& classes) const;
  // set_tags with mu_ held.
  grpc::Status set_tags_locked(const std::string& nic, const std::map<pb::TagType, TagMap>& tags,
                               const TagClasses& classes);
  // Applies (rules, tags, classes) to the given NICs all-or-nothing, then commits them as the table's state.
  grpc::Status commit(const std::vector<std::string>& nics, RuleMap rules,
                      const std::map<std::string, std::map<pb::TagType, TagMap>>& new_tags,
                      const std::map<std::string, TagClasses>& new_classes = {});

  mutable std::mutex mu_;
  std::map<std::string, NicState> nics_;
  RuleMap rules_;
};

}  // namespace metron

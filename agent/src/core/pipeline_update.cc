// EngineBackend::UpdatePipeline in named steps (the order and what each guarantees: engine_backend.h). One
// PipelineUpdate per call holds what the steps hand each other:
//   find_sources  the groups each new group's state_from names, checked before anything changes
//   build         the new egress and the new groups' graphs (off the data path)
//   plan_takeovers  which new groups take over a source's tag on the source's core (a split's kept half, a
//                 merge's kept group) and which of those adopt the source's tables instead of copying them
//   snapshot_early  sliced snapshots of the sources that no take-over core's handoff will copy
//   fill_ready    the new groups whose sources are all snapshotted are filled (nothing runs them yet)
//   take_over     one handoff per take-over core: adopt or copy the tables, swap the group in
//   fill_late     the groups that needed a take-over core's sources
//   start_and_steer  new tags' groups start beside the old ones, then the tags are steered
//   commit, retire  the pipeline's new groups become visible; final plans retire the old ones
// A step that fails returns its status with the pipelines and the dispatch as they were: before take_over
// nothing ran; from take_over on, restore() puts every touched core back on the pipelines' plans and gives the
// sources back the tables their successors adopted.
#include <algorithm>
#include <chrono>
#include <functional>

#include "core/engine_backend.h"
#include "core/state_copy.h"

namespace metron {

using grpc::Status;
using grpc::StatusCode;

namespace {

// The steps of one change and their durations, for PipelineStatus.steps.
class StepClock {
 public:
  void lap(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    steps_.emplace_back(name, static_cast<uint32_t>(
                                  std::chrono::duration_cast<std::chrono::microseconds>(now - last_).count()));
    last_ = now;
  }
  void fill(pb::PipelineStatus* out) const {
    for (const auto& [name, us] : steps_) {
      pb::StepTime* t = out->add_steps();
      t->set_name(name);
      t->set_micros(us);
    }
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::vector<std::pair<const char*, uint32_t>> steps_;
};

Status invalid(const std::string& msg) { return Status(StatusCode::INVALID_ARGUMENT, msg); }

}  // namespace

class EngineBackend::PipelineUpdate {
 public:
  PipelineUpdate(EngineBackend& backend, const pb::UpdatePipelineRequest& req) : b_(backend), req_(req) {}

  // Runs the steps; the caller holds the backend's change lock (the clock's first lap is the wait for it).
  Status run(pb::PipelineStatus* out) {
    clock_.lap("wait");
    auto it = b_.pipelines_.find(req_.pipeline_id());
    if (it == b_.pipelines_.end())
      return Status(StatusCode::NOT_FOUND, "pipeline_id: no pipeline '" + req_.pipeline_id() + "'");
    cur_ = &it->second;
    if (req_.groups().empty()) return invalid("groups: a pipeline needs at least one group (use RemovePipeline)");
    Status s = find_sources();
    if (s.ok()) s = build();
    if (!s.ok()) return s;
    clock_.lap("build");
    plan_takeovers();
    snapshot_early();
    clock_.lap("copy");
    if (!(s = fill_ready()).ok()) return s;
    if (!(s = take_over()).ok() || !(s = fill_late()).ok()) return restore(s);
    clock_.lap("take-over");
    if (!(s = start_and_steer()).ok()) return restore(s);
    clock_.lap("adopt+steer");
    commit();
    retire();
    clock_.lap("retire");
    b_.fill_status(*cur_, out);
    clock_.fill(out);
    return Status::OK;
  }

 private:
  Status find_sources() {
    sources_.resize(req_.groups().size());
    for (int i = 0; i < req_.groups().size(); ++i)
      for (const std::string& src : req_.groups(i).state_from()) {
        if (b_.rss(cur_->ingress)) return b_.rss_refusal(*cur_, "groups[" + std::to_string(i) + "].state_from");
        for (const auto& g : cur_->groups)
          if (g->spec().group_id == src) sources_[i].push_back(g);
        if (sources_[i].empty() || sources_[i].back()->spec().group_id != src)
          return invalid("groups[" + std::to_string(i) + "].state_from: no group '" + src + "' in pipeline '" +
                         cur_->id + "'");
      }
    return Status::OK;
  }

  // A new egress (a chain update's new marker) applies to the groups built now; kept groups keep theirs.
  Status build() {
    shape_.id = cur_->id;
    shape_.ingress = cur_->ingress;
    if (req_.egress().empty()) {
      shape_.egress = cur_->egress;
      shape_.egress_spec = cur_->egress_spec;
    } else {
      Status s = b_.set_egress(req_.egress(), &shape_);
      if (!s.ok()) return s;
    }
    Status s = b_.build_groups(shape_, req_.groups(), cur_, &groups_);
    sources_.resize(groups_.size());  // RSS: one runtime per spec and core, none with a source
    return s;
  }

  // A new group that takes over the tag and core of one of its (retired) sources swaps in at a batch boundary of
  // that core: the worker copies the source's tables into it, or lets it adopt them, and goes on with it, so no
  // flow the source mapped is lost and the core never stops polling.
  void plan_takeovers() {
    for (size_t i = 0; i < groups_.size(); ++i)
      for (const auto& src : sources_[i])
        if (src->key() == groups_[i]->key() && src->spec().core == groups_[i]->spec().core &&
            std::find(groups_.begin(), groups_.end(), src) == groups_.end() && taken_over_.insert(src.get()).second)
          takeovers_[src->spec().core].push_back(i);
  }
  bool taking_over(size_t i) const {
    auto t = takeovers_.find(groups_[i]->spec().core);
    return t != takeovers_.end() && std::find(t->second.begin(), t->second.end(), i) != t->second.end();
  }
  // A successor that runs its only source's Click config adopts the source's tables themselves at the handoff
  // (swap_state, O(1): a split's kept half). Other take-overs copy their sources' tables exactly there, holding
  // the core for the whole copy (docs/scaling.md#state-copy).
  bool adopts(size_t i) const {
    return taking_over(i) && sources_[i].size() == 1 && sources_[i][0]->spec().click == groups_[i]->spec().click;
  }
  bool core_adopts(unsigned c) const {
    const auto& idx = takeovers_.at(c);
    return std::all_of(idx.begin(), idx.end(), [this](size_t i) { return adopts(i); });
  }

  // Sources outside take-over cores, those a take-over on another core needs, and those other groups need from
  // a core whose take-overs adopt tables, now. Sliced (docs/scaling.md#state-copy): these sources keep running,
  // and a flow one of them maps during the copy is a window flow like those it maps until the re-tag, which the
  // sync step brings over.
  void snapshot_early() {
    std::map<unsigned, std::vector<const GroupRuntime*>> early;
    for (size_t i = 0; i < groups_.size(); ++i)
      for (const auto& src : sources_[i]) {
        const unsigned c = src->spec().core;
        const bool now = !takeovers_.count(c) || (taking_over(i) && c != groups_[i]->spec().core) ||
                         (!taking_over(i) && core_adopts(c));
        if (now && !snaps_.count(src.get())) snaps_[src.get()], early[c].push_back(src.get());
      }
    for (const auto& [core, list] : early)
      for (const GroupRuntime* g : list) snaps_[g] = sliced_snapshot_of(*b_.engine_, *g);
  }

  Status fill(size_t i) {
    std::vector<const Snapshot*> from;
    std::vector<std::string> names;
    for (const auto& g : sources_[i]) {
      from.push_back(&snaps_.at(g.get()));
      names.push_back(g->spec().group_id);
    }
    return copy_state(*groups_[i], from, names, "groups[" + std::to_string(i) + "].state_from");
  }

  // Groups that need no take-over core's state are filled now; a table that does not fit fails here, with
  // nothing changed. The others wait for the take-overs (late_).
  Status fill_ready() {
    for (size_t i = 0; i < groups_.size(); ++i) {
      if (sources_[i].empty() || taking_over(i)) continue;
      bool ready = true;
      for (const auto& src : sources_[i]) ready &= snaps_.count(src.get()) > 0;
      if (!ready) {
        late_.push_back(i);
        continue;
      }
      Status s = fill(i);
      if (!s.ok()) return s;
    }
    return Status::OK;
  }

  // One handoff per take-over core. Until the pipelines are swapped, a core's plan is its old groups without
  // those taken over, plus the groups already switched in.
  Status take_over() {
    for (const auto& [core, idx] : takeovers_) {
      Status st = Status::OK;
      const std::function<bool()> handoff = [&, &idx = idx, core = core] {
        if (!core_adopts(core))
          for (const auto& list : sources_)
            for (const auto& src : list)
              if (src->spec().core == core) snaps_[src.get()] = snapshot_of(*src);
        const size_t before = adopted_.size();
        for (size_t i : idx) {
          if (adopts(i) && swap_state(*sources_[i][0], *groups_[i])) {
            adopted_.emplace_back(sources_[i][0].get(), groups_[i].get());
            continue;
          }
          if (core_adopts(core)) snaps_[sources_[i][0].get()] = snapshot_of(*sources_[i][0]);  // tables of another shape
          st = fill(i);
          if (!st.ok()) {
            for (size_t k = before; k < adopted_.size(); ++k) swap_state(*adopted_[k].first, *adopted_[k].second);
            adopted_.resize(before);
            return false;
          }
        }
        return true;
      };
      GroupList extra = switched_in_;
      for (size_t i : idx) extra.push_back(groups_[i]);
      touched_.insert(core);
      if (!b_.engine_->publish(core, b_.plan_for(core, &extra, &taken_over_), handoff)) return st;
      switched_in_ = extra;
    }
    return Status::OK;
  }

  Status fill_late() {
    for (size_t i : late_) {
      Status s = fill(i);
      if (!s.ok()) return s;
    }
    return Status::OK;
  }

  // Groups whose tag their core does not serve yet start next to the old ones before the tags are steered. A
  // group with a tag the pipeline did not have receives no frame before the controller, after this call,
  // re-tags traffic to it (a split's new half): its core may take it while the tags are being steered (both
  // wait for something - a batch boundary, a kernel grace period). A group taking over a tag must run before
  // the tag is steered to it.
  Status start_and_steer() {
    GroupList extra = switched_in_;
    std::set<unsigned> arriving;
    bool fresh = true;
    for (const auto& g : groups_) {
      if (is_old(g) || std::find(switched_in_.begin(), switched_in_.end(), g) != switched_in_.end()) continue;
      extra.push_back(g);
      arriving.insert(g->spec().core);
      for (const auto& o : cur_->groups) fresh &= o->key() != g->key();
    }
    std::vector<std::pair<unsigned, std::unique_ptr<WorkerPlan>>> plans;
    for (unsigned c : arriving) {
      touched_.insert(c);
      plans.emplace_back(c, b_.plan_for(c, &extra, &taken_over_));
    }
    Status s = Status::OK;
    const auto steer_all = [&] { s = b_.steer({{cur_->id, &groups_}}); };
    if (fresh) {
      b_.engine_->publish_during(std::move(plans), steer_all);
    } else {
      for (auto& [c, plan] : plans) b_.engine_->publish(c, std::move(plan));
      steer_all();
    }
    return s;
  }
  bool is_old(const std::shared_ptr<GroupRuntime>& g) const {
    return std::find(cur_->groups.begin(), cur_->groups.end(), g) != cur_->groups.end();
  }

  // The pipeline's new groups, egress and generation become visible (the cores' plans may still hold the old
  // groups: they go with retire()'s publish, not under mu_).
  void commit() {
    for (const auto& g : cur_->groups) cores_.insert(g->spec().core);
    for (const auto& g : groups_) cores_.insert(g->spec().core);
    std::lock_guard<std::mutex> lock(b_.mu_);
    retired_.swap(cur_->groups);
    cur_->groups = groups_;
    cur_->egress = shape_.egress;
    cur_->egress_spec = shape_.egress_spec;
    ++cur_->generation;
  }

  // Final plans: groups that lost their tag retire (the steering handed over their backlog); groups that followed
  // them (ImportStateRequest.follow_source) have taken what they needed, the frames still in flight to them handled.
  void retire() {
    for (unsigned c : cores_) {
      auto plan = b_.plan_for(c);
      if (!same_groups(*b_.engine_->plan(c), *plan)) b_.engine_->publish(c, std::move(plan));
    }
    b_.end_follows();
    b_.consume_restored();
  }

  // After a failure from take_over on: every touched core back on the pipelines' plans; on each, between two
  // batches, the sources get back the tables their successors adopted.
  Status restore(Status failure) {
    for (unsigned c : touched_)
      b_.engine_->publish(c, b_.plan_for(c), [this, c] {
        for (auto& [src, succ] : adopted_)
          if (src->spec().core == c) swap_state(*src, *succ);
        return true;
      });
    return failure;
  }

  EngineBackend& b_;
  const pb::UpdatePipelineRequest& req_;
  StepClock clock_;
  Pipeline* cur_ = nullptr;
  Pipeline shape_;                  // the pipeline as the new groups see it (its egress)
  GroupList groups_;                // the requested groups (new runtimes, or kept ones)
  std::vector<GroupList> sources_;  // per requested group, its state_from groups
  std::map<unsigned, std::vector<size_t>> takeovers_;  // core -> indexes of the groups taking over there
  std::set<const GroupRuntime*> taken_over_;
  std::map<const GroupRuntime*, Snapshot> snaps_;
  std::vector<size_t> late_;  // filled after the take-overs: they need a take-over core's sources
  std::set<unsigned> touched_;  // cores published a transition plan
  std::vector<std::pair<GroupRuntime*, GroupRuntime*>> adopted_;  // (source, successor) whose tables were swapped
  GroupList switched_in_;  // take-over groups already running
  std::set<unsigned> cores_;
  GroupList retired_;
};

Status EngineBackend::UpdatePipeline(const pb::UpdatePipelineRequest& req, pb::PipelineStatus* out) {
  std::unique_lock<std::mutex> change(change_mu_, std::defer_lock);
  PipelineUpdate update(*this, req);  // its clock times the wait for the lock; it ends under the lock
  change.lock();
  return update.run(out);
}

}  // namespace metron

#include "core/engine_backend.h"

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "core/click_ast.h"
#include "core/state_copy.h"
#include "core/state_store.h"
#include "elements/flow_table.h"
#include "utils/args.h"

namespace metron {

namespace {

using grpc::Status;
using grpc::StatusCode;

Status invalid(const std::string& msg) { return Status(StatusCode::INVALID_ARGUMENT, msg); }

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

TagKind kind_of(pb::TagType t) { return t == pb::TAG_VLAN ? TagKind::kVlan : TagKind::kMac; }
pb::TagType type_of(TagKind k) { return k == TagKind::kVlan ? pb::TAG_VLAN : pb::TAG_MAC; }

}  // namespace

EngineBackend::EngineBackend(Engine* engine, std::string version)
    : engine_(engine),
      version_(std::move(version)),
      boot_id_(std::random_device{}() | static_cast<uint64_t>(std::random_device{}()) << 32),
      started_(std::chrono::steady_clock::now()) {}

void EngineBackend::add_steered_nic(const std::string& nic, pb::DispatchMode mode) {
  std::lock_guard<std::mutex> change(change_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  steered_[nic] = mode;
}

void EngineBackend::add_rss_nic(const std::string& nic) {
  std::lock_guard<std::mutex> change(change_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  rss_nics_.insert(nic);
}

void EngineBackend::set_nic_report(const std::string& nic, const pb::Nic& report) {
  std::lock_guard<std::mutex> change(change_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  nic_reports_[nic] = report;
}

Status EngineBackend::rss_refusal(const Pipeline& p, const std::string& what) const {
  return Status(StatusCode::FAILED_PRECONDITION,
                what + ": pipeline '" + p.id + "' enters at NIC '" + p.ingress +
                    "', which dispatches by flow hash (RSS compatibility mode): each group runs on every worker core "
                    "with its own per-core flow state, so a group's state is not one table to copy");
}

void EngineBackend::end_follows() {
  auto running = [&](const std::shared_ptr<GroupRuntime>& g) {
    auto it = pipelines_.find(g->spec().pipeline_id);
    return it != pipelines_.end() &&
           std::find(it->second.groups.begin(), it->second.groups.end(), g) != it->second.groups.end();
  };
  for (auto f = follows_.begin(); f != follows_.end();) {
    if (running(f->target) && running(f->source)) {
      ++f;
      continue;
    }
    Element* e = f->target_element;
    const Element* from = f->source_element;
    engine_->between_batches(f->target->spec().core, [e, from] { e->unfollow_state(*from); });
    f = follows_.erase(f);
  }
}

// ---- Flow state across restarts -------------------------------------------------------------------------------

namespace {
void log_state(const std::string& msg) { std::fprintf(stderr, "metron-agent: state: %s\n", msg.c_str()); }
std::string group_name(const std::string& pipeline, const std::string& group) {
  return "pipeline '" + pipeline + "' group '" + group + "'";
}
}  // namespace

void EngineBackend::set_state_store(StateStore* store) {
  std::lock_guard<std::mutex> change(change_mu_);
  state_ = store;
  waiting_.clear();
  if (store == nullptr) return;
  for (const auto& key : store->list()) waiting_.insert(key);
  if (!waiting_.empty())
    log_state(std::to_string(waiting_.size()) + " saved group(s) in " + store->dir() + " wait for their pipeline");
}

void EngineBackend::restore_state(GroupRuntime& g) {
  const auto key = std::make_pair(g.spec().pipeline_id, g.spec().group_id);
  if (!waiting_.count(key)) return;
  claimed_.insert(key);  // used or not, the file is obsolete once this change succeeds
  const std::string name = group_name(key.first, key.second);
  std::string why;
  auto saved = state_->load(key.first, key.second, g.spec().click, &why);
  if (!saved) {
    log_state("not restoring " + name + ": " + why);
    return;
  }
  Snapshot tables;  // moved, not copied: a table may hold millions of entries
  for (pb::StateTable& t : *saved->mutable_tables()) tables.push_back(std::move(t));
  uint64_t entries = 0, imported = 0;
  for (const auto& t : tables) entries += static_cast<uint64_t>(t.entries_size());
  const Status s = copy_state(g, {&tables}, {"saved state"}, state_->path_of(key.first, key.second), &imported);
  if (!s.ok()) {
    // All or nothing: the group starts empty rather than with some of its tables.
    for (const auto& e : g.graph().elements())
      if (e->has_state()) e->import_state(pb::StateTable(), /*merge=*/false);
    log_state("not restoring " + name + ": " + s.error_message());
    return;
  }
  log_state("restored " + name + ": " + std::to_string(imported) + " flow(s) of " + std::to_string(entries) +
            " saved" + (imported < entries ? " (the others had timed out)" : ""));
}

void EngineBackend::consume_restored() {
  for (const auto& key : claimed_) {
    state_->remove(key.first, key.second);
    waiting_.erase(key);
  }
  claimed_.clear();
}

size_t EngineBackend::persist_state() {
  if (state_ == nullptr) return 0;
  std::lock_guard<std::mutex> persist(persist_mu_);
  struct Saved {
    pb::StateSnapshot snap;
    std::string click;
  };
  std::vector<Saved> all;
  {
    std::lock_guard<std::mutex> change(change_mu_);
    for (const auto& [id, p] : pipelines_) {
      if (rss(p.ingress)) continue;
      for (const auto& g : p.groups) {
        const auto& els = g->graph().elements();
        if (std::none_of(els.begin(), els.end(), [](const auto& e) { return e->has_state(); }))
          continue;  // no table: no reason to interrupt its core
        Snapshot tables = sliced_snapshot_of(*engine_, *g);  // a fuzzy copy is fine: the next checkpoint has more
        size_t entries = 0;
        for (const pb::StateTable& t : tables) entries += static_cast<size_t>(t.entries_size());
        if (entries == 0) continue;  // nothing to keep (an earlier file of it goes below)
        all.emplace_back();
        all.back().snap.set_pipeline_id(id);
        all.back().snap.set_group_id(g->spec().group_id);
        for (pb::StateTable& t : tables) *all.back().snap.add_tables() = std::move(t);
        all.back().click = g->spec().click;
      }
    }
  }
  std::set<std::pair<std::string, std::string>> now;
  for (const Saved& s : all) {
    try {
      state_->save(s.snap, s.click);
      now.emplace(s.snap.pipeline_id(), s.snap.group_id());
    } catch (const std::exception& e) {
      log_state(std::string("cannot save: ") + e.what());
    }
  }
  std::lock_guard<std::mutex> change(change_mu_);
  // Written without the change lock: a pipeline removed (or a group retired) meanwhile loses its file here.
  for (const auto& key : now) {
    bool running = false;
    auto it = pipelines_.find(key.first);
    if (it != pipelines_.end())
      for (const auto& g : it->second.groups) running |= g->spec().group_id == key.second;
    if (!running) state_->remove(key.first, key.second);
  }
  for (const auto& key : written_)
    if (!now.count(key) && !waiting_.count(key)) state_->remove(key.first, key.second);
  written_ = now;
  return now.size();
}

// ---- System ------------------------------------------------------------------------------------------------

Status EngineBackend::GetResources(const pb::GetResourcesRequest&, pb::ServerResources* out) {
  std::lock_guard<std::mutex> lock(mu_);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  out->set_hostname(host);
  out->set_agent_version(version_);
  out->set_cpu_model(cpu_model());
  out->set_cpu_hz(rte_get_tsc_hz());
  out->set_memory_bytes(static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE));
  std::map<unsigned, std::string> used;
  std::set<uint32_t> tags;
  for (const auto& [id, p] : pipelines_)
    for (const auto& g : p.groups) {
      used.emplace(g->spec().core, id);
      tags.insert(g->spec().tag);
    }
  for (unsigned c : engine_->cores()) {
    pb::Core* core = out->add_cores();
    core->set_id(c);
    core->set_numa_node(engine_->socket_of_core(c));
    core->set_available(true);  // several groups may share a core
    if (used.count(c)) core->set_pipeline_id(used[c]);
  }
  for (Port* p : engine_->ports()) {
    pb::Nic* n = out->add_nics();
    n->set_name(p->name());
    n->set_mac(p->mac());
    n->set_speed_mbps(p->speed_mbps());
    n->set_rx_queues(p->rx_queues());
    n->set_tx_queues(p->tx_queues());
    auto it = steered_.find(p->name());
    auto report = nic_reports_.find(p->name());
    const bool probed = report != nic_reports_.end();
    const pb::DispatchMode mode = it != steered_.end() ? it->second
                                  : rss(p->name()) || (!probed && p->rx_queues() > 1) ? pb::DISPATCH_RSS
                                                                                        : pb::DISPATCH_SINGLE;
    if (probed) {
      *n->mutable_dispatch_modes() = report->second.dispatch_modes();
      n->set_requested_mode(report->second.requested_mode());
      n->set_auto_mode(report->second.auto_mode());
      *n->mutable_capabilities() = report->second.capabilities();
      *n->mutable_refusals() = report->second.refusals();
    } else {
      n->add_dispatch_modes(mode);
    }
    n->set_active_mode(mode);
    n->add_tag_types(pb::TAG_MAC);
    if (mode != pb::DISPATCH_VMDQ) n->add_tag_types(pb::TAG_VLAN);  // VMDq pools are chosen by whole MACs
    n->set_max_nic_rules(nic_rules_ != nullptr ? nic_rules_->max_rules(p->name()) : 0);
    n->set_link_up(p->link_up());
  }
  for (uint32_t t : tags) out->add_tags_in_use(t);
  std::set<int> sockets;
  for (unsigned c : engine_->cores()) sockets.insert(engine_->socket_of_core(c));
  uint64_t flow_memory = 0;
  for (int s : sockets) flow_memory += FlowTable::memory_available(s);
  out->set_flow_memory_free_bytes(flow_memory);
  out->set_flow_entry_bytes(static_cast<uint32_t>(FlowTable::max_bytes_per_flow(/*ipv6=*/true)));
  out->set_flow_entry_bytes_ipv4(static_cast<uint32_t>(FlowTable::max_bytes_per_flow(/*ipv6=*/false)));
  return Status::OK;
}

Status EngineBackend::Health(const pb::HealthRequest&, pb::HealthReply* out) {
  out->set_serving(engine_->running());
  out->set_agent_version(version_);
  out->set_uptime_ms(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_).count()));
  out->set_boot_id(boot_id_);
  return Status::OK;
}

// ---- Pipelines -----------------------------------------------------------------------------------------------

Status EngineBackend::build_groups(const Pipeline& p, const google::protobuf::RepeatedPtrField<pb::GroupSpec>& specs,
                                   const Pipeline* current, GroupList* out) {
  claimed_.clear();  // what an earlier, failed change claimed is offered again
  std::set<std::string> ids;
  std::map<uint32_t, std::string> keys;
  for (int i = 0; i < specs.size(); ++i) {
    const pb::GroupSpec& s = specs[i];
    const std::string f = "groups[" + std::to_string(i) + "]";
    if (s.group_id().empty()) return invalid(f + ".group_id: empty");
    if (!ids.insert(s.group_id()).second)
      return Status(StatusCode::ALREADY_EXISTS, f + ".group_id: duplicate '" + s.group_id() + "'");
    const pb::TagType tt = s.tag().type() == pb::TAG_TYPE_UNSPECIFIED ? pb::TAG_MAC : s.tag().type();
    if (tt != pb::TAG_MAC && tt != pb::TAG_VLAN)
      return invalid(f + ".tag.type: unknown value " + std::to_string(s.tag().type()));
    const uint32_t max = tt == pb::TAG_VLAN ? 4094 : 65535;
    if (s.tag().value() < 1 || s.tag().value() > max)
      return invalid(f + ".tag.value: " + std::to_string(s.tag().value()) + " outside 1.." + std::to_string(max));
    const uint32_t key = tag_key(kind_of(tt), s.tag().value());
    if (keys.count(key))
      return Status(StatusCode::ALREADY_EXISTS, f + ".tag.value: " + std::to_string(s.tag().value()) +
                                                    " already used by group '" + keys[key] + "'");
    keys[key] = s.group_id();
    for (const auto& [pid, other] : pipelines_) {
      if (pid == p.id || other.ingress != p.ingress) continue;
      for (const auto& g : other.groups)
        if (g->key() == key)
          return Status(StatusCode::ALREADY_EXISTS, f + ".tag.value: " + std::to_string(s.tag().value()) +
                                                        " already dispatched to pipeline '" + pid + "'");
    }
    for (uint32_t c : s.class_ids())
      if (c > 65535) return invalid(f + ".class_ids: " + std::to_string(c) + " outside 0..65535");
    // Tag affinity: the group runs on its core. RSS: on every worker core, the spec's core ignored.
    const std::vector<unsigned> cores = rss(p.ingress) ? engine_->cores() : std::vector<unsigned>{s.core()};
    for (unsigned core : cores) {
      Status st = build_group(p, s, tt, core, f, current, out);
      if (!st.ok()) return st;
    }
  }
  return Status::OK;
}

Status EngineBackend::build_group(const Pipeline& p, const pb::GroupSpec& s, pb::TagType tt, unsigned core,
                                  const std::string& f, const Pipeline* current, GroupList* out) {
  Port* ingress = engine_->port(p.ingress);
  const int slot = engine_->slot_of_core(core);
  if (slot < 0) {
    std::string list;
    for (unsigned c : engine_->cores()) list += (list.empty() ? "" : ",") + std::to_string(c);
    return invalid(f + ".core: " + std::to_string(core) + " is not a worker core (workers: " + list + ")");
  }
  if (slot >= ingress->rx_queues())
    return Status(StatusCode::RESOURCE_EXHAUSTED,
                  f + ".core: " + std::to_string(core) + " needs rx queue " + std::to_string(slot) + " but NIC '" +
                      p.ingress + "' has " + std::to_string(ingress->rx_queues()));
  for (size_t k = 0; k < p.egress.size(); ++k)
    if (slot >= p.egress[k].port->tx_queues())
      return Status(StatusCode::RESOURCE_EXHAUSTED, f + ".core: " + std::to_string(core) + " needs tx queue " +
                                                        std::to_string(slot) + " on egress NIC '" +
                                                        p.egress[k].port->name() + "'");
  GroupRuntime::Spec spec;
  spec.pipeline_id = p.id;
  spec.group_id = s.group_id();
  spec.click = s.click_config();
  spec.tag_kind = kind_of(tt);
  spec.tag = s.tag().value();
  spec.core = core;
  spec.slot = static_cast<unsigned>(slot);
  spec.slots = engine_->slot_count();
  spec.socket_id = engine_->socket_of_core(core);
  spec.ingress = ingress;
  spec.egress = p.egress;
  spec.class_ids.assign(s.class_ids().begin(), s.class_ids().end());
  spec.state_filter.mask = static_cast<uint16_t>(s.state_filter().mask());
  spec.state_filter.value = static_cast<uint16_t>(s.state_filter().value());
  if (s.port_share().count() > 0) {  // the controller's share, divided between the cores that run the group
    const unsigned per_core = rss(p.ingress) ? spec.slots : 1;
    spec.port_share = s.port_share().index() * per_core + (per_core > 1 ? spec.slot : 0);
    spec.port_shares = s.port_share().count() * per_core;
    spec.port_share_assigned = true;
    spec.assigned_index = s.port_share().index();
    spec.assigned_count = s.port_share().count();
  }

  // Unchanged groups keep running with their state (and their egress: an update's new egress is for new groups).
  std::shared_ptr<GroupRuntime> reuse;
  if (current != nullptr && s.state_from().empty())
    for (const auto& g : current->groups) {
      const auto& o = g->spec();
      if (o.group_id == spec.group_id && o.click == spec.click && o.tag_kind == spec.tag_kind &&
          o.tag == spec.tag && o.core == spec.core && o.class_ids == spec.class_ids &&
          o.port_share == spec.port_share && o.port_shares == spec.port_shares &&
          o.port_share_assigned == spec.port_share_assigned)
        reuse = g;
    }
  if (reuse) {
    out->push_back(reuse);
    return Status::OK;
  }
  try {
    out->push_back(std::make_shared<GroupRuntime>(std::move(spec)));
  } catch (const ClickPreconditionError& e) {  // docs/blackbox.md: the black-box NF's own message, as it is
    return Status(StatusCode::FAILED_PRECONDITION, e.message());
  } catch (const ClickResourceError& e) {  // e.g. a declared flow-table capacity the memory cannot hold
    return Status(StatusCode::RESOURCE_EXHAUSTED, f + ".click_config: " + e.what());
  } catch (const ClickError& e) {
    return invalid(f + ".click_config: " + e.what());
  } catch (const std::exception& e) {
    return Status(StatusCode::RESOURCE_EXHAUSTED, f + ": " + e.what());
  }
  if (state_ != nullptr && s.state_from().empty() && !rss(p.ingress)) restore_state(*out->back());
  return Status::OK;
}

Status EngineBackend::steer(const std::map<std::string, const GroupList*>& replace) {
  if (steered_.empty()) return Status::OK;
  // nic -> type -> tag -> queue, over every pipeline as it would be.
  std::map<std::string, std::map<pb::TagType, std::map<uint32_t, uint16_t>>> want;
  std::map<std::string, std::map<uint32_t, std::vector<uint32_t>>> classes;  // nic -> MAC tag -> its classes
  for (const auto& [nic, mode] : steered_) want[nic];
  auto add = [&](const std::string& ingress, const GroupList& groups) {
    if (!steered_.count(ingress)) return;
    for (const auto& g : groups) {
      want[ingress][type_of(g->spec().tag_kind)][g->spec().tag] = static_cast<uint16_t>(g->spec().slot);
      if (type_of(g->spec().tag_kind) == pb::TAG_MAC) classes[ingress][g->spec().tag] = g->spec().class_ids;
    }
  };
  for (const auto& [id, p] : pipelines_) {
    auto it = replace.find(id);
    if (it == replace.end()) add(p.ingress, p.groups);
  }
  for (const auto& [id, groups] : replace) {
    if (groups == nullptr) continue;
    auto pit = pipelines_.find(id);
    const std::string ingress = pit != pipelines_.end() ? pit->second.ingress : (*groups)[0]->spec().ingress->name();
    add(ingress, *groups);
  }
  if (nic_rules_ == nullptr)
    return Status(StatusCode::FAILED_PRECONDITION, "steered NICs but no NIC rule table to steer them");
  for (const auto& [nic, by_type] : want) {
    Status s = nic_rules_->set_tags(nic, by_type, classes[nic]);
    if (!s.ok()) return s;
  }
  return Status::OK;
}

std::unique_ptr<WorkerPlan> EngineBackend::plan_for(unsigned core, const GroupList* extra,
                                                    const std::set<const GroupRuntime*>* without) const {
  auto plan = std::make_unique<WorkerPlan>();
  GroupList mine;
  for (const auto& [id, p] : pipelines_)
    for (const auto& g : p.groups)
      if (g->spec().core == core && (without == nullptr || !without->count(g.get()))) mine.push_back(g);
  if (extra != nullptr)
    for (const auto& g : *extra)
      if (g->spec().core == core && std::find(mine.begin(), mine.end(), g) == mine.end()) mine.push_back(g);
  for (const auto& g : mine) {
    plan->groups.push_back(g);
    IngressBinding* b = nullptr;
    for (auto& x : plan->ingress)
      if (x.port == g->spec().ingress) b = &x;
    if (b == nullptr) {
      plan->ingress.push_back(IngressBinding{g->spec().ingress, static_cast<uint16_t>(g->spec().slot), {}, {}});
      b = &plan->ingress.back();
    }
    b->groups.push_back(g.get());
  }
  return plan;
}

void EngineBackend::publish_cores(const std::set<unsigned>& cores) {
  for (unsigned c : cores) engine_->publish(c, plan_for(c));
}

Status EngineBackend::publish_then_steer(const GroupList& groups,
                                         const std::map<std::string, const GroupList*>& replace) {
  std::set<unsigned> cores;
  for (const auto& g : groups) cores.insert(g->spec().core);
  for (unsigned c : cores) engine_->publish(c, plan_for(c, &groups));
  Status s = steer(replace);
  if (!s.ok()) publish_cores(cores);
  return s;
}

bool EngineBackend::same_groups(const WorkerPlan& a, const WorkerPlan& b) {
  if (a.groups.size() != b.groups.size() || !a.standalone.empty() || !b.standalone.empty()) return false;
  for (size_t i = 0; i < a.groups.size(); ++i)
    if (a.groups[i] != b.groups[i]) return false;
  return true;
}

void EngineBackend::fill_status(const Pipeline& p, pb::PipelineStatus* out) const {
  out->set_pipeline_id(p.id);
  out->set_state(pb::PIPELINE_RUNNING);
  out->set_generation(p.generation);
  std::set<std::string> reported;  // an RSS pipeline's group is reported once, with its first core
  for (const auto& g : p.groups) {
    if (!reported.insert(g->spec().group_id).second) continue;
    pb::GroupStatus* gs = out->add_groups();
    gs->set_group_id(g->spec().group_id);
    gs->mutable_tag()->set_type(type_of(g->spec().tag_kind));
    gs->mutable_tag()->set_value(g->spec().tag);
    gs->set_core(g->spec().core);
    for (uint32_t c : g->spec().class_ids) gs->add_class_ids(c);
    if (g->spec().port_share_assigned) {
      gs->mutable_port_share()->set_index(g->spec().assigned_index);
      gs->mutable_port_share()->set_count(g->spec().assigned_count);
    }
  }
}

Status EngineBackend::set_egress(const google::protobuf::RepeatedPtrField<pb::Egress>& egress, Pipeline* p) const {
  for (int k = 0; k < egress.size(); ++k) {
    const pb::Egress& e = egress.Get(k);
    const std::string f = "egress[" + std::to_string(k) + "]";
    EgressTarget t;
    t.port = engine_->port(e.nic());
    if (t.port == nullptr) return invalid(f + ".nic: no NIC named '" + e.nic() + "'");
    if (!e.dst_mac().empty()) {
      try {
        parse_mac(e.dst_mac(), f + ".dst_mac", t.dst_mac);
      } catch (const ConfigError& err) {
        return invalid(err.what());
      }
      t.set_dst_mac = true;
    }
    if (e.vlan() > 4094) return invalid(f + ".vlan: " + std::to_string(e.vlan()) + " outside 0..4094");
    t.vlan = static_cast<uint16_t>(e.vlan());
    p->egress.push_back(t);
    p->egress_spec.push_back(e);
  }
  return Status::OK;
}

Status EngineBackend::DeployPipeline(const pb::DeployPipelineRequest& req, pb::PipelineStatus* out) {
  std::lock_guard<std::mutex> change(change_mu_);
  if (req.pipeline_id().empty()) return invalid("pipeline_id: empty");
  if (pipelines_.count(req.pipeline_id()))
    return Status(StatusCode::ALREADY_EXISTS, "pipeline_id: '" + req.pipeline_id() + "' already deployed");
  if (engine_->port(req.ingress_nic()) == nullptr)
    return invalid("ingress_nic: no NIC named '" + req.ingress_nic() + "'");
  if (req.groups().empty()) return invalid("groups: a pipeline needs at least one group");
  Pipeline p;
  p.id = req.pipeline_id();
  p.ingress = req.ingress_nic();
  Status s = set_egress(req.egress(), &p);
  if (!s.ok()) return s;
  GroupList groups;
  s = build_groups(p, req.groups(), nullptr, &groups);
  if (!s.ok()) return s;
  // The new groups run (alongside their cores' other groups) before their tags are steered to them.
  s = publish_then_steer(groups, {{p.id, &groups}});
  if (!s.ok()) return s;
  p.groups = std::move(groups);
  p.generation = 1;
  fill_status(p, out);
  std::lock_guard<std::mutex> lock(mu_);
  const std::string id = p.id;
  pipelines_[id] = std::move(p);
  consume_restored();
  return Status::OK;
}

Status EngineBackend::RemovePipeline(const pb::RemovePipelineRequest& req, pb::RemovePipelineReply*) {
  std::lock_guard<std::mutex> change(change_mu_);
  auto it = pipelines_.find(req.pipeline_id());
  if (it == pipelines_.end()) return Status(StatusCode::NOT_FOUND, "pipeline_id: no pipeline '" + req.pipeline_id() + "'");
  GroupList none;
  Status s = steer({{req.pipeline_id(), &none}});
  if (!s.ok()) return s;
  std::set<unsigned> cores;
  for (const auto& g : it->second.groups) cores.insert(g->spec().core);
  Pipeline gone;  // its groups are freed after the publish, not under mu_
  {
    std::lock_guard<std::mutex> lock(mu_);
    gone = std::move(it->second);
    pipelines_.erase(it);
  }
  publish_cores(cores);
  end_follows();
  if (state_ != nullptr) {  // a removed chain's flows must not come back if a chain of that id is deployed later
    state_->remove_pipeline(req.pipeline_id());
    for (auto w = waiting_.begin(); w != waiting_.end();) w = w->first == req.pipeline_id() ? waiting_.erase(w) : ++w;
  }
  return Status::OK;
}

Status EngineBackend::ListPipelines(const pb::ListPipelinesRequest&, pb::ListPipelinesReply* out) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, p] : pipelines_) fill_status(p, out->add_pipelines());
  return Status::OK;
}

// ---- NIC rules -------------------------------------------------------------------------------------------------

// The controller names worker cores (agent.proto NicAction.queue); the dispatchers index rx queues, and worker
// core c polls queue slot_of_core(c). Translate at this one boundary, both ways, so ids never leak across it.
Status EngineBackend::InstallNicRules(const pb::NicRuleBatch& req, pb::NicRuleReply* out) {
  if (nic_rules_ == nullptr) return Status(StatusCode::FAILED_PRECONDITION, "no NIC rule table on this agent");
  pb::NicRuleBatch by_queue = req;
  for (int i = 0; i < by_queue.rules_size(); ++i) {
    pb::NicAction* a = by_queue.mutable_rules(i)->mutable_action();
    if (a->action_case() != pb::NicAction::kQueue) continue;
    const int slot = engine_->slot_of_core(a->queue());
    if (slot < 0)
      return Status(StatusCode::INVALID_ARGUMENT, "rules[" + std::to_string(i) + "].action.queue: core " +
                                                      std::to_string(a->queue()) + " is not a worker core of this agent");
    a->set_queue(static_cast<uint32_t>(slot));
  }
  return nic_rules_->Install(by_queue, out);
}
Status EngineBackend::RemoveNicRules(const pb::NicRuleIds& req, pb::NicRuleReply* out) {
  if (nic_rules_ == nullptr) return Status(StatusCode::FAILED_PRECONDITION, "no NIC rule table on this agent");
  return nic_rules_->Remove(req, out);
}
Status EngineBackend::ListNicRules(const pb::ListNicRulesRequest& req, pb::NicRuleList* out) {
  if (nic_rules_ == nullptr) return Status(StatusCode::FAILED_PRECONDITION, "no NIC rule table on this agent");
  Status s = nic_rules_->List(req, out);
  if (!s.ok()) return s;
  const std::vector<unsigned>& cores = engine_->cores();
  for (pb::NicRule& r : *out->mutable_rules()) {
    pb::NicAction* a = r.mutable_action();
    if (a->action_case() == pb::NicAction::kQueue && a->queue() < cores.size()) a->set_queue(cores[a->queue()]);
  }
  return Status::OK;
}

// ---- Statistics ------------------------------------------------------------------------------------------------

namespace {

// A core's entry in a Stats reply with its cycle counters: all that CoreCycles reports, the start of GetStats'.
pb::CoreStats* AddCoreCycles(pb::Stats* out, unsigned core, const CoreSample& s) {
  pb::CoreStats* cs = out->add_cores();
  cs->set_core(core);
  cs->set_busy_cycles(s.busy_cycles);
  cs->set_total_cycles(s.total_cycles);
  cs->set_unscheduled_cycles(s.unscheduled_cycles);
  return cs;
}

}  // namespace

Status EngineBackend::CoreCycles(pb::Stats* out) {
  out->set_timestamp_ns(now_ns());
  for (unsigned c : engine_->cores()) AddCoreCycles(out, c, engine_->sample(c));
  return Status::OK;
}

Status EngineBackend::GetStats(const pb::StatsRequest& req, pb::Stats* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!req.pipeline_id().empty() && !pipelines_.count(req.pipeline_id()))
    return Status(StatusCode::NOT_FOUND, "pipeline_id: no pipeline '" + req.pipeline_id() + "'");
  out->set_timestamp_ns(now_ns());
  {
    std::lock_guard<std::mutex> slock(stats_mu_);
    for (unsigned c : engine_->cores()) {
      const CoreSample s = engine_->sample(c);
      pb::CoreStats* cs = AddCoreCycles(out, c, s);
      cs->set_rx_packets(s.rx);
      cs->set_tx_packets(s.tx);
      uint64_t drops = s.drops;
      for (const auto& [id, p] : pipelines_)
        for (const auto& g : p.groups)
          if (g->spec().core == c) drops += g->drops();
      cs->set_drops(drops);
      // Load over the interval since the previous GetStats (cumulative on the first call).
      const CoreSample prev = last_sample_.count(c) ? last_sample_[c] : CoreSample{};
      const uint64_t dt = s.total_cycles - prev.total_cycles;
      cs->set_load(dt ? static_cast<double>(s.busy_cycles - prev.busy_cycles) / static_cast<double>(dt) : 0.0);
      last_sample_[c] = s;
    }
  }
  for (const auto& [id, p] : pipelines_) {
    if (!req.pipeline_id().empty() && id != req.pipeline_id()) continue;
    for (const auto& g : p.groups) {
      pb::GroupStats* gs = out->add_groups();
      gs->set_pipeline_id(id);
      gs->set_group_id(g->spec().group_id);
      gs->set_core(g->spec().core);
      gs->set_packets(g->packets());
      gs->set_bytes(g->bytes());
      gs->set_drops(g->drops());
      gs->set_busy_cycles(g->busy_cycles());
      for (size_t i = 0; i < g->spec().class_ids.size(); ++i) {
        pb::ClassStats* c = gs->add_classes();
        c->set_class_id(g->spec().class_ids[i]);
        c->set_packets(g->class_packets(i));
        c->set_bytes(g->class_bytes(i));
        if (const uint64_t l4 = g->class_l4_packets(i); l4 > 0) {
          c->set_l4_packets(l4);
          for (int k = 0; k < kSportBits; ++k) c->add_sport_ones(g->class_sport_ones(i, k));
        }
      }
      for (const auto& e : g->graph().elements()) {
        FlowStateStats st;
        if (!e->flow_state_stats(&st)) continue;
        pb::FlowStateStats* fs = gs->add_flow_state();
        fs->set_element(e->name());
        fs->set_kind(e->class_name());
        fs->set_flows(st.flows);
        fs->set_capacity(st.capacity);
        fs->set_declared_capacity(st.declared_capacity);
        fs->set_memory_bytes(st.memory_bytes);
        fs->set_evicted(st.evicted);
        fs->set_refused(st.refused);
        fs->set_mapping_failures(st.mapping_failures);
        fs->set_growths(st.growths);
        fs->set_growth_failures(st.growth_failures);
        fs->set_shared_heap_hashes(st.shared_heap_hashes);
        fs->set_inherited(st.inherited);
        fs->set_inherit_failures(st.inherit_failures);
      }
      for (const auto& e : g->graph().elements()) {
        BlackBoxStatsView st;
        if (!e->black_box_stats(&st)) continue;
        pb::BlackBoxStats* bs = gs->add_black_boxes();
        bs->set_element(e->name());
        bs->set_nf(st.nf);
        bs->set_mode(st.mode);
        bs->set_state(st.state);
        bs->set_on_failure(st.on_failure);
        bs->set_pid(st.pid);
        bs->set_restarts(st.restarts);
        bs->set_sent(st.sent);
        bs->set_returned(st.returned);
        bs->set_nf_dropped(st.nf_dropped);
        bs->set_ring_full(st.ring_full);
        bs->set_bypassed(st.bypassed);
        bs->set_failed_closed(st.failed_closed);
        bs->set_last_exit(st.last_exit);
        bs->set_nf_lost(st.nf_lost);
        bs->set_link(st.link);
        bs->set_nf_sleeps(st.nf_sleeps);
        bs->set_nf_wakeups(st.nf_wakeups);
      }
    }
  }
  for (Port* port : engine_->ports()) {
    const PortCounters c = port->counters();
    pb::PortStats* ps = out->add_ports();
    ps->set_nic(port->name());
    ps->set_rx_packets(c.rx_packets);
    ps->set_rx_bytes(c.rx_bytes);
    ps->set_tx_packets(c.tx_packets);
    ps->set_tx_bytes(c.tx_bytes);
    ps->set_rx_dropped(c.rx_dropped);
    ps->set_tx_dropped(c.tx_dropped);
  }
  return Status::OK;
}

// ---- Flow state ------------------------------------------------------------------------------------------------

Status EngineBackend::ExportState(const pb::ExportStateRequest& req, pb::StateSnapshot* out) {
  std::lock_guard<std::mutex> change(change_mu_);
  auto it = pipelines_.find(req.pipeline_id());
  if (it == pipelines_.end()) return Status(StatusCode::NOT_FOUND, "pipeline_id: no pipeline '" + req.pipeline_id() + "'");
  if (rss(it->second.ingress)) return rss_refusal(it->second, "ExportState");
  for (const auto& g : it->second.groups) {
    if (g->spec().group_id != req.group_id()) continue;
    out->set_pipeline_id(req.pipeline_id());
    out->set_group_id(req.group_id());
    Snapshot snap = sliced_snapshot_of(*engine_, *g);
    for (pb::StateTable& t : snap) *out->add_tables() = std::move(t);
    return Status::OK;
  }
  return Status(StatusCode::NOT_FOUND, "group_id: no group '" + req.group_id() + "' in pipeline '" + req.pipeline_id() + "'");
}

Status EngineBackend::ImportState(const pb::ImportStateRequest& req, pb::ImportStateReply* out) {
  std::lock_guard<std::mutex> change(change_mu_);
  const pb::StateSnapshot& snap = req.snapshot();
  auto it = pipelines_.find(snap.pipeline_id());
  if (it == pipelines_.end())
    return Status(StatusCode::NOT_FOUND, "snapshot.pipeline_id: no pipeline '" + snap.pipeline_id() + "'");
  if (rss(it->second.ingress)) return rss_refusal(it->second, "ImportState");
  const std::string target = req.target_group_id().empty() ? snap.group_id() : req.target_group_id();
  // follow_source: the snapshot's group, running on the target's core (checked below).
  std::shared_ptr<GroupRuntime> source;
  if (req.follow_source()) {
    for (const auto& g : it->second.groups)
      if (g->spec().group_id == snap.group_id()) source = g;
    if (source == nullptr || snap.group_id() == target)
      return invalid("follow_source: snapshot.group_id '" + snap.group_id() + "' is no other group of pipeline '" +
                     snap.pipeline_id() + "'");
  }
  for (const auto& g : it->second.groups) {
    if (g->spec().group_id != target) continue;
    if (source != nullptr && source->spec().core != g->spec().core)
      return Status(StatusCode::FAILED_PRECONDITION,
                    "follow_source: group '" + snap.group_id() + "' runs on core " +
                        std::to_string(source->spec().core) + ", group '" + target + "' on core " +
                        std::to_string(g->spec().core) + ": a group can look flows up only in one its core runs");
    // Every table must name a stateful element of the same kind before anything is imported.
    std::vector<Element*> dst;
    std::vector<const Element*> src;
    for (int i = 0; i < snap.tables().size(); ++i) {
      const pb::StateTable& t = snap.tables(i);
      Element* e = g->graph().find(t.element());
      const std::string f = "snapshot.tables[" + std::to_string(i) + "]";
      if (e == nullptr || !e->has_state())
        return invalid(f + ".element: no stateful element '" + t.element() + "' in group '" + target + "'");
      if (t.kind() != e->class_name())
        return invalid(f + ".kind: '" + t.kind() + "' but element '" + t.element() + "' is a " + e->class_name());
      dst.push_back(e);
      if (source == nullptr) continue;
      const Element* from = source->graph().find(t.element());
      if (from == nullptr || from->class_name() != std::string(e->class_name()))
        return invalid(f + ".element: follow_source: no " + e->class_name() + " '" + t.element() + "' in group '" +
                       snap.group_id() + "'");
      src.push_back(from);
    }
    uint64_t n = 0;
    Status st = Status::OK;
    // Imported and followed in one step of the core: every flow the source maps from the snapshot on is either
    // in the snapshot's copy or still in the source's table when the target misses it.
    engine_->between_batches(g->spec().core, [&] {
      for (int i = 0; i < snap.tables().size() && st.ok(); ++i) {
        try {
          n += dst[i]->import_state(snap.tables(i), req.merge());
        } catch (const std::exception& e) {
          st = invalid("snapshot.tables[" + std::to_string(i) + "]: " + e.what());
        }
      }
      for (size_t i = 0; i < src.size() && st.ok(); ++i)
        if (!dst[i]->follow_state(*src[i])) {
          st = invalid("snapshot.tables[" + std::to_string(i) + "].element: follow_source: '" + snap.tables(i).element() +
                       "' of group '" + snap.group_id() + "' holds a table of another shape");
          for (size_t k = 0; k < i; ++k) dst[k]->unfollow_state(*src[k]);
        }
    });
    if (!st.ok()) return st;
    for (size_t i = 0; i < src.size(); ++i) follows_.push_back(Follow{g, source, dst[i], src[i]});
    out->set_entries(n);
    return Status::OK;
  }
  return Status(StatusCode::NOT_FOUND, "target_group_id: no group '" + target + "' in pipeline '" + snap.pipeline_id() + "'");
}

}  // namespace metron

#include "core/engine.h"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>

#include "core/annotations.h"
#include "core/run_delay.h"
#include "utils/checksum.h"

namespace metron {

Engine::Engine(std::vector<unsigned> cores, rte_mempool* pool) : cores_(std::move(cores)), pool_(pool) {
  if (cores_.empty()) throw std::invalid_argument("engine: no worker cores");
  set_batch_budget_us(kDefaultBatchBudgetUs);
  set_group_hold(kDefaultHoldFrames, kDefaultHoldUs);
  register_annotations();
  for (size_t i = 0; i < cores_.size(); ++i) {
    if (!rte_lcore_is_enabled(cores_[i]))
      throw std::invalid_argument("engine: core " + std::to_string(cores_[i]) + " is not an EAL lcore (-l)");
    for (size_t j = 0; j < i; ++j)
      if (cores_[j] == cores_[i]) throw std::invalid_argument("engine: core " + std::to_string(cores_[i]) + " twice");
    auto w = std::make_unique<Worker>();
    w->core = cores_[i];
    w->slot = static_cast<unsigned>(i);
    w->owned = std::make_unique<WorkerPlan>();
    w->plan.store(w->owned.get());
    workers_.push_back(std::move(w));
  }
}

Engine::~Engine() {
  stop();
  workers_.clear();  // plans reference ports: free them first
  std::lock_guard<std::mutex> lock(ports_mu_);
  ports_.clear();
}

Port* Engine::add_port(std::unique_ptr<Port> port) {
  std::lock_guard<std::mutex> lock(ports_mu_);
  for (const auto& p : ports_)
    if (p->name() == port->name()) throw std::invalid_argument("engine: port '" + port->name() + "' already added");
  ports_.push_back(std::move(port));
  return ports_.back().get();
}

Port* Engine::port(const std::string& name) const {
  std::lock_guard<std::mutex> lock(ports_mu_);
  for (const auto& p : ports_)
    if (p->name() == name) return p.get();
  return nullptr;
}

std::vector<Port*> Engine::ports() const {
  std::lock_guard<std::mutex> lock(ports_mu_);
  std::vector<Port*> v;
  for (const auto& p : ports_) v.push_back(p.get());
  return v;
}

int Engine::slot_of_core(unsigned core) const {
  for (size_t i = 0; i < cores_.size(); ++i)
    if (cores_[i] == core) return static_cast<int>(i);
  return -1;
}

int Engine::socket_of_core(unsigned core) const {
  const int s = static_cast<int>(rte_lcore_to_socket_id(core));
  return s < 0 ? 0 : s;
}

void Engine::set_batch_budget_us(uint32_t us) {
  batch_budget_cycles_.store(us * rte_get_tsc_hz() / 1000000, std::memory_order_relaxed);
}

void Engine::set_group_hold(uint32_t frames, uint32_t us) {
  hold_frames_.store(std::min<uint32_t>(frames, kMaxHeldFrames), std::memory_order_relaxed);
  hold_cycles_.store(frames == 0 ? 0 : us * rte_get_tsc_hz() / 1000000, std::memory_order_relaxed);
}

Engine::Worker& Engine::worker(unsigned core) {
  const int s = slot_of_core(core);
  if (s < 0) throw std::invalid_argument("engine: core " + std::to_string(core) + " runs no worker");
  return *workers_[s];
}

const Engine::Worker& Engine::worker(unsigned core) const { return const_cast<Engine*>(this)->worker(core); }

int Engine::launch(void* arg) {
  auto* a = static_cast<LaunchArg*>(arg);
  a->engine->loop(*a->worker);
  return 0;
}

void Engine::start() {
  if (running_.exchange(true)) return;
  stop_ = false;
  const unsigned main = rte_get_main_lcore();
  for (auto& w : workers_) {
    if (w->core == main) continue;
    launch_args_.push_back(std::make_unique<LaunchArg>(LaunchArg{this, w.get()}));
    if (rte_eal_remote_launch(&Engine::launch, launch_args_.back().get(), w->core) != 0)
      throw std::runtime_error("engine: cannot launch a worker on core " + std::to_string(w->core));
  }
}

void Engine::run_main_worker() {
  const int s = slot_of_core(rte_get_main_lcore());
  if (s < 0) return;
  loop(*workers_[s]);
}

void Engine::stop() {
  if (!running_.load()) return;
  stop_ = true;
  const unsigned main = rte_get_main_lcore();
  for (auto& w : workers_)
    if (w->core != main) rte_eal_wait_lcore(w->core);
  // A main-lcore worker leaves its loop by itself; wait for it.
  for (auto& w : workers_)
    while (w->in_loop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  launch_args_.clear();
  running_ = false;
}

namespace {

// One ingress binding's held frames (Engine::set_group_hold): a batch per group of the binding.
struct Held {
  std::vector<PacketBatch> batch;  // by the binding's group index
  std::vector<uint32_t> waiting;   // groups that got frames since the last run_all, in that order (may repeat)
  uint32_t frames = 0;             // held in all
  uint64_t since = 0;              // TSC of the iteration that received the oldest held frame
  uint64_t last_rx = 0;            // TSC of the last iteration whose burst brought frames

  // Runs every group's held frames; returns how many. received_now: all of them came in the last two rx bursts.
  unsigned run_all(const IngressBinding& b, TxBuffer* tx, bool received_now = false) {
    unsigned ran = 0;
    for (uint32_t g : waiting) {
      PacketBatch& q = batch[g];
      if (q.n == 0) continue;  // ran full since, or listed twice
      ran += q.n;
      b.groups[g]->process(q, tx, received_now);
      q.n = 0;
    }
    waiting.clear();
    frames = 0;
    return ran;
  }
};

// The group of a burst whose frames all carry one MAC tag of the binding's, their annotations cleared, or -1 (a
// frame too short, VLAN-tagged or of another tag: the burst is dispatched frame by frame). Stops at the first frame
// that differs, so a burst of many tags costs a frame or two here.
int one_tag_burst(const IngressBinding& b, const PacketBatch& in, int anno_offset) {
  const rte_mbuf* m0 = in.pkts[0];
  if (rte_pktmbuf_data_len(m0) < 14) return -1;
  const uint16_t tag = load16(rte_pktmbuf_mtod(m0, const uint8_t*) + 2);
  for (unsigned i = 0; i < in.n; ++i) {
    rte_mbuf* m = in.pkts[i];
    const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
    if ((rte_pktmbuf_data_len(m) < 14) | ((m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) != 0) |
        (load16(d + 12) == 0x8100) | (load16(d + 2) != tag))
      return -1;
    clear_anno(m, anno_offset);
  }
  return b.by_tag.find(tag_key(TagKind::kMac, tag));
}

}  // namespace

// The run-to-completion loop. Everything it touches is this core's: its plan, its queues, its counters.
void Engine::loop(Worker& w) {
  w.in_loop = true;
  CoreCounters& c = w.counters;
  if (w.tid.load(std::memory_order_acquire) == 0) {
    w.run_delay0_ns = thread_run_delay_ns(gettid());
    w.tid.store(gettid(), std::memory_order_release);
  }
  const uint64_t start = rte_rdtsc() - c.total_cycles.get();
  PacketBatch in;
  std::vector<Held> held;  // per ingress binding of `plan`
  const WorkerPlan* plan = nullptr;
  // Runs everything held (before a handoff, at the end): nothing is held across a batch boundary.
  auto run_held = [&] {
    if (plan == nullptr) return;
    const uint64_t t0 = rte_rdtsc();
    unsigned ran = 0;
    for (size_t i = 0; i < plan->ingress.size() && i < held.size(); ++i)
      if (held[i].frames) ran += held[i].run_all(plan->ingress[i], &w.tx);
    if (ran == 0) return;
    c.tx.add(w.tx.flush());
    c.busy_cycles.add(rte_rdtsc() - t0);
  };
  unsigned empty_polls = 0;
  uint16_t burst = kBurst;
  while (!stop_.load(std::memory_order_relaxed)) {
    // One load per iteration (not per packet): a control thread may be waiting for this boundary.
    if (Handoff* h = w.handoff.load(std::memory_order_acquire)) {
      if (w.handoff.compare_exchange_strong(h, nullptr, std::memory_order_acq_rel)) {
        run_held();
        carry_out(w, *h);
      }
    }
    plan = w.plan.load(std::memory_order_acquire);
    if (held.size() < plan->ingress.size()) held.resize(plan->ingress.size());
    const uint32_t hold_frames = hold_frames_.load(std::memory_order_relaxed);
    const uint64_t hold_cycles = hold_cycles_.load(std::memory_order_relaxed);
    const uint64_t t0 = rte_rdtsc();
    unsigned handled = 0;  // frames received or polled
    unsigned ran = 0;      // frames that went through a graph
    for (size_t bi = 0; bi < plan->ingress.size(); ++bi) {
      const IngressBinding& b = plan->ingress[bi];
      Held& hb = held[bi];
      in.n = b.port->rx_burst(b.queue, in.pkts, burst);
      if (in.n == 0 && hb.frames == 0) continue;
      handled += in.n;
      c.rx.add(in.n);
      if (hb.batch.size() < b.groups.size()) hb.batch.resize(b.groups.size());
      if (in.n && hb.frames == 0) hb.since = t0;
      // Nothing held from before the previous burst: every batch this burst runs holds frames rx wrote just now or
      // one burst ago, with at most a burst's frames run in between, so their lines are still in L1 (48 KB here;
      // a burst's frames, records and trace lines take ~20 KB). A core whose groups take one tag each holds frames
      // that long all the time (a burst's remainder completes the next batch); frames held longer (many groups
      // sharing the core, each batch filling over many bursts) are asked for again.
      const bool received_now = hb.frames == 0 || hb.since == hb.last_rx;
      if (in.n) hb.last_rx = t0;
      unsigned ran_here = 0;
      uint64_t misrouted = 0;
      uint32_t last_key = 0;  // no tag key is 0
      int last_group = -1;
      // The tag's batch, the burst's size and the annotation's offset in locals: the frame stores below could alias
      // them, and each would be loaded again per frame. Frames held are counted once after the loop: the burst's,
      // less those misrouted and those that ran in full batches.
      PacketBatch* q = nullptr;
      const unsigned n = in.n;
      const int anno_offset = g_anno_offset;
      unsigned ran_full = 0;
      // A full burst of one tag with nothing held (a group with a core of its own, or the NIC steering each tag to
      // one core's queue) is that group's batch as it came: it runs without a frame copied into the group's batch.
      int whole = -1;
      if (n == kBurst && hb.frames == 0) whole = one_tag_burst(b, in, anno_offset);
      if (whole >= 0) {
        b.groups[whole]->process(in, &w.tx, received_now);
        ran_full = n;
      }
      for (unsigned i = whole >= 0 ? n : 0; i < n; ++i) {
        rte_mbuf* m = in.pkts[i];
        clear_anno(m, anno_offset);
        uint8_t* d = rte_pktmbuf_mtod(m, uint8_t*);
        if (rte_pktmbuf_data_len(m) < 14) {
          ++misrouted;
          rte_pktmbuf_free(m);
          continue;
        }
        uint32_t key;
        if (m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) {  // the port already took the tag out
          key = tag_key(TagKind::kVlan, m->vlan_tci & 0x0fff);
        } else if (load16(d + 12) == 0x8100) {
          key = tag_key(TagKind::kVlan, load16(d + 14) & 0x0fff);
          std::memmove(d + 4, d, 12);  // the group graph sees the frame without its VLAN tag
          rte_pktmbuf_adj(m, 4);
        } else {
          key = tag_key(TagKind::kMac, load16(d + 2));
        }
        if (key != last_key) {  // a burst often carries runs of one tag
          last_key = key;
          last_group = b.by_tag.find(key);
          q = last_group < 0 ? nullptr : &hb.batch[last_group];
        }
        if (q == nullptr) {
          ++misrouted;
          rte_pktmbuf_free(m);
          continue;
        }
        if (q->n == 0) hb.waiting.push_back(static_cast<uint32_t>(last_group));
        q->push_back(m);
        if (q->n == kBurst) {  // a full batch: its graph runs now
          b.groups[last_group]->process(*q, &w.tx, received_now);
          q->n = 0;
          ran_full += kBurst;
        }
      }
      hb.frames += n - static_cast<unsigned>(misrouted) - ran_full;
      ran_here += ran_full;
      if (misrouted) c.drops.add(misrouted);
      if (hb.frames && (in.n < kBurst || hb.frames >= hold_frames || t0 - hb.since >= hold_cycles))
        ran_here += hb.run_all(b, &w.tx, received_now);
      // What the groups sent leaves now, one tx_burst per port and queue for all the batches that ran.
      if (ran_here) {
        ran += ran_here;
        c.tx.add(w.tx.flush());
      }
    }
    if (!plan->polled.empty()) {
      unsigned polled = 0;
      for (GroupRuntime* g : plan->polled) polled += g->poll_sources(&w.tx);
      if (polled) {
        handled += polled;
        ran += polled;
        c.tx.add(w.tx.flush());
      }
    }
    for (const auto& g : plan->standalone) {
      const unsigned n = g->run_sources();
      handled += n;
      ran += n;
    }
    const uint64_t t1 = rte_rdtsc();
    if (handled || ran) c.busy_cycles.add(t1 - t0);
    if (ran) {
      // Frames that fit the budget at this iteration's cost per frame run: budget / (spent / ran). No division
      // in the common case (a full burst fits), which runs every batch of a fast pipeline.
      const uint64_t budget = batch_budget_cycles_.load(std::memory_order_relaxed);
      const uint64_t spent = t1 - t0;
      burst = budget == 0 || spent * kBurst <= budget * ran
                  ? kBurst
                  : static_cast<uint16_t>(std::max<uint64_t>(1, budget * ran / spent));
    }
    c.total_cycles.v.store(t1 - start, std::memory_order_relaxed);
    empty_polls = handled ? 0 : empty_polls + 1;
    if (empty_polls > kIdleSpins) {
      const uint32_t us = idle_sleep_us_.load(std::memory_order_relaxed);
      if (us) std::this_thread::sleep_for(std::chrono::microseconds(us));
    }
  }
  run_held();
  w.in_loop = false;
}

void Engine::carry_out(Worker& w, Handoff& h) {
  h.adopted = h.fn == nullptr || (*h.fn)();
  if (h.adopted && h.plan != nullptr) w.plan.store(h.plan, std::memory_order_release);
  h.done.store(true, std::memory_order_release);
}

void Engine::hand_over(Worker& w, Handoff& h) {
  post(w, h);
  await(w, h);
}

void Engine::post(Worker& w, Handoff& h) { w.handoff.store(&h, std::memory_order_release); }

void Engine::await(Worker& w, Handoff& h) {
  // A worker in its loop takes it within one batch. One that is not (not started, stopping, stopped) may never:
  // take the request back and carry it out here; whoever wins the exchange does it, exactly once.
  for (unsigned spins = 0; !h.done.load(std::memory_order_acquire); ++spins) {
    if (!w.in_loop.load()) {
      Handoff* mine = &h;
      if (w.handoff.compare_exchange_strong(mine, nullptr, std::memory_order_acq_rel)) {
        carry_out(w, h);
        return;
      }
    }
    // The worker may share a CPU with this thread (2-CPU hosts): spin briefly, then yield it the CPU.
    if (spins < 64) rte_pause();
    else std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void TagIndex::build(const std::vector<GroupRuntime*>& groups) {
  unsigned bits = 1;
  while ((size_t{1} << bits) < 2 * groups.size()) ++bits;
  slots_.assign(size_t{1} << bits, Slot{});
  mask_ = (1u << bits) - 1;
  shift_ = 32 - bits;
  for (size_t i = 0; i < groups.size(); ++i) {
    const uint32_t key = groups[i]->key();
    uint32_t s = slot_of(key);
    while (slots_[s].key != 0 && slots_[s].key != key) s = (s + 1) & mask_;
    if (slots_[s].key == 0) slots_[s] = Slot{key, static_cast<uint32_t>(i)};  // two groups, one tag: the first
  }
}

void Engine::index_tags(WorkerPlan& plan) {
  for (IngressBinding& b : plan.ingress) b.by_tag.build(b.groups);
  plan.polled.clear();
  for (const auto& g : plan.groups)
    if (g->graph().has_sources()) plan.polled.push_back(g.get());
}

bool Engine::publish(unsigned core, std::unique_ptr<WorkerPlan> plan, const std::function<bool()>& handoff) {
  index_tags(*plan);
  std::lock_guard<std::mutex> lock(publish_mu_);
  Worker& w = worker(core);
  Handoff h;
  h.plan = plan.get();
  h.fn = handoff ? &handoff : nullptr;
  hand_over(w, h);
  if (!h.adopted) return false;
  adopt(w, std::move(plan));
  return true;
}

void Engine::adopt(Worker& w, std::unique_ptr<WorkerPlan> plan) {
  // The worker re-reads its plan after every handoff, so it no longer holds the old one.
  std::unique_ptr<WorkerPlan> old = std::move(w.owned);
  w.owned = std::move(plan);
  old.reset();
}

void Engine::publish_during(std::vector<std::pair<unsigned, std::unique_ptr<WorkerPlan>>> plans,
                            const std::function<void()>& meanwhile) {
  std::lock_guard<std::mutex> lock(publish_mu_);
  std::vector<Worker*> ws;
  for (const auto& [core, plan] : plans) {
    Worker& w = worker(core);
    if (std::find(ws.begin(), ws.end(), &w) != ws.end())
      throw std::invalid_argument("engine: two plans for core " + std::to_string(core));
    ws.push_back(&w);
  }
  for (auto& p : plans) index_tags(*p.second);
  std::vector<Handoff> hs(plans.size());
  for (size_t i = 0; i < plans.size(); ++i) {
    hs[i].plan = plans[i].second.get();
    post(*ws[i], hs[i]);
  }
  // Every posted handoff is awaited and its plan kept, even if `meanwhile` throws: the workers use them.
  std::exception_ptr failed;
  try {
    if (meanwhile) meanwhile();
  } catch (...) {
    failed = std::current_exception();
  }
  for (size_t i = 0; i < plans.size(); ++i) {
    await(*ws[i], hs[i]);
    adopt(*ws[i], std::move(plans[i].second));
  }
  if (failed) std::rethrow_exception(failed);
}

void Engine::between_batches(unsigned core, const std::function<void()>& fn) {
  std::lock_guard<std::mutex> lock(publish_mu_);
  const std::function<bool()> run = [&fn] {
    fn();
    return true;
  };
  Handoff h;
  h.fn = &run;
  hand_over(worker(core), h);
}

const WorkerPlan* Engine::plan(unsigned core) const { return worker(core).plan.load(std::memory_order_acquire); }

void Engine::load_standalone(const std::string& click, bool profile) {
  const ClickConfig cfg = parse_click(click, /*allow_ports=*/false);
  std::vector<std::unique_ptr<WorkerPlan>> plans;
  for (auto& w : workers_) {
    GraphEnv env;
    env.socket_id = socket_of_core(w->core);
    env.slot = w->slot;
    env.slots = slot_count();
    // FastClick configs name DPDK ports by id (FromDPDKDevice(0)); ours by ethdev name. Accept both.
    env.find_port = [](void* ctx, const std::string& name) -> Port* {
      Port* p = static_cast<Engine*>(ctx)->port(name);
      if (p != nullptr || name.empty() || name.find_first_not_of("0123456789") != std::string::npos) return p;
      char dev[RTE_ETH_NAME_MAX_LEN];
      if (rte_eth_dev_get_name_by_port(static_cast<uint16_t>(std::stoul(name)), dev) != 0) return nullptr;
      return static_cast<Engine*>(ctx)->port(dev);
    };
    env.port_ctx = this;
    env.allow_files = true;  // the operator's own file on this host (IPFilter `file PATH`, as in FastClick)
    env.instance = "standalone/" + std::to_string(w->core);
    env.profile = profile;
    auto plan = std::make_unique<WorkerPlan>();
    plan->standalone.push_back(std::shared_ptr<Graph>(Graph::build(cfg, env)));
    plans.push_back(std::move(plan));
  }
  for (size_t i = 0; i < workers_.size(); ++i) publish(workers_[i]->core, std::move(plans[i]));
}

std::vector<std::shared_ptr<Graph>> Engine::standalone_graphs() const {
  std::lock_guard<std::mutex> lock(publish_mu_);
  std::vector<std::shared_ptr<Graph>> v;
  for (const auto& w : workers_)
    for (const auto& g : w->owned->standalone) v.push_back(g);
  return v;
}

CoreSample Engine::sample(unsigned core) const {
  const Worker& w = worker(core);
  CoreSample s;
  s.core = core;
  s.slot = w.slot;
  s.socket = socket_of_core(core);
  s.rx = w.counters.rx.get();
  s.tx = w.counters.tx.get();
  s.drops = w.counters.drops.get();
  s.busy_cycles = w.counters.busy_cycles.get();
  s.total_cycles = w.counters.total_cycles.get();
  if (const pid_t tid = w.tid.load(std::memory_order_acquire)) {
    const uint64_t delay_ns = thread_run_delay_ns(tid);
    if (delay_ns > w.run_delay0_ns)
      s.unscheduled_cycles = static_cast<uint64_t>(static_cast<double>(delay_ns - w.run_delay0_ns) * 1e-9 *
                                                   static_cast<double>(rte_get_tsc_hz()));
  }
  std::lock_guard<std::mutex> lock(publish_mu_);
  for (const auto& g : w.owned->standalone) s.drops += __atomic_load_n(&g->counters().drops, __ATOMIC_RELAXED);
  return s;
}

}  // namespace metron

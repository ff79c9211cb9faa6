// Engine: the data plane of one agent process. Owns the ports and one run-to-completion worker per core.
//
// Each worker executes an immutable WorkerPlan: poll my rx queue (= my slot) of each ingress port, demultiplex
// frames by tag to the groups this core runs, run each group's graph, transmit. Reconfiguration builds a new
// plan off the data path and hands it over; the worker adopts it at its next batch boundary, optionally after
// running a handoff step there (e.g. copying flow state out of the groups it is about to stop running). Once
// the worker took the plan it can no longer hold the old one, which is freed then: no packet is ever inside a
// graph that is being destroyed, none is dropped by a swap, and the worker never stops polling.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/graph.h"
#include "core/group.h"
#include "core/port.h"
#include "core/tx_buffer.h"

struct rte_mempool;

namespace metron {

// Tag key -> position in a list of groups, in O(1) whatever the number of groups (a core may run hundreds):
// open addressing with linear probing over a power-of-two table at most half full. Built off the data path.
class TagIndex {
 public:
  void build(const std::vector<GroupRuntime*>& groups);
  // The position of the group whose key() is `key`, or -1.
  int find(uint32_t key) const {
    for (uint32_t s = slot_of(key);; s = (s + 1) & mask_) {
      if (slots_[s].key == key) return static_cast<int>(slots_[s].index);
      if (slots_[s].key == 0) return -1;  // tag keys are never 0 (their kind is in bits 16+)
    }
  }

 private:
  struct Slot {
    uint32_t key = 0;
    uint32_t index = 0;
  };
  uint32_t slot_of(uint32_t key) const { return (key * 0x9e3779b1u) >> shift_; }  // Fibonacci hashing
  std::vector<Slot> slots_ = std::vector<Slot>(1);
  uint32_t mask_ = 0;
  unsigned shift_ = 32;
};

// At most this many frames wait per worker and ingress queue for their group's batch to fill
// (Engine::set_group_hold); mbuf pools are sized for them (pool_mbufs_for).
constexpr uint16_t kMaxHeldFrames = 16 * kBurst;

struct IngressBinding {
  Port* port = nullptr;
  uint16_t queue = 0;
  // Groups of this core fed by this port, and which of them runs a tag (Engine::publish builds `by_tag`).
  std::vector<GroupRuntime*> groups;
  TagIndex by_tag;
};

struct WorkerPlan {
  std::vector<IngressBinding> ingress;
  std::vector<std::shared_ptr<GroupRuntime>> groups;  // keeps the groups alive while the plan is published
  std::vector<std::shared_ptr<Graph>> standalone;     // standalone graphs: polled through their FromDevices
  // Groups whose graph has sources of its own (a BlackBoxNF's returning ring), polled every iteration; built by
  // Engine::publish from `groups`.
  std::vector<GroupRuntime*> polled;
};

struct alignas(64) CoreCounters {
  RelaxedCounter rx;
  RelaxedCounter tx;
  RelaxedCounter drops;         // frames with no tag / a tag this core does not run
  RelaxedCounter busy_cycles;   // cycles of loop iterations that handled packets
  RelaxedCounter total_cycles;  // cycles since the worker started
};

struct CoreSample {
  unsigned core = 0;
  unsigned slot = 0;
  int socket = 0;
  uint64_t rx = 0, tx = 0, drops = 0, busy_cycles = 0, total_cycles = 0;
  uint64_t unscheduled_cycles = 0;  // cumulative: the worker's thread waited for a CPU (core/run_delay.h)
};

class Engine {
 public:
  // cores: the lcores that run workers (must be EAL lcores). pool: mbufs for the ports the engine opens.
  Engine(std::vector<unsigned> cores, rte_mempool* pool);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // ---- ports (control thread) ----
  // Takes ownership; a port must outlive every plan that uses it, so ports are only removed at destruction.
  Port* add_port(std::unique_ptr<Port> port);
  Port* port(const std::string& name) const;
  std::vector<Port*> ports() const;
  rte_mempool* pool() const { return pool_; }

  // ---- cores ----
  const std::vector<unsigned>& cores() const { return cores_; }
  // Dense slot of a worker core = the rx/tx queue it polls; -1 if the engine does not run that core.
  int slot_of_core(unsigned core) const;
  unsigned slot_count() const { return static_cast<unsigned>(cores_.size()); }
  int socket_of_core(unsigned core) const;

  // ---- workers ----
  // Launches the workers on their lcores. A worker on the calling (main) lcore is not launched: call
  // run_main_worker() from that thread, which returns after stop().
  void start();
  void run_main_worker();
  void stop();
  // Asks every worker to leave its loop at its next batch boundary; returns at once (any thread).
  void request_stop() { stop_.store(true); }
  bool running() const { return running_.load(); }
  // Idle backoff: after kIdleSpins empty polls in a row a worker sleeps `us` microseconds per empty poll.
  // 0 (the default) busy-polls, right for dedicated cores and real NICs, whose rings would overflow during a
  // sleep. Emulated servers share a few CPUs among many workers: there, spinning idle workers starve everyone.
  void set_idle_sleep_us(uint32_t us) { idle_sleep_us_.store(us, std::memory_order_relaxed); }
  static constexpr unsigned kIdleSpins = 1024;
  // Batch time budget: a worker reads at most as many frames per burst as its pipeline got through in `us`
  // microseconds at the last batch's cost per frame (at least one, at most kBurst). Cheap pipelines always read
  // full bursts; one that spends milliseconds per frame (DPI on large frames, SpinCycles) reads fewer, so a
  // control handoff, which waits for the next batch boundary, waits about `us` instead of 32 frames' time.
  // 0 = always kBurst.
  void set_batch_budget_us(uint32_t us);
  static constexpr uint32_t kDefaultBatchBudgetUs = 500;
  // Group batching (FAJITA's batched stages): a burst spread over many groups gives each only a few frames, and
  // a group's graph costs per call (its elements, a rewriter's expiry sweep and bulk lookup) whatever it carries.
  // So while an ingress queue is backlogged (its rx burst came back full) a worker holds each group's frames
  // across bursts and runs the group's graph when it has a full batch (kBurst). Held frames run, in arrival
  // order per group, as soon as any of these is true: an rx burst of their port comes back short (the queue is
  // drained: holding gains nothing, and nothing waits when traffic stops), `frames` are held for that port, the
  // oldest has waited `us` microseconds (checked once per loop iteration), a handoff or a stop reaches the
  // worker (batch boundaries see nothing held). A slow pipeline (one the batch budget reads short bursts for)
  // never holds. frames = 0 turns holding off (every burst's frames run at once, as before).
  void set_group_hold(uint32_t frames, uint32_t us);
  // Half the most a worker may hold: what is held, plus a burst and the TX buffer, stays within what the mbuf
  // pool's per-lcore cache absorbs (kPoolCache, flushed past 1.5x), so mbufs recycle through that cache (LIFO,
  // their lines still in L2) instead of overflowing into the pool's FIFO ring and coming back cold from the
  // far end of the pool: at 16 groups, 512 held frames cost ~120 cycles per packet of rx (the mbuf header
  // stores missing) against ~34 with 256 (BENCHMARKS.md, "Per-core speed: where the offloaded chain's cycles go").
  static constexpr uint32_t kDefaultHoldFrames = kMaxHeldFrames / 2;
  static constexpr uint32_t kDefaultHoldUs = 100;

  // Publishes a new plan for a core and returns once the worker uses it (the previous one is freed here). If
  // given, `handoff` runs on the worker between two batches, right before it adopts the plan: nothing of the
  // core runs meanwhile, so it may read or write the state of the groups of either plan; when it answers false
  // the worker keeps its plan (and publish answers false). A worker that is not running has both done here.
  // Never blocks the data path beyond the handoff itself.
  bool publish(unsigned core, std::unique_ptr<WorkerPlan> plan, const std::function<bool()>& handoff = {});
  // Publishes plans for several cores at once (no handoff steps) and runs `meanwhile` on this thread while the
  // workers take them; returns once every worker uses its new plan. For plans whose adoption nothing else
  // depends on until later (groups for tags no frame carries yet), so that waiting for their workers' next
  // batch boundaries overlaps other work.
  void publish_during(std::vector<std::pair<unsigned, std::unique_ptr<WorkerPlan>>> plans,
                      const std::function<void()>& meanwhile);
  // Runs `fn` on the core's worker between two batches (here if the worker is not running); returns after it.
  void between_batches(unsigned core, const std::function<void()>& fn);
  const WorkerPlan* plan(unsigned core) const;

  // Standalone mode: builds the Click config once per worker core (slot i polls rx queue i of its
  // FromDevices) and publishes it. Throws ClickError before touching any running plan.
  void load_standalone(const std::string& click, bool profile = false);
  std::vector<std::shared_ptr<Graph>> standalone_graphs() const;

  CoreSample sample(unsigned core) const;

 private:
  // A request the worker takes at its next batch boundary: run `fn` (if any), then adopt `plan` (if any and
  // `fn` agreed).
  struct Handoff {
    WorkerPlan* plan = nullptr;
    const std::function<bool()>* fn = nullptr;
    bool adopted = false;
    std::atomic<bool> done{false};
  };
  struct Worker {
    unsigned core = 0;
    unsigned slot = 0;
    std::atomic<WorkerPlan*> plan{nullptr};
    std::unique_ptr<WorkerPlan> owned;  // what `plan` points to
    std::atomic<Handoff*> handoff{nullptr};
    CoreCounters counters;
    // the worker's thread and its run delay when its loop first ran (set by the worker, read by samples)
    std::atomic<pid_t> tid{0};
    uint64_t run_delay0_ns = 0;
    TxBuffer tx;  // the worker's own: what its groups send, flushed after the graphs of an iteration ran
    std::atomic<bool> in_loop{false};
  };
  // Posts `h` to the worker and returns once it (or, for a worker out of its loop, this thread) carried it out.
  static void hand_over(Worker& w, Handoff& h);
  static void post(Worker& w, Handoff& h);
  static void await(Worker& w, Handoff& h);
  // Takes a handoff's plan as the worker's own (frees the previous one); caller holds publish_mu_.
  static void adopt(Worker& w, std::unique_ptr<WorkerPlan> plan);
  static void carry_out(Worker& w, Handoff& h);
  // Builds each ingress binding's tag index of a plan about to be published.
  static void index_tags(WorkerPlan& plan);
  static int launch(void* arg);
  void loop(Worker& w);
  Worker& worker(unsigned core);
  const Worker& worker(unsigned core) const;

  std::vector<unsigned> cores_;
  rte_mempool* pool_;
  mutable std::mutex ports_mu_;
  std::vector<std::unique_ptr<Port>> ports_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<bool> running_{false};
  std::atomic<bool> stop_{false};
  std::atomic<uint32_t> idle_sleep_us_{0};
  std::atomic<uint64_t> batch_budget_cycles_{0};
  std::atomic<uint32_t> hold_frames_{0};
  std::atomic<uint64_t> hold_cycles_{0};
  mutable std::mutex publish_mu_;  // guards each worker's `owned` plan and serialises handoffs
  struct LaunchArg {
    Engine* engine;
    Worker* worker;
  };
  std::vector<std::unique_ptr<LaunchArg>> launch_args_;
};

}  // namespace metron

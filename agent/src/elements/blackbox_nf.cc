// BlackBoxNF: a black-box NF in a chain (docs/blackbox.md), a separate process the agent starts, watches and
// restarts. MODE RING: the agent is the DPDK primary; the NF is a secondary process on the project's NF library
// (agent/nflib/metron_nf.h) and gets the agent's mbufs over two rte_rings in shared hugepage memory, no copy:
//
//   push      -> rte_ring_sp_enqueue_burst(in)   (what does not fit: ring_full, then ON_FAILURE)
//   run_source <- rte_ring_sc_dequeue_burst(out) (bit 0 of an entry: the NF's drop verdict) -> output 0
//
// The worker core is the only producer of `in` and consumer of `out`; the NF is the other end of each. A
// supervisor thread per element (never the data path) starts the NF, waits on its pidfd, and restarts it with
// backoff. Meanwhile ON_FAILURE applies: CLOSED drops (failed_closed), OPEN passes packets on (bypassed).
//
// An instance that died may have left its ring ends half-updated, so every instance gets fresh rings: the
// supervisor publishes the new pair (cur_) only after the old process was reaped; the worker, at its next call,
// drains the old pair (what was still queued for the dead NF goes to ON_FAILURE, what it had passed back goes
// on) and takes the new one; the supervisor frees old pairs once the worker retired them. Packets the dead NF
// held (at most one burst) are lost with it.
//
// An NF that stops reading: the input ring stays full while the NF's consumer index does not move for
// STALL_TIMEOUT ms (default 100): the worker flags it, the supervisor kills the process group with SIGKILL and it
// is restarted like any dead instance. Packets that found the ring full are counted (ring_full) and go to
// ON_FAILURE.
//
// LINK DIRECT (the default for RING): adjacent RING boxes of one graph (a box's output straight into the next box,
// its only input) form a segment whose NFs pass packets to each other, OpenNetVM's shape, the agent out of the middle:
//
//   push (first box)  -> its agent ring -> NF 1 -> NF 2's input ring -> NF 2 -> ... -> NF k's output ring
//   run_source (last box) <- NF k's output ring; entries with a drop mark (the NF's position, low 6 bits) freed and
//                            counted for the NF that dropped them
//
// Every NF also reads an agent ring of its own (push into a box that is not the first: a bypass of the box before it,
// or the stand-in's output). The rings stay for the segment's life; an instance that died may have left its ring
// ends half-moved, so the supervisor, once it reaped the process, puts them back at their tails (an input entry
// between was not handed over yet, it is read again; an output entry between was never published: the packet was
// held by the NF and is counted in nf_lost), and the worker stands in for the NF: it reads the NF's input rings and
// applies ON_FAILURE (OPEN: on to the next box's agent ring, or out of the segment). A new instance attaches, then
// waits (its shared block's `go`) until the worker has stopped standing in. Stalls: the supervisor watches the NF's
// input rings (full and not read for STALL_TIMEOUT while its own output has room).
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_ring.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "../../nflib/metron_nf.h"
#include "core/element.h"
#include "core/group.h"
#include "core/eal.h"
#include "drivers/dpdk_port.h"
#include "elements/kernel_ns.h"
#include "elements/nf_process.h"

namespace metron {

namespace {

enum NfState : int { kStarting = 0, kRunning = 1, kRestarting = 2, kFailed = 3 };
const char* state_name(int s) {
  switch (s) {
    case kStarting: return "STARTING";
    case kRunning: return "RUNNING";
    case kRestarting: return "RESTARTING";
    default: return "FAILED";
  }
}

// Process-wide sequence of ring pairs: ring names (RTE_RING_NAMESIZE, 32 bytes) unique in the agent's memory
// whatever the pipeline, group and element names, and the NF's lcore id.
std::atomic<uint64_t> g_ring_seq{0};
std::atomic<unsigned> g_nf_seq{0};

constexpr uintptr_t kMarkMask = METRON_NF_MARK_MASK;

void free_ring_entries(rte_ring*& r) {
  if (r == nullptr) return;
  void* objs[kBurst];
  unsigned n;
  while ((n = rte_ring_sc_dequeue_burst(r, objs, kBurst, nullptr)) > 0)
    for (unsigned i = 0; i < n; ++i)
      rte_pktmbuf_free(reinterpret_cast<rte_mbuf*>(reinterpret_cast<uintptr_t>(objs[i]) & ~kMarkMask));
  rte_ring_free(r);
  r = nullptr;
}

class BlackBoxNF;

// LINK DIRECT: one NF's place in a segment.
struct DirectHop {
  rte_ring* from_agent = nullptr;  // the agent -> this NF (the segment's input at the first NF)
  rte_ring* out = nullptr;         // this NF -> the next NF, or the agent after the last
  const rte_memzone* mz = nullptr;
  metron_nf_link* link = nullptr;  // in mz: go flag and the NF library's counters
  std::string from_agent_name, out_name, link_name;
};

// Adjacent RING boxes of one graph whose NFs are linked directly. Owned by its members together: the rings go
// with the last of them, after every member stopped its NF.
struct DirectSegment {
  std::vector<BlackBoxNF*> members;
  std::vector<DirectHop> hops;
  DirectSegment() = default;
  DirectSegment(const DirectSegment&) = delete;
  DirectSegment& operator=(const DirectSegment&) = delete;
  ~DirectSegment() {
    for (DirectHop& h : hops) {
      free_ring_entries(h.from_agent);
      free_ring_entries(h.out);
      if (h.mz != nullptr) rte_memzone_free(h.mz);
    }
  }
  // Rings and a shared block for the next member (ring names unique in the agent's memory, as NfRings').
  void add_hop(unsigned size) {
    DirectHop h;
    const std::string base = "mbd" + std::to_string(g_ring_seq.fetch_add(1));
    h.from_agent_name = base + "_a";
    h.out_name = base + "_o";
    h.link_name = base + "_l";
    h.from_agent = rte_ring_create(h.from_agent_name.c_str(), size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    h.out = rte_ring_create(h.out_name.c_str(), size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    h.mz = rte_memzone_reserve_aligned(h.link_name.c_str(), sizeof(metron_nf_link), SOCKET_ID_ANY, 0, 64);
    const bool ok = h.from_agent != nullptr && h.out != nullptr && h.mz != nullptr;
    const std::string why = ok ? "" : rte_strerror(rte_errno);
    if (h.mz != nullptr) {
      h.link = static_cast<metron_nf_link*>(h.mz->addr);
      std::memset(h.link, 0, sizeof(*h.link));
      h.link->mark = static_cast<uint32_t>(hops.size() + 1);
    }
    hops.push_back(h);  // freed with the segment, whole or not
    if (!ok) throw ResourceError("cannot create the direct rings of " + std::to_string(size) + " entries: " + why);
  }
};

// One instance's link to the agent: a pair of rings (RING), or a network namespace between two af_packet ports
// (KERNEL: `kns`, rings null).
struct NfRings {
  uint64_t gen = 0;
  std::string in_name, out_name;
  rte_ring* in = nullptr;   // agent -> NF
  rte_ring* out = nullptr;  // NF -> agent, bit 0 = drop verdict
  std::unique_ptr<KernelNs> kns;

  NfRings(uint64_t g, std::unique_ptr<KernelNs> k) : gen(g), kns(std::move(k)) {}
  NfRings(uint64_t g, unsigned size) : gen(g) {
    const uint64_t seq = g_ring_seq.fetch_add(1);
    in_name = "mbb" + std::to_string(seq) + "_in";
    out_name = "mbb" + std::to_string(seq) + "_out";
    in = rte_ring_create(in_name.c_str(), size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    out = rte_ring_create(out_name.c_str(), size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (in == nullptr || out == nullptr) {
      const std::string why = rte_strerror(rte_errno);
      release();
      throw ResourceError("cannot create rings of " + std::to_string(size) + " entries: " + why);
    }
  }
  ~NfRings() { release(); }
  NfRings(const NfRings&) = delete;
  NfRings& operator=(const NfRings&) = delete;

  // Frees what is still queued (no one else uses the rings any more) and the rings.
  void release() {
    void* objs[kBurst];
    for (rte_ring* r : {in, out}) {
      if (r == nullptr) continue;
      unsigned n;
      while ((n = rte_ring_sc_dequeue_burst(r, objs, kBurst, nullptr)) > 0)
        for (unsigned i = 0; i < n; ++i)
          rte_pktmbuf_free(reinterpret_cast<rte_mbuf*>(reinterpret_cast<uintptr_t>(objs[i]) & ~uintptr_t{1}));
      rte_ring_free(r);
    }
    in = out = nullptr;
  }
};

class BlackBoxNF final : public Element {
 public:
  const char* class_name() const override { return "BlackBoxNF"; }
  ~BlackBoxNF() override { shutdown(); }

  void configure(Args& args) override {
    if (auto v = args.take("NAME")) nf_ = unquote(*v);
    if (auto v = args.take("PROGRAM")) program_ = unquote(*v);
    if (auto v = args.take("ARGS")) nf_args_ = split_words(unquote(*v));
    if (auto v = args.take("MODE")) mode_ = unquote(*v);
    if (auto v = args.take("ON_FAILURE")) {
      const std::string p = unquote(*v);
      if (p != "CLOSED" && p != "OPEN") throw ConfigError("ON_FAILURE: expected CLOSED or OPEN, got '" + p + "'");
      open_ = p == "OPEN";
    }
    if (auto v = args.take("RING_SIZE")) ring_size_ = static_cast<unsigned>(parse_uint(*v, "RING_SIZE", 1u << 20));
    if (auto v = args.take("ATTACH_TIMEOUT")) attach_ms_ = static_cast<int>(parse_uint(*v, "ATTACH_TIMEOUT", 600000));
    if (auto v = args.take("STALL_TIMEOUT")) stall_ms_ = parse_uint(*v, "STALL_TIMEOUT", 600000);
    if (auto v = args.take("CPUS")) cpus_ = unquote(*v);
    if (auto v = args.take("LINK")) {
      const std::string l = unquote(*v);
      if (l != "DIRECT" && l != "AGENT") throw ConfigError("LINK: expected DIRECT or AGENT, got '" + l + "'");
      link_direct_ = l == "DIRECT";
    }
    if (auto v = args.take("IDLE")) {
      idle_ = unquote(*v);
      if (idle_ != "WAKE" && idle_ != "YIELD" && idle_ != "POLL")
        throw ConfigError("IDLE: expected WAKE, YIELD or POLL, got '" + idle_ + "'");
    }
    if (auto v = args.take("IDLE_SPIN")) {
      spin_us_ = parse_uint(*v, "IDLE_SPIN", 1000000);
      spin_given_ = true;
    }
    if (auto v = args.take("WAKE_BATCH")) {
      wake_batch_ = static_cast<unsigned>(parse_uint(*v, "WAKE_BATCH", 1u << 20));
      if (wake_batch_ == 0) throw ConfigError("WAKE_BATCH: at least 1");
      wake_batch_given_ = true;
    }
    if (auto v = args.take("SCHED")) {
      sched_ = unquote(*v);
      if (sched_ != "BATCH" && sched_ != "NORMAL") throw ConfigError("SCHED: expected BATCH or NORMAL, got '" + sched_ + "'");
    }
    if (program_.empty()) throw ConfigError("PROGRAM: missing (the NF's executable)");
    if (nf_.empty()) nf_ = name();
    if (mode_ != "RING" && mode_ != "MEMIF" && mode_ != "KERNEL")
      throw ConfigError("MODE " + mode_ + ": expected RING, MEMIF or KERNEL");
    memif_ = mode_ == "MEMIF";
    kernel_ = mode_ == "KERNEL";
    if (ring_size_ < 2 * kBurst || (ring_size_ & (ring_size_ - 1)) != 0)
      throw ConfigError("RING_SIZE: a power of two of at least " + std::to_string(2 * kBurst));
    if (attach_ms_ <= 0) throw ConfigError("ATTACH_TIMEOUT: must be positive");
    if (cpus_.empty()) cpus_ = "0-" + std::to_string(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)) - 1);
  }

  void initialize(const GraphEnv& env) override {
    const std::string who = "black-box NF '" + nf_ + "' (" + program_ + "): ";
    struct stat st{};
    if (stat(program_.c_str(), &st) != 0) throw PreconditionError(who + "not found");
    if (!S_ISREG(st.st_mode) || access(program_.c_str(), X_OK) != 0) throw PreconditionError(who + "not executable");
    const unsigned seq = g_nf_seq.fetch_add(1);
    stall_cycles_ = stall_ms_ * rte_get_tsc_hz() / 1000;
    if (memif_) {
      open_memif(env, seq);
    } else if (kernel_) {
      pool_ = packed_pktmbuf_pool("mbbk" + std::to_string(seq), 4095, env.socket_id);
      try {
        rings_.push_back(std::make_unique<NfRings>(1, make_namespace()));
      } catch (const std::exception& e) {
        close_memif();
        throw PreconditionError(who + "cannot set up its network namespace: " + e.what());
      }
      active_ = rings_.back().get();
      cur_.store(active_, std::memory_order_release);
    } else {
      if (rte_eal_process_type() != RTE_PROC_PRIMARY || !rte_eal_has_hugepages())
        throw PreconditionError(who + "MODE RING needs the agent on hugepages as the DPDK primary (multi-process)");
      const std::string runtime = rte_eal_get_runtime_dir();
      file_prefix_ = runtime.substr(runtime.find_last_of('/') + 1);
      lcore_ = RTE_MAX_LCORE - 1 - (seq % (RTE_MAX_LCORE / 2));
      if (link_direct_) join_segment(env);
      if (!seg_) {
        rings_.push_back(std::make_unique<NfRings>(1, ring_size_));
        active_ = rings_.back().get();
        cur_.store(active_, std::memory_order_release);
      }
      if (idle_ == "WAKE") make_wake();
      cpu_shared_ = shares_its_cpu(env);
      // a quarter of the ring at most: the ring must not fill up (its packets then meet ON_FAILURE) before the wake
      if (!wake_batch_given_) wake_batch_ = cpu_shared_ ? std::min(kSharedWakeBatch, ring_size_ / 4) : 1;
      wake_delay_cycles_ = kWakeDelayUs * rte_get_tsc_hz() / 1000000;
    }
    // The supervisor thread starts every instance, the first too: an NF dies with the thread that forked it.
    std::promise<std::string> started;
    std::future<std::string> result = started.get_future();
    supervisor_ = std::thread([this, &started] { supervise(&started); });
    const std::string err = result.get();
    if (!err.empty()) {
      supervisor_.join();
      rings_.clear();
      close_memif();
      throw PreconditionError(who + err);
    }
  }

  // ---- data path (the group's core) ----
  void push(int, PacketBatch& b) override {
    if (seg_) {
      push_direct(b);
      return;
    }
    // State first: RUNNING is stored after its instance's rings were published, so sync_rings then finds them.
    const int state = state_.load(std::memory_order_acquire);
    if (!memif_) sync_rings();
    if (state == kRunning) {
      const unsigned n = memif_    ? on_memif([&] { return port_->tx_burst(0, b.pkts, b.n); })
                         : kernel_ ? active_->kns->to_nf().tx_burst(0, b.pkts, b.n)
                                   : rte_ring_sp_enqueue_burst(active_->in, reinterpret_cast<void**>(b.pkts), b.n, nullptr);
      if (wake_ != nullptr) wake_after_push(active_->in);  // RING with IDLE WAKE (MEMIF and KERNEL have no rings here)
      sent_.add(n);
      if (n == b.n) {
        full_since_ = 0;
        b.n = 0;
        return;
      }
      ring_full_.add(b.n - n);
      note_full();
      std::memmove(b.pkts, b.pkts + n, (b.n - n) * sizeof(rte_mbuf*));
      b.n = static_cast<uint16_t>(b.n - n);
    }
    apply_policy(b);
  }

  bool is_source() const override { return true; }
  unsigned run_source() override {
    if (wake_pending_ && (++polls_since_push_ > kWakeIdlePolls || rte_rdtsc() - wake_since_ > wake_delay_cycles_))
      flush_wake();  // the worker went idle (polls without a packet for this NF), or the wait's bound passed
    if (seg_) return run_direct();
    if (memif_) {
      PacketBatch b;
      b.n = static_cast<uint16_t>(on_memif([&] { return port_->rx_burst(0, b.pkts, kBurst); }));
      if (!b.n) return 0;
      const unsigned n = b.n;
      returned_.add(n);
      output_push(0, b);
      return n;
    }
    sync_rings();
    void* objs[kBurst];
    const unsigned n = dequeue(active_, objs);
    if (n) deliver(objs, n);
    return n;
  }

  // ---- stats (any thread) ----
  bool black_box_stats(BlackBoxStatsView* out) const override {
    out->nf = nf_;
    out->mode = mode_;
    out->state = state_name(state_.load(std::memory_order_acquire));
    out->on_failure = open_ ? "OPEN" : "CLOSED";
    out->pid = pid_.load(std::memory_order_relaxed);
    out->restarts = restarts_.load(std::memory_order_relaxed);
    out->sent = sent_.get();
    out->returned = returned_.get();
    out->nf_dropped = nf_dropped_.get();
    // KERNEL: what the namespace did not give back (its drops, plus the few frames crossing it right now).
    if (kernel_) out->nf_dropped = out->sent > out->returned ? out->sent - out->returned : 0;
    if (nf_shared_dropped_ != nullptr) out->nf_dropped = __atomic_load_n(nf_shared_dropped_, __ATOMIC_RELAXED);
    out->ring_full = ring_full_.get();
    out->bypassed = bypassed_.get();
    out->failed_closed = failed_closed_.get();
    out->nf_lost = nf_lost_.load(std::memory_order_relaxed);
    out->link = memif_ || kernel_ ? "" : seg_ ? "DIRECT" : "AGENT";
    if (wake_ != nullptr) {
      out->nf_sleeps = __atomic_load_n(&wake_->sleeps, __ATOMIC_RELAXED);
      out->nf_wakeups = __atomic_load_n(&wake_->wakeups, __ATOMIC_RELAXED);
    }
    if (seg_) {  // the NF library's counts (the agent sees neither end of a middle NF's rings)
      const metron_nf_link* l = seg_->hops[pos_].link;
      out->sent = __atomic_load_n(&l->taken, __ATOMIC_RELAXED);
      out->returned = __atomic_load_n(&l->passed, __ATOMIC_RELAXED);
    }
    std::lock_guard<std::mutex> lock(mu_);
    out->last_exit = last_exit_;
    return true;
  }
  void report(std::ostream& os) const override {
    BlackBoxStatsView s;
    black_box_stats(&s);
    double cpu;
    {
      std::lock_guard<std::mutex> lock(mu_);
      cpu = dead_cpu_ + (proc_ ? proc_->cpu_seconds() : 0);
    }
    os << "sent " << s.sent << "\nreturned " << s.returned << "\nnf_dropped " << s.nf_dropped << "\nring_full "
       << s.ring_full << "\nbypassed " << s.bypassed << "\nfailed_closed " << s.failed_closed << "\nrestarts "
       << s.restarts << "\nnf_lost " << s.nf_lost << "\nnf_sleeps " << s.nf_sleeps << "\nnf_wakeups " << s.nf_wakeups
       << "\nnf_cpu_seconds " << cpu << "\n";
  }

 private:
  // ---- LINK DIRECT ----
  bool linkable() const { return !memif_ && !kernel_ && link_direct_; }
  // The box `a` hands its packets to directly: its output's element, if a linkable box whose only input is `a`.
  static BlackBoxNF* direct_next(const GraphEnv& env, const BlackBoxNF* a) {
    auto* b = dynamic_cast<BlackBoxNF*>(a->output_element(0));
    if (b == nullptr || b == a || !b->linkable()) return nullptr;
    int inputs = 0;
    for (Element* e : env.all_elements(env.element_ctx))
      for (int k = 0; k < e->noutputs(); ++k) inputs += e->output_element(k) == b;
    return inputs == 1 ? b : nullptr;
  }
  static BlackBoxNF* direct_prev(const GraphEnv& env, const BlackBoxNF* b) {
    for (Element* e : env.all_elements(env.element_ctx)) {
      auto* a = dynamic_cast<BlackBoxNF*>(e);
      if (a != nullptr && a->linkable() && direct_next(env, a) == b) return a;
    }
    return nullptr;
  }
  // Finds this box's segment, building it (all members' rings) at the first member initialised. A box alone keeps
  // its rings to and from the agent (seg_ stays null).
  void join_segment(const GraphEnv& env) {
    if (env.all_elements == nullptr || seg_) return;
    BlackBoxNF* head = this;
    while (BlackBoxNF* p = direct_prev(env, head)) head = p;
    if (head->seg_) return;  // built without this box (a segment holds at most 63: the drop marks' bits)
    std::vector<BlackBoxNF*> m{head};
    while (m.size() < kMarkMask) {
      BlackBoxNF* n = direct_next(env, m.back());
      if (n == nullptr) break;
      m.push_back(n);
    }
    if (m.size() < 2) return;
    auto seg = std::make_shared<DirectSegment>();
    for (BlackBoxNF* b : m) seg->add_hop(b->ring_size_);
    seg->members = m;
    for (unsigned i = 0; i < m.size(); ++i) {
      m[i]->seg_ = seg;
      m[i]->pos_ = i;
      m[i]->last_ = i + 1 == m.size();
    }
  }
  // Into this NF's agent ring (the segment's input at the first box; a bypass or stand-in output at the others).
  void push_direct(PacketBatch& b) {
    const unsigned n = rte_ring_sp_enqueue_burst(seg_->hops[pos_].from_agent, reinterpret_cast<void**>(b.pkts), b.n, nullptr);
    wake_after_push(seg_->hops[pos_].from_agent);
    if (n == b.n) {
      b.n = 0;
      return;
    }
    ring_full_.add(b.n - n);
    std::memmove(b.pkts, b.pkts + n, (b.n - n) * sizeof(rte_mbuf*));
    b.n = static_cast<uint16_t>(b.n - n);
    apply_policy(b);
  }

  unsigned run_direct() {
    unsigned n = 0;
    if (__builtin_expect(standin_want_.load(std::memory_order_relaxed), 0)) n += stand_in();
    if (last_) {
      void* objs[kBurst];
      const unsigned k = rte_ring_sc_dequeue_burst(seg_->hops[pos_].out, objs, kBurst, nullptr);
      if (k) {
        PacketBatch pass;
        split_marked(objs, k, pass);
        output_push(0, pass);
        n += k;
      }
    }
    return n;
  }

  // The NF is down: the worker reads its input rings and applies ON_FAILURE. Dekker with let_go: the flag is set
  // before `want` is read again, so the supervisor, once it cleared `want` and saw the flag clear, knows the worker
  // reads these rings no more.
  unsigned stand_in() {
    standing_in_.store(true, std::memory_order_seq_cst);
    unsigned n = 0;
    if (standin_want_.load(std::memory_order_seq_cst)) {
      void* objs[kBurst];
      for (rte_ring* r : {pos_ ? seg_->hops[pos_ - 1].out : nullptr, seg_->hops[pos_].from_agent}) {
        if (r == nullptr) continue;
        const unsigned k = rte_ring_sc_dequeue_burst(r, objs, kBurst, nullptr);
        if (!k) continue;
        n += k;
        PacketBatch b;
        split_marked(objs, k, b);
        apply_policy(b);
      }
    }
    standing_in_.store(false, std::memory_order_release);
    return n;
  }

  // Ring entries into packets: those with a drop mark are freed and counted for the member whose mark they carry.
  void split_marked(void** objs, unsigned n, PacketBatch& pass) {
    rte_mbuf* dropped[kBurst];
    unsigned nd = 0;
    for (unsigned i = 0; i < n; ++i) {
      const uintptr_t v = reinterpret_cast<uintptr_t>(objs[i]);
      rte_mbuf* m = reinterpret_cast<rte_mbuf*>(v & ~kMarkMask);
      const uintptr_t mark = v & kMarkMask;
      if (!mark) {
        pass.push_back(m);
        continue;
      }
      dropped[nd++] = m;
      BlackBoxNF* by = mark <= seg_->members.size() ? seg_->members[mark - 1] : this;
      by->nf_dropped_.add(1);
    }
    if (nd) {
      rte_pktmbuf_free_bulk(dropped, nd);
      counters()->drops += nd;
    }
  }

  // Supervisor: the instance attached; the worker stops standing in, then the NF may read (go).
  bool let_go() {
    standin_want_.store(false, std::memory_order_seq_cst);
    while (standing_in_.load(std::memory_order_seq_cst)) {
      if (stop_.load()) return false;
      std::this_thread::yield();
    }
    DirectHop& h = seg_->hops[pos_];
    in_tail0_ = pos_ ? seg_->hops[pos_ - 1].out->cons.tail : 0;
    agent_tail0_ = h.from_agent->cons.tail;
    out_tail0_ = h.out->prod.tail;
    stall_since_[0] = stall_since_[1] = {};
    __atomic_store_n(&h.link->go, 1u, __ATOMIC_RELEASE);
    return true;
  }

  // Supervisor, the instance reaped: its ring ends back at their tails, what it held counted, the worker stands in.
  void take_over() {
    DirectHop& h = seg_->hops[pos_];
    rte_ring* in = pos_ ? seg_->hops[pos_ - 1].out : nullptr;
    // A dequeue returns only after its tail moved: entries between head and tail were not the NF's yet. An enqueue
    // publishes with its tail: entries between were not the next NF's yet, their packets were the dead NF's.
    if (in != nullptr) in->cons.head = in->cons.tail;
    h.from_agent->cons.head = h.from_agent->cons.tail;
    h.out->prod.head = h.out->prod.tail;
    const uint32_t took = (in != nullptr ? in->cons.tail - in_tail0_ : 0) + (h.from_agent->cons.tail - agent_tail0_);
    const uint32_t gave = h.out->prod.tail - out_tail0_;
    nf_lost_.fetch_add(static_cast<uint32_t>(took - gave), std::memory_order_relaxed);
    __atomic_store_n(&h.link->go, 0u, __ATOMIC_RELEASE);
    standin_want_.store(true, std::memory_order_seq_cst);
  }

  // Supervisor, LINK AGENT, the instance reaped: the same repair on its own pair (fresh per instance, so the tails
  // are its totals); the worker drains the pair once the next one is published.
  void count_lost(NfRings* r) {
    r->in->cons.head = r->in->cons.tail;
    r->out->prod.head = r->out->prod.tail;
    nf_lost_.fetch_add(static_cast<uint32_t>(r->in->cons.tail - r->out->prod.tail), std::memory_order_relaxed);
  }

  // Supervisor: an input ring full and not read for STALL_TIMEOUT (the agent's ring, or the previous NF's).
  bool direct_stalled() {
    if (stall_ms_ == 0 || state_.load(std::memory_order_acquire) != kRunning) return false;
    const auto now = std::chrono::steady_clock::now();
    // An NF whose own output is full waits for the next one: backpressure, not a stall of its own.
    const bool blocked = rte_ring_free_count(seg_->hops[pos_].out) == 0;
    rte_ring* rings[2] = {seg_->hops[pos_].from_agent, pos_ ? seg_->hops[pos_ - 1].out : nullptr};
    for (int i = 0; i < 2; ++i) {
      if (rings[i] == nullptr) continue;
      const uint32_t tail = rings[i]->cons.tail;
      if (blocked || rte_ring_free_count(rings[i]) != 0 || tail != stall_tail_[i]) {
        stall_tail_[i] = tail;
        stall_since_[i] = {};
      } else if (stall_since_[i] == std::chrono::steady_clock::time_point{}) {
        stall_since_[i] = now;
      } else if (now - stall_since_[i] > std::chrono::milliseconds(stall_ms_)) {
        return true;
      }
    }
    return false;
  }

  // The worker's packets that the NF cannot take now: ON_FAILURE.
  void apply_policy(PacketBatch& b) {
    if (!b.n) return;
    if (open_) {
      bypassed_.add(b.n);
      output_push(0, b);
    } else {
      failed_closed_.add(b.n);
      drop_all(b);
    }
  }

  // Entries from the NF's ring: passed ones leave on output 0, dropped ones (bit 0) are freed and counted.
  void deliver(void** objs, unsigned n) {
    PacketBatch pass;
    rte_mbuf* dropped[kBurst];
    unsigned nd = 0;
    for (unsigned i = 0; i < n; ++i) {
      const uintptr_t v = reinterpret_cast<uintptr_t>(objs[i]);
      rte_mbuf* m = reinterpret_cast<rte_mbuf*>(v & ~uintptr_t{1});
      if (v & 1) dropped[nd++] = m;
      else pass.push_back(m);
    }
    if (nd) {
      rte_pktmbuf_free_bulk(dropped, nd);
      nf_dropped_.add(nd);
      counters()->drops += nd;
    }
    returned_.add(pass.n);
    output_push(0, pass);
  }

  // The NF's input refused packets. A stall: it keeps refusing while the NF makes no progress for STALL_TIMEOUT
  // (RING: the input ring's consumer index does not move; MEMIF: nothing comes back).
  void note_full() {
    const uint64_t progress = memif_ || kernel_ ? returned_.get() : active_->in->cons.tail;
    const uint64_t now = rte_rdtsc();
    if (full_since_ == 0 || progress != full_progress_) {
      full_since_ = now;
      full_progress_ = progress;
      return;
    }
    if (stall_cycles_ && now - full_since_ > stall_cycles_ && !stalled_.load(std::memory_order_relaxed))
      stalled_.store(true, std::memory_order_release);
  }

  // Takes the supervisor's new ring pair, if any: the old instance is dead (reaped) before a new pair is published,
  // so this core is the only user of the old pair's both ends now.
  void sync_rings() {
    NfRings* cur = cur_.load(std::memory_order_acquire);
    if (__builtin_expect(cur == active_, 1)) return;
    NfRings* old = active_;
    active_ = cur;
    full_since_ = 0;
    void* objs[kBurst];
    unsigned n;
    while ((n = dequeue(old, objs)) > 0) deliver(objs, n);
    if (kernel_) {  // what the dead namespace still held is gone with it
      retired_gen_.store(old->gen, std::memory_order_release);
      return;
    }
    PacketBatch b;
    while ((b.n = static_cast<uint16_t>(
                rte_ring_sc_dequeue_burst(old->in, reinterpret_cast<void**>(b.pkts), kBurst, nullptr))) > 0)
      apply_policy(b);  // counted in sent (handed over) and now in bypassed/failed_closed: the NF never took them
    retired_gen_.store(old->gen, std::memory_order_release);
  }

  // What an instance passed back: the out ring's entries, or (KERNEL) the frames its namespace sent out.
  unsigned dequeue(NfRings* r, void** objs) {
    if (kernel_) return r->kns->from_nf().rx_burst(0, reinterpret_cast<rte_mbuf**>(objs), kBurst);
    return rte_ring_sc_dequeue_burst(r->out, objs, kBurst, nullptr);
  }

  // ---- KERNEL mode: a network namespace per instance, the kernel between two af_packet ports (kernel_ns.h) ----
  std::unique_ptr<KernelNs> make_namespace() {
    const uint64_t n = g_ring_seq.fetch_add(1);
    char base[32];
    std::snprintf(base, sizeof base, "mk%dx%llx", static_cast<int>(getpid()), static_cast<unsigned long long>(n));
    return std::make_unique<KernelNs>(std::string("mbb") + (base + 2), base, pool_);
  }

  // ---- MEMIF mode: a net_memif server port per element, the NF its client (a copy each way) ----
  void open_memif(const GraphEnv& env, unsigned seq) {
    std::error_code ec;
    std::filesystem::create_directories(kMemifDir, ec);
    const std::string id = std::to_string(getpid()) + "_" + std::to_string(seq);
    memif_socket_ = std::string(kMemifDir) + "/bb" + id + ".sock";
    // The NF library adds what it drops here (it frees those packets itself in this mode); every instance adds to
    // the same counter, so it is the element's total.
    stats_path_ = std::string(kMemifDir) + "/bb" + id + ".stats";
    const int fd = open(stats_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(uint64_t)) != 0 ||
        (nf_shared_dropped_ = static_cast<uint64_t*>(
             mmap(nullptr, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0))) == MAP_FAILED) {
      nf_shared_dropped_ = nullptr;
      if (fd >= 0) close(fd);
      unlink(stats_path_.c_str());
      throw ResourceError("cannot create " + stats_path_ + ": " + std::strerror(errno));
    }
    close(fd);
    nf_prefix_ = "mbbnf" + id;
    pool_ = packed_pktmbuf_pool("mbbp" + std::to_string(seq), 4095, env.socket_id);
    try {
      port_ = DpdkPort::open("net_memif_mbb" + std::to_string(seq) + ",role=server,id=0,socket-abstract=no,socket=" +
                                 memif_socket_,
                             1, 1, pool_);
    } catch (...) {
      rte_mempool_free(pool_);
      pool_ = nullptr;
      throw;
    }
  }
  void close_memif() {
    port_.reset();
    if (nf_shared_dropped_ != nullptr) munmap(nf_shared_dropped_, sizeof(uint64_t));
    nf_shared_dropped_ = nullptr;
    if (!stats_path_.empty()) unlink(stats_path_.c_str());
    if (pool_ != nullptr) rte_mempool_free(pool_);
    pool_ = nullptr;
    if (!memif_socket_.empty()) unlink(memif_socket_.c_str());
    if (nf_conn_ >= 0) close(nf_conn_);
    nf_conn_ = -1;
  }

  // The memif port's rx or tx `f`, unless the supervisor holds the worker off the port (memif_quiet_). DPDK's memif
  // server unmaps and frees the shared memory when its client goes, in the EAL interrupt thread, with nothing
  // against a worker inside rx/tx (the agent's test process died of it, SIGSEGV in librte_net_memif rx, when its NF
  // was killed). A Dekker pair with end_memif(), as stand_in() with let_go(). An NF that leaves cleanly by itself
  // (SIGTERM from elsewhere: the library closes its port, which sends a disconnect) still races the worker.
  template <typename F>
  unsigned on_memif(F f) {
    in_memif_.store(true, std::memory_order_seq_cst);
    const unsigned n = memif_quiet_.load(std::memory_order_seq_cst) ? 0 : f();
    in_memif_.store(false, std::memory_order_release);
    return n;
  }

  // Supervisor: the instance attached. Its end of the memif connection is duplicated into the agent (pidfd_getfd),
  // so that its death does not end the connection: the supervisor ends it itself (end_memif), the worker held off
  // the port. Without that descriptor (no pidfd_getfd) a dead NF's disconnect races the worker as before.
  void hold_memif(const NfProcess& p) {
    if (nf_conn_ >= 0) close(nf_conn_);
    nf_conn_ = -1;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(p.pid()) + "/fd", ec)) {
      if (std::filesystem::read_symlink(e.path(), ec).string().rfind("socket:", 0) != 0) continue;
      const int fd = p.dup_fd(std::atoi(e.path().filename().c_str()));
      if (fd < 0) continue;
      sockaddr_un peer{};
      socklen_t len = sizeof peer;
      int type = 0;
      socklen_t tlen = sizeof type;
      if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) == 0 && type == SOCK_SEQPACKET &&
          getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0 && peer.sun_family == AF_UNIX &&
          memif_socket_ == peer.sun_path) {
        nf_conn_ = fd;
        break;
      }
      close(fd);
    }
    if (nf_conn_ < 0)
      std::fprintf(stderr, "metron: black-box NF '%s': its memif connection could not be held (pidfd_getfd)\n",
                   nf_.c_str());
    memif_quiet_.store(false, std::memory_order_seq_cst);
  }

  // Supervisor, the instance dead: the worker held off the port, then the connection ended (the server side
  // disconnects: unmaps), and waited for. False if stopping.
  bool end_memif() {
    memif_quiet_.store(true, std::memory_order_seq_cst);
    while (in_memif_.load(std::memory_order_seq_cst)) {
      if (stop_.load()) return false;
      std::this_thread::yield();
    }
    if (nf_conn_ >= 0) close(nf_conn_);
    nf_conn_ = -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(attach_ms_);
    while (port_->link_up() && std::chrono::steady_clock::now() < deadline)
      if (sleep_or_stop(std::chrono::milliseconds(1))) return false;
    return true;
  }
  // ---- supervisor thread ----
  std::vector<std::string> nf_argv() const {
    if (kernel_) {  // an ordinary program, run in the namespace
      std::vector<std::string> a{program_};
      a.insert(a.end(), nf_args_.begin(), nf_args_.end());
      return a;
    }
    if (memif_) {
      std::vector<std::string> a{program_, "--no-huge", "-m", "64", "--file-prefix", nf_prefix_, "--no-pci",
                                 "--vdev", "net_memif0,role=client,id=0,socket-abstract=no,socket=" + memif_socket_,
                                 "--lcores", "0@(" + cpus_ + ")", "--log-level", "lib.eal:error", "--"};
      a.insert(a.end(), nf_args_.begin(), nf_args_.end());
      return a;
    }
    std::vector<std::string> a{program_,     "--proc-type=secondary", "--file-prefix", file_prefix_, "--no-pci",
                               "--lcores",   std::to_string(lcore_) + "@(" + cpus_ + ")",
                               "--log-level", "lib.eal:error",
                               // The agent's vdevs a secondary cannot drive (ring ports): not the NF's concern.
                               "--log-level", "pmd.net.ring:critical", "--log-level", "bus.vdev:critical", "--"};
    a.insert(a.end(), nf_args_.begin(), nf_args_.end());
    return a;
  }

  // Starts an instance on rings `r` and waits for it to attach. Empty on success, else why not.
  std::string start_instance() {
    std::unique_ptr<NfProcess> p;
    std::vector<std::string> env{std::string(METRON_NF_ENV_MODE) + "=" + mode_};
    if (memif_) env.push_back(std::string(METRON_NF_ENV_STATS) + "=" + stats_path_);
    int netns = -1;
    if (kernel_) {
      env.push_back("METRON_NF_NETNS=" + rings_.back()->kns->name());
      env.push_back("METRON_NF_IN=in");
      env.push_back("METRON_NF_OUT=out");
      netns = rings_.back()->kns->open_fd();
      if (netns < 0) return "its network namespace " + rings_.back()->kns->name() + " is gone";
    } else if (seg_) {
      const DirectHop& h = seg_->hops[pos_];
      env.push_back(std::string(METRON_NF_ENV_RX) + "=" + (pos_ ? seg_->hops[pos_ - 1].out_name : h.from_agent_name));
      if (pos_) env.push_back(std::string(METRON_NF_ENV_RX2) + "=" + h.from_agent_name);
      env.push_back(std::string(METRON_NF_ENV_TX) + "=" + h.out_name);
      env.push_back(std::string(METRON_NF_ENV_MARK) + "=" + std::to_string(pos_ + 1));
      env.push_back(std::string(METRON_NF_ENV_LINK) + "=" + h.link_name);
    } else if (!memif_) {
      env.push_back(std::string(METRON_NF_ENV_RX) + "=" + rings_.back()->in_name);
      env.push_back(std::string(METRON_NF_ENV_TX) + "=" + rings_.back()->out_name);
    }
    if (!kernel_) env.push_back(std::string(METRON_NF_ENV_IDLE) + "=" + idle_);
    if (wake_ != nullptr) {
      env.push_back(std::string(METRON_NF_ENV_SPIN) + "=" + std::to_string(idle_spin_us()));
      env.push_back(std::string(METRON_NF_ENV_SCHED) + "=" + sched_);
      if (!seg_) env.push_back(std::string(METRON_NF_ENV_WAKE) + "=" + wake_mz_->name);
    }
    // The next NF of a segment sleeps too: this one wakes it after handing it packets.
    if (seg_ && !last_ && seg_->members[pos_ + 1]->idle_ == "WAKE")
      env.push_back(std::string(METRON_NF_ENV_TX_LINK) + "=" + seg_->hops[pos_ + 1].link_name);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      p = std::make_unique<NfProcess>(nf_argv(), std::move(env), METRON_NF_ENV_READY, netns);
    } catch (const std::exception& e) {
      if (netns >= 0) close(netns);
      return e.what();
    }
    if (netns >= 0) close(netns);
    pid_.store(p->pid(), std::memory_order_relaxed);
    NfProcess::Attach a = p->wait_attached(attach_ms_);
    if (a == NfProcess::Attach::kAttached && memif_) {  // attached = its memif connected to our port
      while (!port_->link_up() && std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(attach_ms_)) {
        if (p->wait_exit(5)) {
          a = NfProcess::Attach::kExited;
          break;
        }
      }
      if (a == NfProcess::Attach::kAttached && !port_->link_up()) a = NfProcess::Attach::kTimeout;
    }
    if (a == NfProcess::Attach::kAttached) {
      if (memif_) hold_memif(*p);
      std::lock_guard<std::mutex> lock(mu_);
      proc_ = std::move(p);
      return "";
    }
    if (kernel_ && a == NfProcess::Attach::kExited && p->how() == "exit 0") {
      // A setup command (nft -f rules): done, the NF is its namespace from now on.
      pid_.store(0, std::memory_order_relaxed);
      return "";
    }
    if (a == NfProcess::Attach::kTimeout)  // where it is stuck, and where the agent's threads are (the reaps)
      std::fprintf(stderr, "metron: black-box NF '%s' (pid %d) did not attach within %d ms; its threads:%s\n"
                           "the agent's threads:%s\n",
                   nf_.c_str(), p->pid(), attach_ms_, describe_threads(p->pid()).c_str(),
                   describe_threads(getpid()).c_str());
    pid_.store(0, std::memory_order_relaxed);
    std::string why = a == NfProcess::Attach::kExited
                          ? "exited at start (" + p->how() + ")"
                          : "did not attach within " + std::to_string(attach_ms_) + " ms";
    p.reset();  // kills and reaps
    remove_nf_runtime_dir();
    return why;
  }

  void supervise(std::promise<std::string>* started) {
    pthread_setname_np(pthread_self(), "mbb-supervisor");
    std::string err = start_instance();
    if (!err.empty()) {
      started->set_value(err);
      return;
    }
    if (seg_) let_go();
    state_.store(kRunning, std::memory_order_release);
    started->set_value("");
    auto up_since = std::chrono::steady_clock::now();
    unsigned failures = 0;
    while (!stop_.load()) {
      free_retired();
      std::string down;
      if (seg_ && direct_stalled()) stalled_.store(true, std::memory_order_release);
      if (stalled_.load(std::memory_order_acquire)) {
        if (proc_) proc_->kill_group(SIGKILL);
        else down = "stalled";
      }
      if (proc_) {
        if (proc_->wait_exit(20)) down = proc_->how();
      } else if (down.empty() && sleep_or_stop(std::chrono::milliseconds(20))) {
        break;
      }
      if (down.empty() && kernel_ && !rings_.back()->kns->alive()) down = "namespace gone";
      if (down.empty()) continue;
      // Down: ON_FAILURE from now on, fresh rings (a fresh namespace) for the next instance.
      state_.store(kRestarting, std::memory_order_release);
      pid_.store(0, std::memory_order_relaxed);
      std::unique_ptr<NfProcess> dead;
      {
        std::lock_guard<std::mutex> lock(mu_);
        last_exit_ = down;
        if (proc_) dead_cpu_ += proc_->cpu_seconds();
        dead = std::move(proc_);
      }
      dead.reset();  // outside mu_ (stats wait on it): the group killed (a namespace's daemon), the zombie reaped
      if (memif_ && !end_memif()) break;
      if (seg_) take_over();
      else if (!memif_ && !kernel_) count_lost(rings_.back().get());
      remove_nf_runtime_dir();
      if (std::chrono::steady_clock::now() - up_since > std::chrono::seconds(10)) failures = 0;
      for (;;) {
        // Backoff: 50 ms, doubling per failed start in a row, at most 2 s.
        const auto backoff = std::chrono::milliseconds(std::min<unsigned>(2000, 50u << std::min(failures, 6u)));
        if (!publish_rings() || sleep_or_stop(backoff)) return;
        err = start_instance();
        restarts_.fetch_add(1, std::memory_order_relaxed);
        if (err.empty() && seg_ && !let_go()) {  // stopping
          stop_instance();
          return;
        }
        if (err.empty()) break;
        {
          std::lock_guard<std::mutex> lock(mu_);
          last_exit_ = err;
        }
        if (++failures >= kMaxFailures) {
          state_.store(kFailed, std::memory_order_release);
          sleep_or_stop(std::chrono::hours(24 * 365));
          return;  // no instance runs
        }
      }
      stalled_.store(false, std::memory_order_release);
      state_.store(kRunning, std::memory_order_release);
      up_since = std::chrono::steady_clock::now();
    }
    stop_instance();
  }

  // Ends the running instance from this thread: the NF dies with the thread that forked it (PR_SET_PDEATHSIG), so
  // this thread must outlive the SIGTERM grace period for the NF to leave cleanly.
  void stop_instance() {
    std::unique_ptr<NfProcess> p;
    {
      std::lock_guard<std::mutex> lock(mu_);
      p = std::move(proc_);
    }
    p.reset();  // SIGTERM, then SIGKILL to the group; reaped
    remove_nf_runtime_dir();
  }
  // MEMIF: the NF is a DPDK primary of its own, whose runtime directory a killed instance leaves behind.
  void remove_nf_runtime_dir() const {
    if (!memif_) return;
    std::error_code ec;
    std::filesystem::remove_all("/var/run/dpdk/" + nf_prefix_, ec);
  }

  // New rings for the next instance, published to the worker. False if they cannot be had (then FAILED).
  bool publish_rings() {
    if (memif_ || seg_) return true;  // the memif port, the direct rings stay; the next instance uses them again
    try {
      auto r = kernel_ ? std::make_unique<NfRings>(rings_.back()->gen + 1, make_namespace())
                       : std::make_unique<NfRings>(rings_.back()->gen + 1, ring_size_);
      NfRings* p = r.get();
      {
        std::lock_guard<std::mutex> lock(rings_mu_);
        rings_.push_back(std::move(r));
      }
      stalled_.store(false, std::memory_order_release);
      cur_.store(p, std::memory_order_release);
      return true;
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu_);
      last_exit_ = e.what();
      state_.store(kFailed, std::memory_order_release);
      return false;
    }
  }

  // Rings the worker has retired (drained and left) are freed; the current pair stays.
  void free_retired() {
    const uint64_t retired = retired_gen_.load(std::memory_order_acquire);
    std::lock_guard<std::mutex> lock(rings_mu_);
    while (rings_.size() > 1 && rings_.front()->gen <= retired) rings_.erase(rings_.begin());
  }

  // True if stop was asked (then returns at once).
  template <typename D>
  bool sleep_or_stop(D d) {
    std::unique_lock<std::mutex> lock(stop_mu_);
    return stop_cv_.wait_for(lock, d, [this] { return stop_.load(); });
  }

  void shutdown() {
    {
      std::lock_guard<std::mutex> lock(stop_mu_);
      stop_.store(true);
    }
    stop_cv_.notify_all();
    if (supervisor_.joinable()) supervisor_.join();  // it stopped the instance
    rings_.clear();
    close_memif();  // frees the mbufs still queued
    wake_ = nullptr;
    if (wake_mz_ != nullptr) rte_memzone_free(wake_mz_);
    wake_mz_ = nullptr;
  }

  // IDLE WAKE, after a push into the NF's ring `r`: wake it now (WAKE_BATCH 1: a fence and a read, a system call only
  // if it sleeps), or leave the wake pending. An NF sharing its CPU with others is woken per batch, not per push: a
  // wake per 32-packet push made six NFs on one CPU take turns on ~100 packets (4-10 wake-ups per 1000 packets, each
  // a system call and an interprocessor interrupt for the worker); waiting for a ring-full, or for the worker to go
  // idle (a packet then waits 16 empty polls, not longer), makes the turns long. The NF's own 100 ms timeout is
  // the backstop of a wake that never comes.
  void wake_after_push(rte_ring* r) {
    if (wake_ == nullptr) return;
    if (wake_batch_ <= 1) {
      metron_nf_wake_up(wake_);
      return;
    }
    polls_since_push_ = 0;
    if (!wake_pending_) {
      wake_pending_ = true;
      wake_since_ = rte_rdtsc();
    }
    if (rte_ring_count(r) >= wake_batch_) flush_wake();
  }
  void flush_wake() {
    wake_pending_ = false;
    metron_nf_wake_up(wake_);
  }

  // IDLE WAKE: how long the NF polls its empty input before it sleeps. IDLE_SPIN if given; else 0 for an NF that
  // shares its one CPU with another NF of the graph: while it polls, the NFs with packets waiting on that CPU cannot
  // run (SCHED_BATCH: a woken NF does not preempt it), so it sleeps at once and takes a larger batch next time
  // (profiled: six NFs on one CPU spent half their CPU time in the first NF's 20 µs polls of the agent's ring);
  // else 20 µs, in which its producer, running elsewhere, refills the ring.
  uint64_t idle_spin_us() const { return spin_given_ || !cpu_shared_ ? spin_us_ : 0; }
  static bool one_cpu(const std::string& cpus) {
    return !cpus.empty() && cpus.find_first_not_of("0123456789") == std::string::npos;
  }
  bool shares_its_cpu(const GraphEnv& env) const {
    if (env.all_elements == nullptr || !one_cpu(cpus_)) return false;
    for (Element* e : env.all_elements(env.element_ctx)) {
      const auto* b = dynamic_cast<const BlackBoxNF*>(e);
      if (b != nullptr && b != this && !b->memif_ && !b->kernel_ && b->cpus_ == cpus_) return true;
    }
    return false;
  }

  // IDLE WAKE: the NF's wake word, which the worker's push wakes (docs/blackbox.md "Sleep and wake"): in its link
  // block (DIRECT), or a memzone of the element's (LINK AGENT: its rings change per instance, the word stays).
  void make_wake() {
    if (seg_) {
      wake_ = &seg_->hops[pos_].link->wake;
      return;
    }
    const std::string name = "mbw" + std::to_string(g_ring_seq.fetch_add(1));
    wake_mz_ = rte_memzone_reserve_aligned(name.c_str(), sizeof(metron_nf_wake), SOCKET_ID_ANY, 0, 64);
    if (wake_mz_ == nullptr) {
      rings_.clear();
      throw ResourceError("cannot reserve the wake word " + name + ": " + rte_strerror(rte_errno));
    }
    wake_ = static_cast<metron_nf_wake*>(wake_mz_->addr);
    std::memset(wake_, 0, sizeof(*wake_));
  }

  static constexpr unsigned kMaxFailures = 10;
  static constexpr const char* kMemifDir = "/run/metron";

  // Configuration.
  std::string nf_, program_, mode_ = "RING", cpus_, file_prefix_;
  std::vector<std::string> nf_args_;
  bool open_ = false;
  bool memif_ = false;
  bool kernel_ = false;
  std::string memif_socket_, nf_prefix_, stats_path_;
  int nf_conn_ = -1;                        // MEMIF: the running NF's end of its memif connection, duplicated
  std::atomic<bool> memif_quiet_{false};    // supervisor: the worker keeps off the memif port
  std::atomic<bool> in_memif_{false};       // worker: inside the memif port's rx/tx
  uint64_t* nf_shared_dropped_ = nullptr;  // MEMIF: the NF library's drop counter (a file both map)
  rte_mempool* pool_ = nullptr;
  std::unique_ptr<DpdkPort> port_;
  unsigned ring_size_ = 1024;
  int attach_ms_ = 2000;
  uint64_t stall_ms_ = 100;
  uint64_t stall_cycles_ = 0;
  unsigned lcore_ = 0;
  bool link_direct_ = true;
  std::string idle_ = "WAKE";
  uint64_t spin_us_ = 20;        // IDLE WAKE: empty polling before the NF sleeps
  bool spin_given_ = false;      // IDLE_SPIN was in the config (else idle_spin_us() may choose 0)
  bool cpu_shared_ = false;      // pinned to one CPU that another RING NF of the graph is pinned to as well
  // Wake batching (IDLE WAKE; WAKE_BATCH): a push leaves the wake pending until the NF's ring holds wake_batch_
  // packets, the worker has polled kWakeIdlePolls times without a push for it, or kWakeDelayUs passed. Shared CPU:
  // 2048 packets (a quarter of the ring at most); else 1, every push checks.
  static constexpr unsigned kSharedWakeBatch = 2048;
  static constexpr unsigned kWakeIdlePolls = 16;
  static constexpr uint64_t kWakeDelayUs = 100;
  unsigned wake_batch_ = 1;
  bool wake_batch_given_ = false;
  bool wake_pending_ = false;    // worker only: pushed since the last wake check
  unsigned polls_since_push_ = 0;
  uint64_t wake_since_ = 0;      // TSC of the first push the pending wake covers
  uint64_t wake_delay_cycles_ = 0;
  std::string sched_ = "BATCH";  // IDLE WAKE: the NF's scheduling policy (metron_nf.h METRON_NF_SCHED)
  const rte_memzone* wake_mz_ = nullptr;  // LINK AGENT, IDLE WAKE: holds *wake_
  metron_nf_wake* wake_ = nullptr;        // IDLE WAKE: the NF's wake word (the worker wakes it after a push)

  // LINK DIRECT (set at initialisation).
  std::shared_ptr<DirectSegment> seg_;
  unsigned pos_ = 0;  // place in seg_; the drop mark is pos_ + 1
  bool last_ = false;
  std::atomic<bool> standin_want_{false};  // supervisor: the NF is down, the worker reads its rings
  std::atomic<bool> standing_in_{false};   // worker: inside stand_in()
  std::atomic<uint64_t> nf_lost_{0};
  uint32_t in_tail0_ = 0, agent_tail0_ = 0, out_tail0_ = 0;  // the rings' tails when the instance got `go`
  uint32_t stall_tail_[2] = {0, 0};
  std::chrono::steady_clock::time_point stall_since_[2];

  // Worker-only.
  NfRings* active_ = nullptr;
  uint64_t full_since_ = 0;
  uint64_t full_progress_ = 0;

  // Worker <-> supervisor.
  std::atomic<NfRings*> cur_{nullptr};
  std::atomic<uint64_t> retired_gen_{0};
  std::atomic<bool> stalled_{false};
  std::atomic<int> state_{kStarting};
  std::atomic<int> pid_{0};
  std::atomic<uint64_t> restarts_{0};

  // Counters: the worker writes, anyone reads.
  RelaxedCounter sent_, returned_, nf_dropped_, ring_full_, bypassed_, failed_closed_;

  // Supervisor.
  std::thread supervisor_;
  std::mutex rings_mu_;
  std::vector<std::unique_ptr<NfRings>> rings_;  // oldest first; back() is the current pair
  mutable std::mutex mu_;                        // proc_, last_exit_, dead_cpu_
  std::unique_ptr<NfProcess> proc_;
  std::string last_exit_;
  double dead_cpu_ = 0;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  std::atomic<bool> stop_{false};
};

}  // namespace

METRON_EXPORT_ELEMENT(BlackBoxNF)

}  // namespace metron

// Element: a packet-processing stage of a graph, in Click's model (named ports, push processing) with
// FastClick-style batches. One graph instance runs on exactly one core, so an element's state is that core's
// state: no locks, no atomics on the per-packet path.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/packet_batch.h"
#include "core/stage_profile.h"
#include "utils/args.h"

namespace metron::agent::v1 {
class StateTable;
}

namespace metron {

class ClassCount;

class Port;
class Element;

// Where a group graph's `[k]output` packets go (the engine: egress NIC, dst MAC/VLAN write, tx).
class EgressSink {
 public:
  virtual ~EgressSink() = default;
  virtual void egress(int k, PacketBatch& b) = 0;
  virtual int egress_count() const = 0;
};

// Everything an element may need from its surroundings at initialisation (never on the packet path).
struct GraphEnv {
  int socket_id = 0;          // NUMA node of the core that runs the graph
  unsigned slot = 0;          // the core's dense slot (rx/tx queue index; port-range share unless assigned)
  unsigned slots = 1;         // number of cores running instances of this configuration
  // A group's share of every rewriter port range, assigned by the controller (docs/scaling.md#port-shares): share
  // `port_share` of `port_shares`, unique across the chain's groups on every server (divided again by slot under
  // RSS). Not assigned (a standalone configuration, a controller that sends none): the range is divided by slot.
  bool port_share_assigned = false;
  unsigned port_share = 0;
  unsigned port_shares = 1;
  Port* (*find_port)(void* ctx, const std::string& name) = nullptr;  // standalone FromDevice/ToDevice
  void* port_ctx = nullptr;
  EgressSink* egress = nullptr;  // group graphs: target of `[k]output`
  // Other elements of the same graph by name (set by Graph::build; e.g. IPRewriter finding its IPMapper), and
  // all of them (IPRewriter finding the IPRewriterPatterns that names a pattern).
  Element* (*find_element)(void* ctx, const std::string& name) = nullptr;
  std::vector<Element*> (*all_elements)(void* ctx) = nullptr;
  void* element_ctx = nullptr;
  // Standalone configurations, read on the agent's own host: elements may read the files their arguments name
  // (IPFilter `file PATH`). Group configurations from the controller may not.
  bool allow_files = false;
  std::string instance;          // unique prefix for DPDK object names (pipeline/group/core)
  bool profile = false;          // standalone --profile: charge cycles per element and sub-stage (StageProfile)
};

struct GraphCounters {
  alignas(64) uint64_t drops = 0;
};

// A stateful element's flow table as the control API reports it (GroupStats.flow_state): any thread may read it.
struct FlowStateStats {
  uint64_t flows = 0;              // mappings held
  uint64_t capacity = 0;           // mappings held before the table grows or sheds
  uint64_t declared_capacity = 0;  // CAPACITY/MAPPING_CAPACITY, 0 = none: the table grows
  uint64_t memory_bytes = 0;       // DPDK memory the table reserves
  uint64_t evicted = 0;            // mappings removed to make room for a new flow (a full table's shed policy)
  uint64_t refused = 0;            // new flows not mapped because the table was full
  uint64_t mapping_failures = 0;   // all new flows not mapped: refused, no free port, pattern of another family
  uint64_t growths = 0;            // times the table doubled
  uint64_t growth_failures = 0;    // growths the memory could not hold
  uint64_t shared_heap_hashes = 0; // grown hashes without a heap of their own: resident after the table outgrows them
  uint64_t inherited = 0;          // flows taken over on a miss from a followed element (follow_state)
  uint64_t inherit_failures = 0;   // flows a followed element held that this table could not add
};

// A black-box NF element's process and counters as the control API reports them (GroupStats.black_boxes,
// docs/blackbox.md): any thread may read them.
struct BlackBoxStatsView {
  std::string nf, mode, state, on_failure, last_exit, link;
  int pid = 0;
  uint64_t restarts = 0, sent = 0, returned = 0, nf_dropped = 0, ring_full = 0, bypassed = 0, failed_closed = 0,
           nf_lost = 0, nf_sleeps = 0, nf_wakeups = 0;
};

struct PortCountRange {
  int min, max;  // max -1 = unbounded
};

class Element {
 public:
  virtual ~Element() = default;
  Element() = default;
  Element(const Element&) = delete;
  Element& operator=(const Element&) = delete;

  virtual const char* class_name() const = 0;
  virtual PortCountRange input_range() const { return {1, 1}; }
  virtual PortCountRange output_range() const { return {1, 1}; }
  // Whether input ports may be left unconnected below the highest used one (`[1]output` without `[0]output`).
  virtual bool sparse_inputs() const { return false; }
  // Whether an argument starting with an all-caps word is a keyword argument (Click's convention); false for
  // elements whose positional arguments may start so (IPRewriterPatterns' pattern names).
  virtual bool takes_keywords() const { return true; }
  // Parses the configuration. Throws ConfigError; the graph builder adds the element name and line:col.
  virtual void configure(Args& args) = 0;
  // Called once ports are connected, before the first packet; allocate tables here (on env.socket_id).
  virtual void initialize(const GraphEnv& env) {}
  // Processes a batch that arrived on input `port`. Consumes every packet: forwards or frees it.
  virtual void push(int port, PacketBatch& b) = 0;
  // Where frames come from as a port delivered them, with the receive verdicts the port wrote in the mbuf
  // (ol_flags: the NIC's IPv4 header checksum check): FromDevice and a group's `input`.
  virtual bool delivers_port_frames() const { return false; }
  // Whether the element only chooses an output for each frame, changing nothing in it (Classifier).
  virtual bool passes_frames_unchanged() const { return false; }
  // Called by Graph::build, before initialize(), when every frame reaching this element's inputs comes as a port
  // delivered it: from delivers_port_frames() elements through passes_frames_unchanged() ones only, so the
  // port's verdicts in the mbuf are about these very headers (CheckIPHeader then takes the NIC's checksum check).
  virtual void frames_as_received() {}
  // Sources (FromDevice) are polled by the worker; returns packets handled.
  virtual bool is_source() const { return false; }
  virtual unsigned run_source() { return 0; }
  // Flow state (NAPT/LB tables): elements that keep state export and import it as StateTables.
  virtual bool has_state() const { return false; }
  // A slice of the export, for copies that must not hold the core for a whole table (core/state_copy.h):
  // appends the entries of the records from position `from` on until rte_rdtsc() passes `deadline_tsc` (at least
  // one step is always taken, so the walk ends) and returns where the next slice starts, kExportDone once the
  // table is walked. Between slices the core may insert, delete and expire entries: records keep their position,
  // so an entry that lives through the whole walk is in the copy; one added or removed meanwhile may or may not be.
  static constexpr uint64_t kExportDone = UINT64_MAX;
  virtual uint64_t export_state_slice(agent::v1::StateTable* out, uint64_t from, uint64_t deadline_tsc) const {
    return kExportDone;
  }
  // The whole table at once (the caller holds the core for all of it).
  void export_state(agent::v1::StateTable* out) const {
    for (uint64_t at = 0; at != kExportDone;) at = export_state_slice(out, at, UINT64_MAX);
  }
  // Exchanges this element's flow state with `other`'s in O(1): for a take-over whose successor runs the same
  // Click configuration as its source (core/state_copy.h). Answers false, changing nothing, unless `other` is an
  // element of the same class with a table of the same shape. The caller holds the cores of both.
  virtual bool swap_state(Element& other) { return false; }
  // Returns entries imported; throws ConfigError on an invalid table, leaving the element unchanged.
  virtual uint64_t import_state(const agent::v1::StateTable& in, bool merge) { return 0; }
  // ImportStateRequest.follow_source: until unfollow_state(source), a flow this element misses is looked up in
  // `source` (the same element of the group its state came from, run by the same core) and taken over with its
  // mapping before a new one is made. Answers false, changing nothing, unless `source` is an element of the same
  // class with a table of the same shape. Control path, the core held (both elements are its).
  virtual bool follow_state(const Element& source) { return false; }
  virtual void unfollow_state(const Element& source) {}
  // Whether this element takes the place of `feeder`, the one element whose output feeds its input `port`, by
  // running feeder's per-packet step itself (a rewriter running its CheckIPHeader, check_ip_header.h): if so,
  // Graph::build sends what fed `feeder` straight to this input (redirect_output) and feeder no longer sees a
  // packet; its counters are this element's to keep. Asked after initialize(), only of a feeder with one output.
  virtual bool fold_input(int port, Element& feeder) { return false; }
  // Whether this element, which a group's `input` feeds on input `port`, counts the group's telemetry in its own
  // first pass over each batch's headers (core/class_count.h): if so, for every batch on that port during which
  // *slot is not null, it counts each frame of the batch, in order, into **slot. GroupRuntime asks after
  // Graph::build.
  virtual bool take_group_count(int port, ClassCount* const* slot) { return false; }
  // Stateful elements: their flow table's figures; false for the others.
  virtual bool flow_state_stats(FlowStateStats* out) const { return false; }
  // Black-box NFs (BlackBoxNF): their process's state and counters; false for the others.
  virtual bool black_box_stats(BlackBoxStatsView* out) const { return false; }
  // Counters for the standalone exit report ("count 123"); empty when the element has none.
  virtual void report(std::ostream& os) const {}
  // Names of the sub-stages the element marks with profile_stage(k) inside its push, k = 0, 1, ... (profiled
  // graphs report each as NAME.STAGE; what follows the last mark is the element's own).
  virtual std::vector<const char*> stage_names() const { return {}; }

  const std::string& name() const { return name_; }
  int ninputs() const { return ninputs_; }
  int noutputs() const { return noutputs_; }
  // The element output k is connected to as the configuration wires it (after Graph::build; null if none), also
  // when the batches of output k go past it (fold_output, fold_input).
  Element* output_element(int k) const { return k < static_cast<int>(out_.size()) ? out_[k].wired : nullptr; }
  // The element output k's batches are pushed to: output_element(k), or another when folded (fold_output,
  // fold_input); and its input port.
  Element* output_target(int k) const { return k < static_cast<int>(out_.size()) ? out_[k].e : nullptr; }
  int output_target_port(int k) const { return k < static_cast<int>(out_.size()) ? out_[k].port : -1; }

  // Wiring, done by Graph::build.
  void set_identity(std::string name, GraphCounters* counters) {
    name_ = std::move(name);
    counters_ = counters;
  }
  void set_port_counts(int nin, int nout) {
    ninputs_ = nin;
    noutputs_ = nout;
    out_.assign(nout, {});
    scratch_.assign(nout, {});
  }
  void connect_output(int k, Element* e, int port) { out_[k] = {e, port, e}; }
  // Output k's batches go to input `port` of e instead (fold_input); output_element(k) stays as wired.
  void redirect_output(int k, Element* e, int port) {
    out_[k].e = e;
    out_[k].port = port;
  }
  // Profiled graphs: the graph's StageProfile, this element's slot and its first sub-stage slot.
  void set_profile(StageProfile* p, int slot, int first_stage) {
    profile_ = p;
    profile_slot_ = slot;
    profile_stages_ = first_stage;
  }
  int profile_slot() const { return profile_slot_; }
  // Profiled graphs: sub-stage k of stage_names() ends here (called inside push, or helpers it runs).
  void profile_stage(int k) {
    if (__builtin_expect(profile_ != nullptr, 0)) profile_->mark(profile_stages_ + k);
  }

 protected:
  // Output k's batches go straight to where the element it is wired to sends its output 0, for an element that
  // runs that one's per-packet work itself as it handles each packet (a rewriter running its DecIPTTL's step,
  // dec_ip_ttl.h): one pass over the batch fewer. Only when output k is wired to an E that allows it
  // (E::foldable(): the caller can do exactly what it would have done) and not redirected already; returns that
  // element, or null (nothing changed). The skipped element stays in the graph, with its counters, for whatever
  // else feeds it. Called in initialize() (the graph is wired by then).
  template <typename E>
  E* fold_output(int k) {
    auto* e = dynamic_cast<E*>(out_[k].wired);
    if (e == nullptr || out_[k].e != e || !e->foldable()) return nullptr;
    redirect_output(k, e->out_[0].e, e->out_[0].port);
    return e;
  }

  void output_push(int k, PacketBatch& b) {
    if (!b.n) return;
    const Link& l = out_[k];
    if (__builtin_expect(profile_ != nullptr, 0)) {
      profile_->enter(l.e->profile_slot_, b.n);
      l.e->push(l.port, b);
      profile_->leave();
      return;
    }
    l.e->push(l.port, b);
  }

  void drop(rte_mbuf* m) {
    ++counters_->drops;
    rte_pktmbuf_free(m);
  }
  void drop_all(PacketBatch& b) {
    counters_->drops += b.n;
    b.free_all();
  }
  GraphCounters* counters() { return counters_; }

  // Splits a batch by a per-packet decision into per-output batches (order kept within each), then pushes each
  // non-empty one. decide(m) returns the output index, or -1 to drop. The graph has no cycles, so the scratch
  // batches are never in use twice at once.
  // An element with one output keeps the batch it was given: one pass decides each packet and moves the ones it
  // keeps down in place (FastClick's in-place batch), then passes that same batch on; no array of decisions, no
  // copy into a scratch batch. Same packets, same order, same drops as the general path.
  template <typename Decide>
  void classify_push(PacketBatch& in, Decide&& decide) {
    if (noutputs_ == 1) {
      rte_mbuf** const p = in.pkts;
      uint16_t n = 0;
      for (uint16_t i = 0, end = in.n; i < end; ++i) {
        rte_mbuf* m = p[i];
        if (decide(m) == 0) p[n++] = m;
        else drop(m);
      }
      in.n = n;
      output_push(0, in);
      in.n = 0;
      return;
    }
    int res[kBurst];
    for (uint16_t i = 0; i < in.n; ++i) res[i] = decide(in.pkts[i]);
    push_to_outputs(in, res);
  }

  // Sends packet i of `in` to output res[i] (dropped when out of range), outputs in increasing order. Only the
  // outputs this batch reaches are visited: synthesized classifiers have one output per pattern (fw1000's:
  // 1,205), and clearing and scanning every output's batch per call cost more than classifying.
  // The one-output case inline in every caller (the per-packet loop of every element of a synthesized chain), the
  // general one a call.
  __attribute__((always_inline)) void push_to_outputs(PacketBatch& in, const int* res) {
    if (noutputs_ == 1) {  // every element of a synthesized chain: one output, a loop without per-output bookkeeping
      push_to_output0(in, res);
      return;
    }
    push_to_many(in, res);
  }

 private:
  __attribute__((noinline)) void push_to_many(PacketBatch& in, const int* res) {
    const int nout = noutputs_;
    int reached[kBurst];
    unsigned nr = 0;
    for (uint16_t i = 0; i < in.n; ++i) {
      const int k = res[i];
      if (k < 0 || k >= nout) {
        drop(in.pkts[i]);
        continue;
      }
      PacketBatch& o = scratch_[k];
      if (o.n == 0) {  // first packet for output k: insert k, keeping `reached` sorted
        unsigned j = nr++;
        for (; j > 0 && reached[j - 1] > k; --j) reached[j] = reached[j - 1];
        reached[j] = k;
      }
      o.push_back(in.pkts[i]);
    }
    in.n = 0;
    for (unsigned j = 0; j < nr; ++j) {
      PacketBatch& o = scratch_[reached[j]];
      output_push(reached[j], o);
      o.n = 0;
    }
  }

  // push_to_outputs for one output: the packets it keeps are moved down in place and `in` itself goes on (no copy
  // into a scratch batch), its count kept in a register while they move. Same packets, same order, same drops as
  // the general loop.
  void push_to_output0(PacketBatch& in, const int* res) {
    // Nearly every batch keeps all its packets: one OR over the verdicts (the compiler vectorizes it) finds that
    // and spares the move-down loop (9 instructions per packet of the deployed group, callgrind).
    int moved = 0;
    for (uint16_t i = 0, end = in.n; i < end; ++i) moved |= res[i];
    if (moved != 0) {
      rte_mbuf** const p = in.pkts;
      uint16_t n = 0;
      for (uint16_t i = 0, end = in.n; i < end; ++i) {
        rte_mbuf* m = p[i];
        if (res[i] == 0) p[n++] = m;
        else drop(m);
      }
      in.n = n;
    }
    output_push(0, in);
    in.n = 0;
  }

  struct Link {
    Element* e = nullptr;  // where output_push sends the batches
    int port = 0;
    Element* wired = nullptr;  // the element the configuration connects (e, unless folded past)
  };
  std::string name_;
  GraphCounters* counters_ = nullptr;
  int ninputs_ = 0;
  int noutputs_ = 0;
  std::vector<Link> out_;
  std::vector<PacketBatch> scratch_;
  StageProfile* profile_ = nullptr;
  int profile_slot_ = 0, profile_stages_ = 0;
};

// Element classes by Click name. Adding an element = one line in elements/registry.cc.
using ElementFactory = std::unique_ptr<Element> (*)();
ElementFactory find_element_class(const std::string& name);
std::vector<std::string> element_class_names();

}  // namespace metron

// Defines the factory registry.cc refers to for an element class: `METRON_EXPORT_ELEMENT(Counter)`.
#define METRON_EXPORT_ELEMENT(Cls) \
  std::unique_ptr<::metron::Element> make_element_##Cls() { return std::make_unique<Cls>(); }

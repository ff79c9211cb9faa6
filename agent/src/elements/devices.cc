// Where packets enter and leave a graph: FromDevice/ToDevice (standalone configs, a port by name; queue = the
// core's slot) and the group pseudo-ports `input` / `[k]output` (pipelines: the engine feeds and drains them).
#include "core/annotations.h"
#include "core/element.h"
#include "core/port.h"

namespace metron {

namespace {

Port* lookup_port(const GraphEnv& env, const std::string& name) {
  Port* p = env.find_port != nullptr ? env.find_port(env.port_ctx, name) : nullptr;
  if (p == nullptr) throw ConfigError("no port named '" + name + "' (open it with --dpdk --vdev/-a)");
  return p;
}

class FromDevice final : public Element {
 public:
  const char* class_name() const override { return "FromDevice"; }
  PortCountRange input_range() const override { return {0, 0}; }
  bool delivers_port_frames() const override { return true; }
  void configure(Args& args) override {
    if (args.positional_count() < 1) throw ConfigError("missing device name");
    dev_ = unquote(args.positional(0));
    if (auto b = args.take("BURST")) burst_ = static_cast<uint16_t>(parse_uint(*b, "BURST", kBurst));
    if (burst_ == 0) throw ConfigError("BURST: must be at least 1");
    // FastClick tuning knobs that have no meaning here; accepted so FastClick configs run unchanged.
    for (const char* k : {"PROMISC", "NDESC", "MAXTHREADS", "VERBOSE", "ACTIVE", "PAUSE", "MTU", "N_QUEUES"})
      args.take(k);
  }
  void initialize(const GraphEnv& env) override {
    port_ = lookup_port(env, dev_);
    if (env.slot >= port_->rx_queues())
      throw ConfigError("port '" + dev_ + "' has " + std::to_string(port_->rx_queues()) +
                        " rx queue(s), core slot " + std::to_string(env.slot) + " needs one");
    queue_ = static_cast<uint16_t>(env.slot);
  }
  bool is_source() const override { return true; }
  unsigned run_source() override {
    PacketBatch b;
    b.n = port_->rx_burst(queue_, b.pkts, burst_);
    if (b.n == 0) return 0;
    for (uint16_t i = 0; i < b.n; ++i) clear_anno(b.pkts[i]);
    const unsigned n = b.n;
    count_ += n;
    output_push(0, b);
    return n;
  }
  void push(int, PacketBatch& b) override { drop_all(b); }
  void report(std::ostream& os) const override { os << "count " << count_ << "\n"; }

 private:
  std::string dev_;
  Port* port_ = nullptr;
  uint16_t queue_ = 0;
  uint16_t burst_ = kBurst;
  uint64_t count_ = 0;
};

class ToDevice final : public Element {
 public:
  const char* class_name() const override { return "ToDevice"; }
  PortCountRange output_range() const override { return {0, 0}; }
  void configure(Args& args) override {
    if (args.positional_count() < 1) throw ConfigError("missing device name");
    dev_ = unquote(args.positional(0));
    for (const char* k : {"BURST", "IQUEUE", "BLOCKING", "VERBOSE", "NDESC", "MAXTHREADS", "TIMEOUT"}) args.take(k);
  }
  void initialize(const GraphEnv& env) override {
    port_ = lookup_port(env, dev_);
    queue_ = static_cast<uint16_t>(env.slot % port_->tx_queues());
  }
  void push(int, PacketBatch& b) override {
    uint16_t sent = port_->tx_burst(queue_, b.pkts, b.n);
    count_ += sent;
    if (sent < b.n) {
      dropped_ += b.n - sent;
      counters()->drops += b.n - sent;
      rte_pktmbuf_free_bulk(b.pkts + sent, b.n - sent);
    }
    b.n = 0;
  }
  void report(std::ostream& os) const override { os << "count " << count_ << "\ndropped " << dropped_ << "\n"; }

 private:
  std::string dev_;
  Port* port_ = nullptr;
  uint16_t queue_ = 0;
  uint64_t count_ = 0;
  uint64_t dropped_ = 0;
};

class GroupInput final : public Element {
 public:
  const char* class_name() const override { return "input"; }
  PortCountRange input_range() const override { return {0, 0}; }
  // The frames its port delivered, dispatched by tag (Engine::loop takes a VLAN tag out, the IP header then
  // where the tag was: the header the NIC's verdict is about).
  bool delivers_port_frames() const override { return true; }
  void configure(Args&) override {}
  void push(int, PacketBatch& b) override { output_push(0, b); }
};

class GroupOutput final : public Element {
 public:
  const char* class_name() const override { return "output"; }
  PortCountRange input_range() const override { return {1, -1}; }
  PortCountRange output_range() const override { return {0, 0}; }
  bool sparse_inputs() const override { return true; }
  void configure(Args&) override {}
  void initialize(const GraphEnv& env) override {
    sink_ = env.egress;
    if (sink_ == nullptr) throw ConfigError("[k]output used but this graph has no egress");
    if (ninputs() > sink_->egress_count())
      throw ConfigError("[" + std::to_string(ninputs() - 1) + "]output used but the pipeline has " +
                        std::to_string(sink_->egress_count()) + " egress(es)");
  }
  void push(int port, PacketBatch& b) override { sink_->egress(port, b); }

 private:
  EgressSink* sink_ = nullptr;
};

}  // namespace

METRON_EXPORT_ELEMENT(FromDevice)
METRON_EXPORT_ELEMENT(ToDevice)
METRON_EXPORT_ELEMENT(GroupInput)
METRON_EXPORT_ELEMENT(GroupOutput)

}  // namespace metron

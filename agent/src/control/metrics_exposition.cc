#include "control/metrics_exposition.h"

#include <cstdio>
#include <utility>
#include <vector>

namespace metron {

namespace pb = ::metron::agent::v1;

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

namespace {

using Labels = std::vector<std::pair<const char*, std::string>>;

Labels with(Labels l, const char* name, std::string value) {
  l.emplace_back(name, std::move(value));
  return l;
}

// Writes one metric family: HELP and TYPE once, then every sample (the format wants a family's samples together).
class Exposition {
 public:
  void family(const char* name, const char* type, const char* help) {
    name_ = name;
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  void sample(const Labels& labels, uint64_t v) { text(labels, std::to_string(v)); }
  void gauge(const Labels& labels, double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    text(labels, buf);
  }
  std::string take() { return std::move(out_); }

 private:
  void text(const Labels& labels, const std::string& value) {
    out_ += name_;
    if (!labels.empty()) {
      out_ += '{';
      bool first = true;
      for (const auto& [k, v] : labels) {
        if (!first) out_ += ',';
        first = false;
        out_ += k;
        out_ += "=\"";
        out_ += EscapeLabelValue(v);
        out_ += '"';
      }
      out_ += '}';
    }
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  }
  std::string out_;
  const char* name_ = "";
};

template <typename Msg, typename Each>
void each(Exposition& e, const char* name, const char* type, const char* help,
          const google::protobuf::RepeatedPtrField<Msg>& items, Each fn) {
  e.family(name, type, help);
  for (const Msg& m : items) fn(m);
}

}  // namespace

std::string FormatAgentMetrics(const pb::Stats& s, const std::string& version) {
  Exposition e;
  e.family("metron_agent_build_info", "gauge", "Agent build: its version as a label, value 1.");
  e.sample({{"version", version}}, 1);

  // Cores: cumulative cycles, so rate(busy)/rate(total) is the busy ratio over any window.
  auto core = [](const pb::CoreStats& c) { return std::to_string(c.core()); };
  each(e, "metron_agent_core_busy_cycles_total", "counter", "Cycles a worker core spent processing packets.",
       s.cores(), [&](const pb::CoreStats& c) { e.sample({{"core", core(c)}}, c.busy_cycles()); });
  each(e, "metron_agent_core_cycles_total", "counter", "Cycles a worker core ran (busy and idle).", s.cores(),
       [&](const pb::CoreStats& c) { e.sample({{"core", core(c)}}, c.total_cycles()); });
  each(e, "metron_agent_core_unscheduled_cycles_total", "counter",
       "Cycles a worker core's thread waited, runnable, for a CPU (the kernel's run delay; 0 on a dedicated core).",
       s.cores(), [&](const pb::CoreStats& c) { e.sample({{"core", core(c)}}, c.unscheduled_cycles()); });
  each(e, "metron_agent_core_load_ratio", "gauge",
       "Busy share of a worker core's cycles over the agent's last load interval (0..1).", s.cores(),
       [&](const pb::CoreStats& c) { e.gauge({{"core", core(c)}}, c.load()); });
  each(e, "metron_agent_core_rx_packets_total", "counter", "Packets a worker core received.", s.cores(),
       [&](const pb::CoreStats& c) { e.sample({{"core", core(c)}}, c.rx_packets()); });
  each(e, "metron_agent_core_tx_packets_total", "counter", "Packets a worker core transmitted.", s.cores(),
       [&](const pb::CoreStats& c) { e.sample({{"core", core(c)}}, c.tx_packets()); });
  each(e, "metron_agent_core_drops_total", "counter", "Packets a worker core dropped.", s.cores(),
       [&](const pb::CoreStats& c) { e.sample({{"core", core(c)}}, c.drops()); });

  each(e, "metron_agent_nic_rx_packets_total", "counter", "Packets received on a NIC.", s.ports(),
       [&](const pb::PortStats& p) { e.sample({{"nic", p.nic()}}, p.rx_packets()); });
  each(e, "metron_agent_nic_rx_bytes_total", "counter", "Bytes received on a NIC.", s.ports(),
       [&](const pb::PortStats& p) { e.sample({{"nic", p.nic()}}, p.rx_bytes()); });
  each(e, "metron_agent_nic_tx_packets_total", "counter", "Packets transmitted on a NIC.", s.ports(),
       [&](const pb::PortStats& p) { e.sample({{"nic", p.nic()}}, p.tx_packets()); });
  each(e, "metron_agent_nic_tx_bytes_total", "counter", "Bytes transmitted on a NIC.", s.ports(),
       [&](const pb::PortStats& p) { e.sample({{"nic", p.nic()}}, p.tx_bytes()); });
  each(e, "metron_agent_nic_rx_dropped_total", "counter", "Packets a NIC dropped on receive (ring full, no mbuf).",
       s.ports(), [&](const pb::PortStats& p) { e.sample({{"nic", p.nic()}}, p.rx_dropped()); });
  each(e, "metron_agent_nic_tx_dropped_total", "counter", "Packets a NIC could not transmit.", s.ports(),
       [&](const pb::PortStats& p) { e.sample({{"nic", p.nic()}}, p.tx_dropped()); });

  auto group = [](const pb::GroupStats& g) -> Labels {
    return {{"pipeline", g.pipeline_id()}, {"group", g.group_id()}, {"core", std::to_string(g.core())}};
  };
  each(e, "metron_agent_group_packets_total", "counter", "Packets that entered a traffic-class group's pipeline.",
       s.groups(), [&](const pb::GroupStats& g) { e.sample(group(g), g.packets()); });
  each(e, "metron_agent_group_bytes_total", "counter", "Bytes that entered a traffic-class group's pipeline.",
       s.groups(), [&](const pb::GroupStats& g) { e.sample(group(g), g.bytes()); });
  each(e, "metron_agent_group_drops_total", "counter", "Packets a group's pipeline dropped (counted, never silent).",
       s.groups(), [&](const pb::GroupStats& g) { e.sample(group(g), g.drops()); });
  each(e, "metron_agent_group_busy_cycles_total", "counter", "Cycles spent in a group's pipeline.", s.groups(),
       [&](const pb::GroupStats& g) { e.sample(group(g), g.busy_cycles()); });

  e.family("metron_agent_class_packets_total", "counter", "Packets of one traffic class in its group.");
  for (const pb::GroupStats& g : s.groups())
    for (const pb::ClassStats& c : g.classes())
      e.sample(with(group(g), "class", std::to_string(c.class_id())), c.packets());
  e.family("metron_agent_class_bytes_total", "counter", "Bytes of one traffic class in its group.");
  for (const pb::GroupStats& g : s.groups())
    for (const pb::ClassStats& c : g.classes())
      e.sample(with(group(g), "class", std::to_string(c.class_id())), c.bytes());

  // Stateful elements: one family per FlowStateStats field, one sample per element of each group.
  struct FlowField {
    const char* name;
    const char* type;
    const char* help;
    uint64_t (pb::FlowStateStats::*get)() const;
  };
  static const FlowField kFlowFields[] = {
      {"metron_agent_flow_table_flows", "gauge", "Flows a stateful element holds now.", &pb::FlowStateStats::flows},
      {"metron_agent_flow_table_capacity", "gauge", "Flows the element's table holds before it grows or sheds.",
       &pb::FlowStateStats::capacity},
      {"metron_agent_flow_table_declared_capacity", "gauge",
       "CAPACITY / MAPPING_CAPACITY the element declared (0: none, the table grows).",
       &pb::FlowStateStats::declared_capacity},
      {"metron_agent_flow_table_memory_bytes", "gauge", "DPDK memory the element's table reserves.",
       &pb::FlowStateStats::memory_bytes},
      {"metron_agent_flow_table_evicted_total", "counter", "Flows evicted to make room for new flows.",
       &pb::FlowStateStats::evicted},
      {"metron_agent_flow_table_refused_total", "counter", "New flows refused because the table was full.",
       &pb::FlowStateStats::refused},
      {"metron_agent_flow_table_mapping_failures_total", "counter",
       "New flows not mapped for any reason (full table, no free port).", &pb::FlowStateStats::mapping_failures},
      {"metron_agent_flow_table_growths_total", "counter", "Times the element's table doubled.",
       &pb::FlowStateStats::growths},
      {"metron_agent_flow_table_growth_failures_total", "counter", "Growths the memory could not hold.",
       &pb::FlowStateStats::growth_failures},
      {"metron_agent_flow_table_shared_heap_hashes_total", "counter",
       "Grown hashes that got no DPDK heap of their own; their memory stays resident after the table outgrows them.",
       &pb::FlowStateStats::shared_heap_hashes},
  };
  for (const FlowField& f : kFlowFields) {
    e.family(f.name, f.type, f.help);
    for (const pb::GroupStats& g : s.groups())
      for (const pb::FlowStateStats& fs : g.flow_state())
        e.sample(with(with(group(g), "element", fs.element()), "kind", fs.kind()), (fs.*f.get)());
  }

  // Black-box NFs (docs/blackbox.md): their process's state and one family per BlackBoxStats counter.
  auto nf_labels = [&](const pb::GroupStats& g, const pb::BlackBoxStats& b) {
    return with(with(with(group(g), "element", b.element()), "nf", b.nf()), "mode", b.mode());
  };
  e.family("metron_blackbox_up", "gauge", "1 while the black-box NF's process runs and is attached (state RUNNING).");
  for (const pb::GroupStats& g : s.groups())
    for (const pb::BlackBoxStats& b : g.black_boxes())
      e.sample(with(with(nf_labels(g, b), "state", b.state()), "on_failure", b.on_failure()),
               b.state() == "RUNNING" ? 1 : 0);
  struct NfField {
    const char* name;
    const char* help;
    uint64_t (pb::BlackBoxStats::*get)() const;
  };
  static const NfField kNfFields[] = {
      {"metron_blackbox_restarts_total", "Instances of the NF started after the first.", &pb::BlackBoxStats::restarts},
      {"metron_blackbox_sent_packets_total", "Packets handed to the NF.", &pb::BlackBoxStats::sent},
      {"metron_blackbox_returned_packets_total", "Packets the NF passed back.", &pb::BlackBoxStats::returned},
      {"metron_blackbox_nf_dropped_packets_total", "Packets the NF dropped (its verdict).",
       &pb::BlackBoxStats::nf_dropped},
      {"metron_blackbox_ring_full_packets_total", "Packets not handed over: the NF's input was full.",
       &pb::BlackBoxStats::ring_full},
      {"metron_blackbox_bypassed_packets_total", "Fail-open: packets passed on without the NF (down or not reading).",
       &pb::BlackBoxStats::bypassed},
      {"metron_blackbox_failed_closed_packets_total",
       "Fail-closed: packets dropped because the NF was down or not reading.", &pb::BlackBoxStats::failed_closed},
      {"metron_blackbox_lost_packets_total", "Packets a dead instance of the NF held: gone with it.",
       &pb::BlackBoxStats::nf_lost},
      {"metron_blackbox_sleeps_total", "IDLE WAKE: times the NF slept on its empty input.",
       &pb::BlackBoxStats::nf_sleeps},
      {"metron_blackbox_wakeups_total", "IDLE WAKE: times a producer (the agent or the NF before it) woke the NF.",
       &pb::BlackBoxStats::nf_wakeups},
  };
  for (const NfField& f : kNfFields) {
    e.family(f.name, "counter", f.help);
    for (const pb::GroupStats& g : s.groups())
      for (const pb::BlackBoxStats& b : g.black_boxes()) e.sample(nf_labels(g, b), (b.*f.get)());
  }
  return e.take();
}

}  // namespace metron

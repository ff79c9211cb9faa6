// metron-agent: the Metron data plane.
//
//   Standalone (like FastClick): metron-agent [options] --dpdk <EAL args> -- config.click
//     runs one Click configuration on every worker core over the DPDK ports the EAL args create, and prints
//     every element's counters when it stops (SIGINT/SIGTERM, --duration, or --idle-exit).
//   Agent:                       metron-agent [options] --dpdk <EAL args> --
//     serves the gRPC control API (agent/proto) and runs the pipelines the controller deploys.
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "core/click_ast.h"
#include "core/eal.h"
#include "core/engine.h"
#include "core/engine_backend.h"
#include "core/state_store.h"
#include "drivers/dpdk_port.h"
#include "drivers/replay_port.h"
#include "utils/args.h"

#ifdef METRON_HAVE_CONTROL
#include "control/metrics_server.h"
#include "control/server.h"
#endif
#ifdef METRON_HAVE_DISPATCH
#include "dispatch/dispatch_choice.h"
#include "dispatch/fanout_port.h"
#include "dispatch/port_probe.h"
#include "dispatch/rss_port.h"
#include "dispatch/rte_flow_dispatcher.h"
#include "dispatch/steering_table.h"
#include "dispatch/vmdq_port.h"
#endif

namespace {

constexpr const char* kVersion = "0.1.0";
// Rule table size assumed for an --rte-flow port when none is given: rte_flow has no way to ask a NIC.
constexpr uint32_t kRteFlowRules = 1024;

const std::string kUsage =
    std::string("usage: metron-agent [options] --dpdk <EAL args> -- [config.click]\n"
    "\n"
    "With a Click file, runs it standalone on every worker core and prints the counters at exit; without one,\n"
    "serves the gRPC control API and runs the pipelines the Metron controller deploys.\n"
    "\n"
    "Options:\n"
    "  --help               this text\n"
    "  --dpdk ARGS... --    DPDK EAL arguments, e.g. -l 0-2 --vdev net_null0 --no-huge -m 512 --no-pci\n"
    "                       --file-prefix agent1. Every ethdev they create becomes a port named after it.\n"
    "  --cores LIST         worker lcores, comma-separated (default: standalone all EAL lcores; agent all but\n"
    "                       the main lcore, or the main lcore if it is the only one)\n"
    "  --port DEVARGS       probe one more DPDK vdev (e.g. net_pcap0,rx_pcap=in.pcap); repeatable\n"
    "  --replay NAME=FILE[,FILE...]  a memory-fed port NAME: each pcap FILE is loaded once and replayed in a loop\n"
    "                       on one rx queue (fresh mbufs from the pool, the frames copied in: a few cycles per\n"
    "                       packet, no device); what it is sent is freed. For benchmarks; repeatable\n"
    "  --mbufs N            mbufs in the packet pool (default: enough for every descriptor of the DPDK ports\n"
    "                       plus per-core caches and 4096 spare: 8576 for 2 ports and 1 worker; an in-memory\n"
    "                       pcap vdev needs one more per frame of its trace)\n"
    "  --rxd N, --txd N     descriptors per rx (polled) and per tx queue of the DPDK ports (default 1024 each, as\n"
    "                       testpmd's): what a port holds while its worker is off the CPU is its rx descriptors\n"
    "                       (a virtio ring larger than them is not filled)\n"
    "  --duration SECS      standalone: stop after SECS seconds\n"
    "  --idle-exit MS       standalone: stop once no packet arrived for MS milliseconds (finite pcap input)\n"
    "  --profile            standalone: report the cycles each element and sub-stage took (profile.NAME cycles\n"
    "                       batches packets; the clock is read per batch at every element boundary)\n"
    "  --idle-sleep US      a worker that found no packet 1024 polls in a row sleeps US microseconds per empty\n"
    "                       poll (default 0: busy-poll, for dedicated cores and real NICs; emulated servers\n"
    "                       sharing a few CPUs want ~1000)\n"
    "  --batch-budget US    a worker whose pipeline spends long per packet reads fewer packets per burst, so\n"
    "                       one batch lasts about US microseconds (default 500; 0: always 32): reconfiguration\n"
    "                       waits for a batch boundary, so this bounds how long a split or merge waits for an\n"
    "                       overloaded core. Pipelines under ~15 us per packet always read full bursts.\n"
    "  --fanout IFACE       agent: attach a kernel interface with one AF_PACKET socket per worker, dispatched\n"
    "                       by group tag in the kernel (classic BPF fanout); repeatable\n"
    "  --rss-fanout IFACE   agent: attach a kernel interface in RSS compatibility mode: one AF_PACKET socket per\n"
    "                       worker, frames spread by flow hash (PACKET_FANOUT_HASH) with no tag affinity, so\n"
    "                       every group of a pipeline entering there runs on every worker core, each with its\n"
    "                       own flow state (GroupSpec.core is ignored); repeatable\n"
    "  --fanout-frames N    frames in the receive ring of each --fanout/--rss-fanout socket (default 1024, a\n"
    "                       multiple of 32): the backlog a worker may leave while it does not run (13.6 ms at\n"
    "                       75 kpps for 1024); workers sharing their CPUs with other busy threads want more\n"
    "  --dispatch PORT=MODE agent: how the DPDK port PORT fills the worker rx queues: rte-flow, vmdq, rss, single\n"
    "                       (as the flags below, with the default rule table for rte-flow) or auto: the best mode\n"
    "                       the port can set up (rte-flow > vmdq > rss > single). At start every DPDK port is probed\n"
    "                       (rte_flow isolate/QUEUE/MARK/JUMP by rte_flow_validate, VMDq pools, RSS, MAC filters,\n"
    "                       VLAN filter); a port asked for a mode it cannot run stops the agent naming the port and\n"
    "                       the missing capability. GetResources reports, per port, the capabilities, the mode asked,\n"
    "                       the mode chosen and every refusal. Ports named nowhere keep their driver's queue filling\n"
    "                       (single); repeatable\n"
    "  --dispatch-fallback  agent: a port refused the mode asked for runs the best mode below it that it can set\n"
    "                       up instead of stopping the agent (the refusal is still reported)\n"
    "  --rte-flow PORT[,rules=N]  agent: the DPDK port PORT (from the EAL args or --port) dispatches group\n"
    "                       tags and NIC rules to worker rx queues with rte_flow rules the NIC runs; N is the\n"
    "                       size of its rule table (default ") + std::to_string(kRteFlowRules) + "). At start one\n"
    "                       rule is created and removed: a port that cannot (no rte_flow, or e.g. net_tap without\n"
    "                       kernel tc flower) stops the agent with an error; repeatable\n"
    "  --rss PORT           agent: RSS compatibility mode on the DPDK port PORT: the NIC spreads frames over the\n"
    "                       worker rx queues by an IP/TCP/UDP hash (RTE_ETH_MQ_RX_RSS), no tag affinity; every\n"
    "                       group entering there runs on every worker core with its own flow state. A port whose\n"
    "                       driver has no RSS stops the agent with an error naming it; repeatable\n"
    "  --vmdq PORT          agent: dispatch the DPDK port PORT with VMDq MAC pools (RTE_ETH_MQ_RX_VMDQ_ONLY, one\n"
    "                       pool per worker, one MAC table entry per class of each group: MAC tags only; for\n"
    "                       ixgbe/i40e NICs, use --rte-flow on others). A port whose driver has no VMDq pools\n"
    "                       for every worker, or refuses a pool MAC, stops the agent with an error naming it;\n"
    "                       repeatable\n"
    "  --state-dir DIR      agent: keep each group's NAPT/LB flow state in DIR across restarts: written at\n"
    "                       SIGTERM/SIGINT, imported when the controller deploys the group again (default: off;\n"
    "                       the systemd unit uses /var/lib/metron-agent)\n"
    "  --state-checkpoint-ms MS  agent, with --state-dir: also write the flow state every MS milliseconds, so a\n"
    "                       crash loses only the flows of the last interval (default 0: only at shutdown)\n"
    "  --metrics-listen HOST:PORT  agent: serve Prometheus metrics (GET /metrics, text exposition format) on\n"
    "                       this address from a thread of its own (default: off; port 0 picks a free port)\n"
    "  --listen, --tls-*    agent: control API options (below)\n";

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

// A DPDK port's dispatch asked on the command line: `flag` as written (for errors), the mode in --dispatch's
// spelling (dispatch/dispatch_choice.h), rte_flow's table size.
struct PortDispatchFlag {
  std::string flag;
  std::string port;
  std::string mode;
  uint32_t rte_flow_rules = kRteFlowRules;
};

struct Options {
  std::vector<std::string> eal;
  std::vector<unsigned> cores;
  std::vector<std::string> ports;
  std::vector<std::string> replay;
  std::vector<std::string> fanout;
  std::vector<std::string> rss_fanout;
  unsigned fanout_frames = 0;  // 0: FanoutPortOptions' default; FanoutPort::open checks it
  std::vector<PortDispatchFlag> dispatch;
  bool dispatch_fallback = false;
  std::vector<std::pair<std::string, std::string>> control;
  std::string config_file;
  unsigned mbufs = 0;  // 0: sized from the ports (pool_mbufs_for)
  metron::PortDescriptors desc;
  double duration = 0;
  unsigned idle_exit_ms = 0;
  bool profile = false;
  unsigned idle_sleep_us = 0;
  unsigned batch_budget_us = metron::Engine::kDefaultBatchBudgetUs;
  std::string state_dir;
  unsigned state_checkpoint_ms = 0;
  std::string metrics_listen;
};

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "metron-agent: %s\n", msg.c_str());
  std::exit(2);
}

// --rte-flow PORT[,rules=N]: a comma, since PCI port names have colons.
PortDispatchFlag rte_flow_flag(const std::string& spec) {
  PortDispatchFlag f{"--rte-flow " + spec, spec.substr(0, spec.find(',')), "rte-flow", kRteFlowRules};
  const size_t comma = spec.find(',');
  if (comma != std::string::npos) {
    const std::string opt = spec.substr(comma + 1);
    if (opt.rfind("rules=", 0) != 0)
      die(f.flag + ": expected PORT or PORT,rules=N after the port, got '" + opt + "'");
    try {
      f.rte_flow_rules = static_cast<uint32_t>(metron::parse_uint(opt.substr(6), "rules", 1u << 20));
    } catch (const std::exception& e) {
      die(f.flag + ": " + e.what());
    }
  }
  return f;
}

// --dispatch PORT=MODE
PortDispatchFlag dispatch_flag(const std::string& spec) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0) die("--dispatch " + spec + ": expected PORT=MODE");
  return {"--dispatch " + spec, spec.substr(0, eq), spec.substr(eq + 1), kRteFlowRules};
}

Options parse_args(int argc, char** argv) {
  Options o;
  int i = 1;
  auto value = [&](const std::string& flag) -> std::string {
    if (i + 1 >= argc) die(flag + " needs a value");
    return argv[++i];
  };
  bool after_dpdk = false;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
#ifdef METRON_HAVE_CONTROL
      std::cout << metron::ControlOptionsHelp();
#endif
      std::exit(0);
    } else if (a == "--dpdk") {
      for (++i; i < argc && std::string(argv[i]) != "--"; ++i) o.eal.push_back(argv[i]);
      after_dpdk = true;
      if (i < argc) {  // at "--": what follows is the config file, if any
        if (i + 1 < argc) o.config_file = argv[i + 1];
        if (i + 2 < argc) die(std::string("unexpected argument after the config file: ") + argv[i + 2]);
      }
      break;
    } else if (a == "--cores") {
      for (const std::string& c : metron::split_words([&] {
             std::string v = value(a);
             for (char& ch : v) ch = ch == ',' ? ' ' : ch;
             return v;
           }()))
        o.cores.push_back(static_cast<unsigned>(metron::parse_uint(c, "--cores", RTE_MAX_LCORE - 1)));
    } else if (a == "--port") {
      o.ports.push_back(value(a));
    } else if (a == "--replay") {
      o.replay.push_back(value(a));
    } else if (a == "--fanout") {
      o.fanout.push_back(value(a));
    } else if (a == "--rss-fanout") {
      o.rss_fanout.push_back(value(a));
    } else if (a == "--fanout-frames") {
      o.fanout_frames = static_cast<unsigned>(metron::parse_uint(value(a), "--fanout-frames", 1u << 20));
    } else if (a == "--rss" || a == "--vmdq") {
      const std::string port = value(a);
      o.dispatch.push_back({a + " " + port, port, a.substr(2), kRteFlowRules});
    } else if (a == "--rte-flow") {
      o.dispatch.push_back(rte_flow_flag(value(a)));
    } else if (a == "--dispatch") {
      o.dispatch.push_back(dispatch_flag(value(a)));
    } else if (a == "--dispatch-fallback") {
      o.dispatch_fallback = true;
    } else if (a == "--mbufs") {
      o.mbufs = static_cast<unsigned>(metron::parse_uint(value(a), "--mbufs", 1u << 24));
      if (o.mbufs == 0) die("--mbufs: must be at least 1");
    } else if (a == "--rxd" || a == "--txd") {
      const auto n = static_cast<uint16_t>(metron::parse_uint(value(a), a.c_str(), 32768));
      if (n == 0) die(a + ": must be at least 1");
      (a == "--rxd" ? o.desc.rx : o.desc.tx) = n;
    } else if (a == "--duration") {
      o.duration = metron::parse_double(value(a), "--duration");
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a == "--idle-exit") {
      o.idle_exit_ms = static_cast<unsigned>(metron::parse_uint(value(a), "--idle-exit", 1u << 30));
    } else if (a == "--idle-sleep") {
      o.idle_sleep_us = static_cast<unsigned>(metron::parse_uint(value(a), "--idle-sleep", 1000000));
    } else if (a == "--batch-budget") {
      o.batch_budget_us = static_cast<unsigned>(metron::parse_uint(value(a), "--batch-budget", 1000000));
    } else if (a == "--state-dir") {
      o.state_dir = value(a);
      if (o.state_dir.empty()) die("--state-dir: empty path");
    } else if (a == "--state-checkpoint-ms") {
      o.state_checkpoint_ms = static_cast<unsigned>(metron::parse_uint(value(a), "--state-checkpoint-ms", 86400000));
    } else if (a == "--metrics-listen") {
      o.metrics_listen = value(a);
    } else if (a == "--listen" || a.rfind("--tls-", 0) == 0) {
      o.control.emplace_back(a, value(a));
    } else {
      die("unknown option '" + a + "' (see --help)");
    }
  }
  if (!after_dpdk) die("missing --dpdk <EAL args> -- (see --help)");
  if (o.state_checkpoint_ms && o.state_dir.empty()) die("--state-checkpoint-ms needs --state-dir");
  if (!o.metrics_listen.empty() && !o.config_file.empty())
    die("--metrics-listen serves the counters of groups deployed by the controller: agent mode only (no Click file)");
  if (!o.state_dir.empty() && !o.config_file.empty())
    die("--state-dir keeps the flow state of groups deployed by the controller: agent mode only (no Click file)");
  return o;
}

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) die("cannot read config file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int run_standalone(const Options& o, metron::Engine& engine) {
  const std::string click = read_file(o.config_file);
  try {
    engine.load_standalone(click, o.profile);
  } catch (const metron::ClickError& e) {
    die(o.config_file + ":" + e.what());
  }
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  engine.start();
  std::thread watchdog([&] {
    uint64_t last_rx = 0;
    auto last_change = std::chrono::steady_clock::now();
    while (!g_stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      const auto now = std::chrono::steady_clock::now();
      if (o.duration > 0 && std::chrono::duration<double>(now - t0).count() >= o.duration) break;
      if (o.idle_exit_ms) {
        uint64_t rx = 0;
        for (metron::Port* p : engine.ports()) rx += p->counters().rx_packets;
        if (rx != last_rx) last_rx = rx, last_change = now;
        else if (now - last_change >= std::chrono::milliseconds(o.idle_exit_ms)) break;
      }
    }
    g_stop = true;
    engine.request_stop();
  });
  engine.run_main_worker();
  watchdog.join();
  engine.stop();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  auto graphs = engine.standalone_graphs();
  for (size_t i = 0; i < graphs.size(); ++i) {
    std::ostringstream rep;
    graphs[i]->report(rep);
    std::istringstream lines(rep.str());
    for (std::string line; std::getline(lines, line);)
      std::cout << (graphs.size() > 1 ? "core" + std::to_string(engine.cores()[i]) + "." : "") << line << "\n";
  }
  for (unsigned c : engine.cores()) {
    const metron::CoreSample s = engine.sample(c);
    std::cout << "core" << c << ".load "
              << (s.total_cycles ? static_cast<double>(s.busy_cycles) / static_cast<double>(s.total_cycles) : 0.0)
              << "\ncore" << c << ".busy_cycles " << s.busy_cycles << "\n";
  }
  for (metron::Port* p : engine.ports()) {
    const metron::PortCounters c = p->counters();
    std::cout << "port." << p->name() << ".rx " << c.rx_packets << "\nport." << p->name() << ".tx " << c.tx_packets
              << "\nport." << p->name() << ".rx_dropped " << c.rx_dropped << "\n";
  }
  // CPU time next to wall time: on a shared machine the worker is not always on its core, and packets per
  // CPU-second is what one core sustains when it has the core.
  std::cout << "elapsed " << secs << "\ncpu_seconds " << cpu << "\n";
  return 0;
}

int run_agent(const Options& o, metron::Engine& engine) {
#ifndef METRON_HAVE_CONTROL
  die("this build has no control API (src/control); give a Click file to run standalone");
#else
  metron::ControlOptions copts;
  for (const auto& [flag, val] : o.control) {
    std::string err;
    if (!metron::ParseControlFlag(flag, val, &copts, &err)) die(err.empty() ? "unknown option '" + flag + "'" : err);
  }
  metron::EngineBackend backend(&engine, kVersion);
  std::unique_ptr<metron::StateStore> state;
  if (!o.state_dir.empty()) {
    try {
      state = std::make_unique<metron::StateStore>(o.state_dir);
    } catch (const std::exception& e) {
      die(std::string("--state-dir: ") + e.what());
    }
    backend.set_state_store(state.get());
  }
#ifdef METRON_HAVE_DISPATCH
  metron::SteeringTable steering;
  backend.set_nic_rules(&steering);
  // One socket per worker slot for --fanout and --rss-fanout alike, with the receive ring asked for.
  auto fanout_options = [&](const std::string& ifname, bool hash) {
    metron::FanoutPortOptions fo;
    fo.ifname = ifname;
    fo.queues = static_cast<uint16_t>(engine.slot_count());
    if (o.fanout_frames) fo.rx_frames = o.fanout_frames;
    fo.hash = hash;
    return fo;
  };
  for (const std::string& ifname : o.fanout) {
    try {
      auto fp = metron::FanoutPort::open(fanout_options(ifname, false), engine.pool());
      metron::FanoutPort* raw = fp.get();
      engine.add_port(std::move(fp));
      grpc::Status s = steering.add_nic(raw);
      if (!s.ok()) die("--fanout " + ifname + ": " + s.error_message());
      backend.add_steered_nic(ifname, metron::pb::DISPATCH_FANOUT_CBPF);
    } catch (const std::exception& e) {
      die(std::string("--fanout: ") + e.what());
    }
  }
  for (const std::string& ifname : o.rss_fanout) {
    try {
      engine.add_port(metron::FanoutPort::open(fanout_options(ifname, true), engine.pool()));
    } catch (const std::exception& e) {
      die(std::string("--rss-fanout: ") + e.what());
    }
    backend.add_rss_nic(ifname);
  }
  // Declared after `steering`, so destroyed first: each removes its rules while its port is still open.
  std::vector<std::unique_ptr<metron::RteFlowDispatcher>> rte_flow;
  std::vector<std::unique_ptr<metron::VmdqDispatcher>> vmdq;  // like rte_flow: removes its MACs before the port closes
  std::map<std::string, const PortDispatchFlag*> asked;
  for (const PortDispatchFlag& f : o.dispatch) {
    if (dynamic_cast<metron::DpdkPort*>(engine.port(f.port)) == nullptr)
      die(f.flag + ": no DPDK port of that name (ports come from --vdev/-a in the EAL args and --port)");
    if (!asked.emplace(f.port, &f).second) die(f.flag + ": port " + f.port + " already has " + asked[f.port]->flag);
  }
  const auto workers = static_cast<uint16_t>(engine.slot_count());
  for (metron::Port* p : engine.ports()) {
    auto* port = dynamic_cast<metron::DpdkPort*>(p);
    if (port == nullptr) continue;  // kernel interfaces (--fanout, --rss-fanout) have their mode by their flag
    const std::string& name = port->name();
    const metron::PortProbe probe = metron::ProbePort(name, port->port_id(), workers);
    metron::pb::Nic report;
    auto flag = asked.find(name);
    if (flag == asked.end()) {
      metron::DescribeProbe(probe, &report);
      backend.set_nic_report(name, report);
      continue;
    }
    const PortDispatchFlag& f = *flag->second;
    metron::DispatchRequest req;
    if (!metron::ParseDispatchMode(f.mode, &req))
      die(f.flag + ": unknown mode '" + f.mode + "' (one of auto, rte-flow, vmdq, rss, single)");
    req.fallback = o.dispatch_fallback;
    auto enable = [&](metron::pb::DispatchMode mode) -> grpc::Status {
      grpc::Status s;
      if (mode == metron::pb::DISPATCH_RTE_FLOW) {
        auto d = std::make_unique<metron::RteFlowDispatcher>(name, port->port_id(), workers, 0, f.rte_flow_rules);
        s = d->probe();
        if (s.ok()) s = steering.add_nic(d.get());
        if (!s.ok())
          return grpc::Status(s.error_code(), "the port cannot dispatch with rte_flow: " + s.error_message());
        rte_flow.push_back(std::move(d));
      } else if (mode == metron::pb::DISPATCH_VMDQ) {
        rte_eth_dev_info info{};
        if (rte_eth_dev_info_get(port->port_id(), &info) != 0)
          return grpc::Status(grpc::StatusCode::INTERNAL, "cannot read the port's info");
        std::unique_ptr<metron::VmdqDispatcher> d;
        s = metron::EnableVmdq(port, info, workers, &d);
        if (s.ok()) s = steering.add_nic(d.get());
        if (!s.ok()) return s;
        vmdq.push_back(std::move(d));
      } else if (mode == metron::pb::DISPATCH_RSS) {
        s = metron::EnableRss(name, port->port_id(), port->rx_queues(), port->tx_queues());
        if (!s.ok()) return s;
        backend.add_rss_nic(name);
        return s;
      }
      if (mode != metron::pb::DISPATCH_SINGLE) backend.add_steered_nic(name, mode);
      return s;
    };
    const grpc::Status s = metron::ChooseDispatch(probe, req, enable, &report);
    if (!s.ok())
      die(f.flag + ": " + s.error_message() +
          (o.dispatch_fallback ? "" : " (--dispatch-fallback runs the port in the best mode below that it can)"));
    backend.set_nic_report(name, report);
    for (const auto& r : report.refusals())
      std::fprintf(stderr, "metron-agent: %s: %s refused: %s\n", f.flag.c_str(),
                   metron::DispatchModeName(r.mode()).c_str(), r.reason().c_str());
    std::fprintf(stderr, "metron-agent: port %s dispatches with %s\n", name.c_str(),
                 metron::DispatchModeName(report.active_mode()).c_str());
  }
#else
  if (!o.fanout.empty() || !o.rss_fanout.empty() || !o.dispatch.empty())
    die("this build has no dispatch (src/dispatch): --fanout, --rss-fanout, --dispatch, --rss, --rte-flow and "
        "--vmdq unavailable");
#endif
  std::unique_ptr<metron::ControlServer> server;
  try {
    server = metron::StartControlServer(copts, &backend);
  } catch (const std::exception& e) {
    die(e.what());
  }
  std::fprintf(stderr, "metron-agent %s: serving on port %d (%s), %u worker core(s)\n", kVersion, server->port(),
               server->tls() ? "TLS" : "plaintext", engine.slot_count());
  std::unique_ptr<metron::MetricsServer> metrics;
  if (!o.metrics_listen.empty()) {
    try {
      metrics = metron::MetricsServer::Start(o.metrics_listen, &backend, kVersion);
    } catch (const std::exception& e) {
      server->Shutdown();
      die(e.what());
    }
    std::fprintf(stderr, "metron-agent: metrics on port %d (GET /metrics)\n", metrics->port());
  }
  engine.start();
  std::thread waiter([&] {
    while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    engine.request_stop();
  });
  std::thread checkpoints([&] {
    if (!state || o.state_checkpoint_ms == 0) return;
    auto next = std::chrono::steady_clock::now();
    while (!g_stop) {
      next += std::chrono::milliseconds(o.state_checkpoint_ms);
      while (!g_stop && std::chrono::steady_clock::now() < next)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (!g_stop) backend.persist_state();
    }
  });
  engine.run_main_worker();
  waiter.join();
  checkpoints.join();
  if (metrics) metrics->Stop();
  server->Shutdown();
  engine.stop();
  if (state) {  // the workers are stopped: the tables are final
    const auto t0 = std::chrono::steady_clock::now();
    const size_t n = backend.persist_state();
    std::fprintf(stderr, "metron-agent: state: saved %zu group(s) to %s in %.0f ms\n", n, o.state_dir.c_str(),
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return 0;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    metron::eal_init(o.eal);
  } catch (const std::exception& e) {
    die(e.what());
  }
  const bool standalone = !o.config_file.empty();
  if (standalone && (!o.fanout.empty() || !o.rss_fanout.empty() || !o.dispatch.empty()))
    die("--fanout, --rss-fanout, --dispatch, --rss, --rte-flow and --vmdq dispatch to groups deployed by the controller: agent mode only (no "
        "Click file)");
  std::vector<unsigned> cores = o.cores;
  if (cores.empty()) {
    unsigned lc;
    RTE_LCORE_FOREACH(lc) {
      if (standalone || lc != rte_get_main_lcore() || rte_lcore_count() == 1) cores.push_back(lc);
    }
  }
  int rc = 0;
  {
    rte_mempool* pool = nullptr;
    try {
      const unsigned dpdk_ports = rte_eth_dev_count_avail() + static_cast<unsigned>(o.ports.size());
      unsigned mbufs = o.mbufs ? o.mbufs
                               : metron::pool_mbufs_for(dpdk_ports, static_cast<unsigned>(cores.size()),
                                                        rte_lcore_count(), o.desc);
#ifdef METRON_HAVE_DISPATCH
      if (!o.mbufs)
        for (const PortDispatchFlag& f : o.dispatch)  // VMDq may be chosen for an auto or falling-back port too
          if (f.mode == "vmdq" || f.mode == "auto" || (o.dispatch_fallback && f.mode == "rte-flow"))
            mbufs += metron::VmdqIdleMbufs(f.port, static_cast<uint16_t>(cores.size()));
#endif
      pool = metron::packed_pktmbuf_pool("metron_pkts", mbufs);
      metron::Engine engine(cores, pool);
      engine.set_idle_sleep_us(o.idle_sleep_us);
      engine.set_batch_budget_us(o.batch_budget_us);
      const uint16_t q = static_cast<uint16_t>(engine.slot_count());
      for (const std::string& spec : o.ports) engine.add_port(metron::DpdkPort::open(spec, q, q, pool, o.desc));
      for (const std::string& spec : o.replay) engine.add_port(metron::ReplayPort::open(spec, q, pool));
      uint16_t pid;
      RTE_ETH_FOREACH_DEV(pid) {
        char name[RTE_ETH_NAME_MAX_LEN];
        rte_eth_dev_get_name_by_port(pid, name);
        if (engine.port(name) == nullptr) engine.add_port(metron::DpdkPort::open(name, q, q, pool, o.desc));
      }
      rc = standalone ? run_standalone(o, engine) : run_agent(o, engine);
    } catch (const std::exception& e) {
      die(e.what());
    }
  }
  rte_eal_cleanup();
  return rc;
}

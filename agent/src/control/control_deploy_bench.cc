// Benchmark: how long it takes to put a chain's group into service, over the control API, on a running agent
// (gRPC DeployPipeline -> validation -> graph build -> dispatch -> plan published on the worker core), against
// what the original Metron agent did per chain: start a DPDK process for it. The baseline runs metron-agent
// standalone with the same Click configuration (EAL init, pool, graph, 1 ms of running, exit), side by side
// and interleaved in the same run. Median of 15 each.
//
// usage: control_deploy_bench <results dir> <path to metron-agent>        (root: DPDK EAL)
// Writes <dir>/agent_deploy_pipeline_latency.json.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "control/server.h"
#include "core/eal.h"
#include "core/engine.h"
#include "core/engine_backend.h"
#include "drivers/dpdk_port.h"
#include "metron/agent/v1/agent.grpc.pb.h"

namespace metron {
namespace {

constexpr unsigned kWorkerCore = 1;
constexpr int kRuns = 15;
// A group as the synthesizer emits it for a firewall in front of stateful NFs (without the rewriter, whose
// arguments are the synthesizer's business).
constexpr const char* kGroupClick =
    "input -> Strip(14) -> CheckIPHeader -> IPFilter(allow udp dst port 53, allow tcp dst port 80, deny all)\n"
    "      -> DecIPTTL -> Unstrip(14) -> [0]output;\n";

double Ms(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Wall time of one standalone metron-agent run of the same graph, from fork to exit.
double StandaloneRun(const std::string& agent, const std::string& click_file, int i) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    const std::string prefix = "metron-bench-base-" + std::to_string(getppid()) + "-" + std::to_string(i);
    execl(agent.c_str(), agent.c_str(), "--cores", "1", "--duration", "0.001", "--dpdk", "-l", "0-1", "--no-huge",
          "-m", "512", "--no-pci", "--file-prefix", prefix.c_str(), "--log-level", "lib.eal:error", "--vdev",
          "net_ring0", "--", click_file.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  // DPDK leaves its runtime directory behind.
  std::filesystem::remove_all("/var/run/dpdk/metron-bench-base-" + std::to_string(getpid()) + "-" + std::to_string(i));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("standalone metron-agent failed");
  return Ms(std::chrono::steady_clock::now() - t0);
}

std::string Machine() {
  std::ifstream in("/proc/cpuinfo");
  std::string model = "unknown cpu";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " cpus, no hugepages";
}

int Main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: control_deploy_bench <results dir> <path to metron-agent>\n";
    return 2;
  }
  const std::string dir = argv[1], agent = argv[2];
  eal_init(eal_default_args("bench-ctl", "0-1"));
  rte_mempool* pool = packed_pktmbuf_pool("bench_ctl_pool", 4095);
  Engine engine({kWorkerCore}, pool);
  engine.add_port(DpdkPort::open("net_ring_ctl0", 1, 1, pool));
  EngineBackend backend(&engine, "bench");
  ControlOptions o;
  o.listen = "127.0.0.1:0";
  auto server = StartControlServer(o, &backend);
  auto stub = pb::MetronAgent::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(server->port()), grpc::InsecureChannelCredentials()));
  engine.start();

  const std::string click_file = "/tmp/metron-bench-deploy-" + std::to_string(getpid()) + ".click";
  std::ofstream(click_file) << "FromDevice(net_ring0) -> Strip(14) -> CheckIPHeader\n"
                               "  -> IPFilter(allow udp dst port 53, allow tcp dst port 80, deny all)\n"
                               "  -> DecIPTTL -> Unstrip(14) -> ToDevice(net_ring0);\n";

  std::vector<double> deploy, base;
  int rc = 0;
  try {
    for (int i = 0; i < kRuns; ++i) {
      pb::DeployPipelineRequest req;
      req.set_pipeline_id("bench");
      req.set_ingress_nic("net_ring_ctl0");
      req.add_egress()->set_nic("net_ring_ctl0");
      pb::GroupSpec* g = req.add_groups();
      g->set_group_id("g");
      g->set_click_config(kGroupClick);
      g->mutable_tag()->set_type(pb::TAG_MAC);
      g->mutable_tag()->set_value(7);
      g->set_core(kWorkerCore);
      g->add_class_ids(0);
      pb::PipelineStatus st;
      grpc::ClientContext ctx;
      const auto t0 = std::chrono::steady_clock::now();
      grpc::Status s = stub->DeployPipeline(&ctx, req, &st);
      deploy.push_back(Ms(std::chrono::steady_clock::now() - t0));
      if (!s.ok()) throw std::runtime_error("DeployPipeline: " + s.error_message());
      pb::RemovePipelineRequest rm;
      rm.set_pipeline_id("bench");
      pb::RemovePipelineReply rr;
      grpc::ClientContext ctx2;
      if (!stub->RemovePipeline(&ctx2, rm, &rr).ok()) throw std::runtime_error("RemovePipeline failed");

      base.push_back(StandaloneRun(agent, click_file, i));
    }
  } catch (const std::exception& e) {
    std::cerr << "control_deploy_bench: " << e.what() << "\n";
    rc = 1;
  }
  std::remove(click_file.c_str());
  server->Shutdown();
  engine.request_stop();
  engine.stop();
  std::filesystem::remove_all("/var/run/dpdk/metron-bench-ctl-" + std::to_string(getpid()));
  if (rc) return rc;

  const double v = Median(deploy), b = Median(base);
  std::ofstream(dir + "/agent_deploy_pipeline_latency.json")
      << "{\"name\": \"agent_deploy_pipeline_latency\", \"description\": \"DeployPipeline over gRPC (FW group: "
      << "Strip, CheckIPHeader, IPFilter, DecIPTTL) until the worker runs it, median of " << kRuns
      << "\", \"value\": " << v << ", \"unit\": \"ms\", \"baseline\": "
      << "\"one DPDK process per chain (original Metron design): metron-agent standalone, same graph, start to "
      << "exit\", \"baseline_value\": " << b << ", \"ratio\": " << v / b << ", \"machine\": \"" << Machine()
      << "\"}\n";
  std::cout << "agent_deploy_pipeline_latency: " << v << " ms (gRPC deploy into the running agent) vs " << b
            << " ms (DPDK process per chain); ratio " << v / b << "\n";
  return 0;
}

}  // namespace
}  // namespace metron

int main(int argc, char** argv) { return metron::Main(argc, argv); }

// The agent's Prometheus endpoint: `--metrics-listen ADDR:PORT` serves GET /metrics (metrics_exposition.h) over
// plain HTTP/1.1 from a thread of its own. Each scrape asks the backend for the same GetStats snapshot the
// controller reads (nothing counted twice, nothing on a worker core: GetStats reads the counters the workers
// publish). One connection at a time, closed after each answer: a Prometheus server scrapes one request per
// interval, and a slow or silent client is cut after 2 s so it cannot hold the endpoint.
//
// Why not DPDK telemetry + an exporter: the agent's counters (groups, classes, flow tables) live in the engine,
// not in DPDK's ethdev/mempool telemetry, so they would need telemetry callbacks of their own plus a separate
// exporter process per agent to translate its JSON; this endpoint is ~200 lines and needs neither.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "core/backend.h"

namespace metron {

class MetricsServer {
 public:
  // Binds `listen` (HOST:PORT, IPv4 or [IPv6]; port 0 picks a free one) and starts the thread. Throws
  // std::runtime_error naming --metrics-listen and the address when it cannot be parsed or bound.
  static std::unique_ptr<MetricsServer> Start(const std::string& listen, AgentBackend* backend,
                                              std::string version);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }
  // Stops accepting and joins the thread (within ~200 ms). Idempotent.
  void Stop();

 private:
  MetricsServer(int fd, int port, AgentBackend* backend, std::string version);
  void Run();
  void Serve(int conn);

  int fd_;
  int port_;
  AgentBackend* backend_;
  std::string version_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace metron

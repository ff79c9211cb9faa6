// The agent's gRPC control server (agent/proto/metron/agent/v1/agent.proto), serving an AgentBackend.
//
// main.cc usage:
//   metron::ControlOptions opts;                        // defaults below
//   std::string err;
//   if (!metron::ParseControlFlag(flag, value, &opts, &err)) ...   // for each control flag on the command line
//   auto server = metron::StartControlServer(opts, &engine);     // throws std::runtime_error naming the problem
//   ... run until SIGINT/SIGTERM ...
//   server->Shutdown();                                 // ends StreamLoad subscribers, waits for in-flight RPCs
//
// Command-line options (the names main.cc's --help, deploy/agent/metron-agent.conf and deploy/agent/README.md
// use; ControlOptionsHelp() returns their help text so it is written once):
//   --listen HOST:PORT   address to serve on; default 127.0.0.1:50051 (loopback only: expose it on purpose).
//                        Port 0 picks a free port (ControlServer::port() tells which).
//   --tls-cert FILE      PEM server certificate chain  \  all three together: TLS, and every client must
//   --tls-key FILE       PEM private key of that cert   > present a certificate signed by --tls-ca.
//   --tls-ca FILE        PEM CA bundle for client certs/  Without them the server speaks plaintext.
#pragma once

#include <memory>
#include <string>

#include "core/backend.h"

namespace grpc {
class Server;
}

namespace metron {

class AgentService;

struct ControlOptions {
  std::string listen = "127.0.0.1:50051";
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;

  bool tls() const { return !tls_cert.empty() || !tls_key.empty() || !tls_ca.empty(); }
};

// Applies one command-line flag ("--listen", "--tls-cert", "--tls-key", "--tls-ca"). Returns false and sets
// *error when `flag` is one of them but `value` is unusable (empty); returns false with *error empty when `flag`
// is not a control flag at all.
bool ParseControlFlag(const std::string& flag, const std::string& value, ControlOptions* options,
                      std::string* error);

// Help lines for the flags above, for --help.
const char* ControlOptionsHelp();

class ControlServer {
 public:
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // The TCP port actually bound.
  int port() const { return port_; }
  bool tls() const { return tls_; }
  // Ends every StreamLoad, lets in-flight unary RPCs finish, stops listening. Idempotent.
  void Shutdown();

 private:
  friend std::unique_ptr<ControlServer> StartControlServer(const ControlOptions&, AgentBackend*);
  ControlServer();
  std::unique_ptr<AgentService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  bool tls_ = false;
  bool stopped_ = false;
};

// Starts serving `backend` (not owned; must outlive the server). Throws std::runtime_error naming the option
// and value when TLS files are missing/unreadable/incomplete or the address cannot be bound.
std::unique_ptr<ControlServer> StartControlServer(const ControlOptions& options, AgentBackend* backend);

}  // namespace metron

#include "control/server.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>

#include "control/agent_service.h"

namespace metron {
namespace {

// In-flight unary RPCs get this long to finish on shutdown before they are cancelled.
constexpr std::chrono::seconds kShutdownGrace{2};

std::string ReadPem(const std::string& option, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(option + " " + path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN ") == std::string::npos) {
    throw std::runtime_error(option + " " + path + ": not a PEM file");
  }
  return text.str();
}

std::shared_ptr<grpc::ServerCredentials> Credentials(const ControlOptions& o) {
  if (!o.tls()) return grpc::InsecureServerCredentials();
  for (const auto& [option, value] : {std::make_pair("--tls-cert", &o.tls_cert), std::make_pair("--tls-key", &o.tls_key),
                                      std::make_pair("--tls-ca", &o.tls_ca)}) {
    if (value->empty()) {
      throw std::runtime_error(std::string(option) + " missing: TLS needs --tls-cert, --tls-key and --tls-ca together");
    }
  }
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = ReadPem("--tls-ca", o.tls_ca);
  ssl.pem_key_cert_pairs.push_back({ReadPem("--tls-key", o.tls_key), ReadPem("--tls-cert", o.tls_cert)});
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

bool ParseControlFlag(const std::string& flag, const std::string& value, ControlOptions* options, std::string* error) {
  std::string* field = flag == "--listen"     ? &options->listen
                       : flag == "--tls-cert" ? &options->tls_cert
                       : flag == "--tls-key"  ? &options->tls_key
                       : flag == "--tls-ca"   ? &options->tls_ca
                                              : nullptr;
  error->clear();
  if (field == nullptr) return false;
  if (value.empty()) {
    *error = flag + ": needs a value";
    return false;
  }
  *field = value;
  return true;
}

const char* ControlOptionsHelp() {
  return "Control (gRPC, agent/proto/metron/agent/v1/agent.proto):\n"
         "  --listen HOST:PORT   serve the control API here (default 127.0.0.1:50051, loopback only;\n"
         "                       port 0 picks a free port)\n"
         "  --tls-cert FILE      PEM certificate chain of this agent        | give all three for TLS with\n"
         "  --tls-key FILE       PEM private key of that certificate        | mandatory client certificates;\n"
         "  --tls-ca FILE        PEM CA that signs controller (client) certs | none = plaintext\n";
}

ControlServer::ControlServer() = default;

ControlServer::~ControlServer() { Shutdown(); }

void ControlServer::Shutdown() {
  if (stopped_ || !server_) return;
  stopped_ = true;
  service_->EndStreams();
  server_->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
  server_->Wait();
}

std::unique_ptr<ControlServer> StartControlServer(const ControlOptions& options, AgentBackend* backend) {
  if (options.listen.empty()) throw std::runtime_error("--listen: empty address");
  std::unique_ptr<ControlServer> server(new ControlServer());
  server->service_ = std::make_unique<AgentService>(backend);
  server->tls_ = options.tls();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, Credentials(options), &server->port_);
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || server->port_ == 0) {
    throw std::runtime_error("--listen " + options.listen + ": cannot serve there (address in use or invalid)");
  }
  return server;
}

}  // namespace metron

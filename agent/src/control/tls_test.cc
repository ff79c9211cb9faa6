// Mutual TLS on the control server, with a CA, server and client certificates made by openssl for this run.
#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/credentials.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "control/recording_backend.h"
#include "control/server.h"
#include "metron/agent/v1/agent.grpc.pb.h"

namespace metron {
namespace {

namespace fs = std::filesystem;

void Sh(const std::string& cmd) {
  ASSERT_EQ(std::system((cmd + " >/dev/null 2>&1").c_str()), 0) << cmd;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("metron-tls-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    const std::string d = dir_.string();
    const std::string key = "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
    std::ofstream(dir_ / "server.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n";
    std::ofstream(dir_ / "client.ext") << "extendedKeyUsage=clientAuth\n";
    for (const std::string ca : {"ca", "other-ca"}) {
      Sh(key + "-x509 -days 1 -subj /CN=" + ca + " -keyout " + d + "/" + ca + ".key -out " + d + "/" + ca + ".pem");
    }
    auto issue = [&](const std::string& name, const std::string& ca, const std::string& ext) {
      Sh(key + "-subj /CN=" + name + " -keyout " + d + "/" + name + ".key -out " + d + "/" + name + ".csr");
      Sh("openssl x509 -req -days 1 -in " + d + "/" + name + ".csr -CA " + d + "/" + ca + ".pem -CAkey " + d + "/" +
         ca + ".key -CAcreateserial -extfile " + d + "/" + ext + " -out " + d + "/" + name + ".pem");
    };
    issue("server", "ca", "server.ext");
    issue("controller", "ca", "client.ext");
    issue("intruder", "other-ca", "client.ext");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void SetUp() override {
    ControlOptions o;
    o.listen = "127.0.0.1:0";
    o.tls_cert = (dir_ / "server.pem").string();
    o.tls_key = (dir_ / "server.key").string();
    o.tls_ca = (dir_ / "ca.pem").string();
    server_ = StartControlServer(o, &backend_);
  }

  grpc::Status HealthWith(std::shared_ptr<grpc::ChannelCredentials> creds) {
    grpc::ChannelArguments args;
    args.SetSslTargetNameOverride("localhost");
    auto channel =
        grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server_->port()), std::move(creds), args);
    auto stub = pb::MetronAgent::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    pb::HealthReply reply;
    return stub->Health(&ctx, pb::HealthRequest(), &reply);
  }

  std::shared_ptr<grpc::ChannelCredentials> ClientCreds(const std::string& who) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = Slurp(dir_ / "ca.pem");
    if (!who.empty()) {
      o.pem_private_key = Slurp(dir_ / (who + ".key"));
      o.pem_cert_chain = Slurp(dir_ / (who + ".pem"));
    }
    return grpc::SslCredentials(o);
  }

  static fs::path dir_;
  test::RecordingBackend backend_;
  std::unique_ptr<ControlServer> server_;
};

fs::path TlsTest::dir_;

TEST_F(TlsTest, AcceptsAClientCertifiedByTheCa) {
  EXPECT_TRUE(server_->tls());
  grpc::Status s = HealthWith(ClientCreds("controller"));
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(TlsTest, RejectsAClientWithoutCertificate) {
  EXPECT_EQ(HealthWith(ClientCreds("")).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, RejectsAClientCertifiedByAnotherCa) {
  EXPECT_EQ(HealthWith(ClientCreds("intruder")).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, RejectsPlaintext) {
  EXPECT_EQ(HealthWith(grpc::InsecureChannelCredentials()).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, IncompleteOrUnreadableFilesNameTheOption) {
  ControlOptions o;
  o.listen = "127.0.0.1:0";
  o.tls_cert = (dir_ / "server.pem").string();
  o.tls_key = (dir_ / "server.key").string();
  try {
    StartControlServer(o, &backend_);
    FAIL() << "started TLS without a client CA";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--tls-ca missing", 0), 0u) << e.what();
  }
  o.tls_ca = (dir_ / "absent.pem").string();
  try {
    StartControlServer(o, &backend_);
    FAIL() << "started TLS with a missing CA file";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "--tls-ca " + o.tls_ca + ": cannot read the file");
  }
  o.tls_ca = (dir_ / "server.ext").string();
  try {
    StartControlServer(o, &backend_);
    FAIL() << "started TLS with a CA file that is not PEM";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "--tls-ca " + o.tls_ca + ": not a PEM file");
  }
}

}  // namespace
}  // namespace metron

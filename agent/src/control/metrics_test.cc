// The Prometheus endpoint (metrics_server.h) over real HTTP on loopback, serving the real EngineBackend of a
// running Engine, and the exposition format itself (metrics_exposition.h): every sample belongs to a family
// announced by HELP and TYPE, counters end in _total, label values are escaped.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "control/metrics_exposition.h"
#include "control/metrics_server.h"
#include "core/engine.h"
#include "core/engine_backend.h"
#include "test_env.h"

namespace metron {
namespace {

constexpr unsigned kWorkerCore = 1;

// One HTTP/1.1 request on a fresh connection; returns the whole answer (status line, headers, body).
std::string http(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;  // values unescaped
  std::string value;
};

// Parses an exposition the way Prometheus's text parser does for the parts we emit; fails the test on any line
// it cannot read, on a sample of an unannounced family, on a family announced twice, on a counter not named
// *_total.
std::vector<Sample> Parse(const std::string& text, std::map<std::string, std::string>* types) {
  static const std::regex help(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+)");
  static const std::regex type(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex sample(R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? ([-+0-9.eE]+|NaN|[+-]Inf))");
  static const std::regex label(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?)re");
  std::vector<Sample> out;
  std::set<std::string> helped;
  std::string current;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      EXPECT_TRUE(helped.insert(m[1]).second) << "family announced twice: " << line;
      current = m[1];
    } else if (std::regex_match(line, m, type)) {
      EXPECT_EQ(m[1], current) << "TYPE without its HELP first: " << line;
      (*types)[m[1]] = m[2];
      if (m[2] == "counter") EXPECT_TRUE(current.size() > 6 && current.substr(current.size() - 6) == "_total") << line;
    } else if (std::regex_match(line, m, sample)) {
      EXPECT_EQ(m[1], current) << "sample outside its family: " << line;
      Sample s{m[1], {}, m[4]};
      std::string ls = m[3];
      for (std::sregex_iterator it(ls.begin(), ls.end(), label), end; it != end; ++it) {
        std::string v, raw = (*it)[2];
        for (size_t i = 0; i < raw.size(); ++i) {
          if (raw[i] == '\\' && i + 1 < raw.size()) {
            ++i;
            v += raw[i] == 'n' ? '\n' : raw[i];
          } else {
            v += raw[i];
          }
        }
        s.labels[(*it)[1]] = v;
      }
      out.push_back(s);
    } else {
      ADD_FAILURE() << "unparsable exposition line: '" << line << "'";
    }
  }
  return out;
}

TEST(MetricsExposition, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue(R"(a"b\c)" "\nd"), R"(a\"b\\c\nd)");
  EXPECT_EQ(EscapeLabelValue("plain-1"), "plain-1");
}

TEST(MetricsExposition, GroupsClassesAndFlowTablesWithTheirLabels) {
  pb::Stats s;
  pb::GroupStats* g = s.add_groups();
  g->set_pipeline_id("web \"prod\"\\eu\nx");  // every character that needs an escape
  g->set_group_id("g0");
  g->set_core(3);
  g->set_packets(1000);
  g->set_bytes(64000);
  g->set_drops(7);
  pb::ClassStats* c = g->add_classes();
  c->set_class_id(2);
  c->set_packets(600);
  pb::FlowStateStats* f = g->add_flow_state();
  f->set_element("rw");
  f->set_kind("SynthRewriter");
  f->set_flows(16);
  f->set_capacity(16);
  f->set_refused(24);
  pb::PortStats* p = s.add_ports();
  p->set_nic("eth0");
  p->set_rx_dropped(5);
  std::map<std::string, std::string> types;
  const std::vector<Sample> samples = Parse(FormatAgentMetrics(s, "1.2.3"), &types);
  auto find = [&](const std::string& name) -> const Sample* {
    for (const Sample& x : samples)
      if (x.name == name) return &x;
    return nullptr;
  };
  const Sample* packets = find("metron_agent_group_packets_total");
  ASSERT_NE(packets, nullptr);
  EXPECT_EQ(packets->labels.at("pipeline"), "web \"prod\"\\eu\nx");
  EXPECT_EQ(packets->labels.at("group"), "g0");
  EXPECT_EQ(packets->labels.at("core"), "3");
  EXPECT_EQ(packets->value, "1000");
  EXPECT_EQ(find("metron_agent_group_drops_total")->value, "7");
  EXPECT_EQ(find("metron_agent_class_packets_total")->labels.at("class"), "2");
  EXPECT_EQ(find("metron_agent_class_packets_total")->value, "600");
  const Sample* refused = find("metron_agent_flow_table_refused_total");
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->labels.at("element"), "rw");
  EXPECT_EQ(refused->labels.at("kind"), "SynthRewriter");
  EXPECT_EQ(refused->value, "24");
  EXPECT_EQ(find("metron_agent_flow_table_flows")->value, "16");
  EXPECT_EQ(types.at("metron_agent_flow_table_flows"), "gauge");
  EXPECT_EQ(types.at("metron_agent_flow_table_refused_total"), "counter");
  EXPECT_EQ(find("metron_agent_nic_rx_dropped_total")->labels.at("nic"), "eth0");
  EXPECT_EQ(find("metron_agent_build_info")->labels.at("version"), "1.2.3");
}

TEST(MetricsExposition, BlackBoxNfsWithTheirStateAndCounters) {
  pb::Stats s;
  pb::GroupStats* g = s.add_groups();
  g->set_pipeline_id("p");
  g->set_group_id("g0");
  g->set_core(1);
  pb::BlackBoxStats* b = g->add_black_boxes();
  b->set_element("bb");
  b->set_nf("ids");
  b->set_mode("RING");
  b->set_state("RESTARTING");
  b->set_on_failure("CLOSED");
  b->set_restarts(2);
  b->set_sent(900);
  b->set_ring_full(30);
  b->set_failed_closed(45);
  b->set_nf_sleeps(12);
  b->set_nf_wakeups(9);
  std::map<std::string, std::string> types;
  const std::vector<Sample> samples = Parse(FormatAgentMetrics(s, "1"), &types);
  auto find = [&](const std::string& name) -> const Sample* {
    for (const Sample& x : samples)
      if (x.name == name) return &x;
    return nullptr;
  };
  const Sample* up = find("metron_blackbox_up");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->value, "0") << "down while RESTARTING";
  EXPECT_EQ(up->labels.at("state"), "RESTARTING");
  EXPECT_EQ(up->labels.at("on_failure"), "CLOSED");
  EXPECT_EQ(types.at("metron_blackbox_up"), "gauge");
  const std::map<std::string, std::string> want = {{"metron_blackbox_restarts_total", "2"},
                                                   {"metron_blackbox_sent_packets_total", "900"},
                                                   {"metron_blackbox_ring_full_packets_total", "30"},
                                                   {"metron_blackbox_failed_closed_packets_total", "45"},
                                                   {"metron_blackbox_bypassed_packets_total", "0"},
                                                   {"metron_blackbox_sleeps_total", "12"},
                                                   {"metron_blackbox_wakeups_total", "9"}};
  for (const auto& [name, value] : want) {
    const Sample* x = find(name);
    ASSERT_NE(x, nullptr) << name;
    EXPECT_EQ(x->value, value) << name;
    EXPECT_EQ(x->labels.at("nf"), "ids");
    EXPECT_EQ(x->labels.at("element"), "bb");
    EXPECT_EQ(x->labels.at("mode"), "RING");
    EXPECT_EQ(x->labels.at("group"), "g0");
    EXPECT_EQ(types.at(name), "counter");
  }
}

class MetricsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = std::make_unique<Engine>(std::vector<unsigned>{kWorkerCore}, test::pool());
    backend_ = std::make_unique<EngineBackend>(engine_.get(), "test-9.9");
    engine_->start();
    server_ = MetricsServer::Start("127.0.0.1:0", backend_.get(), "test-9.9");
  }
  void TearDown() override {
    server_.reset();
    engine_->stop();
  }
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<EngineBackend> backend_;
  std::unique_ptr<MetricsServer> server_;
};

TEST_F(MetricsServerTest, ServesTheEnginesCountersOverHttp) {
  // The worker on core 1 starts (rte_eal_remote_launch) when the engine does, but on a loaded machine its first
  // loop iteration, which stores its cycle counter, can come after the first scrape: scrape again until the
  // counter has moved, for at most 10 s. A counter that never moves still fails, after the last scrape.
  const auto start = std::chrono::steady_clock::now(), deadline = start + std::chrono::seconds(10);
  std::string answer;
  std::vector<Sample> samples;
  std::map<std::string, std::string> types;
  bool build = false, busy = false, total = false;
  int scrapes = 0;
  do {
    if (scrapes > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ++scrapes;
    answer = http(server_->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: text/plain\r\n\r\n");
    ASSERT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
    EXPECT_NE(answer.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << answer;
    const size_t body = answer.find("\r\n\r\n");
    ASSERT_NE(body, std::string::npos);
    const size_t length = std::stoul(answer.substr(answer.find("Content-Length: ") + 16));
    EXPECT_EQ(answer.size() - body - 4, length);
    types.clear();
    samples = Parse(answer.substr(body + 4), &types);
    build = busy = total = false;
    for (const Sample& s : samples) {
      if (s.name == "metron_agent_build_info") build = s.labels.at("version") == "test-9.9" && s.value == "1";
      if (s.name == "metron_agent_core_busy_cycles_total") busy = s.labels.at("core") == "1";
      if (s.name == "metron_agent_core_cycles_total") total = s.labels.at("core") == "1" && std::stoull(s.value) > 0;
    }
  } while (!total && std::chrono::steady_clock::now() < deadline);
  // How long the counter took to move, in the test's XML report (--gtest_output=xml): how close a run came to 10 s.
  RecordProperty("scrapes", scrapes);
  RecordProperty("wait_ms", static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - start).count()));
  EXPECT_TRUE(build);
  EXPECT_TRUE(busy);
  EXPECT_TRUE(total) << "the running worker's cycle counter, read through GetStats, still 0 after " << scrapes
                     << " scrapes in 10 s";
  EXPECT_EQ(types.at("metron_agent_core_load_ratio"), "gauge");
  EXPECT_EQ(types.at("metron_agent_core_busy_cycles_total"), "counter");
}

TEST_F(MetricsServerTest, AnswersOtherPathsAndMethodsWithTheirStatus) {
  EXPECT_EQ(http(server_->port(), "GET / HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(http(server_->port(), "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
  EXPECT_EQ(http(server_->port(), "garbage\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  // A client that connects and says nothing is cut after its timeout; the next scrape is served.
  const int idle = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(server_->port()));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(idle, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(http(server_->port(), "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
  ::close(idle);
}

TEST(MetricsServer, RefusesAnAddressItCannotUseNamingIt) {
  try {
    MetricsServer::Start("127.0.0.1", nullptr, "x");
    FAIL() << "no port accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--metrics-listen '127.0.0.1'"), std::string::npos) << e.what();
  }
  try {
    MetricsServer::Start("203.0.113.9:9", nullptr, "x");  // an address this host does not have
    FAIL() << "unbindable address accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace metron

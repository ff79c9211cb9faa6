// metron-agent standalone mode, run as a real process: a Click file over pcap vdevs, counters printed at exit,
// config errors reported with file:line:col and a non-zero exit, and no EAL runtime directory left behind either way.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "agent_cli.h"
#include "packets.h"
#include "pcap_file.h"

namespace metron {
namespace {

using test::read_pcap;
using test::write_pcap;

int run(const std::string& args, std::string* out) { return test::RunAgent(args, out); }

using Standalone = test::StandaloneRun;

TEST_F(Standalone, RunsAClickFileOverPcapAndPrintsCounters) {
  std::vector<std::vector<uint8_t>> in;
  for (uint16_t i = 0; i < 100; ++i) {
    test::Flow f;
    f.sport = static_cast<uint16_t>(1000 + i);
    f.proto = i % 4 == 0 ? 6 : 17;
    in.push_back(test::frame(f));
  }
  write_pcap(dir_ + "/in.pcap", in);
  std::ofstream(dir_ + "/fw.click") << "FromDevice(net_pcap0) -> Strip(14) -> CheckIPHeader\n"
                                       "  -> IPFilter(deny tcp, allow all) -> c :: Counter -> DecIPTTL\n"
                                       "  -> Unstrip(14) -> ToDevice(net_pcap0);\n";
  std::string out;
  const int rc = run("--idle-exit 300 " +
                         eal("--vdev net_pcap0,rx_pcap=" + dir_ + "/in.pcap,tx_pcap=" + dir_ + "/out.pcap") + " " +
                         dir_ + "/fw.click",
                     &out);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("c.count 75\n"), std::string::npos) << out;
  EXPECT_NE(out.find("graph.drops 25\n"), std::string::npos) << out;
  auto sent = read_pcap(dir_ + "/out.pcap");
  ASSERT_EQ(sent.size(), 75u);
  test::Flow expect;
  expect.sport = 1001;
  expect.ttl = 63;
  EXPECT_EQ(sent[0], test::frame(expect));
  EXPECT_FALSE(runtime_dir_left()) << "/var/run/dpdk/" << prefix();
}

TEST_F(Standalone, ReplaysATraceFromMemory) {
  // --replay: the trace loaded once and looped (the benchmarks' memory-fed input); the graph sees every frame of
  // each lap as written in the file, even though it rewrites them (DecIPTTL) on the way out.
  std::vector<std::vector<uint8_t>> in;
  for (uint16_t i = 0; i < 10; ++i) {
    test::Flow f;
    f.sport = static_cast<uint16_t>(1000 + i);
    in.push_back(test::frame(f));
  }
  write_pcap(dir_ + "/in.pcap", in);
  std::ofstream(dir_ + "/ttl.click") << "FromDevice(replay0) -> Strip(14) -> CheckIPHeader -> c :: Counter\n"
                                        "  -> DecIPTTL -> Unstrip(14) -> ToDevice(replay0);\n";
  std::string out;
  const int rc = run("--duration 0.3 --replay replay0=" + dir_ + "/in.pcap " + eal("") + " " + dir_ + "/ttl.click", &out);
  ASSERT_EQ(rc, 0) << out;
  const size_t at = out.find("c.count ");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_GT(std::stoull(out.substr(at + 8)), 10u) << "no second lap: " << out;
  EXPECT_NE(out.find("graph.drops 0\n"), std::string::npos) << "a lap saw rewritten frames: " << out;
  EXPECT_FALSE(runtime_dir_left()) << "/var/run/dpdk/" << prefix();
}

TEST_F(Standalone, ConfigErrorsNameFileLineAndColumn) {
  std::ofstream(dir_ + "/bad.click") << "FromDevice(net_null0)\n  -> Strip(x) -> Discard;\n";
  std::string out;
  const int rc = run(eal("--vdev net_null0") + " " + dir_ + "/bad.click", &out);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find(dir_ + "/bad.click:2:12: element 'Strip@2' (Strip): LENGTH: expected an unsigned integer, got 'x'"),
            std::string::npos)
      << out;
  EXPECT_FALSE(runtime_dir_left()) << "an error exit after EAL init left /var/run/dpdk/" << prefix();
}

TEST_F(Standalone, HelpExplainsEveryOption) {
  std::string out;
  EXPECT_EQ(run("--help", &out), 0);
  for (const char* opt : {"--dpdk", "--cores", "--port", "--replay", "--mbufs", "--duration", "--idle-exit", "--fanout", "--rte-flow",
                          "--listen"})
    EXPECT_NE(out.find(opt), std::string::npos) << opt;
}

}  // namespace
}  // namespace metron

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

#include "packets.h"
#include "agent_cli.h"

namespace metron {
namespace {

void write_pcap(const std::string& path, const std::vector<std::vector<uint8_t>>& frames) {
  std::ofstream out(path, std::ios::binary);
  const uint32_t hdr[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};
  out.write(reinterpret_cast<const char*>(hdr), sizeof hdr);
  for (size_t i = 0; i < frames.size(); ++i) {
    const uint32_t rec[4] = {0, static_cast<uint32_t>(i), static_cast<uint32_t>(frames[i].size()),
                             static_cast<uint32_t>(frames[i].size())};
    out.write(reinterpret_cast<const char*>(rec), sizeof rec);
    out.write(reinterpret_cast<const char*>(frames[i].data()), static_cast<std::streamsize>(frames[i].size()));
  }
}

std::vector<std::vector<uint8_t>> read_pcap(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::vector<uint8_t>> frames;
  uint32_t hdr[6];
  if (!in.read(reinterpret_cast<char*>(hdr), sizeof hdr)) return frames;
  uint32_t rec[4];
  while (in.read(reinterpret_cast<char*>(rec), sizeof rec)) {
    std::vector<uint8_t> f(rec[2]);
    in.read(reinterpret_cast<char*>(f.data()), rec[2]);
    frames.push_back(f);
  }
  return frames;
}

int run(const std::string& args, std::string* out) { return test::RunAgent(args, out); }

class Standalone : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/metron-standalone-" + std::to_string(getpid());
    mkdir(dir_.c_str(), 0700);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string prefix() const { return "sa" + std::to_string(getpid()); }
  std::string eal(const std::string& vdevs) {
    return "--dpdk -l 0 --no-huge -m 256 --no-pci --log-level lib.eal:error --file-prefix " + prefix() + " " +
           vdevs + " --";
  }
  // The EAL of a root process keeps its runtime state here; the agent removes it when it exits.
  bool runtime_dir_left() const { return std::filesystem::exists("/var/run/dpdk/" + prefix()); }
  std::string dir_;
};

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
  for (const char* opt : {"--dpdk", "--cores", "--port", "--mbufs", "--duration", "--idle-exit", "--fanout", "--rte-flow",
                          "--listen"})
    EXPECT_NE(out.find(opt), std::string::npos) << opt;
}

}  // namespace
}  // namespace metron

// Test helper: runs the metron-agent binary the test target was built with (METRON_AGENT_BIN, a compile
// definition of every test that includes this) and answers its exit status, with stdout+stderr in *out.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace metron::test {

inline int RunAgent(const std::string& args, std::string* out) {
  FILE* p = popen((std::string(METRON_AGENT_BIN) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out->append(buf, n);
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Standalone runs of the agent: a scratch directory (removed afterwards) and an EAL file prefix unique to the
// test process.
class StandaloneRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/metron-standalone-" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string prefix() const { return "sa" + std::to_string(getpid()); }
  std::string eal(const std::string& vdevs) {
    return "--dpdk -l 0 --no-huge -m 256 --no-pci --log-level lib.eal:error --file-prefix " + prefix() + " " +
           vdevs + " --";
  }
  // A pcap vdev reading `in` and writing `out` (files in the scratch directory).
  std::string pcap_port(int n, const std::string& in, const std::string& out) const {
    return "--vdev net_pcap" + std::to_string(n) + ",rx_pcap=" + dir_ + "/" + in + ",tx_pcap=" + dir_ + "/" + out;
  }
  // The EAL of a root process keeps its runtime state here; the agent removes it when it exits.
  bool runtime_dir_left() const { return std::filesystem::exists("/var/run/dpdk/" + prefix()); }
  std::string dir_;
};

// Starts the agent with `--MODE PORT` on `vdev`, whose driver lacks that dispatch mode: it must exit with status 2
// naming the port and `why`, serve nothing and leave no EAL runtime directory; `--MODE eth9` (no such port) must
// name the port too.
inline void ExpectModeRefusedAtStart(const std::string& mode, const std::string& vdev, const std::string& why) {
  const std::string prefix = "metron-" + mode + "-" + std::to_string(getpid());
  const std::string eal = "--dpdk -l 0-1 --no-huge -m 256 --no-pci --log-level lib.eal:error --file-prefix " +
                          prefix + " --vdev " + vdev + " --";
  std::string out;
  EXPECT_EQ(RunAgent("--listen 127.0.0.1:0 --" + mode + " " + vdev + " " + eal, &out), 2) << out;
  EXPECT_NE(out.find("metron-agent: --" + mode + " " + vdev + ": port " + vdev + " " + why), std::string::npos) << out;
  EXPECT_EQ(out.find("serving on port"), std::string::npos) << "started serving anyway: " << out;
  EXPECT_FALSE(std::filesystem::exists("/var/run/dpdk/" + prefix)) << "runtime directory left behind";
  out.clear();
  EXPECT_EQ(RunAgent("--listen 127.0.0.1:0 --" + mode + " eth9 " + eal, &out), 2) << out;
  EXPECT_NE(out.find("--" + mode + " eth9: no DPDK port of that name"), std::string::npos) << out;
}

}  // namespace metron::test

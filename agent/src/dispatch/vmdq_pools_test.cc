// VMDq MAC pools: which class MACs go to which pool, the MAC table limit, what a tag move adds and removes, and
// the agent refusing --vmdq on a port without VMDq (every PMD on this machine: net_null reports 0 pools).
#include "dispatch/vmdq_pools.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "agent_cli.h"

namespace metron {
namespace {

MacAddr Mac(uint8_t g0, uint8_t g1, uint8_t c0, uint8_t c1) { return {0x02, 0x4d, g0, g1, c0, c1}; }

TEST(VmdqPools, EachClassOfAGroupGetsItsMacInTheGroupsPool) {
  std::vector<VmdqEntry> e;
  grpc::Status s = VmdqEntries({{7, {0, 1, 0x0102}, 0}, {0x1234, {5}, 1}}, 2, 127, "groups", &e);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const std::vector<VmdqEntry> want{{Mac(0, 7, 0, 0), 0}, {Mac(0, 7, 0, 1), 0}, {Mac(0, 7, 1, 2), 0},
                                    {Mac(0x12, 0x34, 0, 5), 1}};
  EXPECT_EQ(e, want);
  EXPECT_EQ(ClassMac(0xabcd, 0xfffc), Mac(0xab, 0xcd, 0xff, 0xfc));
}

TEST(VmdqPools, TheMacTableLimitCountsEveryClassOfEveryGroup) {
  // The port keeps one entry for its own address.
  EXPECT_EQ(VmdqEntryLimit(128), 127u);
  EXPECT_EQ(VmdqEntryLimit(0), 0u);
  std::vector<uint32_t> hundred(100), thirty(30);
  for (uint32_t i = 0; i < 100; ++i) hundred[i] = i;
  for (uint32_t i = 0; i < 30; ++i) thirty[i] = i;
  std::vector<VmdqEntry> e{{Mac(0, 1, 0, 0), 0}};
  const std::vector<VmdqEntry> before = e;
  grpc::Status s = VmdqEntries({{1, hundred, 0}, {2, thirty, 1}}, 2, VmdqEntryLimit(128), "groups", &e);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(),
            "groups: 130 class MACs for 2 groups, but the NIC's MAC table holds 127 (VMDq matches whole MACs: one "
            "entry per class)");
  EXPECT_EQ(e, before) << "the output changed on error";
  // Exactly at the limit fits.
  thirty.resize(27);
  ASSERT_TRUE(VmdqEntries({{1, hundred, 0}, {2, thirty, 1}}, 2, 127, "groups", &e).ok());
  EXPECT_EQ(e.size(), 127u);
}

TEST(VmdqPools, BadGroupsAreNamed) {
  std::vector<VmdqEntry> e;
  grpc::Status s = VmdqEntries({{7, {0}, 0}, {8, {0}, 4}}, 4, 127, "groups", &e);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "groups[1].pool: 4 but the NIC has 4 VMDq pools");
  s = VmdqEntries({{0, {0}, 0}}, 4, 127, "groups", &e);
  EXPECT_EQ(s.error_message(), "groups[0].tag: 0 outside 1..65535");
  s = VmdqEntries({{7, {70000}, 0}}, 4, 127, "groups", &e);
  EXPECT_EQ(s.error_message(), "groups[0].class_ids: 70000 outside 0..65535");
  s = VmdqEntries({{7, {3}, 0}, {7, {3}, 1}}, 4, 127, "groups", &e);
  EXPECT_EQ(s.error_message(), "groups[1]: class MAC 02:4d:00:07:00:03 already belongs to groups[0]");
  // A class listed twice in one group is one entry.
  ASSERT_TRUE(VmdqEntries({{7, {3, 3}, 0}}, 4, 127, "groups", &e).ok());
  EXPECT_EQ(e.size(), 1u);
}

TEST(VmdqPools, MovingATagMovesAllItsClassMacsAndNothingElse) {
  std::vector<VmdqEntry> before, after;
  ASSERT_TRUE(VmdqEntries({{7, {0, 1}, 0}, {9, {0}, 1}}, 2, 127, "groups", &before).ok());
  ASSERT_TRUE(VmdqEntries({{7, {0, 1}, 1}, {9, {0}, 1}}, 2, 127, "groups", &after).ok());
  const VmdqChange c = VmdqDiff(before, after);
  EXPECT_EQ(c.remove, (std::vector<VmdqEntry>{{Mac(0, 7, 0, 0), 0}, {Mac(0, 7, 0, 1), 0}}));
  EXPECT_EQ(c.add, (std::vector<VmdqEntry>{{Mac(0, 7, 0, 0), 1}, {Mac(0, 7, 0, 1), 1}}));
  // A split: class 1 of tag 7 leaves for tag 8 on pool 1; class 0 stays where it was.
  std::vector<VmdqEntry> split;
  ASSERT_TRUE(VmdqEntries({{7, {0}, 0}, {8, {1}, 1}, {9, {0}, 1}}, 2, 127, "groups", &split).ok());
  const VmdqChange d = VmdqDiff(before, split);
  EXPECT_EQ(d.remove, (std::vector<VmdqEntry>{{Mac(0, 7, 0, 1), 0}}));
  EXPECT_EQ(d.add, (std::vector<VmdqEntry>{{Mac(0, 8, 0, 1), 1}}));
  EXPECT_TRUE(VmdqDiff(before, before).remove.empty());
  EXPECT_TRUE(VmdqDiff(before, before).add.empty());
  EXPECT_EQ(VmdqDiff(before, {}).remove, before);
}

TEST(VmdqPools, CapabilityCheckNamesThePortAndWhatIsMissing) {
  EXPECT_TRUE(VmdqCapable("0000:01:00.0", 64, 128, 4).ok());
  grpc::Status s = VmdqCapable("net_null0", 0, 1, 2);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(),
            "port net_null0 has no VMDq (its driver reports max_vmdq_pools 0): dispatch it with --rte-flow instead");
  EXPECT_EQ(VmdqCapable("p", 2, 128, 4).error_message(), "port p has 2 VMDq pools but there are 4 worker cores (one pool each)");
  EXPECT_EQ(VmdqCapable("p", 8, 1, 4).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

using test::RunAgent;

TEST(VmdqPools, AgentRefusesVmdqOnAPortWithoutIt) {
  const std::string prefix = "metron-vmdq-" + std::to_string(getpid());
  const std::string eal = "--dpdk -l 0-1 --no-huge -m 256 --no-pci --log-level lib.eal:error --file-prefix " +
                          prefix + " --vdev net_null0 --";
  std::string out;
  EXPECT_EQ(RunAgent("--listen 127.0.0.1:0 --vmdq net_null0 " + eal, &out), 2) << out;
  EXPECT_NE(out.find("metron-agent: --vmdq net_null0: port net_null0 has no VMDq (its driver reports "
                     "max_vmdq_pools 0)"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("serving on port"), std::string::npos) << "started serving anyway: " << out;
  EXPECT_FALSE(std::filesystem::exists("/var/run/dpdk/" + prefix)) << "runtime directory left behind";
  out.clear();
  EXPECT_EQ(RunAgent("--listen 127.0.0.1:0 --vmdq eth9 " + eal, &out), 2) << out;
  EXPECT_NE(out.find("--vmdq eth9: no DPDK port of that name"), std::string::npos) << out;
}

}  // namespace
}  // namespace metron

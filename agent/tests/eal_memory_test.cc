// The DPDK memory of processes started with eal_default_args (tests, benches): the caller's size, the user's
// METRON_EAL_MEMORY_MB over it, and the size the state benches compute (bench/flow_frames.h TablesEalMb) really
// holding what it was computed for - three 1M-flow NAPT tables and a packet pool - which the default 512 MB
// does not.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "core/annotations.h"
#include "core/eal.h"
#include "core/graph.h"
#include "drivers/dpdk_port.h"
#include "elements/flow_table.h"
#include "../bench/flow_frames.h"

namespace metron {
namespace {

constexpr uint32_t kFlows = 1u << 20;
constexpr int kTables = 3;

// The value of -m in args, or "" if there is none.
std::string MemoryArg(const std::vector<std::string>& args) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "-m") return args[i + 1];
  return "";
}

// Sets METRON_EAL_MEMORY_MB (or unsets it for nullopt) for one test and puts back what the process had.
class MemoryVariable {
 public:
  explicit MemoryVariable(std::optional<std::string> v) {
    if (const char* old = std::getenv(kName)) old_ = old;
    if (v) setenv(kName, v->c_str(), 1);
    else unsetenv(kName);
  }
  ~MemoryVariable() {
    if (old_) setenv(kName, old_->c_str(), 1);
    else unsetenv(kName);
  }

 private:
  static constexpr const char* kName = "METRON_EAL_MEMORY_MB";
  std::optional<std::string> old_;
};

// The EAL memory the state benches start with at 1M flows.
unsigned StateBenchMb() { return bench::TablesEalMb(kTables, kFlows, pool_mbufs_for(2, 1, 1)); }

// In a forked child (an EAL cannot be brought up twice, nor used across fork): an EAL of memory_mb, the pool,
// then kTables NAPT graphs of kFlows each as the state benches build them. Exit status: 0 all built, 3 refused.
int BuildTablesInChild(unsigned memory_mb) {
  const pid_t pid = fork();
  if (pid == 0) {
    int rc = 0;
    try {
      eal_init(eal_default_args("test", "0", memory_mb));  // "test": swept by the test env if the child dies
      register_annotations();
      packed_pktmbuf_pool("eal_mem_pool", pool_mbufs_for(2, 1, 1));
      GraphEnv env;
      std::vector<std::unique_ptr<Graph>> graphs;
      for (int i = 0; i < kTables; ++i)
        graphs.push_back(Graph::build("input -> Strip(14) -> MarkIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.5 "
                                      "1024-65535 - -, CAPACITY " + std::to_string(kFlows) + ") -> Discard;", env));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child with -m %u: %s\n", memory_mb, e.what());
      rc = 3;
    }
    std::exit(rc);  // exit(): the EAL's runtime directory is removed by eal_init's guard
  }
  int status = -1;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(EalMemory, ArgsCarryTheCallersSizeOr512) {
  MemoryVariable unset(std::nullopt);
  EXPECT_EQ(MemoryArg(eal_default_args("t")), "512");
  EXPECT_EQ(MemoryArg(eal_default_args("t", "0", 700)), "700");
}

TEST(EalMemory, TheEnvironmentVariableOverridesTheCallersSize) {
  MemoryVariable set("900");
  EXPECT_EQ(MemoryArg(eal_default_args("t", "0", 700)), "900");
  EXPECT_EQ(MemoryArg(eal_default_args("t")), "900");
}

TEST(EalMemory, RefusesAMalformedSizeNamingTheVariable) {
  for (const char* bad : {"", "0", "12x", "-5", " 64", "1048577"}) {
    MemoryVariable set(bad);
    try {
      eal_default_args("t");
      ADD_FAILURE() << "accepted METRON_EAL_MEMORY_MB='" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("METRON_EAL_MEMORY_MB='" + std::string(bad) + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(EalMemory, SizeForIsTheBytesAndOverheadAtLeastTheDefault) {
  MemoryVariable unset(std::nullopt);
  EXPECT_EQ(eal_memory_mb_for(0), kDefaultEalMemoryMb);
  const size_t tables = kTables * FlowTable::reserve_bytes(kFlows, false);
  EXPECT_GT(size_t{StateBenchMb()} << 20, tables + packed_pool_bytes(pool_mbufs_for(2, 1, 1)));
  EXPECT_GT(StateBenchMb(), kDefaultEalMemoryMb) << "three 1M-flow tables need more than the default";
}

// What the state benches build at 1M flows fits the memory computed for it, and not the default it ran out of
// ("CAPACITY needs 194 MB of DPDK memory; 101 MB available"): the size is what makes the difference.
TEST(EalMemory, TheComputedSizeHoldsThreeMillionFlowTablesTheDefaultDoesNot) {
  MemoryVariable unset(std::nullopt);
  EXPECT_EQ(BuildTablesInChild(StateBenchMb()), 0);
  EXPECT_EQ(BuildTablesInChild(kDefaultEalMemoryMb), 3);
}

}  // namespace
}  // namespace metron

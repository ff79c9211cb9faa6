// Shared by agent tests: one EAL per test process (unique --file-prefix, no hugepages, 2 lcores), brought up
// on first use, and a packed packet pool. The EAL's runtime directory (/var/run/dpdk/metron-test-<pid>) is
// removed when the process exits; directories left by test processes that died are swept on the next EAL start.
#pragma once

#include <rte_mbuf.h>

#include <string>

namespace metron::test {

void eal();
rte_mempool* pool();

// Where EALs of root processes keep their runtime directories (DPDK's default).
inline constexpr const char* kRuntimeRoot = "/var/run/dpdk";
// Removes the test EAL runtime directories under `root` (eal_file_prefix_stem("test") + pid) whose process no
// longer exists. Returns how many it removed.
int remove_stale_runtime_dirs(const std::string& root = kRuntimeRoot);

}  // namespace metron::test

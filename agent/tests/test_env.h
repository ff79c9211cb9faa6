// Shared fixture for agent tests: one EAL per test process (unique --file-prefix, no hugepages, 2 lcores) and a
// packed packet pool.
#pragma once

#include <rte_mbuf.h>

namespace metron::test {

rte_mempool* pool();

}  // namespace metron::test

// Shared by agent tests: one EAL per test process (unique --file-prefix, no hugepages, 2 lcores), brought up
// on first use, and a packed packet pool.
#pragma once

#include <rte_mbuf.h>

namespace metron::test {

void eal();
rte_mempool* pool();

}  // namespace metron::test

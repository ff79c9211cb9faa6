#include "test_env.h"

#include <gtest/gtest.h>

#include "core/eal.h"

namespace metron::test {

namespace {
class EalEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { eal_init(eal_default_args("test", "0-1")); }
};
const auto* const g_env = ::testing::AddGlobalTestEnvironment(new EalEnvironment);
}  // namespace

rte_mempool* pool() {
  static rte_mempool* p = packed_pktmbuf_pool("test_pool", 16383);
  return p;
}

}  // namespace metron::test

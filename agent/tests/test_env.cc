#include "test_env.h"

#include "core/annotations.h"
#include "core/eal.h"

namespace metron::test {

void eal() {
  eal_init(eal_default_args("test", "0-1"));
  register_annotations();
}

rte_mempool* pool() {
  static rte_mempool* p = [] {
    eal();
    return packed_pktmbuf_pool("test_pool", 16383);
  }();
  return p;
}

}  // namespace metron::test

// libFuzzer target: arbitrary text as a group configuration, parsed and built into a graph. Any outcome other
// than a graph or a ClickError (crash, sanitizer report, other exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/annotations.h"
#include "core/eal.h"
#include "core/graph.h"

namespace {
class NullSink : public metron::EgressSink {
 public:
  void egress(int, metron::PacketBatch& b) override { b.free_all(); }
  int egress_count() const override { return 4; }
};
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  metron::eal_init(metron::eal_default_args("fuzzclick", "0"));
  metron::register_annotations();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // keep rule sets small: rte_acl builds are slow, not interesting
  const std::string text(reinterpret_cast<const char*>(data), size);
  NullSink sink;
  metron::GraphEnv env;
  env.egress = &sink;
  try {
    auto g = metron::Graph::build(text, env);
  } catch (const metron::ClickError&) {
  }
  return 0;
}

// SpinCycles(CYCLES n): spends n TSC cycles per packet, then forwards the batch unchanged. Software-only and
// stateless. It exists so that overload is reachable honestly on paths that carry well under 1 Mpps (veths):
// as in NetBricks' evaluation, a chain's per-packet cost is raised with real busy work that the engine's
// busy-cycle accounting measures like any other element's, instead of faking load numbers.
#include <rte_cycles.h>
#include <rte_pause.h>

#include "core/element.h"
#include "utils/args.h"

namespace metron {

namespace {

// Bounds one packet's cost: a typo (an extra zero or three) must not stall a core for seconds per batch.
constexpr uint64_t kMaxCyclesPerPacket = 10'000'000;

class SpinCycles final : public Element {
 public:
  const char* class_name() const override { return "SpinCycles"; }
  void configure(Args& args) override {
    if (args.positional_count() != 0)
      throw ConfigError("unexpected argument '" + args.positional(0) + "' (expected CYCLES n)");
    std::optional<std::string> c = args.take("CYCLES");
    if (!c) throw ConfigError("CYCLES: missing (cycles to spend per packet, 0.." +
                              std::to_string(kMaxCyclesPerPacket) + ")");
    cycles_ = parse_uint(*c, "CYCLES", kMaxCyclesPerPacket);
  }
  void push(int, PacketBatch& b) override {
    if (cycles_ != 0 && b.n != 0) {
      // One deadline per batch: the cost scales with the batch size without a TSC read per packet.
      const uint64_t until = rte_rdtsc() + cycles_ * b.n;
      while (rte_rdtsc() < until) rte_pause();
    }
    output_push(0, b);
  }

 private:
  uint64_t cycles_ = 0;
};

}  // namespace

METRON_EXPORT_ELEMENT(SpinCycles)

}  // namespace metron

// Batch time budget (Engine::set_batch_budget_us): a worker whose pipeline is expensive per packet reads small
// bursts, so a control handoff - which waits for the worker's next batch boundary - does not wait for a whole
// burst of 32 expensive packets. Splits of an overloaded core depend on it: the core they wait for is the one
// that is behind.
#include <gtest/gtest.h>
#include <rte_cycles.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "core/engine.h"
#include "core/engine_backend.h"
#include "one_group.h"
#include "ring_port.h"

namespace metron {
namespace {

constexpr unsigned kWorker = 1;  // test EAL runs lcores 0-1

// Frames that finished the pipeline while one handoff waited for its batch boundary, worst of `handoffs`.
// The worker is kept busy with a backlog of frames that cost `us_per_frame` each.
unsigned worst_wait_in_frames(uint32_t budget_us, unsigned us_per_frame, int handoffs) {
  static int instance = 0;
  const std::string id = "bb" + std::to_string(instance++);
  test::RingPort in(id + "_in"), out(id + "_out");
  Engine engine({kWorker}, test::pool());
  engine.set_batch_budget_us(budget_us);
  Port* in_port = engine.add_port(std::move(in.port));
  Port* out_port = engine.add_port(std::move(out.port));
  EngineBackend backend(&engine, "test");
  engine.start();

  const uint64_t cycles = rte_get_tsc_hz() / 1000000 * us_per_frame;
  const pb::DeployPipelineRequest r = test::OneGroupPipeline(
      *in_port, *out_port, "input -> SpinCycles(CYCLES " + std::to_string(cycles) + ") -> [0]output;", kWorker);
  pb::PipelineStatus st;
  EXPECT_TRUE(backend.DeployPipeline(r, &st).ok());

  test::Flow f;
  f.dst_mac = "02:4d:00:07:00:03";
  const auto frame = test::frame(f);
  // A backlog that outlasts every handoff below: 40 bursts' worth.
  for (int i = 0; i < 40 * 32; ++i) in.inject(frame);
  // Let the worker measure the pipeline's cost on a first batch.
  while (rte_ring_count(out.tx) < 40) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  unsigned worst = 0;
  for (int k = 0; k < handoffs; ++k) {
    // Frames the worker sent so far; the handoff step reads the count at the boundary it ran at.
    const unsigned before = rte_ring_count(out.tx);
    unsigned at_boundary = before;
    engine.between_batches(kWorker, [&] { at_boundary = rte_ring_count(out.tx); });
    worst = std::max(worst, at_boundary - before);
    // Land the next request at another point of a batch.
    std::this_thread::sleep_for(std::chrono::microseconds(us_per_frame * (3 + 7 * k) / 4));
  }
  engine.stop();
  out.drain();
  return worst;
}

TEST(BatchBudget, AHandoffOnAnExpensivePipelineWaitsForAboutOneFrame) {
  // 2 ms per frame, 500 us budget: bursts of one frame, so a handoff waits for at most the frame in progress
  // (its transmit can land on either side of the count read before the request).
  EXPECT_LE(worst_wait_in_frames(500, 2000, 6), 2u);
}

TEST(BatchBudget, WithoutABudgetAHandoffWaitsForTheRestOfAFullBurst) {
  // The control case that shows the test above can fail: fixed 32-frame bursts make a handoff wait for the
  // remainder of the burst in progress (6 requests all landing on the last 2 frames of a burst: ~(3/32)^6).
  EXPECT_GT(worst_wait_in_frames(0, 2000, 6), 2u);
}

}  // namespace
}  // namespace metron

// The load a StreamLoad report and its overload alert read out of a core's cumulative cycle counters.
#include "control/load_report.h"

#include <gtest/gtest.h>

namespace metron {
namespace {

namespace pb = ::metron::agent::v1;

constexpr uint64_t kHz = 2'100'000'000;  // cycles per second
constexpr uint64_t kMs = kHz / 1000;

pb::Stats Core(uint64_t busy_ms, uint64_t total_ms, uint64_t waited_ms = 0) {
  pb::Stats s;
  pb::CoreStats* c = s.add_cores();
  c->set_core(1);
  c->set_busy_cycles(busy_ms * kMs);
  c->set_total_cycles(total_ms * kMs);
  c->set_unscheduled_cycles(waited_ms * kMs);
  return s;
}

// A worker adds a batch's cycles when it ends. CI's run of AWorkerPreemptedInsideABatchRaisesNoOverloadAlert:
// the stream's first report came inside a 4 ms batch, the worker was then preempted inside its next batch, so
// 12 ms of wall-clock time later the counters covered only the rest of the first batch, 100 % busy.
TEST(LoadReportTest, AnAlertJudgesOnlyWindowsTheCountersCoverForTheMinimum) {
  const pb::Stats first = Core(0, 20);
  const pb::Stats in_next_batch = Core(4, 24);
  EXPECT_FALSE(AlertLoadReached(first, in_next_batch, 0.8, 10 * kMs));
  EXPECT_TRUE(AlertLoadReached(first, in_next_batch, 0.8, 0)) << "the window the rule exists for";
  // Busy for the minimum and more: an alert.
  EXPECT_TRUE(AlertLoadReached(first, Core(10, 30), 0.8, 10 * kMs));
  EXPECT_TRUE(AlertLoadReached(first, Core(45, 70), 0.8, 10 * kMs));
  // Long enough but idle enough: none.
  EXPECT_FALSE(AlertLoadReached(first, Core(7, 30), 0.8, 10 * kMs));
}

TEST(LoadReportTest, AnAlertLessensTheBusyShareByTheThreadsWaitsForACpu) {
  const pb::Stats first = Core(4, 20, 1);
  // A 44 ms batch of which the thread waited 40 for its CPU: 4 ms busy in 44.
  EXPECT_FALSE(AlertLoadReached(first, Core(48, 64, 41), 0.8, 10 * kMs));
  EXPECT_TRUE(AlertLoadReached(first, Core(48, 64, 1), 0.8, 10 * kMs));
  // The regular report's load keeps the waits: the interval's share as the counters read it.
  pb::Stats report = Core(48, 64, 41);
  SetIntervalLoad(first, &report);
  EXPECT_DOUBLE_EQ(report.cores(0).load(), 1.0);
}

TEST(LoadReportTest, CountersThatDidNotAdvanceOrRestartedCarryNoLoad) {
  EXPECT_LT(CoreLoad(Core(4, 20).cores(0), Core(4, 20).cores(0), false), 0);
  EXPECT_LT(CoreLoad(Core(4, 20).cores(0), Core(1, 30).cores(0), false), 0);
  EXPECT_FALSE(AlertLoadReached(Core(4, 20), Core(1, 40), 0.8, 0));
  pb::Stats other = Core(30, 40);
  other.mutable_cores(0)->set_core(2);
  EXPECT_FALSE(AlertLoadReached(Core(0, 20), other, 0.8, 0)) << "only the same core's counters make a window";
}

}  // namespace
}  // namespace metron

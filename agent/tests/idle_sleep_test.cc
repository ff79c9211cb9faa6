// Idle backoff (--idle-sleep): an idle worker gives its CPU back and still forwards the first frame that
// arrives after idling. Emulated topologies run dozens of workers on two CPUs and depend on it.
#include <gtest/gtest.h>
#include <sys/resource.h>

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

double process_cpu_ms() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

// CPU the process burns while this (sleeping) thread waits `ms`: essentially the idle worker's.
double idle_cpu_ms(int ms) {
  const double c0 = process_cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return process_cpu_ms() - c0;
}

TEST(IdleSleep, AnIdleWorkerSleepsAndWakesForTheNextFrame) {
  test::RingPort in("idle_in"), out("idle_out");
  Engine engine({kWorker}, test::pool());
  Port* in_port = engine.add_port(std::move(in.port));
  Port* out_port = engine.add_port(std::move(out.port));
  EngineBackend backend(&engine, "test");
  engine.start();

  const pb::DeployPipelineRequest r = test::OneGroupPipeline(*in_port, *out_port, "input -> [0]output;", kWorker);
  pb::PipelineStatus st;
  ASSERT_TRUE(backend.DeployPipeline(r, &st).ok());

  const double spinning = idle_cpu_ms(500);  // default: busy-poll
  engine.set_idle_sleep_us(2000);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double sleeping = idle_cpu_ms(500);
  EXPECT_LT(sleeping, 50.0) << "an idle worker with --idle-sleep 2000 kept the CPU busy";
  EXPECT_GT(spinning, sleeping) << "busy-polling should cost more than sleeping";

  test::Flow f;
  f.dst_mac = "02:4d:00:07:00:03";
  const auto t0 = std::chrono::steady_clock::now();
  in.inject(test::frame(f));
  std::vector<std::vector<uint8_t>> got;
  while (got.empty() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5)) {
    got = out.drain();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_EQ(got.size(), 1u) << "the frame sent after idling was not forwarded";
  engine.stop();
}

}  // namespace
}  // namespace metron

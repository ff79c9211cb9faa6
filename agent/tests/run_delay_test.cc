// core/run_delay.h: the kernel's run delay is real: two threads pinned to one CPU each wait for the other.
#include "core/run_delay.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace metron {
namespace {

TEST(RunDelayTest, TheKernelsRunDelayCountsTheTimeAThreadWaitedForItsCpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  std::atomic<pid_t> tids[2] = {0, 0};
  std::atomic<uint64_t> delay[2] = {0, 0};
  auto spin = [&](int i) {
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
    tids[i] = static_cast<pid_t>(syscall(SYS_gettid));
    const uint64_t d0 = thread_run_delay_ns(tids[i]);
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    while (std::chrono::steady_clock::now() < end) {
    }
    delay[i] = thread_run_delay_ns(tids[i]) - d0;
  };
  std::thread a(spin, 0), b(spin, 1);
  a.join();
  b.join();
  // each had the CPU about half of the 300 ms: the other half it waited
  EXPECT_GE(delay[0] + delay[1], 150'000'000u) << delay[0] << " + " << delay[1] << " ns";
}

}  // namespace
}  // namespace metron

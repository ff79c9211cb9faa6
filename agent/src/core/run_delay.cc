#include "core/run_delay.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace metron {

uint64_t thread_run_delay_ns(pid_t tid) {
  const std::string path = "/proc/" + std::to_string(getpid()) + "/task/" + std::to_string(tid) + "/schedstat";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return 0;
  unsigned long long run = 0, delay = 0;
  const int n = std::fscanf(f, "%llu %llu", &run, &delay);
  std::fclose(f);
  return n == 2 ? delay : 0;
}

}  // namespace metron

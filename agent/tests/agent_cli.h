// Test helper: runs the metron-agent binary the test target was built with (METRON_AGENT_BIN, a compile
// definition of every test that includes this) and answers its exit status, with stdout+stderr in *out.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace metron::test {

inline int RunAgent(const std::string& args, std::string* out) {
  FILE* p = popen((std::string(METRON_AGENT_BIN) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out->append(buf, n);
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace metron::test

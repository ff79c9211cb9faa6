// metron-agent entry point (placeholder until standalone mode lands in this file).
#include <cstdio>
int main() {
  std::fprintf(stderr, "metron-agent: standalone mode not implemented yet\n");
  return 1;
}

#include "test_env.h"

#include <rte_eal.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "core/annotations.h"
#include "core/eal.h"

namespace metron::test {

namespace {

namespace fs = std::filesystem;

constexpr const char* kEalTag = "test";

}  // namespace

int remove_stale_runtime_dirs(const std::string& root) {
  const std::string prefix = eal_file_prefix_stem(kEalTag);
  std::error_code ec;
  int removed = 0;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(digits);
    if (pid <= 0 || (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) continue;  // alive
    std::error_code rm;
    if (fs::remove_all(entry.path(), rm) > 0 && !rm) ++removed;
  }
  return removed;
}

void eal() {
  static const bool up = [] {
    remove_stale_runtime_dirs();
    eal_init(eal_default_args(kEalTag, "0-1"));  // removes its runtime directory at exit (eal.h)
    return true;
  }();
  (void)up;
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

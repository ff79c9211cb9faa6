// The test environment cleans up after itself: a test process's EAL runtime directory is gone once it exits,
// and directories of test processes that died without cleaning up are swept (those of live ones are kept).
#include "test_env.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "core/eal.h"

namespace metron {
namespace {

namespace fs = std::filesystem;

std::string RuntimeDir(pid_t pid) {
  return std::string(test::kRuntimeRoot) + "/" + eal_file_prefix_stem("test") + std::to_string(pid);
}

// Runs `body` in a forked child that exits normally with its return value; returns the child's pid.
template <typename F>
pid_t RunChild(F body, int* status) {
  const pid_t pid = fork();
  if (pid == 0) std::exit(body());  // exit(), not _exit(): static destructors run as at a test's end
  waitpid(pid, status, 0);
  return pid;
}

TEST(TestEnv, EalRuntimeDirIsRemovedWhenTheProcessExits) {
  if (geteuid() != 0) GTEST_SKIP() << "the EAL runtime directory is under /var/run/dpdk (root)";
  int status = -1;
  // The child brings the EAL up (this process has not: a forked EAL is not usable) and reports whether its
  // runtime directory existed while it ran.
  const pid_t child = RunChild([] {
    test::pool();
    return fs::is_directory(RuntimeDir(getpid())) ? 0 : 3;
  }, &status);
  ASSERT_TRUE(WIFEXITED(status)) << "child did not exit normally";
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child's EAL did not create " << RuntimeDir(child);
  EXPECT_FALSE(fs::exists(RuntimeDir(child))) << RuntimeDir(child) << " left behind";
}

TEST(TestEnv, StaleRuntimeDirsOfDeadProcessesAreSweptLiveOnesKept) {
  const fs::path root = fs::temp_directory_path() / ("metron-test-env-" + std::to_string(getpid()));
  fs::create_directories(root);
  int status = 0;
  const pid_t dead = RunChild([] { return 0; }, &status);
  const pid_t live = fork();
  if (live == 0) {
    pause();
    _exit(0);
  }
  const std::string stem = eal_file_prefix_stem("test");
  for (const std::string& name : {stem + std::to_string(dead), stem + std::to_string(live), stem + "x1",
                                  std::string("metron-other-") + std::to_string(dead)}) {
    fs::create_directories(root / name);
    std::FILE* f = std::fopen((root / name / "config").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  EXPECT_EQ(test::remove_stale_runtime_dirs(root.string()), 1);
  EXPECT_FALSE(fs::exists(root / (stem + std::to_string(dead)))) << "dead process's directory kept";
  EXPECT_TRUE(fs::exists(root / (stem + std::to_string(live)))) << "live process's directory removed";
  EXPECT_TRUE(fs::exists(root / (stem + "x1"))) << "a name that is not <stem><pid> was touched";
  EXPECT_TRUE(fs::exists(root / ("metron-other-" + std::to_string(dead)))) << "another tag's directory removed";
  kill(live, SIGKILL);
  waitpid(live, &status, 0);
  fs::remove_all(root);
}

}  // namespace
}  // namespace metron

// A black-box NF's process (docs/blackbox.md): started with fork/exec in a process group of its own, killed with
// its whole group when the object goes (RAII), watched through a pidfd off the data path.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace metron {

class NfProcess {
 public:
  // Starts `argv[0]` (a path) with `argv`, the agent's environment plus `env` ("NAME=value"), and a pipe whose
  // write end's number is put in the environment as `ready_env` (the NF library writes a byte there once attached).
  // The child dies with the thread that started it (PR_SET_PDEATHSIG): an agent killed with SIGKILL leaves no NF.
  // With `netns_fd` >= 0 the child enters that network namespace before exec (MODE KERNEL).
  // Throws std::runtime_error if the process cannot be created.
  NfProcess(const std::vector<std::string>& argv, std::vector<std::string> env, const std::string& ready_env,
            int netns_fd = -1);
  ~NfProcess();
  NfProcess(const NfProcess&) = delete;
  NfProcess& operator=(const NfProcess&) = delete;

  enum class Attach { kAttached, kExited, kTimeout };
  // Waits up to timeout_ms for the ready byte or the process's end (then its status taken: how() says how it ended).
  Attach wait_attached(int timeout_ms);
  // Waits up to timeout_ms for the process to end; true once it has ended (its status taken; the zombie is reaped
  // when the object goes, off the caller's path if the kernel is slow at it).
  bool wait_exit(int timeout_ms);
  // Signals the whole process group.
  void kill_group(int sig) const;
  // A descriptor of this process's own (its number `fd` there) duplicated into ours (pidfd_getfd), or -1.
  int dup_fd(int fd) const;

  pid_t pid() const { return pid_; }
  bool ended() const { return ended_; }
  const std::string& how() const { return how_; }  // "exit N" or "signal N" once ended
  // CPU seconds (user + system) the process used: from /proc while it runs, from its rusage once ended.
  double cpu_seconds() const;

 private:
  bool reap(int timeout_ms);
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int ready_fd_ = -1;
  bool ended_ = false;
  std::string how_;
  double cpu_ = 0;
};

// Every thread of process `pid` (from /proc: name, state, wchan, the system call it is in, its kernel stack), one a
// line: what a process is blocked in, for a message when it does not do what it should (an NF that does not attach).
std::string describe_threads(pid_t pid);

}  // namespace metron

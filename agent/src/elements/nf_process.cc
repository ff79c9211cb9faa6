#include "elements/nf_process.h"

#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <future>
#include <memory>
#include <thread>

extern char** environ;

namespace metron {

namespace {

#ifndef P_PIDFD
#define P_PIDFD 3  // linux/wait.h; glibc < 2.36 lacks it
#endif

int pidfd_open(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

std::string describe(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return "exit " + std::to_string(info.si_status);
  if (info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED) return "signal " + std::to_string(info.si_status);
  return "status " + std::to_string(info.si_status);
}

// How long an ended NF is left a zombie before it is reaped. Reaped at once, the kernel's part of the reap
// (release_task, run by whichever thread waits) was seen to spin for 4-92 s (kernel 6.18: wait4 -> release_task ->
// proc_invalidate_siblings_dcache -> shrink_dcache_parent -> d_walk, the reaping thread on a CPU shared with the
// tasks it waits for, until the busy-polling worker on the other CPU stopped), in 14 of 81 runs of
// BlackBoxTest.NfThatStopsReadingIsCountedAndReplaced; reaped 50 ms after its exit was seen, 0 of 80 (session 34,
// docs/blackbox.md). Why the wait helps is not shown: the exits of the NF's other threads are the likely party.
constexpr auto kReapDelay = std::chrono::milliseconds(50);

// Reaps `pid` (ended, its status already taken) on a thread of its own (mbb-reap), kReapDelay after the call, and
// waits for that at most `wait_ms`. A supervisor stuck in a slow reap could not restart the NF.
void reap_ended(pid_t pid, int wait_ms) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> reaped = done->get_future();
  auto reap = [pid, done] {
    std::this_thread::sleep_for(kReapDelay);
    const auto t0 = std::chrono::steady_clock::now();
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    if (ms.count() >= 1000)  // the kernel slow at it (above): worth a line
      std::fprintf(stderr, "metron: reaping NF process %d took %lld ms\n", pid, static_cast<long long>(ms.count()));
    done->set_value();
  };
  try {
    std::thread([reap] {
      pthread_setname_np(pthread_self(), "mbb-reap");
      reap();
    }).detach();
  } catch (const std::system_error&) {  // no thread to be had (called from destructors: must not throw)
    reap();
  }
  reaped.wait_for(std::chrono::milliseconds(wait_ms));
}

}  // namespace

NfProcess::NfProcess(const std::vector<std::string>& argv, std::vector<std::string> env,
                     const std::string& ready_env, int netns_fd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  ready_fd_ = fds[0];
  const int write_fd = fds[1];
  // Everything the child needs is built before fork: after it, only async-signal-safe calls until exec.
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "METRON_NF_", 10) != 0) env.emplace_back(*e);
  env.push_back(ready_env + "=" + std::to_string(write_fd));
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the agent died before the line above
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) != 0) _exit(126);
    fcntl(write_fd, F_SETFD, 0);  // the one descriptor the NF inherits on purpose
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  close(write_fd);
  setpgid(pid, pid);  // also here: no race with kill_group before the child ran
  pid_ = pid;
  pidfd_ = pidfd_open(pid);
}

NfProcess::~NfProcess() {
  if (pid_ > 0 && !ended_) {
    // SIGTERM first (the NF library leaves the EAL cleanly), SIGKILL to the group if it does not end at once.
    kill_group(SIGTERM);
    if (!reap(200)) {
      kill_group(SIGKILL);
      reap(-1);
    }
  }
  if (ended_ && pid_ > 0) {
    kill(-pid_, SIGKILL);  // anything the NF left in its group
    reap_ended(pid_, 1000);  // at once unless the kernel is slow at it: kReapDelay and a few ms
  }
  if (pidfd_ >= 0) close(pidfd_);
  if (ready_fd_ >= 0) close(ready_fd_);
}

void NfProcess::kill_group(int sig) const {
  if (pid_ > 0 && !ended_) kill(-pid_, sig);
}

int NfProcess::dup_fd(int fd) const {
  return pidfd_ < 0 ? -1 : static_cast<int>(syscall(SYS_pidfd_getfd, pidfd_, fd, 0));
}

bool NfProcess::reap(int timeout_ms) {
  if (ended_) return true;
  if (pidfd_ >= 0) {
    pollfd p{pidfd_, POLLIN, 0};
    int r;
    while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {
    }
    if (r == 0) return false;
  }
  siginfo_t info{};
  rusage ru{};
  // The status and CPU time of the ended process, which stays a zombie (WNOWAIT): the destructor reaps it, off the
  // caller's path if the kernel is slow at it. Never blocks unless asked to (timeout -1): a killed process whose
  // threads are still leaving the kernel is not waitable yet, and the supervisor must keep checking its stop flag.
  // The raw syscall: glibc's waitid has no rusage argument.
  const int flags = WEXITED | WNOWAIT | (timeout_ms < 0 ? 0 : WNOHANG);
  const long r = pidfd_ >= 0 ? syscall(SYS_waitid, P_PIDFD, pidfd_, &info, flags, &ru)
                             : syscall(SYS_waitid, P_PID, pid_, &info, flags, &ru);
  if (r < 0 && errno == ECHILD) {
    // Not our child any more: something else in the process reaped it (its status is lost). It is gone all the
    // same; waiting for it would keep the supervisor from restarting the NF for good.
    std::fprintf(stderr, "metron: NF process %d was reaped elsewhere; its exit status is unknown\n", pid_);
    ended_ = true;
    how_ = "exited (status unknown)";
    return true;
  }
  if (r < 0 || info.si_pid != pid_) {
    if (timeout_ms > 0) usleep(1000);  // readable but not waitable yet: do not spin on the pidfd
    return false;
  }
  ended_ = true;  // ended: its status is ours (the zombie goes in the destructor)
  how_ = describe(info);
  cpu_ = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  return true;
}

bool NfProcess::wait_exit(int timeout_ms) { return reap(timeout_ms); }

NfProcess::Attach NfProcess::wait_attached(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool pipe_open = true;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return reap(0) ? Attach::kExited : Attach::kTimeout;
    pollfd p[2] = {{pidfd_, POLLIN, 0}, {pipe_open ? ready_fd_ : -1, POLLIN, 0}};
    const int r = poll(p, 2, static_cast<int>(left.count()));
    if (r < 0 && errno != EINTR) return Attach::kTimeout;
    if (p[1].revents & (POLLIN | POLLHUP)) {
      char c;
      const ssize_t got = read(ready_fd_, &c, 1);
      if (got == 1) return Attach::kAttached;
      pipe_open = false;  // closed without the byte: the process is ending (exec failed, or exited)
    }
    if (p[0].revents & POLLIN) {
      reap(-1);
      return Attach::kExited;
    }
  }
}

std::string describe_threads(pid_t pid) {
  namespace fs = std::filesystem;
  std::string out;
  std::error_code ec;
  for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    // Not /proc/.../syscall: reading it waits until the thread is off its CPU in the state it was read in
    // (task_current_syscall -> wait_task_inactive), and a thread reaping an NF that the kernel is slow to release
    // runs in the kernel in its wait's sleeping state all along: two readers waited out a 92 s reap (session 34).
    std::ifstream cm(t.path() / "comm"), st(t.path() / "stat"), wc(t.path() / "wchan"), sk(t.path() / "stack");
    std::string c, l, w, k;
    std::getline(cm, c);
    std::getline(st, l);
    std::getline(wc, w);
    for (std::string x; std::getline(sk, x);) k += x + " | ";
    const size_t p = l.rfind(')');
    out += "\n " + t.path().filename().string() + " " + c + " " + (p == std::string::npos ? "?" : l.substr(p + 2, 1)) +
           " wchan " + w + " stack " + k;
  }
  return out;
}

double NfProcess::cpu_seconds() const {
  if (ended_ || pid_ <= 0) return cpu_;
  std::ifstream f("/proc/" + std::to_string(pid_) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return 0;
  const size_t close_paren = line.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::istringstream rest(line.substr(close_paren + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {  // fields 14 and 15: utime, stime (clock ticks)
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace metron

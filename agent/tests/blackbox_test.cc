// Black-box NFs (docs/blackbox.md), MODE RING, end to end inside the agent: real NF processes (metron-nf-fwd on
// agent/nflib) started as DPDK secondaries, real rte_rings in hugepage memory, the engine's worker core, deploys
// and stats through EngineBackend. Needs root and 2 MB hugepages: the test reserves them on a private hugetlbfs
// mount and gives them back at exit; it holds the machine-wide lock /tmp/metron-sys.lock meanwhile (unless
// METRON_SYS_LOCK_HELD=1 says the caller holds it). Without hugepages every test is skipped, saying why.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "core/eal.h"
#include "core/engine.h"
#include "core/engine_backend.h"
#include "elements/nf_process.h"
#include "one_group.h"
#include "ring_port.h"

namespace metron {
namespace {

namespace fs = std::filesystem;
using test::Flow;
using test::RingPort;

constexpr unsigned kWorker = 1;
constexpr const char* kHp = "/sys/kernel/mm/hugepages/hugepages-2048kB/";
constexpr int kPages = 192;  // EAL -m 256 plus its own allocations

long read_long(const std::string& path) {
  std::ifstream f(path);
  long v = -1;
  f >> v;
  return v;
}
bool write_long(const std::string& path, long v) {
  std::ofstream f(path);
  f << v;
  f.flush();
  return static_cast<bool>(f);
}

// Lock, pages, mount and the EAL on them, for the whole test process; undone at exit.
class HugepageEal {
 public:
  static HugepageEal& get() {
    static HugepageEal h;
    return h;
  }
  const std::string& skip_reason() const { return why_; }

 private:
  HugepageEal() {
    if (geteuid() != 0) {
      why_ = "not root: hugepages cannot be reserved";
      return;
    }
    const char* held = std::getenv("METRON_SYS_LOCK_HELD");
    if (held == nullptr || std::string(held) != "1") {
      lock_fd_ = open("/tmp/metron-sys.lock", O_RDWR | O_CREAT, 0666);
      if (lock_fd_ >= 0) flock(lock_fd_, LOCK_EX);
    }
    sweep_dead_runs();
    const long total = read_long(std::string(kHp) + "nr_hugepages");
    const long free_pages = read_long(std::string(kHp) + "free_hugepages");
    if (total < 0) {
      why_ = "no 2 MB hugepage support in this kernel";
      return;
    }
    if (free_pages < kPages) {
      write_long(std::string(kHp) + "nr_hugepages", total + kPages - free_pages);
      raised_ = std::max(0L, read_long(std::string(kHp) + "nr_hugepages") - total);
      // what was raised, for a later run to give back if this process dies before its destructor (ctest's timeout)
      std::ofstream(kStem + std::to_string(getpid()) + ".raised") << raised_;
      if (read_long(std::string(kHp) + "free_hugepages") < kPages) {
        why_ = "the kernel gave fewer than " + std::to_string(kPages) + " free 2 MB hugepages";
        return;
      }
    }
    dir_ = kStem + std::to_string(getpid());
    fs::create_directories(dir_);
    if (mount("nodev", dir_.c_str(), "hugetlbfs", 0, "pagesize=2M") != 0) {
      why_ = "cannot mount hugetlbfs on " + dir_;
      return;
    }
    mounted_ = true;
    // Hugepage files kept (no --huge-unlink): the NF secondaries map them. The file prefix is the test EAL's,
    // so a crashed run's runtime directory is swept like the other tests'.
    eal_init({"--huge-dir", dir_, "-m", "256", "--no-pci", "--file-prefix",
              eal_file_prefix_stem("test") + std::to_string(getpid()), "-l", "0-1", "--log-level", "lib.eal:error"});
    test::pool();  // on the hugepages: test::eal() finds the EAL up
  }
  ~HugepageEal() {
    // The EAL keeps its memory mapped until the process ends: the files go now, the pages when it does (a lowered
    // nr_hugepages turns pages in use into surplus pages the kernel frees then).
    if (mounted_) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(dir_, ec)) fs::remove(e.path(), ec);
      umount2(dir_.c_str(), MNT_DETACH);
      fs::remove(dir_, ec);
    }
    // Given back as hugepages.sh does, by what was raised, never by writing back the count seen at the start: pages
    // another user (a bench, a topology's agents) reserved meanwhile are theirs, and writing the old count took
    // them away from under it, or kept them past its own release.
    if (raised_ > 0) give_back(raised_);
    std::error_code ec;
    fs::remove(kStem + std::to_string(getpid()) + ".raised", ec);
    if (lock_fd_ >= 0) close(lock_fd_);
  }
  // A run killed before its destructor (a ctest timeout, a crash) left its mount, files and raised pages: found by
  // the pid in the name, undone here under the lock (once seen: 256 pages held and a mount for hours).
  static void sweep_dead_runs() {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/tmp", ec)) {
      const std::string name = e.path().string();
      if (name.rfind(kStem, 0) != 0 || !e.is_directory(ec)) continue;
      const std::string pid = name.substr(kStem.size());
      if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || fs::exists("/proc/" + pid, ec))
        continue;
      for (const auto& f : fs::directory_iterator(e.path(), ec)) fs::remove(f.path(), ec);
      umount2(name.c_str(), MNT_DETACH);
      fs::remove(e.path(), ec);
      const long raised = read_long(name + ".raised");
      if (raised > 0) give_back(raised);
      fs::remove(name + ".raised", ec);
    }
  }
  // From the pool's persistent size: sysfs nr_hugepages counts surplus pages too (another user's, given back while
  // still mapped), which subtracting from would keep reserved for good (agent/scripts/hugepages.sh does the same).
  static void give_back(long pages) {
    const long persistent =
        read_long(std::string(kHp) + "nr_hugepages") - read_long(std::string(kHp) + "surplus_hugepages");
    write_long(std::string(kHp) + "nr_hugepages", std::max(0L, persistent - pages));
  }
  static inline const std::string kStem = "/tmp/metron-bbtest-hp-";
  std::string why_, dir_;
  long raised_ = 0;  // pages this process added to the kernel's pool
  bool mounted_ = false;
  int lock_fd_ = -1;
};

// Child processes of this test process still alive (NFs the agent should have killed and reaped).
int children_alive() {
  int n = 0;
  const std::string me = std::to_string(getpid());
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream f(e.path() / "stat");
    std::string line;
    if (!std::getline(f, line)) continue;
    const size_t p = line.rfind(')');
    if (p == std::string::npos) continue;
    std::istringstream rest(line.substr(p + 2));
    std::string state, ppid;
    rest >> state >> ppid;
    if (ppid == me) ++n;
  }
  return n;
}

// The kernel's view of a process (its State and signal lines), for failure messages.
std::string proc_status(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line, out = "\n/proc/" + std::to_string(pid) + "/status:";
  while (std::getline(f, line))
    if (line.rfind("State", 0) == 0 || line.rfind("Sig", 0) == 0 || line.rfind("PPid", 0) == 0 ||
        line.rfind("Threads", 0) == 0)
      out += " " + line + ";";
  return out + describe_threads(pid);
}

// Every thread of this process (name, state, wchan, kernel stack): where the agent's supervisor threads are.
std::string own_threads() {
  std::string out = "\nthis process's threads:" + describe_threads(getpid());
  std::error_code ec;
  // Descriptors that are pidfds (the supervisor polls one per NF): one missing would mean it was closed under it.
  int pidfds = 0;
  for (const auto& f : fs::directory_iterator("/proc/self/fd", ec))
    if (fs::read_symlink(f.path(), ec).string() == "anon_inode:[pidfd]") ++pidfds;
  return out + "\npidfds open: " + std::to_string(pidfds);
}

// How long a restart may take: a SIGKILLed NF is sometimes reapable only after >10 s on this loaded machine (its
// exit still in the kernel; the policy applies meanwhile, as ring_full), so the restart follows then.
constexpr int kRestartMs = 40000;

bool wait_for(const std::function<bool()>& pred, int timeout_ms = 10000) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

class BlackBoxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HugepageEal::get().skip_reason().empty())
      GTEST_SKIP() << "black-box RING tests need hugepages: " << HugepageEal::get().skip_reason();
    static int n = 0;
    ++n;
    in_ = std::make_unique<RingPort>("bbin" + std::to_string(n));
    out_ = std::make_unique<RingPort>("bbout" + std::to_string(n));
    engine_ = std::make_unique<Engine>(std::vector<unsigned>{kWorker}, test::pool());
    in_port_ = engine_->add_port(std::move(in_->port));
    out_port_ = engine_->add_port(std::move(out_->port));
    backend_ = std::make_unique<EngineBackend>(engine_.get(), "test");
    engine_->start();
  }
  void TearDown() override {
    if (engine_) engine_->stop();
    backend_.reset();  // removes the pipelines: the NFs are killed and reaped here
    engine_.reset();
    if (in_) {
      EXPECT_EQ(children_alive(), 0) << "an NF process outlived its pipeline";
    }
  }

  grpc::Status deploy(const std::string& click, uint32_t tag = 7, const std::string& id = "p") {
    pb::DeployPipelineRequest r = test::OneGroupPipeline(*in_port_, *out_port_, click, kWorker, tag);
    r.set_pipeline_id(id);
    r.mutable_groups(0)->add_class_ids(3);
    pb::PipelineStatus st;
    return backend_->DeployPipeline(r, &st);
  }
  static std::string bb(const std::string& name, const std::string& extra) {
    return name + " :: BlackBoxNF(NAME " + name + ", PROGRAM " + METRON_NF_FWD_BIN + (extra.empty() ? "" : ", ") +
           extra + ")";
  }
  static std::vector<uint8_t> pkt(uint16_t dport, uint16_t tag = 7) {
    Flow f;
    char mac[32];
    std::snprintf(mac, sizeof mac, "02:4d:%02x:%02x:00:03", tag >> 8, tag & 0xff);
    f.dst_mac = mac;
    f.dport = dport;
    return f.proto = 17, test::frame(f);
  }
  static uint16_t dport_of(const std::vector<uint8_t>& f) { return static_cast<uint16_t>(f[14 + 22] << 8 | f[14 + 23]); }
  // The frames in a failure message: length, source MAC, EtherType, UDP destination port if IPv4/UDP.
  static std::string describe(const std::vector<std::vector<uint8_t>>& frames) {
    std::string out;
    char b[96];
    for (const auto& f : frames) {
      if (f.size() < 14) {
        out += " [short " + std::to_string(f.size()) + "]";
        continue;
      }
      const unsigned type = f[12] << 8 | f[13];
      std::snprintf(b, sizeof b, " [%zu B src %02x:%02x:%02x:%02x:%02x:%02x type %04x dport %d]", f.size(), f[6], f[7],
                    f[8], f[9], f[10], f[11], type, type == 0x0800 && f.size() > 14 + 23 && f[14 + 9] == 17 ? dport_of(f) : -1);
      out += b;
    }
    return out;
  }

  std::vector<pb::BlackBoxStats> boxes() {
    pb::Stats s;
    EXPECT_TRUE(backend_->GetStats(pb::StatsRequest(), &s).ok());
    std::vector<pb::BlackBoxStats> out;
    for (const auto& g : s.groups())
      for (const auto& b : g.black_boxes()) out.push_back(b);
    return out;
  }
  uint64_t group_drops() {
    pb::Stats s;
    EXPECT_TRUE(backend_->GetStats(pb::StatsRequest(), &s).ok());
    uint64_t d = 0;
    for (const auto& g : s.groups()) d += g.drops();
    return d;
  }
  pb::BlackBoxStats box(size_t i = 0) {
    auto all = boxes();
    return i < all.size() ? all[i] : pb::BlackBoxStats();
  }
  size_t drain_count(std::vector<std::vector<uint8_t>>* keep = nullptr) {
    auto got = out_->drain();
    if (keep) keep->insert(keep->end(), got.begin(), got.end());
    return got.size();
  }
  // Frames out until `n` arrived or the time is up.
  std::vector<std::vector<uint8_t>> collect(size_t n, int timeout_ms = 5000) {
    std::vector<std::vector<uint8_t>> all;
    wait_for([&] { return drain_count(&all) , all.size() >= n; }, timeout_ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    drain_count(&all);
    return all;
  }

  // 100 frames to port 80 and 50 to port 23 through an NF that drops port 23: the 100 come out, and the stats
  // say so (sent 150, returned 100, nf_dropped 50, no policy applied). Returns the stats.
  pb::BlackBoxStats pass_80_drop_23() {
    for (int i = 0; i < 100; ++i) in_->inject(pkt(80));
    for (int i = 0; i < 50; ++i) in_->inject(pkt(23));
    auto out = collect(100);
    EXPECT_EQ(out.size(), 100u);
    for (const auto& f : out) EXPECT_EQ(dport_of(f), 80);
    const pb::BlackBoxStats s = box();
    EXPECT_EQ(s.sent(), 150u);
    EXPECT_EQ(s.returned(), 100u);
    EXPECT_EQ(s.nf_dropped(), 50u);
    EXPECT_EQ(s.ring_full() + s.bypassed() + s.failed_closed() + s.restarts(), 0u);
    return s;
  }

  // Frames accounted for: out, the group's drops but the NFs' own verdicts (so the policy's and the output port's
  // refusals), and what dead instances held (nf_lost).
  uint64_t accounted(uint64_t out) {
    uint64_t verdicts = 0, lost = 0;
    for (const auto& b : boxes()) verdicts += b.nf_dropped(), lost += b.nf_lost();
    return out + group_drops() - verdicts + lost;
  }
  // Waits until every injected frame is accounted for (a quiet pause was not enough on a loaded machine: frames
  // an NF off its CPU still held were counted as missing), then a little longer for any extra one to show.
  void settle(uint64_t* out, uint64_t injected) {
    EXPECT_TRUE(wait_for([&] { return accounted(*out += drain_count()) >= injected; }, 20000))
        << "the pipeline settles: " << accounted(*out) << " of " << injected;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    *out += drain_count();
  }

  // Injects frames one every `gap_us` on a thread until stopped; counts them.
  struct Stream {
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> sent{0};
    std::thread t;
    Stream(RingPort* in, std::vector<uint8_t> frame, int gap_us) {
      t = std::thread([this, in, frame, gap_us] {
        while (!stop.load()) {
          in->inject(frame);
          sent.fetch_add(1);
          std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
        }
      });
    }
    ~Stream() { end(); }
    void end() {
      stop = true;
      if (t.joinable()) t.join();
    }
  };

  std::unique_ptr<RingPort> in_, out_;
  Port* in_port_ = nullptr;
  Port* out_port_ = nullptr;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<EngineBackend> backend_;
};

TEST_F(BlackBoxTest, PacketsGoThroughTheNfProcessWithItsVerdicts) {
  ASSERT_TRUE(deploy("input -> " + bb("ids", "ARGS \"--drop-port 23\"") + " -> [0]output;").ok());
  const pb::BlackBoxStats at_start = box();
  EXPECT_EQ(at_start.state(), "RUNNING");
  EXPECT_GT(at_start.pid(), 0);
  EXPECT_EQ(at_start.mode(), "RING");
  EXPECT_EQ(at_start.on_failure(), "CLOSED");
  EXPECT_EQ(at_start.nf(), "ids");
  const pb::BlackBoxStats s = pass_80_drop_23();
  EXPECT_EQ(s.pid(), at_start.pid());
}

// Adjacent RING boxes link directly by default (NF to NF, docs/blackbox.md LINK); LINK AGENT takes every hop
// back through the agent. Same verdicts, same counts either way.
class ChainOfThreeTest : public BlackBoxTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(ChainOfThreeTest, AChainOfThreeNfProcessesAppliesEachOnesVerdicts) {
  const std::string link = GetParam().empty() ? "" : "LINK " + GetParam();
  const std::string sep = link.empty() ? "" : ", ";
  ASSERT_TRUE(deploy("input -> " + bb("a", "ARGS \"--drop-port 23\"" + sep + link) + " -> " +
                     bb("b", "ARGS \"--drop-port 24\"" + sep + link) + " -> " + bb("c", "ON_FAILURE OPEN" + sep + link) +
                     " -> [0]output;")
                  .ok());
  for (int i = 0; i < 60; ++i) in_->inject(pkt(80));
  for (int i = 0; i < 20; ++i) in_->inject(pkt(23));
  for (int i = 0; i < 20; ++i) in_->inject(pkt(24));
  auto out = collect(60);
  ASSERT_EQ(out.size(), 60u);
  for (const auto& f : out) EXPECT_EQ(dport_of(f), 80);
  auto all = boxes();
  ASSERT_EQ(all.size(), 3u);
  std::set<int> pids;
  const uint64_t want[3][3] = {{100, 80, 20}, {80, 60, 20}, {60, 60, 0}};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(all[i].sent(), want[i][0]) << all[i].element();
    EXPECT_EQ(all[i].returned(), want[i][1]) << all[i].element();
    EXPECT_EQ(all[i].nf_dropped(), want[i][2]) << all[i].element();
    EXPECT_EQ(all[i].link(), GetParam().empty() ? "DIRECT" : GetParam()) << all[i].element();
    EXPECT_EQ(all[i].nf_lost(), 0u);
    pids.insert(all[i].pid());
  }
  EXPECT_EQ(pids.size(), 3u) << "one process per NF";
  EXPECT_EQ(group_drops(), 40u) << "the NFs' drops are the group's";
}

INSTANTIATE_TEST_SUITE_P(Link, ChainOfThreeTest, ::testing::Values("", "DIRECT", "AGENT"),
                         [](const auto& info) { return info.param.empty() ? std::string("Default") : info.param; });

// IDLE WAKE (the default): an NF whose input stays empty sleeps on its wake word, and whoever hands it packets (the
// agent, or the NF before it) wakes it. A chain of three left idle sleeps (CPU time near 0, asleep in the kernel);
// frames in rounds, each after the NFs went back to sleep, and then a paced stream (a frame every 50 us, the NFs
// sleeping at once: IDLE_SPIN 0, so nearly every frame finds them asleep: the lost-wake-up race at its most
// frequent) all come out, each NF's verdicts applied, counted exactly; the producers' wake-ups are counted.
class SleepingNfTest : public BlackBoxTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // User + system CPU seconds of a process (/proc/<pid>/stat utime and stime).
  static double cpu_seconds(int pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(f, line);
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string skip;
    for (int i = 0; i < 11; ++i) rest >> skip;  // state .. cmajflt: fields 3-13
    double ut = 0, st = 0;
    rest >> ut >> st;
    return (ut + st) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
};

TEST_P(SleepingNfTest, ASleepingNfIsWokenAndNothingIsLost) {
  // SHARED: the three NFs pinned to one CPU, so the defaults change: each sleeps at once (IDLE_SPIN 0 chosen) and
  // the worker wakes the first per batch (WAKE_BATCH: 256 of the 1024-slot ring, or once it polled 16 times
  // without a push for it): the paced stream checks the second way, each frame alone in the ring.
  const bool shared = GetParam() == "SHARED";
  const std::string link = shared ? "DIRECT" : GetParam();
  const std::string opts = "LINK " + link + (shared ? ", CPUS 1" : ", IDLE_SPIN 0") + ", STALL_TIMEOUT 0";
  ASSERT_TRUE(deploy("input -> " + bb("a", "ARGS \"--drop-port 23\", " + opts) + " -> " +
                     bb("b", "ARGS \"--drop-port 24\", " + opts) + " -> " + bb("c", opts) + " -> [0]output;")
                  .ok());
  auto all = boxes();
  ASSERT_EQ(all.size(), 3u);
  for (const auto& b : all) {
    ASSERT_EQ(b.link(), link);
    std::ifstream env("/proc/" + std::to_string(b.pid()) + "/environ");
    const std::string vars((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
    EXPECT_NE(vars.find(std::string("METRON_NF_SPIN_US=0") + '\0'), std::string::npos)
        << b.element() << (shared ? ": an NF sharing its CPU polls no time before it sleeps" : ": IDLE_SPIN 0");
  }
  // Idle: each NF asleep (it slept, and used next to no CPU over half a second).
  ASSERT_TRUE(wait_for([&] {
    for (const auto& b : boxes())
      if (b.nf_sleeps() == 0) return false;
    return true;
  })) << boxes()[0].DebugString();
  double cpu0[3];
  for (int i = 0; i < 3; ++i) cpu0[i] = cpu_seconds(all[i].pid());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (int i = 0; i < 3; ++i)
    EXPECT_LT(cpu_seconds(all[i].pid()) - cpu0[i], 0.05) << all[i].element() << " idles asleep, not polling";

  // Rounds: k frames to port 80, k / 2 to 23 (a drops them), k / 4 to 24 (b drops them); all out before the next
  // round, which starts after the NFs slept again.
  uint64_t want_out = 0, to23 = 0, to24 = 0, woken_before = 0;
  for (const auto& b : boxes()) woken_before += b.nf_wakeups();
  for (int round = 0, k = 1; round < 12; ++round, k = k * 2 % 97 + 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (int i = 0; i < k; ++i) in_->inject(pkt(80));
    for (int i = 0; i < k / 2; ++i) in_->inject(pkt(23));
    for (int i = 0; i < k / 4; ++i) in_->inject(pkt(24));
    want_out += k, to23 += k / 2, to24 += k / 4;
    std::vector<std::vector<uint8_t>> got;
    ASSERT_TRUE(wait_for([&] { return drain_count(&got), got.size() >= static_cast<size_t>(k); }))
        << "round " << round << ": " << got.size() << " of " << k;
    for (const auto& f : got) ASSERT_EQ(dport_of(f), 80);
  }
  // A paced stream: the NFs sleep between frames.
  uint64_t out = want_out;
  Stream st(in_.get(), pkt(80), 50);
  ASSERT_TRUE(wait_for([&] { return st.sent.load() >= 3000; }, 60000));
  st.end();
  const uint64_t passing = want_out + st.sent.load(), injected = passing + to23 + to24;
  settle(&out, passing);  // accounted() leaves the NFs' own verdicts out
  EXPECT_EQ(out, passing) << "every frame passed by the three NFs came out";
  all = boxes();
  const uint64_t a_in = injected, b_in = a_in - to23, c_in = b_in - to24;
  const uint64_t want[3][3] = {{a_in, b_in, to23}, {b_in, c_in, to24}, {c_in, c_in, 0}};
  uint64_t woken = 0;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(all[i].sent(), want[i][0]) << all[i].element();
    EXPECT_EQ(all[i].returned(), want[i][1]) << all[i].element();
    EXPECT_EQ(all[i].nf_dropped(), want[i][2]) << all[i].element();
    EXPECT_EQ(all[i].ring_full() + all[i].bypassed() + all[i].failed_closed() + all[i].nf_lost() + all[i].restarts(), 0u)
        << all[i].DebugString();
    EXPECT_GT(all[i].nf_sleeps(), 12u) << all[i].element() << " slept between rounds";
    EXPECT_GT(all[i].nf_wakeups(), 0u) << all[i].element() << " was woken by its producer";
    woken += all[i].nf_wakeups();
  }
  EXPECT_GT(woken - woken_before, 36u) << "each round woke each NF (or the stream did)";
  EXPECT_EQ(group_drops(), to23 + to24);
}

INSTANTIATE_TEST_SUITE_P(Link, SleepingNfTest, ::testing::Values("DIRECT", "AGENT", "SHARED"),
                         [](const auto& info) { return info.param; });

// LINK DIRECT, one NF of three killed mid-stream (SIGKILL): the agent stands in for it (its ON_FAILURE applied and
// counted), restarts it on the same rings, and the chain passes again; the other two NFs keep running. Every packet
// is accounted for exactly: out, the policy's drops, the packets the dead NF held (nf_lost, from the rings'
// indices) and the output port's refusals.
struct KillCase {
  const char* policy;
  int victim;  // 0, 1, 2: first, middle, last
};
class KilledDirectNfTest : public BlackBoxTest, public ::testing::WithParamInterface<KillCase> {};

TEST_P(KilledDirectNfTest, PolicyAppliesAndCountsAndTheRestartReattaches) {
  const KillCase c = GetParam();
  // A generous ATTACH_TIMEOUT: a restart on this loaded machine must not fail its first attach (another test).
  const std::string opts = "STALL_TIMEOUT 0, ATTACH_TIMEOUT 10000, ON_FAILURE " + std::string(c.policy);
  ASSERT_TRUE(deploy("input -> " + bb("a", opts) + " -> " + bb("b", opts) + " -> " + bb("c", opts) + " -> [0]output;").ok());
  auto all = boxes();
  ASSERT_EQ(all.size(), 3u);
  for (const auto& b : all) ASSERT_EQ(b.link(), "DIRECT");
  const int pid = all[c.victim].pid();
  ASSERT_GT(pid, 0);
  uint64_t out = 0;
  Stream s(in_.get(), pkt(80), 50);
  ASSERT_TRUE(wait_for([&] { return (out += drain_count()) > 200; }));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_TRUE(wait_for([&] {
    out += drain_count();
    const auto b = box(c.victim);
    return b.state() == "RUNNING" && b.pid() != pid && b.pid() > 0;
  }, kRestartMs)) << box(c.victim).DebugString() << own_threads();
  const uint64_t out_at_restart = out;
  EXPECT_TRUE(wait_for([&] { return (out += drain_count()) > out_at_restart + 200; })) << "passes again";
  s.end();
  const uint64_t injected = s.sent.load();
  settle(&out, injected);
  all = boxes();
  uint64_t failed_closed = 0, bypassed = 0, lost = 0, nf_dropped = 0;
  for (int i = 0; i < 3; ++i) {
    failed_closed += all[i].failed_closed();
    bypassed += all[i].bypassed();
    lost += all[i].nf_lost();
    nf_dropped += all[i].nf_dropped();
    if (i == c.victim) continue;
    EXPECT_EQ(all[i].restarts(), 0u) << all[i].element() << ": only the killed NF restarts";
    EXPECT_EQ(all[i].nf_lost(), 0u) << all[i].element();
  }
  const pb::BlackBoxStats v = all[c.victim];
  EXPECT_EQ(v.restarts(), 1u);
  EXPECT_EQ(v.last_exit(), "signal 9");
  EXPECT_LE(v.nf_lost(), 2u * kBurst) << "at most a burst taken and one being given on";
  EXPECT_EQ(nf_dropped, 0u);
  const uint64_t tx_dropped = group_drops() - failed_closed;
  if (std::string(c.policy) == "CLOSED") {
    EXPECT_GT(v.failed_closed(), 0u) << "packets reached the NF while it was down: " << v.DebugString();
    EXPECT_EQ(bypassed, 0u);
  } else {
    EXPECT_GT(v.bypassed(), 0u) << "packets reached the NF while it was down: " << v.DebugString();
    EXPECT_EQ(failed_closed, 0u);
  }
  EXPECT_EQ(out + failed_closed + lost + tx_dropped, injected)
      << "nothing shed silently: out " << out << " failed_closed " << failed_closed << " lost " << lost
      << " tx_dropped " << tx_dropped << "\n" << v.DebugString();
}

INSTANTIATE_TEST_SUITE_P(Direct, KilledDirectNfTest,
                         ::testing::Values(KillCase{"CLOSED", 1}, KillCase{"OPEN", 1}, KillCase{"CLOSED", 0},
                                           KillCase{"OPEN", 2}),
                         [](const auto& info) {
                           return std::string(info.param.policy) + "_" + std::to_string(info.param.victim);
                         });

// LINK DIRECT, the middle NF stops reading (SIGSTOP): its input ring (the first NF's output) stays full, the
// supervisor kills it after STALL_TIMEOUT and restarts it; the chain passes again. Meanwhile the first NF waits
// for room and the agent's ring into it fills: those packets are the first box's ring_full (its policy).
TEST_F(BlackBoxTest, DirectNfThatStopsReadingIsReplaced) {
  const std::string opts = "ON_FAILURE CLOSED, RING_SIZE 64, STALL_TIMEOUT 200, ATTACH_TIMEOUT 10000";
  ASSERT_TRUE(deploy("input -> " + bb("a", opts) + " -> " + bb("b", opts) + " -> " + bb("c", opts) + " -> [0]output;").ok());
  const int pid = box(1).pid();
  for (int i = 0; i < 50; ++i) in_->inject(pkt(80));
  ASSERT_EQ(collect(50).size(), 50u);
  ASSERT_EQ(kill(pid, SIGSTOP), 0);
  size_t out = 0;
  Stream s(in_.get(), pkt(80), 200);
  ASSERT_TRUE(wait_for([&] {
    out += drain_count();
    const auto b = box(1);
    return b.state() == "RUNNING" && b.pid() != pid && b.pid() > 0;
  }, kRestartMs)) << box(1).DebugString() << proc_status(pid) << own_threads();
  const uint64_t out_at_restart = out;
  ASSERT_TRUE(wait_for([&] { return (out += drain_count()) > out_at_restart + 100; })) << "passes again";
  s.end();
  const pb::BlackBoxStats b = box(1);
  EXPECT_EQ(b.last_exit(), "signal 9") << "killed by the agent";
  EXPECT_EQ(b.restarts(), 1u);
  EXPECT_GT(box(0).ring_full(), 0u) << box(0).DebugString();
  EXPECT_EQ(box(0).restarts() + box(2).restarts(), 0u);
  kill(pid, SIGCONT);
}

TEST_F(BlackBoxTest, EachGroupRunsItsOwnInstance) {
  ASSERT_TRUE(deploy("input -> " + bb("ids", "") + " -> [0]output;", 7, "p").ok());
  ASSERT_TRUE(deploy("input -> " + bb("ids", "") + " -> [0]output;", 8, "q").ok());
  auto all = boxes();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_GT(all[0].pid(), 0);
  EXPECT_GT(all[1].pid(), 0);
  EXPECT_NE(all[0].pid(), all[1].pid());
  for (int i = 0; i < 10; ++i) in_->inject(pkt(80, 7));
  for (int i = 0; i < 10; ++i) in_->inject(pkt(80, 8));
  EXPECT_EQ(collect(20).size(), 20u);
  all = boxes();
  EXPECT_EQ(all[0].returned(), 10u);
  EXPECT_EQ(all[1].returned(), 10u);
}

// kill -9 mid-stream: the agent restarts the NF; meanwhile the policy holds and is counted. Every packet is
// accounted for, those the dead NF held too (nf_lost: at most one burst taken, one burst being given back).
class KilledNfTest : public BlackBoxTest {
 protected:
  // Runs the stream through an NF with ON_FAILURE `policy`, kills it, waits for the next instance to pass packets.
  // No stall detection: a loaded machine may keep the NF off the CPU for more than STALL_TIMEOUT, and a stall
  // restart before or after the kill would make it another test.
  pb::BlackBoxStats kill_mid_stream(const std::string& policy, uint64_t* out, uint64_t* injected,
                                    uint64_t* tx_dropped) {
    EXPECT_TRUE(deploy("input -> " + bb("ids", "ON_FAILURE " + policy + ", STALL_TIMEOUT 0") + " -> [0]output;").ok());
    const int pid = box().pid();
    if (pid <= 0) {  // never kill(0, ...): that is this test's whole process group
      ADD_FAILURE() << "no NF running: " << box().DebugString();
      return box();
    }
    Stream s(in_.get(), pkt(80), 50);
    EXPECT_TRUE(wait_for([&] { return (*out += drain_count()) > 200; }));
    EXPECT_EQ(kill(pid, SIGKILL), 0);
    EXPECT_TRUE(wait_for([&] {
      *out += drain_count();
      const auto b = box();
      return b.state() == "RUNNING" && b.pid() != pid && b.pid() > 0;
    }, kRestartMs)) << box().DebugString() << proc_status(pid) << own_threads();
    const uint64_t out_at_restart = *out;
    EXPECT_TRUE(wait_for([&] { return (*out += drain_count()) > out_at_restart + 200; })) << "passes again";
    s.end();
    *injected = s.sent.load();
    settle(out, *injected);
    const pb::BlackBoxStats b = box();
    // Frames the output port refused (its ring full while this thread was off the CPU): counted as the group's
    // drops beside the NF's verdicts and the policy's.
    *tx_dropped = group_drops() - b.nf_dropped() - b.failed_closed();
    EXPECT_EQ(b.restarts(), 1u);
    EXPECT_EQ(b.last_exit(), "signal 9");
    return b;
  }
};

TEST_F(KilledNfTest, FailClosedDropsWhileTheNfIsDown) {
  uint64_t out = 0, injected = 0, tx_dropped = 0;
  const pb::BlackBoxStats b = kill_mid_stream("CLOSED", &out, &injected, &tx_dropped);
  EXPECT_GT(b.failed_closed(), 0u) << "packets arrived while the NF was down";
  EXPECT_EQ(b.bypassed(), 0u);
  EXPECT_EQ(out, b.returned());
  EXPECT_LE(out + b.failed_closed() + tx_dropped, injected);
  EXPECT_LE(b.nf_lost(), 2u * kBurst);
  EXPECT_EQ(out + b.failed_closed() + tx_dropped + b.nf_lost(), injected) << b.DebugString() << "tx dropped " << tx_dropped;
}

TEST_F(KilledNfTest, FailOpenBypassesWhileTheNfIsDown) {
  uint64_t out = 0, injected = 0, tx_dropped = 0;
  const pb::BlackBoxStats b = kill_mid_stream("OPEN", &out, &injected, &tx_dropped);
  EXPECT_GT(b.bypassed(), 0u) << "packets arrived while the NF was down";
  EXPECT_EQ(b.failed_closed(), 0u);
  EXPECT_EQ(out, b.returned() + b.bypassed());
  EXPECT_LE(out + tx_dropped, injected);
  EXPECT_LE(b.nf_lost(), 2u * kBurst);
  EXPECT_EQ(out + tx_dropped + b.nf_lost(), injected) << b.DebugString() << "tx dropped " << tx_dropped;
}

// SIGSTOP: the NF stops reading; its ring fills (ring_full, the policy applies), and after STALL_TIMEOUT the agent
// kills it and starts another.
TEST_F(BlackBoxTest, NfThatStopsReadingIsCountedAndReplaced) {
  ASSERT_TRUE(deploy("input -> " + bb("ids", "ON_FAILURE CLOSED, RING_SIZE 64, STALL_TIMEOUT 200") + " -> [0]output;").ok());
  const int pid = box().pid();
  for (int i = 0; i < 50; ++i) in_->inject(pkt(80));
  ASSERT_EQ(collect(50).size(), 50u);
  ASSERT_EQ(kill(pid, SIGSTOP), 0);
  size_t out = 0;
  Stream s(in_.get(), pkt(80), 200);
  ASSERT_TRUE(wait_for([&] { out += drain_count(); return box().ring_full() > 0; })) << box().DebugString();
  ASSERT_TRUE(wait_for([&] {
    out += drain_count();
    const auto b = box();
    return b.state() == "RUNNING" && b.pid() != pid && b.pid() > 0;
  }, kRestartMs)) << box().DebugString() << proc_status(pid) << own_threads();
  const uint64_t out_at_restart = out;
  ASSERT_TRUE(wait_for([&] { return (out += drain_count()) > out_at_restart + 100; })) << "passes again";
  s.end();
  const pb::BlackBoxStats b = box();
  EXPECT_GT(b.ring_full(), 0u);
  EXPECT_GE(b.failed_closed(), b.ring_full());
  EXPECT_EQ(b.last_exit(), "signal 9") << "killed by the agent";
  EXPECT_EQ(b.restarts(), 1u);
  kill(pid, SIGCONT);
}

// MODE MEMIF: the NF is a DPDK process of its own on a net_memif client of the element's memif server port (a copy
// each way); its verdicts drop packets on its side. Supervised the same way.
TEST_F(BlackBoxTest, MemifModePassesWithVerdictsAndIsRestarted) {
  ASSERT_TRUE(deploy("input -> " + bb("ids", "MODE MEMIF, ARGS \"--drop-port 23\", ON_FAILURE OPEN") + " -> [0]output;").ok());
  pb::BlackBoxStats b = box();
  EXPECT_EQ(b.mode(), "MEMIF");
  EXPECT_EQ(b.state(), "RUNNING");
  const int pid = b.pid();
  for (int i = 0; i < 100; ++i) in_->inject(pkt(80));
  for (int i = 0; i < 50; ++i) in_->inject(pkt(23));
  auto out = collect(100);
  ASSERT_EQ(out.size(), 100u) << "ring_full/bypassed: handed to the NF before it could take them" << describe(out)
                              << box().DebugString();
  for (const auto& f : out) EXPECT_EQ(dport_of(f), 80);
  EXPECT_TRUE(wait_for([&] { return box().nf_dropped() == 50u; })) << "the NF library reports its drops: "
                                                                   << box().DebugString();
  b = box();
  EXPECT_EQ(b.sent(), 150u);
  EXPECT_EQ(b.returned(), 100u);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_TRUE(wait_for([&] {
    const auto x = box();
    return x.state() == "RUNNING" && x.pid() != pid && x.pid() > 0;
  })) << box().DebugString();
  for (int i = 0; i < 40; ++i) in_->inject(pkt(80));
  EXPECT_EQ(collect(40).size(), 40u) << "passes through the new instance";
  b = box();
  EXPECT_EQ(b.ring_full() + b.bypassed(), 0u) << "the new instance takes what it is handed at once: " << b.DebugString();
  EXPECT_EQ(b.restarts(), 1u);
  EXPECT_EQ(b.last_exit(), "signal 9");
  EXPECT_EQ(b.returned(), 140u);
  EXPECT_EQ(b.nf_dropped(), 50u) << "the count survives the instance";
}

// The deploy errors of docs/blackbox.md, each leaving nothing of the pipeline (no group, no process).
TEST_F(BlackBoxTest, DeployErrorsNameTheNfAndLeaveNothing) {
  const std::string dir = "/tmp/metron-bbtest-" + std::to_string(getpid());
  fs::create_directories(dir);
  auto script = [&](const std::string& name, const std::string& body, mode_t mode) {
    const std::string p = dir + "/" + name;
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    chmod(p.c_str(), mode);
    return p;
  };
  const std::string plain = script("plain", "exit 0", 0644);
  const std::string exits = script("exits", "exit 3", 0755);
  const std::string killed = script("killed", "kill -9 $$", 0755);
  const std::string sleeps = script("sleeps", "exec sleep 30", 0755);
  struct Case {
    std::string program, want;
  } cases[] = {
      {dir + "/missing", "black-box NF 'ids' (" + dir + "/missing): not found"},
      {plain, "black-box NF 'ids' (" + plain + "): not executable"},
      {exits, "black-box NF 'ids' (" + exits + "): exited at start (exit 3)"},
      {killed, "black-box NF 'ids' (" + killed + "): exited at start (signal 9)"},
      {sleeps, "black-box NF 'ids' (" + sleeps + "): did not attach within 300 ms"},
  };
  for (const Case& c : cases) {
    const grpc::Status st =
        deploy("input -> ids :: BlackBoxNF(NAME ids, PROGRAM " + c.program + ", ATTACH_TIMEOUT 300) -> [0]output;");
    EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << c.program;
    EXPECT_EQ(st.error_message(), c.want);
    pb::Stats s;
    ASSERT_TRUE(backend_->GetStats(pb::StatsRequest(), &s).ok());
    EXPECT_EQ(s.groups_size(), 0) << "nothing of the pipeline stays";
    EXPECT_EQ(children_alive(), 0) << c.program;
  }
  // The pipeline id is free again: a good deploy with it works.
  EXPECT_TRUE(deploy("input -> " + bb("ids", "") + " -> [0]output;").ok());
  fs::remove_all(dir);
}

// MODE KERNEL: an unmodified kernel NF, nftables rules in the bridge family, in a network namespace the agent
// creates per instance; frames cross the namespace's bridge between two af_packet ports (elements/kernel_ns.h).
constexpr const char* kNft = "/usr/sbin/nft";

class KernelNfTest : public BlackBoxTest {
 protected:
  void SetUp() override {
    BlackBoxTest::SetUp();
    if (IsSkipped()) return;
    if (access(kNft, X_OK) != 0) GTEST_SKIP() << "nft is not installed (deploy/deps/agent.apt: nftables)";
    dir_ = "/tmp/metron-bbkernel-" + std::to_string(getpid());
    fs::create_directories(dir_);
    rules_ = dir_ + "/fw.nft";
    std::ofstream(rules_) << "table bridge fw {\n  chain through {\n    type filter hook forward priority 0; policy accept;\n"
                             "    udp dport 23 counter drop\n  }\n}\n";
  }
  void TearDown() override {
    BlackBoxTest::TearDown();
    if (!dir_.empty()) {
      EXPECT_EQ(namespaces(), std::vector<std::string>()) << "an NF namespace outlived its pipeline";
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }
  std::string fw(const std::string& extra = "") const {
    return "fw :: BlackBoxNF(NAME fw, PROGRAM " + std::string(kNft) + ", ARGS \"-f " + rules_ + "\", MODE KERNEL" +
           (extra.empty() ? "" : ", " + extra) + ")";
  }
  // This process's NF namespaces (named mbb<pid>x<n>).
  static std::vector<std::string> namespaces() {
    std::vector<std::string> out;
    std::error_code ec;
    const std::string mine = "mbb" + std::to_string(getpid()) + "x";
    for (const auto& e : fs::directory_iterator("/var/run/netns", ec))
      if (e.path().filename().string().rfind(mine, 0) == 0) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  // What `nft list ruleset` says in namespace ns.
  static std::string ruleset(const std::string& ns) {
    FILE* p = popen(("ip netns exec " + ns + " " + kNft + " list ruleset 2>&1").c_str(), "r");
    std::string out;
    char buf[256];
    while (p != nullptr && fgets(buf, sizeof buf, p) != nullptr) out += buf;
    if (p != nullptr) pclose(p);
    return out;
  }
  std::string dir_, rules_;
};

TEST_F(KernelNfTest, AnNftablesDropRuleIsTheNfsVerdict) {
  ASSERT_EQ(deploy("input -> " + fw() + " -> [0]output;").error_message(), "");
  const pb::BlackBoxStats at_start = box();
  EXPECT_EQ(at_start.mode(), "KERNEL");
  EXPECT_EQ(at_start.state(), "RUNNING");
  EXPECT_EQ(at_start.pid(), 0) << "nft set the rules up and exited: the NF is its namespace";
  const auto ns = namespaces();
  ASSERT_EQ(ns.size(), 1u);
  pass_80_drop_23();  // KERNEL: nf_dropped is what the namespace did not give back
  EXPECT_NE(ruleset(ns[0]).find("packets 50 "), std::string::npos) << "the kernel's rule dropped them:\n"
                                                                  << ruleset(ns[0]);
}

// The namespace deleted from outside: the policy applies and is counted, a fresh namespace is set up with the
// rules again, and the old one is gone.
TEST_F(KernelNfTest, ANamespaceDeletedFromOutsideIsReplaced) {
  ASSERT_EQ(deploy("input -> " + fw("ON_FAILURE CLOSED") + " -> [0]output;").error_message(), "");
  const auto before = namespaces();
  ASSERT_EQ(before.size(), 1u);
  uint64_t out = 0;
  {
    Stream s(in_.get(), pkt(80), 200);
    ASSERT_TRUE(wait_for([&] { return (out += drain_count()) > 100; }));
    ASSERT_EQ(std::system(("ip netns del " + before[0]).c_str()), 0);
    ASSERT_TRUE(wait_for([&] {
      out += drain_count();
      const auto b = box();
      return b.state() == "RUNNING" && b.restarts() == 1;
    }, kRestartMs)) << box().DebugString();
    const uint64_t at_restart = out;
    EXPECT_TRUE(wait_for([&] { return (out += drain_count()) > at_restart + 100; })) << "passes again";
  }
  const auto after = namespaces();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_NE(after[0], before[0]);
  const pb::BlackBoxStats b = box();
  EXPECT_EQ(b.last_exit(), "namespace gone");
  EXPECT_GT(b.failed_closed(), 0u) << "packets arrived while the NF was down";
  // Port 81, not the stream's 80: a stream frame still in the kernel's queues when the stream stopped may come out
  // now (seen once in `make test`: 21 frames, all to port 80), and is not what this checks.
  for (int i = 0; i < 20; ++i) in_->inject(pkt(23));
  for (int i = 0; i < 20; ++i) in_->inject(pkt(81));
  std::vector<std::vector<uint8_t>> got;
  const auto to = [&](uint16_t port) {
    return std::count_if(got.begin(), got.end(), [&](const auto& f) { return dport_of(f) == port; });
  };
  wait_for([&] { return drain_count(&got), to(81) >= 20; });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  drain_count(&got);
  EXPECT_EQ(to(81), 20) << describe(got);
  EXPECT_EQ(to(23), 0) << "the rules are in the new namespace:" << describe(got);
  EXPECT_EQ(to(80) + to(81), static_cast<long>(got.size())) << "nothing else came out:" << describe(got);
}

// A kernel NF with a process of its own (here a shell that sets the rules, says it is ready and stays): killing
// the process is a failure like any NF's; its namespace is replaced with it.
TEST_F(KernelNfTest, AKilledDaemonIsRestartedInAFreshNamespace) {
  const std::string daemon = dir_ + "/daemon";
  std::ofstream(daemon) << "#!/bin/sh\n" << kNft << " -f \"$1\" || exit 1\nprintf 1 > /proc/self/fd/$METRON_NF_READY_FD\n"
                        << "exec sleep 600\n";
  chmod(daemon.c_str(), 0755);
  ASSERT_EQ(deploy("input -> fw :: BlackBoxNF(NAME fw, PROGRAM " + daemon + ", ARGS \"" + rules_ +
                     "\", MODE KERNEL, ON_FAILURE OPEN) -> [0]output;")
                .error_message(),
            "");
  const int pid = box().pid();
  ASSERT_GT(pid, 0);
  const auto before = namespaces();
  for (int i = 0; i < 10; ++i) in_->inject(pkt(23));
  for (int i = 0; i < 10; ++i) in_->inject(pkt(80));
  const auto first = collect(10);
  EXPECT_EQ(first.size(), 10u) << describe(first);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_TRUE(wait_for([&] {
    const auto b = box();
    return b.state() == "RUNNING" && b.pid() != pid && b.pid() > 0;
  }, kRestartMs)) << box().DebugString();
  EXPECT_EQ(box().last_exit(), "signal 9");
  // the old namespace goes once the worker left its ports
  EXPECT_TRUE(wait_for([&] { return namespaces().size() == 1u && namespaces() != before; })) << namespaces().size();
  for (int i = 0; i < 10; ++i) in_->inject(pkt(80));
  const auto then = collect(10);
  EXPECT_EQ(then.size(), 10u) << "passes through the new namespace:" << describe(then);
}

// Removing the pipeline removes the namespace and the agent's interfaces; a setup command that fails is a deploy
// error naming the NF, and leaves no namespace either.
TEST_F(KernelNfTest, NamespacesGoWithThePipelineAndWithAFailedDeploy) {
  ASSERT_EQ(deploy("input -> " + fw() + " -> [0]output;").error_message(), "");
  ASSERT_EQ(namespaces().size(), 1u);
  pb::RemovePipelineRequest rm;
  rm.set_pipeline_id("p");
  pb::RemovePipelineReply reply;
  ASSERT_TRUE(backend_->RemovePipeline(rm, &reply).ok());
  EXPECT_EQ(namespaces(), std::vector<std::string>());
  const std::string mine = "mk" + std::to_string(getpid()) + "x";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/class/net", ec))
    EXPECT_NE(e.path().filename().string().rfind(mine, 0), 0u) << "left: " << e.path();
  std::ofstream(rules_) << "this is not nftables\n";
  const grpc::Status st = deploy("input -> " + fw() + " -> [0]output;");
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(st.error_message(), "black-box NF 'fw' (/usr/sbin/nft): exited at start (exit 1)");
  EXPECT_EQ(namespaces(), std::vector<std::string>());
}

// Pids of the live processes whose parent is `parent` and whose name is `comm`.
std::vector<pid_t> children_named(pid_t parent, const std::string& comm) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream f(e.path() / "stat");
    std::string line;
    if (!std::getline(f, line)) continue;
    const size_t open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && state != "Z" && line.substr(open + 1, close - open - 1) == comm)
      out.push_back(static_cast<pid_t>(std::stol(line.substr(0, open))));
  }
  return out;
}

// An agent killed with SIGKILL leaves no NF behind (the NF dies with the agent's thread that started it), and
// MODE MEMIF runs on an agent without hugepages. A real agent process, standalone, net_null ports.
TEST(BlackBoxAgentProcess, AnAgentKilledWithSigkillTakesItsNfsWithIt) {
  const std::string dir = "/tmp/metron-bbagent-" + std::to_string(getpid());
  fs::create_directories(dir);
  const std::string click = dir + "/chain.click";
  std::ofstream(click) << "src :: FromDevice(net_null0) -> bb :: BlackBoxNF(NAME fwd, PROGRAM " << METRON_NF_FWD_BIN
                       << ", MODE MEMIF) -> dst :: ToDevice(net_null1);\n";
  const std::string prefix = "bbagent" + std::to_string(getpid());
  const pid_t agent = fork();
  ASSERT_GE(agent, 0);
  if (agent == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(METRON_AGENT_BIN, METRON_AGENT_BIN, "--idle-sleep", "100", "--dpdk", "-l", "0", "--no-huge", "-m", "256",
          "--no-pci", "--log-level", "lib.eal:error", "--file-prefix", prefix.c_str(), "--vdev", "net_null0,size=64",
          "--vdev", "net_null1,size=64", "--", click.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::vector<pid_t> nfs;
  EXPECT_TRUE(wait_for([&] { return !(nfs = children_named(agent, "metron-nf-fwd")).empty(); }, 20000))
      << "the agent started no NF";
  ASSERT_EQ(kill(agent, SIGKILL), 0);
  int status = 0;
  waitpid(agent, &status, 0);
  for (pid_t nf : nfs)
    EXPECT_TRUE(wait_for([&] { return kill(nf, 0) != 0; }, 5000)) << "NF " << nf << " outlived its agent";
  // A killed agent leaves its EAL runtime directory, its NF's (MEMIF: a DPDK process of its own) and its socket.
  std::error_code ec;
  fs::remove_all("/var/run/dpdk/" + prefix, ec);
  const std::string nf_dir = "mbbnf" + std::to_string(agent) + "_", socket = "bb" + std::to_string(agent) + "_";
  for (const char* where : {"/var/run/dpdk", "/run/metron"})
    for (const auto& e : fs::directory_iterator(where, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(nf_dir, 0) == 0 || name.rfind(socket, 0) == 0) fs::remove_all(e.path(), ec);
    }
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace metron

#include "core/eal.h"

#include <rte_cpuflags.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>

namespace metron {

namespace {

// One mbuf of a packed pool: the mbuf, its headroom and the default data room (2 KB).
constexpr size_t kPackedMbufBytes = sizeof(rte_mbuf) + RTE_PKTMBUF_HEADROOM + RTE_MBUF_DEFAULT_DATAROOM;

std::mutex g_eal_mu;
bool g_eal_up = false;

// The EAL never removes its runtime directory (/var/run/dpdk/<file-prefix> as root: the shared config and, with
// --no-huge, the fbarray files backing its memory map, megabytes of tmpfs each), so every process with a unique
// prefix would leave one behind. The primary process that created it removes it when it exits normally; a
// forked child that exits through exit() runs static destructors too and must not take its parent's directory.
class RuntimeDirGuard {
 public:
  explicit RuntimeDirGuard(std::string dir) : dir_(std::move(dir)), owner_(getpid()) {}
  ~RuntimeDirGuard() {
    if (getpid() != owner_) return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  RuntimeDirGuard(const RuntimeDirGuard&) = delete;
  RuntimeDirGuard& operator=(const RuntimeDirGuard&) = delete;

 private:
  const std::string dir_;
  const pid_t owner_;
};

}  // namespace

void eal_init(const std::vector<std::string>& args) {
  std::lock_guard<std::mutex> lock(g_eal_mu);
  if (g_eal_up) return;
  std::vector<std::string> storage;
  storage.reserve(args.size() + 1);
  storage.push_back("metron-agent");
  storage.insert(storage.end(), args.begin(), args.end());
  // DPDK caps vector code at 256 bits unless told otherwise (for CPUs that lower their clock under 512-bit code).
  // rte_acl's AVX512 classify took about half the cycles of its SSE one on the 1000-rule firewall on an AVX512 Xeon
  // (BENCHMARKS.md), so the agent lifts the cap where the CPU has AVX512, unless the user's arguments set it.
  const bool width_given = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a.rfind("--force-max-simd-bitwidth", 0) == 0;
  });
  if (!width_given && rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512F) == 1)
    storage.push_back("--force-max-simd-bitwidth=512");
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  if (rte_eal_init(static_cast<int>(storage.size()), argv.data()) < 0) {
    std::string joined;
    for (const auto& a : args) joined += (joined.empty() ? "" : " ") + a;
    throw std::runtime_error("EAL init failed (" + std::string(rte_strerror(rte_errno)) + ") with args: " +
                             joined);
  }
  g_eal_up = true;
  // A secondary process shares the primary's directory: not ours to remove.
  if (rte_eal_process_type() == RTE_PROC_PRIMARY) static RuntimeDirGuard guard(rte_eal_get_runtime_dir());
}

bool eal_ready() {
  std::lock_guard<std::mutex> lock(g_eal_mu);
  return g_eal_up;
}

std::string eal_file_prefix_stem(const std::string& tag) { return "metron-" + tag + "-"; }

unsigned eal_memory_mb_for(size_t bytes) {
  // Measured: at -m 512 with two 1M-flow tables (2 x 194.0 MB) and a pool of 9,600 mbufs (~22 MB) built, 101.0 MB
  // were left, so the heap's headers and small allocations took about 1 MB. The 64 MB on top leave room for the
  // graphs and for a table that does not fit the gap a freed one left; on --no-huge, untouched memory is never
  // resident.
  constexpr size_t kOverheadMb = 64;
  const size_t mb = (bytes + (1u << 20) - 1) / (1u << 20) + kOverheadMb;
  return static_cast<unsigned>(std::max<size_t>(mb, kDefaultEalMemoryMb));
}

size_t packed_pool_bytes(unsigned n) {
  // Each object carries the mempool's header and is rounded up to a cache line: two more lines bound both.
  return size_t{n} * (kPackedMbufBytes + 2 * RTE_CACHE_LINE_SIZE);
}

unsigned eal_memory_mb(unsigned wanted_mb) {
  // The user's size wins over the caller's: a process that needs more than its caller computed can be given it.
  const char* mb = std::getenv("METRON_EAL_MEMORY_MB");
  if (mb == nullptr) return wanted_mb;
  char* end = nullptr;
  const unsigned long v = std::strtoul(mb, &end, 10);
  if (*mb < '0' || *mb > '9' || *end != '\0' || v == 0 || v > 1u << 20)
    throw std::invalid_argument("METRON_EAL_MEMORY_MB='" + std::string(mb) +
                                "': expected the EAL's DPDK memory in MB, 1 to 1048576");
  return static_cast<unsigned>(v);
}

std::vector<std::string> eal_default_args(const std::string& tag, const std::string& lcores, unsigned memory_mb) {
  std::vector<std::string> args{"--no-huge"};
  // The benchmark scripts reserve hugepages (agent/scripts/hugepages.sh) and name their mount here.
  if (const char* dir = std::getenv("METRON_EAL_HUGE_DIR"); dir != nullptr && *dir != '\0')
    args = {"--huge-dir", dir, "--huge-unlink"};
  args.emplace_back("-m");
  args.push_back(std::to_string(eal_memory_mb(memory_mb)));
  for (const char* a : {"--no-pci", "--file-prefix"}) args.emplace_back(a);
  args.push_back(eal_file_prefix_stem(tag) + std::to_string(getpid()));
  for (const std::string& a : {std::string("-l"), lcores, std::string("--log-level"), std::string("lib.eal:error")})
    args.push_back(a);
  return args;
}

rte_mempool* packed_pktmbuf_pool(const std::string& name, unsigned n, int socket_id) {
  const unsigned elt = kPackedMbufBytes;
  rte_mempool* mp = rte_mempool_create_empty(name.c_str(), n, elt, kPoolCache, sizeof(rte_pktmbuf_pool_private),
                                             socket_id < 0 ? SOCKET_ID_ANY : socket_id,
                                             RTE_MEMPOOL_F_NO_IOVA_CONTIG);
  if (mp == nullptr) throw std::runtime_error("mempool " + name + ": " + rte_strerror(rte_errno));
  if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr) != 0) {
    rte_mempool_free(mp);
    throw std::runtime_error("mempool " + name + ": cannot set ops");
  }
  rte_pktmbuf_pool_private priv{};
  priv.mbuf_data_room_size = RTE_PKTMBUF_HEADROOM + RTE_MBUF_DEFAULT_DATAROOM;
  priv.mbuf_priv_size = 0;
  rte_pktmbuf_pool_init(mp, &priv);
  if (rte_mempool_populate_default(mp) < 0) {
    rte_mempool_free(mp);
    throw std::runtime_error("mempool " + name + ": cannot populate " + std::to_string(n) + " mbufs (raise -m)");
  }
  rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
  return mp;
}

}  // namespace metron

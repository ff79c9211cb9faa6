// DPDK environment: EAL initialisation (once per process) and the packet mempool.
#pragma once

#include <string>
#include <vector>

struct rte_mempool;

namespace metron {

// Initialises the EAL with args (without argv[0]). Throws std::runtime_error naming the failing argument list.
// A second call with the EAL already up is a no-op (tests share one EAL per process). A primary process removes
// the EAL's runtime directory (/var/run/dpdk/<file-prefix>) when it exits normally (return from main, exit()).
void eal_init(const std::vector<std::string>& args);
bool eal_ready();

// The args every test, bench and emulated deployment uses on this class of machine (no hugepages, no PCI):
// a file prefix unique to this process so parallel runs never share /var/run/dpdk state. With
// METRON_EAL_HUGE_DIR set (the bench scripts, after reserving pages) hugepages from that mount instead.
std::vector<std::string> eal_default_args(const std::string& tag, const std::string& lcores = "0");
// The --file-prefix of eal_default_args() without the pid: "metron-<tag>-". The EAL's runtime directory
// (/var/run/dpdk/<prefix><pid> as root) carries that name.
std::string eal_file_prefix_stem(const std::string& tag);

// Mbufs each lcore caches from a packet pool (rte_mempool per-lcore cache).
constexpr unsigned kPoolCache = 256;

// A packet mempool of n mbufs (2 KB data room) packed densely in memory. With --no-huge a default
// rte_pktmbuf_pool_create puts one mbuf per 4 KB page at the same page offset (cache-set conflicts, 40% waste);
// RTE_MEMPOOL_F_NO_IOVA_CONTIG lets objects straddle pages, which vdevs (no DMA) do not mind.
rte_mempool* packed_pktmbuf_pool(const std::string& name, unsigned n, int socket_id = -1);

}  // namespace metron

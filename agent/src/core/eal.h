// DPDK environment: EAL initialisation (once per process) and the packet mempool.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

struct rte_mempool;

namespace metron {

// Initialises the EAL with args (without argv[0]). Throws std::runtime_error naming the failing argument list.
// A second call with the EAL already up is a no-op (tests share one EAL per process). A primary process removes
// the EAL's runtime directory (/var/run/dpdk/<file-prefix>) when it exits normally (return from main, exit()).
void eal_init(const std::vector<std::string>& args);
bool eal_ready();

// DPDK memory (the EAL's -m, MB) of a process that asks for no other size: the tests' pools and flow tables.
constexpr unsigned kDefaultEalMemoryMb = 512;
// The EAL's -m for a process that holds `bytes` of DPDK memory at once (its flow tables, its pools): those bytes
// and room for the EAL's own structures and the heap's element headers, at least kDefaultEalMemoryMb.
unsigned eal_memory_mb_for(size_t bytes);
// DPDK memory a packed_pktmbuf_pool of n mbufs takes (an upper bound).
size_t packed_pool_bytes(unsigned n);
// The DPDK memory (MB) eal_default_args gives a process whose caller asks for wanted_mb: METRON_EAL_MEMORY_MB
// when set (a positive number of MB; anything else throws std::invalid_argument naming the variable), else
// wanted_mb.
unsigned eal_memory_mb(unsigned wanted_mb);

// The args every test, bench and emulated deployment uses on this class of machine (no hugepages, no PCI):
// a file prefix unique to this process so parallel runs never share /var/run/dpdk state, and
// eal_memory_mb(memory_mb) of DPDK memory. With METRON_EAL_HUGE_DIR set (the bench scripts, after reserving
// pages) that memory is hugepages from that mount instead.
std::vector<std::string> eal_default_args(const std::string& tag, const std::string& lcores = "0",
                                          unsigned memory_mb = kDefaultEalMemoryMb);
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

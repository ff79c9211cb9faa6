/* metron-nf-fwd: the minimal black-box NF on Metron's NF library (metron_nf.h). Passes every packet back, except
 * IPv4 TCP/UDP packets to a port given with --drop-port (so verdicts can be tested), after --spin CYCLES of busy
 * work per packet (a stand-in for an NF's own work in benchmarks), reading up to --burst packets at a time
 * (default METRON_NF_BURST, at most METRON_NF_MAX_BURST).
 *
 *   metron-nf-fwd [EAL args] -- [--drop-port PORT]... [--spin CYCLES] [--burst N]
 *
 * Frames are Ethernet (an optional 802.1Q tag is skipped). On SIGTERM it prints "rx N dropped M busy_cycles C
 * sleeps S" to stderr. */
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metron_nf.h"

#define MAX_DROP_PORTS 16

static int drops_port(const struct rte_mbuf* m, const uint16_t* ports, int nports) {
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  uint32_t len = rte_pktmbuf_data_len(m), off = 12;
  if (len < 14) return 0;
  uint16_t type = (uint16_t)(p[off] << 8 | p[off + 1]);
  if (type == 0x8100 && len >= 18) {
    off += 4;
    type = (uint16_t)(p[off] << 8 | p[off + 1]);
  }
  off += 2;
  if (type != 0x0800 || len < off + 20) return 0;
  const uint8_t* ip = p + off;
  const uint32_t ihl = (ip[0] & 0x0fu) * 4u;
  if ((ip[9] != 6 && ip[9] != 17) || ((ip[6] << 8 | ip[7]) & 0x1fff) != 0 || len < off + ihl + 4) return 0;
  const uint16_t dport = (uint16_t)(ip[ihl + 2] << 8 | ip[ihl + 3]);
  for (int i = 0; i < nports; ++i)
    if (ports[i] == dport) return 1;
  return 0;
}

int main(int argc, char** argv) {
  struct metron_nf* nf;
  const int used = metron_nf_init(argc, argv, &nf);
  if (used < 0) return 1;
  argc -= used;
  argv += used;
  uint16_t ports[MAX_DROP_PORTS];
  int nports = 0;
  uint64_t spin = 0;
  unsigned burst = METRON_NF_BURST;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--drop-port") == 0 && i + 1 < argc && nports < MAX_DROP_PORTS) {
      ports[nports++] = (uint16_t)atoi(argv[++i]);
    } else if (strcmp(argv[i], "--spin") == 0 && i + 1 < argc) {
      spin = strtoull(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--burst") == 0 && i + 1 < argc) {
      burst = (unsigned)strtoul(argv[++i], NULL, 10);
      if (burst < 1 || burst > METRON_NF_MAX_BURST) {
        fprintf(stderr, "metron-nf-fwd: --burst: 1 to %d\n", METRON_NF_MAX_BURST);
        metron_nf_close(nf);
        return 2;
      }
    } else if (strcmp(argv[i], "--") != 0) {
      fprintf(stderr, "metron-nf-fwd: unknown argument '%s' (--drop-port PORT, --spin CYCLES, --burst N)\n", argv[i]);
      metron_nf_close(nf);
      return 2;
    }
  }
  struct rte_mbuf* pkts[METRON_NF_MAX_BURST];
  uint8_t verdicts[METRON_NF_MAX_BURST];
  while (metron_nf_running(nf)) {
    const unsigned n = metron_nf_rx(nf, pkts, burst);
    if (n == 0) continue;
    if (nports == 0 && spin == 0) { /* nothing to decide: all pass (verdicts NULL) */
      metron_nf_tx(nf, pkts, NULL, n);
      continue;
    }
    for (unsigned i = 0; i < n; ++i) {
      if (spin) {
        const uint64_t until = rte_rdtsc() + spin;
        while (rte_rdtsc() < until) {
        }
      }
      verdicts[i] = nports && drops_port(pkts[i], ports, nports) ? METRON_NF_DROP : METRON_NF_PASS;
    }
    metron_nf_tx(nf, pkts, verdicts, n);
  }
  fprintf(stderr, "metron-nf-fwd: rx %llu dropped %llu busy_cycles %llu sleeps %llu\n",
          (unsigned long long)metron_nf_rx_count(nf), (unsigned long long)metron_nf_dropped_count(nf),
          (unsigned long long)metron_nf_busy_cycles(nf), (unsigned long long)metron_nf_sleeps(nf));
  metron_nf_close(nf);
  return 0;
}

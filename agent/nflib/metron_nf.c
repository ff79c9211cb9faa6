/* The NF library of Metron's black-box NFs (metron_nf.h). */
#include "metron_nf.h"

#include <errno.h>
#include <rte_eal.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct metron_nf {
  struct rte_ring* rx;
  struct rte_ring* tx;
  unsigned empty_polls;
  uint64_t received;
  uint64_t dropped;
  uint64_t busy_cycles;
  uint64_t rx_tsc; /* when the last non-empty rx began */
};

static volatile sig_atomic_t g_stop;

static void on_stop(int sig) {
  (void)sig;
  g_stop = 1;
}

static struct rte_ring* find_ring(const char* env) {
  const char* name = getenv(env);
  if (name == NULL || *name == '\0') {
    fprintf(stderr, "metron_nf: %s is not set (the NF must be started by the Metron agent)\n", env);
    return NULL;
  }
  struct rte_ring* r = rte_ring_lookup(name);
  if (r == NULL) fprintf(stderr, "metron_nf: no ring '%s' in the agent's memory\n", name);
  return r;
}

int metron_nf_init(int argc, char** argv, struct metron_nf** out) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_stop;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  const int used = rte_eal_init(argc, argv);
  if (used < 0) {
    fprintf(stderr, "metron_nf: EAL init failed: %s\n", rte_strerror(rte_errno));
    return -1;
  }
  if (rte_eal_process_type() != RTE_PROC_SECONDARY) {
    fprintf(stderr, "metron_nf: must run as a DPDK secondary process of the agent (--proc-type=secondary)\n");
    rte_eal_cleanup();
    return -1;
  }
  struct metron_nf* nf = calloc(1, sizeof(*nf));
  if (nf == NULL) return -1;
  nf->rx = find_ring(METRON_NF_ENV_RX);
  nf->tx = find_ring(METRON_NF_ENV_TX);
  if (nf->rx == NULL || nf->tx == NULL) {
    free(nf);
    rte_eal_cleanup();
    return -1;
  }
  /* Attached: tell the agent (it waits ATTACH_TIMEOUT for this byte). */
  const char* fd_text = getenv(METRON_NF_ENV_READY);
  if (fd_text != NULL && *fd_text != '\0') {
    const int fd = atoi(fd_text);
    const char one = '1';
    while (write(fd, &one, 1) < 0 && errno == EINTR) {
    }
    close(fd);
  }
  *out = nf;
  return used;
}

unsigned metron_nf_rx(struct metron_nf* nf, struct rte_mbuf** pkts, unsigned max) {
  if (max > METRON_NF_BURST) max = METRON_NF_BURST;
  const uint64_t t0 = rte_rdtsc();
  const unsigned n = rte_ring_sc_dequeue_burst(nf->rx, (void**)pkts, max, NULL);
  if (n == 0) {
    if (++nf->empty_polls > 256) sched_yield();
    else rte_pause();
    return 0;
  }
  nf->empty_polls = 0;
  nf->received += n;
  nf->rx_tsc = t0;
  return n;
}

void metron_nf_tx(struct metron_nf* nf, struct rte_mbuf** pkts, const uint8_t* verdicts, unsigned n) {
  void* objs[METRON_NF_BURST];
  unsigned done = 0;
  while (done < n) {  /* batches of at most a burst, verdict in bit 0 of each entry */
    unsigned k = n - done < METRON_NF_BURST ? n - done : METRON_NF_BURST;
    for (unsigned i = 0; i < k; ++i) {
      const uintptr_t drop = verdicts != NULL && verdicts[done + i] == METRON_NF_DROP;
      nf->dropped += drop;
      objs[i] = (void*)((uintptr_t)pkts[done + i] | drop);
    }
    unsigned sent = 0;
    while (sent < k) {
      const unsigned s = rte_ring_sp_enqueue_burst(nf->tx, objs + sent, k - sent, NULL);
      sent += s;
      if (sent < k) {
        if (g_stop) return;  /* stopping: the agent drops what is left with the process */
        sched_yield();
      }
    }
    done += k;
  }
  if (n) nf->busy_cycles += rte_rdtsc() - nf->rx_tsc;
}

int metron_nf_running(const struct metron_nf* nf) {
  (void)nf;
  return !g_stop;
}

uint64_t metron_nf_rx_count(const struct metron_nf* nf) { return nf->received; }
uint64_t metron_nf_dropped_count(const struct metron_nf* nf) { return nf->dropped; }
uint64_t metron_nf_busy_cycles(const struct metron_nf* nf) { return nf->busy_cycles; }

void metron_nf_close(struct metron_nf* nf) {
  free(nf);
  rte_eal_cleanup();
}

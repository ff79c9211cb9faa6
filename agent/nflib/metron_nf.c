/* The NF library of Metron's black-box NFs (metron_nf.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* SCHED_BATCH */
#endif
#include "metron_nf.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <rte_eal.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct metron_nf {
  struct rte_ring* rx; /* RING mode */
  struct rte_ring* rx2; /* DIRECT: the agent's ring into this NF, or NULL */
  struct rte_ring* tx;
  uintptr_t mark;       /* the drop mark put in bit 0..5 of an entry */
  struct metron_nf_link* link; /* DIRECT: the shared block, or NULL */
  int idle;             /* METRON_NF_IDLE: IDLE_WAKE, IDLE_YIELD or IDLE_POLL */
  struct metron_nf_wake* wake;    /* WAKE: this NF's wake word (it sleeps on it), or NULL */
  struct metron_nf_wake* tx_wake; /* DIRECT: the next NF's wake word (this NF wakes it), or NULL */
  uint64_t spin_cycles;           /* WAKE: empty polling before sleeping */
  uint64_t empty_since;           /* WAKE: TSC of the first empty poll in a row, 0 if the last poll was not empty */
  uint64_t slept;                 /* WAKE: times this instance slept */
  int memif;           /* MEMIF mode: ethdev port 0 (the net_memif client the agent put on the EAL line) */
  struct rte_mempool* pool;
  unsigned empty_polls;
  uint64_t received;
  uint64_t dropped;
  uint64_t* shared_dropped; /* MEMIF: the agent's counter (METRON_NF_ENV_STATS), or NULL */
  uint64_t busy_cycles;
  uint64_t rx_tsc; /* when the last non-empty rx began */
};

enum { IDLE_WAKE, IDLE_YIELD, IDLE_POLL };

static volatile sig_atomic_t g_stop;

static void on_stop(int sig) {
  (void)sig;
  g_stop = 1;
}

static struct rte_ring* find_ring(const char* env) {
  const char* name = getenv(env);
  if (strcmp(env, METRON_NF_ENV_RX2) == 0 && (name == NULL || *name == '\0')) return NULL; /* optional */
  if (name == NULL || *name == '\0') {
    fprintf(stderr, "metron_nf: %s is not set (the NF must be started by the Metron agent)\n", env);
    return NULL;
  }
  struct rte_ring* r = rte_ring_lookup(name);
  if (r == NULL) fprintf(stderr, "metron_nf: no ring '%s' in the agent's memory\n", name);
  return r;
}

/* The struct metron_nf_link in the memzone named by `env`: NULL if unset; *bad set if set but not found. */
static struct metron_nf_link* find_link(const char* env, int* bad) {
  const char* name = getenv(env);
  if (name == NULL || *name == '\0') return NULL;
  const struct rte_memzone* mz = rte_memzone_lookup(name);
  if (mz == NULL || mz->len < sizeof(struct metron_nf_link)) {
    fprintf(stderr, "metron_nf: no memzone '%s' in the agent's memory\n", name);
    *bad = 1;
    return NULL;
  }
  return (struct metron_nf_link*)mz->addr;
}

/* WAKE: this NF's wake word (in its link block, DIRECT, or a memzone of its own, LINK AGENT) and the next NF's. */
static int find_wake(struct metron_nf* nf) {
  int bad = 0;
  if (nf->link != NULL) {
    nf->wake = &nf->link->wake;
  } else {
    const char* name = getenv(METRON_NF_ENV_WAKE);
    if (name != NULL && *name != '\0') {
      const struct rte_memzone* mz = rte_memzone_lookup(name);
      if (mz == NULL || mz->len < sizeof(struct metron_nf_wake)) {
        fprintf(stderr, "metron_nf: no memzone '%s' in the agent's memory\n", name);
        bad = 1;
      } else {
        nf->wake = (struct metron_nf_wake*)mz->addr;
      }
    }
  }
  struct metron_nf_link* next = find_link(METRON_NF_ENV_TX_LINK, &bad);
  if (next != NULL) nf->tx_wake = &next->wake;
  if (nf->wake == NULL) nf->idle = IDLE_YIELD; /* nothing to sleep on: no producer would wake it */
  else __atomic_store_n(&nf->wake->sleeping, 0, __ATOMIC_SEQ_CST); /* a dead instance may have left it set */
  const char* spin = getenv(METRON_NF_ENV_SPIN);
  const uint64_t us = spin != NULL && *spin != '\0' ? strtoull(spin, NULL, 10) : 20;
  nf->spin_cycles = us * rte_get_tsc_hz() / 1000000;
  const char* sched = getenv(METRON_NF_ENV_SCHED);
  if (nf->wake != NULL && sched != NULL && strcmp(sched, "BATCH") == 0) {
    struct sched_param sp;
    memset(&sp, 0, sizeof(sp));
    if (sched_setscheduler(0, SCHED_BATCH, &sp) != 0)
      fprintf(stderr, "metron_nf: SCHED_BATCH refused: %s (runs under the default policy)\n", strerror(errno));
  }
  return bad ? -1 : 0;
}

/* MEMIF mode: the NF is a DPDK primary of its own; port 0 is its net_memif client, copying to the agent. */
static int open_memif(struct metron_nf* nf) {
  if (rte_eth_dev_count_avail() < 1) {
    fprintf(stderr, "metron_nf: MEMIF mode but no ethdev (the agent passes a net_memif vdev)\n");
    return -1;
  }
  nf->pool = rte_pktmbuf_pool_create("metron_nf_pool", 4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
  struct rte_eth_conf conf;
  memset(&conf, 0, sizeof(conf));
  if (nf->pool == NULL || rte_eth_dev_configure(0, 1, 1, &conf) != 0 ||
      rte_eth_rx_queue_setup(0, 0, 1024, rte_socket_id(), NULL, nf->pool) != 0 ||
      rte_eth_tx_queue_setup(0, 0, 1024, rte_socket_id(), NULL) != 0 || rte_eth_dev_start(0) != 0) {
    fprintf(stderr, "metron_nf: cannot set up the memif port: %s\n", rte_strerror(rte_errno));
    return -1;
  }
  nf->memif = 1;
  const char* stats = getenv(METRON_NF_ENV_STATS);
  if (stats != NULL && *stats != '\0') {
    const int fd = open(stats, O_RDWR | O_CLOEXEC);
    void* p = fd < 0 ? MAP_FAILED : mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd >= 0) close(fd);
    if (p == MAP_FAILED) fprintf(stderr, "metron_nf: cannot map %s: %s (drops not reported)\n", stats, strerror(errno));
    else nf->shared_dropped = (uint64_t*)p;
  }
  /* Attached (the ready byte) must mean the agent can hand packets over. The agent's side writes only into buffers
   * this side's receive ring offers, and the memif PMD offers them in rx_burst once connected (both sides set the
   * ring empty at connection): an agent sending before this side's first rx is refused everything, and applies
   * ON_FAILURE to it (a fail-open NF was bypassed: its verdicts lost). So: wait for the connection, then one rx
   * that takes nothing (nb_pkts 0; nothing can be waiting, the ring had no buffer) and fills the ring. */
  struct rte_eth_link link;
  memset(&link, 0, sizeof(link));
  while (!g_stop && (rte_eth_link_get_nowait(0, &link) != 0 || link.link_status != RTE_ETH_LINK_UP)) usleep(100);
  struct rte_mbuf* none[1];
  rte_eth_rx_burst(0, 0, none, 0);
  return 0;
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
  struct metron_nf* nf = calloc(1, sizeof(*nf));
  if (nf == NULL) return -1;
  const char* mode = getenv(METRON_NF_ENV_MODE);
  if (mode != NULL && strcmp(mode, "MEMIF") == 0) {
    if (open_memif(nf) != 0) {
      free(nf);
      rte_eal_cleanup();
      return -1;
    }
  } else {
    if (rte_eal_process_type() != RTE_PROC_SECONDARY) {
      fprintf(stderr, "metron_nf: must run as a DPDK secondary process of the agent (--proc-type=secondary)\n");
      free(nf);
      rte_eal_cleanup();
      return -1;
    }
    nf->rx = find_ring(METRON_NF_ENV_RX);
    nf->tx = find_ring(METRON_NF_ENV_TX);
    nf->rx2 = find_ring(METRON_NF_ENV_RX2);
    nf->mark = 1;
    const char* mark = getenv(METRON_NF_ENV_MARK);
    if (mark != NULL && *mark != '\0') nf->mark = (uintptr_t)strtoul(mark, NULL, 10) & METRON_NF_MARK_MASK;
    int bad = 0;
    nf->link = find_link(METRON_NF_ENV_LINK, &bad);
    const char* idle = getenv(METRON_NF_ENV_IDLE);
    nf->idle = idle == NULL || *idle == '\0' || strcmp(idle, "WAKE") == 0 ? IDLE_WAKE
               : strcmp(idle, "POLL") == 0                               ? IDLE_POLL
                                                                         : IDLE_YIELD;
    if (nf->idle == IDLE_WAKE && find_wake(nf) != 0) bad = 1;
    if (nf->rx == NULL || nf->tx == NULL || nf->mark == 0 || bad) {
      free(nf);
      rte_eal_cleanup();
      return -1;
    }
  }
  if (nf->memif) {
    const char* idle = getenv(METRON_NF_ENV_IDLE);
    nf->idle = idle != NULL && strcmp(idle, "POLL") == 0 ? IDLE_POLL : IDLE_YIELD; /* memif: no wake word */
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
  /* DIRECT: the agent may still be reading this NF's rings in its place (the previous instance died); wait. */
  while (nf->link != NULL && !__atomic_load_n(&nf->link->go, __ATOMIC_ACQUIRE) && !g_stop) usleep(100);
  *out = nf;
  return used;
}

/* Enqueues all n entries on the tx ring, waiting for room (stops waiting once the NF is told to stop). */
static void enqueue_all(struct metron_nf* nf, void* const* objs, unsigned n) {
  unsigned sent = 0;
  while (sent < n) {
    const unsigned k = rte_ring_sp_enqueue_burst(nf->tx, objs + sent, n - sent, NULL);
    sent += k;
    if (k) metron_nf_wake_up(nf->tx_wake); /* DIRECT: the next NF, if it sleeps */
    if (sent < n) {
      if (g_stop) return; /* stopping: the agent counts what is left as held by the NF */
      sched_yield();
    }
  }
}

static inline void add_shared(uint64_t* c, uint64_t n) { __atomic_store_n(c, *c + n, __ATOMIC_RELAXED); }

/* DIRECT: entries an earlier NF dropped (a mark in the low bits) go on untouched; returns what is left. */
static unsigned pass_transit(struct metron_nf* nf, struct rte_mbuf** pkts, unsigned n) {
  uintptr_t any = 0; /* one read-only pass first: entries dropped upstream are rare */
  for (unsigned i = 0; i < n; ++i) any |= (uintptr_t)pkts[i];
  if ((any & METRON_NF_MARK_MASK) == 0) return n;
  void* transit[METRON_NF_MAX_BURST];
  unsigned k = 0, nt = 0;
  for (unsigned i = 0; i < n; ++i) {
    if ((uintptr_t)pkts[i] & METRON_NF_MARK_MASK) transit[nt++] = pkts[i];
    else pkts[k++] = pkts[i];
  }
  if (nt) {
    enqueue_all(nf, transit, nt);
    if (nf->link) add_shared(&nf->link->transit, nt);
  }
  return k;
}

static int inputs_empty(const struct metron_nf* nf) {
  return rte_ring_empty(nf->rx) && (nf->rx2 == NULL || rte_ring_empty(nf->rx2));
}

/* WAKE: the flag, a last look at the inputs (the flag's store is a full fence, so a producer that enqueued after
 * that look sees the flag and wakes us), then the wait. A producer clears the flag when it wakes us; a timeout, a
 * signal or entries found at the last look leave it to us. */
static void sleep_until_woken(struct metron_nf* nf) {
  struct metron_nf_wake* w = nf->wake;
  __atomic_store_n(&w->sleeping, 1, __ATOMIC_SEQ_CST);
  if (inputs_empty(nf) && !g_stop) {
    __atomic_store_n(&w->sleeps, w->sleeps + 1, __ATOMIC_RELAXED);
    ++nf->slept;
    const struct timespec timeout = {0, 100 * 1000 * 1000};
    syscall(SYS_futex, &w->sleeping, FUTEX_WAIT, 1, &timeout, NULL, 0);
  }
  __atomic_store_n(&w->sleeping, 0, __ATOMIC_RELAXED);
}

/* Nothing came in: poll on, yield or sleep (METRON_NF_IDLE). */
static void idle(struct metron_nf* nf) {
  if (nf->idle == IDLE_POLL) {
    rte_pause();
  } else if (nf->idle == IDLE_YIELD) {
    if (++nf->empty_polls > 256) sched_yield();
    else rte_pause();
  } else {
    const uint64_t now = rte_rdtsc();
    if (nf->empty_since == 0) nf->empty_since = now;
    if (now - nf->empty_since < nf->spin_cycles) {
      rte_pause();
      return;
    }
    sleep_until_woken(nf);
    nf->empty_since = 0;
  }
}

unsigned metron_nf_rx(struct metron_nf* nf, struct rte_mbuf** pkts, unsigned max) {
  if (max > METRON_NF_MAX_BURST) max = METRON_NF_MAX_BURST;
  const uint64_t t0 = rte_rdtsc();
  unsigned n;
  if (nf->memif) {
    n = rte_eth_rx_burst(0, 0, pkts, (uint16_t)max);
  } else if (nf->rx2 == NULL) {
    n = rte_ring_sc_dequeue_burst(nf->rx, (void**)pkts, max, NULL);
  } else { /* DIRECT: the agent's ring first (mostly empty, one read), then the previous NF's */
    n = rte_ring_sc_dequeue_burst(nf->rx2, (void**)pkts, max, NULL);
    if (n < max) n += rte_ring_sc_dequeue_burst(nf->rx, (void**)(pkts + n), max - n, NULL);
    if (n) {
      nf->empty_polls = 0;
      nf->empty_since = 0;
      n = pass_transit(nf, pkts, n);
      if (n == 0) return 0;
    }
  }
  if (n == 0) {
    idle(nf);
    return 0;
  }
  nf->empty_polls = 0;
  nf->empty_since = 0;
  nf->received += n;
  if (nf->link) add_shared(&nf->link->taken, n);
  nf->rx_tsc = t0;
  return n;
}

/* MEMIF: passed packets are sent back (a copy into the memif region), dropped ones freed here. */
static void tx_memif(struct metron_nf* nf, struct rte_mbuf** pkts, const uint8_t* verdicts, unsigned n) {
  struct rte_mbuf* pass[METRON_NF_MAX_BURST];
  unsigned np = 0, nd = 0;
  for (unsigned i = 0; i < n; ++i) {
    if (verdicts != NULL && verdicts[i] == METRON_NF_DROP) {
      ++nd;
      rte_pktmbuf_free(pkts[i]);
    } else if (np < METRON_NF_MAX_BURST) {
      pass[np++] = pkts[i];
    } else {
      rte_pktmbuf_free(pkts[i]);
    }
  }
  nf->dropped += nd;
  if (nd && nf->shared_dropped != NULL) __atomic_fetch_add(nf->shared_dropped, nd, __ATOMIC_RELAXED);
  unsigned sent = 0;
  while (sent < np) {
    sent += rte_eth_tx_burst(0, 0, pass + sent, (uint16_t)(np - sent));
    if (sent < np) {
      if (g_stop) {
        rte_pktmbuf_free_bulk(pass + sent, np - sent);
        return;
      }
      sched_yield();
    }
  }
}

void metron_nf_tx(struct metron_nf* nf, struct rte_mbuf** pkts, const uint8_t* verdicts, unsigned n) {
  if (nf->memif) {
    tx_memif(nf, pkts, verdicts, n);
    if (n) nf->busy_cycles += rte_rdtsc() - nf->rx_tsc;
    return;
  }
  void* objs[METRON_NF_MAX_BURST];
  unsigned done = 0;
  uint64_t nd = 0;
  if (verdicts == NULL) { /* all pass: the entries are the pointers themselves, no copy */
    enqueue_all(nf, (void* const*)pkts, n);
    done = n;
  }
  while (done < n) {  /* batches of at most a burst, the drop mark (bit 0 unless DIRECT) in each entry */
    unsigned k = n - done < METRON_NF_MAX_BURST ? n - done : METRON_NF_MAX_BURST;
    for (unsigned i = 0; i < k; ++i) {
      const uintptr_t drop = verdicts != NULL && verdicts[done + i] == METRON_NF_DROP;
      nd += drop;
      objs[i] = (void*)((uintptr_t)pkts[done + i] | (drop ? nf->mark : 0));
    }
    enqueue_all(nf, objs, k);
    done += k;
  }
  nf->dropped += nd;
  if (nf->link && n) {
    add_shared(&nf->link->passed, n - nd);
    add_shared(&nf->link->dropped, nd);
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
uint64_t metron_nf_sleeps(const struct metron_nf* nf) { return nf->slept; }

void metron_nf_close(struct metron_nf* nf) {
  if (nf->memif) {
    rte_eth_dev_stop(0);
    rte_eth_dev_close(0);
  }
  free(nf);
  rte_eal_cleanup();
}

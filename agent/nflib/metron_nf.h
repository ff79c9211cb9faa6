/* metron_nf.h: the NF side of a Metron black-box NF in RING mode (docs/blackbox.md).
 *
 * The Metron agent is the DPDK primary process. For each BlackBoxNF element it creates two rte_rings in shared
 * hugepage memory and starts the NF program as a DPDK secondary process:
 *
 *     PROGRAM --proc-type=secondary --file-prefix P --no-pci --lcores ID@(CPUS) --log-level ... -- ARGS...
 *
 * with the ring names and a readiness pipe in its environment (METRON_NF_RX_RING, METRON_NF_TX_RING,
 * METRON_NF_READY_FD). metron_nf_init() brings the EAL up as a secondary, finds the rings and tells the agent the
 * NF is attached; the agent fails the deploy if that does not happen within the element's ATTACH_TIMEOUT.
 *
 * The data path is zero-copy: rx hands out the agent's mbufs; tx gives every one of them back with a verdict.
 * Verdicts travel in bit 0 of the ring entry (an mbuf is cache-line aligned, so the bit is free): the agent frees
 * dropped packets itself and counts them (BlackBoxStats.nf_dropped). So the NF never frees, allocates or caches
 * an mbuf of the agent's pool and no mbuf is lost to a verdict; an NF may still rewrite packet data in place.
 *
 * An NF that dies holding packets (at most one rx batch) loses them; packets it had not taken yet go to the
 * element's ON_FAILURE policy. SIGTERM/SIGINT make metron_nf_running() false: the agent stops NFs with SIGTERM
 * (then SIGKILL) and kills the whole process group.
 *
 * MEMIF mode (METRON_NF_MODE=MEMIF): the NF is a DPDK primary of its own (its own --file-prefix, --no-huge) and
 * the agent puts a net_memif client vdev on its EAL line; the library sets up that port (ethdev 0) with a pool of
 * its own. rx/tx then receive from and send to the agent through memif (a copy each way); dropped packets are
 * freed by the library (the agent cannot count them: its nf_dropped stays 0 in this mode).
 *
 * DIRECT links (RING mode, adjacent black boxes of one chain, the element's LINK DIRECT, the default): the NF reads
 * the previous NF's output ring (METRON_NF_RX_RING) and a ring of the agent's (METRON_NF_RX2_RING: packets the
 * agent hands it while a neighbour is down or full), and writes straight into the next NF's input ring
 * (METRON_NF_TX_RING; the last NF's goes back to the agent). A drop verdict is the NF's position in the chain
 * (METRON_NF_DROP_MARK, 1..63) in the low 6 bits of the entry: the NFs after it pass such entries on untouched
 * (rx never returns them) and the agent frees and counts them for the NF that dropped them. The NF waits in
 * metron_nf_init until the agent lets it read (struct metron_nf_link.go in the memzone METRON_NF_LINK: while an NF
 * is down the agent reads its rings itself and applies ON_FAILURE, and the next instance must not read beside it).
 *
 * Minimal loop:
 *
 *     struct metron_nf* nf;
 *     int used = metron_nf_init(argc, argv, &nf);      // like rte_eal_init: returns the arguments it took
 *     if (used < 0) return 1;
 *     argc -= used; argv += used;                       // the NF's own arguments follow
 *     struct rte_mbuf* pkts[METRON_NF_BURST];
 *     uint8_t verdicts[METRON_NF_BURST];
 *     while (metron_nf_running(nf)) {
 *       unsigned n = metron_nf_rx(nf, pkts, METRON_NF_BURST);
 *       for (unsigned i = 0; i < n; ++i) verdicts[i] = decide(pkts[i]);
 *       metron_nf_tx(nf, pkts, verdicts, n);
 *     }
 *     metron_nf_close(nf);
 */
#ifndef METRON_NF_H
#define METRON_NF_H

#include <linux/futex.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rte_mbuf;
struct metron_nf;

#define METRON_NF_BURST 32
/* The most one rx returns. A larger batch spreads the rings' per-call costs (the ring indices' cache lines, the
 * producer's fence and wake word, the shared counters) over more packets: an NF sharing its CPU with others reads
 * whatever accumulated while it waited for the CPU, so its batches are large; a lone NF's stay small (rx returns
 * what is there). What an instance killed mid-batch held (nf_lost) grows with it. */
#define METRON_NF_MAX_BURST 256

/* A futex word in memory shared between processes (the agent's hugepages): not FUTEX_PRIVATE. */
static inline void metron_nf_futex_wake(uint32_t* word) { syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0); }

enum metron_nf_verdict {
  METRON_NF_PASS = 0, /* the packet goes on along the chain */
  METRON_NF_DROP = 1, /* the agent frees the packet and counts it */
};

/* Environment the agent sets for the NF (the library reads it; an NF need not). */
#define METRON_NF_ENV_RX "METRON_NF_RX_RING"    /* ring the agent fills: the NF's input */
#define METRON_NF_ENV_TX "METRON_NF_TX_RING"    /* ring the NF fills: packets back to the agent */
#define METRON_NF_ENV_READY "METRON_NF_READY_FD" /* pipe: one byte written once attached */
#define METRON_NF_ENV_MODE "METRON_NF_MODE"      /* RING (default) or MEMIF */
/* MEMIF: a file of the agent's the library maps; it adds the packets it drops to its first uint64_t (the agent
 * reads it as nf_dropped: in this mode the NF frees what it drops, so the agent cannot count them itself). */
#define METRON_NF_ENV_STATS "METRON_NF_STATS"

/* DIRECT links: optional, set by the agent for NFs linked directly to their neighbours. */
#define METRON_NF_ENV_RX2 "METRON_NF_RX2_RING"   /* the agent's ring into this NF (read beside RX) */
#define METRON_NF_ENV_MARK "METRON_NF_DROP_MARK" /* this NF's drop mark, 1..63 (default 1) */
#define METRON_NF_ENV_LINK "METRON_NF_LINK"      /* memzone holding this NF's struct metron_nf_link */
/* What the NF does when its input rings are empty (metron_nf_rx): WAKE (the default) polls for METRON_NF_SPIN_US
 * microseconds, then sleeps on its wake word until a producer wakes it; YIELD polls and yields the CPU after 256
 * empty polls; POLL busy-polls. */
#define METRON_NF_ENV_IDLE "METRON_NF_IDLE"
#define METRON_NF_ENV_SPIN "METRON_NF_SPIN_US"   /* WAKE: microseconds of empty polls before sleeping */
/* WAKE, LINK AGENT: memzone holding this NF's struct metron_nf_wake (DIRECT: the one in its struct metron_nf_link). */
#define METRON_NF_ENV_WAKE "METRON_NF_WAKE"
/* DIRECT: the next NF's METRON_NF_LINK if that NF sleeps (WAKE): this NF wakes it after giving it packets. */
#define METRON_NF_ENV_TX_LINK "METRON_NF_TX_LINK"
/* WAKE: BATCH puts the NF under SCHED_BATCH (a woken NF does not preempt the one running on its CPU, so NFs sharing
 * a CPU take turns with whole ring-fulls instead of a burst each); NORMAL leaves the policy alone. */
#define METRON_NF_ENV_SCHED "METRON_NF_SCHED"
#define METRON_NF_MARK_MASK 63u /* the low bits of a ring entry that carry a drop mark */

/* Sleep and wake (IDLE WAKE, OpenNetVM's shared-core mode with the producer as the waker): a consumer whose input
 * rings stayed empty for its spin time sets `sleeping`, looks at its rings once more and, still empty, waits on it
 * (a futex in the agent's shared hugepage memory). A producer, after each enqueue, reads `sleeping` behind a full
 * fence and, only if it is set, clears it and wakes the consumer: while the consumer is busy a producer pays a fence
 * and a read of a line nobody writes, no system call. The two fences (Dekker) make a lost wake-up impossible: either
 * the producer sees the flag or the consumer sees the entries. The consumer's wait also times out (100 ms), so an
 * idle NF wakes ten times a second at most. */
struct metron_nf_wake {
  uint32_t sleeping;  /* futex word: 1 while the consumer sleeps or is about to */
  uint32_t reserved;
  uint64_t sleeps;    /* the consumer: times it went to sleep (written by it alone) */
  uint64_t wakeups;   /* producers: times one of them woke it (atomic adds: the agent and the previous NF) */
} __attribute__((aligned(64)));

/* A producer's side: call after enqueueing on a ring whose consumer sleeps on `w` (NULL: it never sleeps). */
static inline void metron_nf_wake_up(struct metron_nf_wake* w) {
  if (w == NULL) return;
  /* The enqueue's tail store before the flag's load: a full fence (a locked add on x86, cheaper than mfence). */
#if defined(__x86_64__)
  __asm__ volatile("lock addl $0, -128(%%rsp)" ::: "memory", "cc");
#else
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
  if (__builtin_expect(__atomic_load_n(&w->sleeping, __ATOMIC_RELAXED) == 0, 1)) return;
  uint32_t one = 1;
  if (__atomic_compare_exchange_n(&w->sleeping, &one, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    __atomic_fetch_add(&w->wakeups, 1, __ATOMIC_RELAXED);
    metron_nf_futex_wake(&w->sleeping);
  }
}

/* One directly linked NF's shared block, in the agent's memory. The agent writes go; the NF library writes the
 * counters (one writer each, read by the agent at any time), cumulative across the NF's instances. */
struct metron_nf_link {
  volatile uint32_t go; /* nonzero: the agent's stand-in has stopped, the NF may read its rings */
  uint32_t mark;
  uint64_t taken __attribute__((aligned(64))); /* packets the NF took (entries dropped upstream not counted) */
  uint64_t passed;                            /* of those, passed on */
  uint64_t dropped;                           /* of those, marked dropped */
  uint64_t transit;                           /* entries an earlier NF dropped, passed on untouched */
  struct metron_nf_wake wake;                 /* its own cache line: producers read it every batch */
};

/* Initialises the EAL (secondary) from argv and attaches to the agent's rings. Returns the number of arguments it
 * consumed (argv[0] stays the program: the NF's own arguments are argv[ret + 1 ...] like after rte_eal_init), or
 * -1 with a message on stderr. */
int metron_nf_init(int argc, char** argv, struct metron_nf** nf);

/* Up to max (<= METRON_NF_MAX_BURST) packets from the agent; 0 when none are waiting. When none are waiting it idles as
 * METRON_NF_IDLE says: WAKE (default) sleeps once its input stayed empty for METRON_NF_SPIN_US (and returns 0 when
 * woken), so NFs sharing a CPU leave it to those with packets; YIELD yields the CPU (sched_yield) on each empty poll
 * after 256 in a row; POLL never gives the CPU up. */
unsigned metron_nf_rx(struct metron_nf* nf, struct rte_mbuf** pkts, unsigned max);

/* Gives back the n packets of the last rx (in any order), each with its verdict (verdicts NULL: all pass). Waits
 * for room on the ring back to the agent (the agent drains it every poll): no packet is ever dropped here. */
void metron_nf_tx(struct metron_nf* nf, struct rte_mbuf** pkts, const uint8_t* verdicts, unsigned n);

/* 0 once SIGTERM or SIGINT arrived. */
int metron_nf_running(const struct metron_nf* nf);

/* Packets received and given back with each verdict since init. */
uint64_t metron_nf_rx_count(const struct metron_nf* nf);
uint64_t metron_nf_dropped_count(const struct metron_nf* nf);
/* TSC cycles from the start of each non-empty rx to the end of its tx: the NF's busy time, library included. */
uint64_t metron_nf_busy_cycles(const struct metron_nf* nf);
/* WAKE: times the NF went to sleep on its empty input. */
uint64_t metron_nf_sleeps(const struct metron_nf* nf);

/* Leaves the EAL (rte_eal_cleanup) and frees nf. */
void metron_nf_close(struct metron_nf* nf);

#ifdef __cplusplus
}
#endif

#endif /* METRON_NF_H */

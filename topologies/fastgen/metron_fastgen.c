/* metron-fastgen: the DPDK traffic generator and sink of the fast emulated network (issue 23 item 1,
 * topologies/README.md#fast-network). One process, one thread: it sends on one DPDK port (the source host's vhost-user port,
 * attached with net_virtio_user) and counts what comes back on another (the sink host's), so the two ends never
 * fight over a CPU (shared/notes/dataplane.md: two busy-polling DPDK processes on one CPU starve each other).
 *
 *   metron-fastgen <EAL args> -- --tx PORT --rx PORT --flows N --src-mac M --dst-mac M --src-ip A --dst-ip A
 *                  --sport P --dport P --rates PPS[,PPS...] --seconds S [--warmup-pps PPS --warmup-seconds S]
 *                  [--drain-ms MS] [--dports P[,P...]]
 *
 * Flow f (0 <= f < N) is UDP from SPORT+f to DPORT (with --dports, measured step i goes to its i-th port, the last
 * one repeating; the warmup to DPORT: a step to a port the network drops shows as lost). Payload (network order):
 * "MFST", step u16, flow u16, seq u32, TSC u64; seq counts from 0 per flow and step. Each rate is one step: the
 * generator paces to it with the TSC (a burst the port refuses in part is sent again, never skipped, so "sent" is
 * what left), the sink marks each (flow, seq) it receives in a bitmap; after the step the sink drains until
 * nothing has arrived for DRAIN_MS.
 * After the thread was descheduled it sends at most MAX_CATCHUP frames at once and lets the schedule slip by the
 * rest (slippedMs; achievedPps is what was really sent): a line-rate catch-up burst would overflow the rings of
 * the path at a rate it holds. Per step one JSON line on stdout:
 *   sent, received (frames of this step), lost = sent - distinct received, duplicates (a (flow, seq) seen
 *   again), reordered (a frame whose seq is below the highest already received for its flow, first copy),
 *   flowsWithLoss, rewritten (frames whose IPv4 source or destination is no longer what was sent: the chain's
 *   NAPT/LB translated them), otherFrames (anything else the sink saw), txRetries, achievedPps, and the ports' own
 *   counters (imissed, ierrors, oerrors, rx_nombuf) over the step.
 * The warmup step (default 2 s at 2 kpps) makes every flow's NAPT mapping and the switches' megaflows before the
 * measured steps; it is reported like them with "warmup": true.
 *
 * Each step prints {"event":"start","step":N,"t0UnixNs":...} when its first frame leaves (CLOCK_REALTIME), and its
 * report adds t0UnixNs, lostRanges ([from ms, to ms, frames] after t0: when the lost frames were sent, the first 16
 * runs) and remapped (flows whose translation - source address and port, destination address - changed from the
 * first one the sink saw for them, in any earlier step included: a NAPT or LB mapping lost). SIGUSR1 ends the
 * running step early (its seconds are a maximum then).
 *
 * When neither end has anything to do the thread sleeps (down to the next due burst, at most 50 us): the
 * emulated servers' agents share the same CPUs. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#define BURST 32
#define RX_BURST 64
#define MAX_FLOWS 65536
#define MAX_RATES 32
#define PAYLOAD_LEN 20
#define FRAME_LEN (RTE_ETHER_HDR_LEN + 20 + 8 + PAYLOAD_LEN)
#define MAGIC "MFST"
#define RETRY_SLEEP_NS 20000
#define MAX_CATCHUP 256  /* frames the generator sends at once after falling behind its schedule */
#define SINK_DESC 32768
#define MAX_GAPS 16     /* lost ranges reported per step */  /* receive buffers of the sink's port (queue_size=32768 on its vdev) */

struct opts {
    const char *tx, *rx;
    unsigned flows;
    struct rte_ether_addr src_mac, dst_mac;
    uint32_t src_ip, dst_ip;  /* network order */
    uint16_t sport, dport;
    double rates[MAX_RATES];
    unsigned n_rates;
    uint16_t dports[MAX_RATES];  /* --dports: the destination port of each measured step (the last one repeats) */
    unsigned n_dports;
    double seconds, warmup_pps, warmup_seconds;
    unsigned drain_ms;
};

struct port_counters {
    uint64_t imissed, ierrors, oerrors, rx_nombuf;
};

struct step_result {
    uint64_t sent, received, distinct, duplicates, reordered, other, retries, flows_with_loss, rewritten, remapped;
    double seconds;
    bool stalled;
    uint64_t t0_unix_ns;  /* CLOCK_REALTIME at the step's first frame: the caller places its operations by it */
    unsigned n_gaps;
    double gaps[MAX_GAPS][3];  /* [from ms, to ms, frames]: when the lost frames were sent, from the step's start */
    uint64_t slipped_ns;
    struct port_counters tx_port, rx_port;
};

static volatile sig_atomic_t g_stop, g_end_step;
static void on_signal(int sig) { (void)sig; g_stop = 1; }
/* SIGUSR1 ends the step running now early (its seconds are then a maximum): a caller that loads the network
 * across an operation of unknown duration ends the step a fixed time after the operation. */
static void on_end_step(int sig) { (void)sig; g_end_step = 1; }

static void die(const char *what, const char *detail) {
    fprintf(stderr, "metron-fastgen: %s: %s\n", what, detail);
    exit(2);
}

static uint32_t parse_ip(const char *s) {
    unsigned a, b, c, d;
    if (sscanf(s, "%u.%u.%u.%u", &a, &b, &c, &d) != 4 || a > 255 || b > 255 || c > 255 || d > 255)
        die("not an IPv4 address", s);
    return rte_cpu_to_be_32((a << 24) | (b << 16) | (c << 8) | d);
}

static void parse_mac(const char *s, struct rte_ether_addr *m) {
    if (rte_ether_unformat_addr(s, m) != 0) die("not a MAC address", s);
}

static void parse_opts(int argc, char **argv, struct opts *o) {
    static const struct option longs[] = {
        {"tx", 1, 0, 't'}, {"rx", 1, 0, 'r'}, {"flows", 1, 0, 'f'}, {"src-mac", 1, 0, 'a'},
        {"dst-mac", 1, 0, 'b'}, {"src-ip", 1, 0, 'c'}, {"dst-ip", 1, 0, 'd'}, {"sport", 1, 0, 'p'},
        {"dport", 1, 0, 'q'}, {"rates", 1, 0, 'R'}, {"seconds", 1, 0, 's'}, {"warmup-pps", 1, 0, 'w'},
        {"warmup-seconds", 1, 0, 'W'}, {"drain-ms", 1, 0, 'D'}, {"dports", 1, 0, 'P'}, {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->flows = 1024;
    o->sport = 40000;
    o->dport = 5000;
    o->seconds = 5;
    o->warmup_pps = 2000;
    o->warmup_seconds = 2;
    o->drain_ms = 300;
    bool have_src = false, have_dst = false, have_sip = false, have_dip = false;
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 't': o->tx = optarg; break;
        case 'r': o->rx = optarg; break;
        case 'f': o->flows = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'a': parse_mac(optarg, &o->src_mac); have_src = true; break;
        case 'b': parse_mac(optarg, &o->dst_mac); have_dst = true; break;
        case 'c': o->src_ip = parse_ip(optarg); have_sip = true; break;
        case 'd': o->dst_ip = parse_ip(optarg); have_dip = true; break;
        case 'p': o->sport = (uint16_t)strtoul(optarg, NULL, 10); break;
        case 'q': o->dport = (uint16_t)strtoul(optarg, NULL, 10); break;
        case 'R': {
            char *save = NULL, *copy = strdup(optarg);
            for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (o->n_rates == MAX_RATES) die("--rates", "too many steps");
                o->rates[o->n_rates++] = strtod(tok, NULL);
            }
            free(copy);
            break;
        }
        case 'P': {
            char *save = NULL, *copy = strdup(optarg);
            for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (o->n_dports == MAX_RATES) die("--dports", "too many steps");
                o->dports[o->n_dports++] = (uint16_t)strtoul(tok, NULL, 10);
            }
            free(copy);
            break;
        }
        case 's': o->seconds = strtod(optarg, NULL); break;
        case 'w': o->warmup_pps = strtod(optarg, NULL); break;
        case 'W': o->warmup_seconds = strtod(optarg, NULL); break;
        case 'D': o->drain_ms = (unsigned)strtoul(optarg, NULL, 10); break;
        default: die("usage", "see the comment at the top of metron_fastgen.c");
        }
    }
    if (!o->tx || !o->rx || !have_src || !have_dst || !have_sip || !have_dip || o->n_rates == 0)
        die("usage", "--tx, --rx, --src-mac, --dst-mac, --src-ip, --dst-ip and --rates are required");
    if (o->flows == 0 || o->flows > MAX_FLOWS) die("--flows", "must be 1..65536");
    if (o->sport + o->flows - 1 > 65535) die("--flows", "source ports would pass 65535");
    for (unsigned i = 0; i < o->n_rates; i++)
        if (o->rates[i] <= 0) die("--rates", "every rate must be > 0");
}

static void sleep_ns(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    nanosleep(&ts, NULL);
}

static uint16_t port_by_name(const char *name) {
    uint16_t pid;
    if (rte_eth_dev_get_port_by_name(name, &pid) != 0) die("no DPDK port of that name (EAL --vdev?)", name);
    return pid;
}

/* rx_desc: receive buffers posted (a virtio_user port uses at most its queue_size devarg). The sink's port gets
 * many: it shares a CPU with everything else here, and a frame the switch cannot hand it while it is descheduled
 * would count as the network's loss. */
static void port_start(uint16_t pid, struct rte_mempool *pool, uint16_t rx_desc) {
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof conf);
    int rc = rte_eth_dev_configure(pid, 1, 1, &conf);
    if (rc == 0) rc = rte_eth_rx_queue_setup(pid, 0, rx_desc, rte_eth_dev_socket_id(pid), NULL, pool);
    if (rc == 0) rc = rte_eth_tx_queue_setup(pid, 0, 1024, rte_eth_dev_socket_id(pid), NULL);
    if (rc == 0) rc = rte_eth_dev_start(pid);
    if (rc != 0) die("port setup", rte_strerror(-rc));
}

#define LINK_SETTLE_NS (250ull * 1000 * 1000)

/* The peer (Open vSwitch, a vhost-user client) connects when it retries: wait for it rather than send into a
 * port with no one behind it. */
static void wait_link(uint16_t pid, const char *name, double seconds) {
    const uint64_t end = rte_rdtsc() + (uint64_t)(seconds * (double)rte_get_tsc_hz());
    struct rte_eth_link link;
    while (!g_stop && rte_rdtsc() < end) {
        memset(&link, 0, sizeof link);
        if (rte_eth_link_get_nowait(pid, &link) == 0 && link.link_status == RTE_ETH_LINK_UP) return;
        sleep_ns(10 * 1000 * 1000);
    }
    die("link never came up (is the switch's vhost-user port connected?)", name);
}

static struct port_counters counters(uint16_t pid) {
    struct rte_eth_stats s;
    struct port_counters c = {0, 0, 0, 0};
    if (rte_eth_stats_get(pid, &s) == 0) {
        c.imissed = s.imissed;
        c.ierrors = s.ierrors;
        c.oerrors = s.oerrors;
        c.rx_nombuf = s.rx_nombuf;
    }
    return c;
}

static struct port_counters counters_since(uint16_t pid, struct port_counters before) {
    struct port_counters now = counters(pid);
    return (struct port_counters){now.imissed - before.imissed, now.ierrors - before.ierrors,
                                  now.oerrors - before.oerrors, now.rx_nombuf - before.rx_nombuf};
}

/* One frame per flow, written once; each packet copies it and fills in the payload. */
static uint8_t *make_templates(const struct opts *o) {
    uint8_t *t = calloc(o->flows, FRAME_LEN);
    if (!t) die("calloc", "templates");
    for (unsigned f = 0; f < o->flows; f++) {
        uint8_t *p = t + (size_t)f * FRAME_LEN;
        struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
        eth->dst_addr = o->dst_mac;
        eth->src_addr = o->src_mac;
        eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
        struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
        ip->version_ihl = 0x45;
        ip->total_length = rte_cpu_to_be_16(20 + 8 + PAYLOAD_LEN);
        ip->time_to_live = 64;
        ip->next_proto_id = IPPROTO_UDP;
        ip->src_addr = o->src_ip;
        ip->dst_addr = o->dst_ip;
        ip->hdr_checksum = rte_ipv4_cksum(ip);
        struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
        udp->src_port = rte_cpu_to_be_16((uint16_t)(o->sport + f));
        udp->dst_port = rte_cpu_to_be_16(o->dport);
        udp->dgram_len = rte_cpu_to_be_16(8 + PAYLOAD_LEN);
        udp->dgram_cksum = 0;  /* optional in IPv4; the NAPT rewrites ports and would have to fix it */
        memcpy(udp + 1, MAGIC, 4);
    }
    return t;
}

/* Every flow's frames go to `dport` from now on (the UDP checksum is 0: nothing else changes). */
static void set_dport(uint8_t *t, unsigned flows, uint16_t dport) {
    for (unsigned f = 0; f < flows; f++) {
        struct rte_udp_hdr *udp =
            (struct rte_udp_hdr *)(t + (size_t)f * FRAME_LEN + RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr));
        udp->dst_port = rte_cpu_to_be_16(dport);
    }
}

/* The step's sink state: per flow, a bitmap of the seqs received and the highest one. */
struct sink {
    unsigned flows;
    uint32_t max_seq;       /* seqs per flow the bitmap holds */
    uint32_t words;         /* 64-bit words per flow */
    uint64_t *bits;
    int64_t *top;
};

static void sink_reset(struct sink *s, unsigned flows, uint32_t max_seq) {
    free(s->bits);
    free(s->top);
    s->flows = flows;
    s->max_seq = max_seq;
    s->words = (max_seq + 63) / 64;
    s->bits = calloc((size_t)flows * s->words, sizeof(uint64_t));
    s->top = malloc(sizeof(int64_t) * flows);
    if (!s->bits || !s->top) die("calloc", "sink bitmaps");
    for (unsigned f = 0; f < flows; f++) s->top[f] = -1;
}

static uint32_t g_src_ip, g_dst_ip;  /* network order, what the generator sends */

/* Per flow, the translation the sink first saw (source address and port, destination address: the NAPT's mapping
 * and the LB's backend), kept across steps: a flow whose frames arrive with another one later lost its mapping. */
struct translation {
    uint32_t saddr, daddr;
    uint16_t sport;
    bool seen, changed;
};
static struct translation g_maps[MAX_FLOWS];

static void sink_count(struct sink *s, struct rte_mbuf *m, uint16_t step, struct step_result *r) {
    const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
    uint32_t len = rte_pktmbuf_data_len(m), off = RTE_ETHER_HDR_LEN;
    if (len < FRAME_LEN) goto other;
    uint16_t et = (uint16_t)(p[12] << 8 | p[13]);
    if (et == RTE_ETHER_TYPE_VLAN) {  /* a chain's egress may leave a tag on; count it all the same */
        et = (uint16_t)(p[16] << 8 | p[17]);
        off += 4;
    }
    if (et != RTE_ETHER_TYPE_IPV4 || (p[off] >> 4) != 4 || p[off + 9] != IPPROTO_UDP) goto other;
    uint32_t saddr, daddr;
    uint16_t sport;
    memcpy(&saddr, p + off + 12, 4);
    memcpy(&daddr, p + off + 16, 4);
    off += (uint32_t)(p[off] & 0xf) * 4;
    memcpy(&sport, p + off, 2);
    off += 8;
    if (off + PAYLOAD_LEN > len || memcmp(p + off, MAGIC, 4) != 0) goto other;
    uint16_t st = (uint16_t)(p[off + 4] << 8 | p[off + 5]);
    uint16_t flow = (uint16_t)(p[off + 6] << 8 | p[off + 7]);
    uint32_t seq = (uint32_t)p[off + 8] << 24 | (uint32_t)p[off + 9] << 16 | (uint32_t)p[off + 10] << 8 | p[off + 11];
    if (st != step || flow >= s->flows || seq >= s->max_seq) goto other;
    r->received++;
    if (saddr != g_src_ip || daddr != g_dst_ip) r->rewritten++;  /* a NAPT or LB on the way translated it */
    struct translation *t = &g_maps[flow];
    if (!t->seen) {
        *t = (struct translation){saddr, daddr, sport, true, false};
    } else if (!t->changed && (t->saddr != saddr || t->daddr != daddr || t->sport != sport)) {
        t->changed = true;  /* counted once per flow, in the step it happened */
        r->remapped++;
    }
    uint64_t *w = &s->bits[(size_t)flow * s->words + seq / 64];
    uint64_t bit = 1ull << (seq % 64);
    if (*w & bit) {
        r->duplicates++;
        return;
    }
    *w |= bit;
    r->distinct++;
    if ((int64_t)seq < s->top[flow]) r->reordered++;
    else s->top[flow] = seq;
    return;
other:
    r->other++;
}

static unsigned receive(uint16_t rx, struct sink *s, uint16_t step, struct step_result *r) {
    struct rte_mbuf *pkts[RX_BURST];
    uint16_t n = rte_eth_rx_burst(rx, 0, pkts, RX_BURST);
    for (uint16_t i = 0; i < n; i++) sink_count(s, pkts[i], step, r);
    rte_pktmbuf_free_bulk(pkts, n);
    return n;
}

/* Where in time the loss was: round k is seq k of every flow (sent one after another from round_tsc[k] on); runs
 * of consecutive rounds that lost frames, as [from ms, to ms, frames]. The first MAX_GAPS. */
static void lost_ranges(const struct sink *s, const uint32_t *seq, const uint64_t *round_tsc, uint64_t t0,
                        uint64_t hz, struct step_result *r) {
    const uint32_t rounds = seq[0];
    double from = -1, to = 0, frames = 0;
    uint32_t prev = 0;
    for (uint32_t k = 0; k < rounds; k++) {
        unsigned lost = 0;
        for (unsigned f = 0; f < s->flows; f++)
            if (k < seq[f] && !(s->bits[(size_t)f * s->words + k / 64] & (1ull << (k % 64)))) lost++;
        if (!lost) continue;
        const double ms = (double)(round_tsc[k] - t0) * 1e3 / (double)hz;
        if (from >= 0 && k > prev + 1) {
            if (r->n_gaps < MAX_GAPS) {
                r->gaps[r->n_gaps][0] = from, r->gaps[r->n_gaps][1] = to, r->gaps[r->n_gaps][2] = frames;
                r->n_gaps++;
            }
            from = -1;
        }
        if (from < 0) from = ms, frames = 0;
        to = ms;
        prev = k;
        frames += lost;
    }
    if (from >= 0 && r->n_gaps < MAX_GAPS) {
        r->gaps[r->n_gaps][0] = from, r->gaps[r->n_gaps][1] = to, r->gaps[r->n_gaps][2] = frames;
        r->n_gaps++;
    }
}

static struct step_result run_step(const struct opts *o, uint16_t tx, uint16_t rx, struct rte_mempool *pool,
                                   const uint8_t *templates, struct sink *s, uint16_t step, double pps,
                                   double seconds) {
    struct step_result r;
    memset(&r, 0, sizeof r);
    const uint64_t hz = rte_get_tsc_hz();
    const uint64_t total = (uint64_t)(pps * seconds + 0.5);
    uint32_t per_flow = (uint32_t)(total / o->flows + 2);
    sink_reset(s, o->flows, per_flow);
    uint32_t *seq = calloc(o->flows, sizeof(uint32_t));
    uint64_t *round_tsc = calloc(per_flow, sizeof(uint64_t));  /* when seq k of flow 0 was built */
    if (!seq || !round_tsc) die("calloc", "seqs");
    struct port_counters tx0 = counters(tx), rx0 = counters(rx);
    struct rte_mbuf *pending[BURST];
    uint16_t n_pending = 0, next_pending = 0;
    unsigned flow = 0;
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    const uint64_t t0 = rte_rdtsc();
    r.t0_unix_ns = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
    printf("{\"event\":\"start\",\"step\":%u,\"t0UnixNs\":%" PRIu64 "}\n", step, r.t0_unix_ns);
    fflush(stdout);
    uint64_t t0_pace = t0;
    uint64_t built = 0, progress = t0, sent_before = 0;
    g_end_step = 0;
    while (!g_stop && !g_end_step && (r.sent < total)) {
        const uint64_t now = rte_rdtsc();
        if (r.sent != sent_before) {
            sent_before = r.sent;
            progress = now;
        } else if (now - progress > 5 * hz) {  /* the port took nothing for 5 s: report, do not hang */
            r.stalled = true;
            break;
        }
        uint64_t due = (uint64_t)((double)(now - t0_pace) * pps / (double)hz);
        if (due > built + MAX_CATCHUP) {
            /* descheduled: catching up would send a line-rate burst larger than the path's rings at the rate
             * asked; the schedule slips instead (achievedPps shows it) */
            const uint64_t slip = (uint64_t)((double)(due - built - MAX_CATCHUP) / pps * (double)hz);
            t0_pace += slip;
            r.slipped_ns += (uint64_t)((double)slip * 1e9 / (double)hz);
            due = built + MAX_CATCHUP;
        }
        if (due > total) due = total;
        if (next_pending == n_pending && built < due) {
            uint16_t want = (uint16_t)(due - built < BURST ? due - built : BURST);
            if (rte_pktmbuf_alloc_bulk(pool, pending, want) == 0) {
                for (uint16_t i = 0; i < want; i++) {
                    struct rte_mbuf *m = pending[i];
                    uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
                    memcpy(p, templates + (size_t)flow * FRAME_LEN, FRAME_LEN);
                    uint8_t *pl = p + FRAME_LEN - PAYLOAD_LEN;
                    uint16_t st = rte_cpu_to_be_16(step), fl = rte_cpu_to_be_16((uint16_t)flow);
                    if (flow == 0) round_tsc[seq[0]] = now;
                    uint32_t sq = rte_cpu_to_be_32(seq[flow]++);
                    uint64_t ts = rte_cpu_to_be_64(now);
                    memcpy(pl + 4, &st, 2);
                    memcpy(pl + 6, &fl, 2);
                    memcpy(pl + 8, &sq, 4);
                    memcpy(pl + 12, &ts, 8);
                    m->data_len = m->pkt_len = FRAME_LEN;
                    flow = flow + 1 == o->flows ? 0 : flow + 1;
                }
                n_pending = want;
                next_pending = 0;
                built += want;
            }
        }
        if (next_pending < n_pending) {
            uint16_t k = rte_eth_tx_burst(tx, 0, pending + next_pending, n_pending - next_pending);
            bool refused = k < n_pending - next_pending;
            next_pending += k;
            r.sent += k;
            if (refused) {
                /* the switch has not emptied our ring: give the CPU to whoever it is waiting for (the agents and
                 * the switch share these CPUs) instead of spinning on it */
                r.retries++;
                receive(rx, s, step, &r);
                sleep_ns(RETRY_SLEEP_NS);
                continue;
            }
        }
        unsigned got = receive(rx, s, step, &r);
        if (got < RX_BURST && next_pending == n_pending) {
            /* the sink's ring is not backing up (it holds SINK_DESC frames, 130 ms at 250 kpps) and nothing is
             * refused: sleep until the next burst is due (at most 50 us) */
            const uint64_t next_due_ns = (uint64_t)((double)(built + BURST - due) / pps * 1e9);
            if (built >= due && next_due_ns > 5000) sleep_ns(next_due_ns < 50000 ? next_due_ns : 50000);
        }
    }
    r.seconds = (double)(rte_rdtsc() - t0) / (double)hz;
    if (next_pending < n_pending) {
        /* built but never sent (the step ended): their seqs were never used, so they count neither as sent nor
         * as lost (the per-flow cursors go back over them, last built first) */
        rte_pktmbuf_free_bulk(pending + next_pending, n_pending - next_pending);
        for (uint16_t i = next_pending; i < n_pending; i++) {
            flow = flow == 0 ? o->flows - 1 : flow - 1;
            seq[flow]--;
        }
    }
    /* drain: until nothing arrived for drain_ms (at most 20 x drain_ms) */
    const uint64_t idle = (uint64_t)o->drain_ms * hz / 1000;
    const uint64_t end = rte_rdtsc() + 20 * idle;
    uint64_t last = rte_rdtsc();
    while (!g_stop) {
        const uint64_t now = rte_rdtsc();
        if (now - last > idle || now > end) break;
        if (receive(rx, s, step, &r) > 0) last = now;
        else sleep_ns(20000);
    }
    for (unsigned f = 0; f < o->flows; f++) {
        uint64_t got = 0;
        const uint64_t *bits = s->bits + (size_t)f * s->words;
        for (uint32_t w = 0; w < s->words; w++) got += (uint64_t)__builtin_popcountll(bits[w]);
        if (got < seq[f]) r.flows_with_loss++;
    }
    lost_ranges(s, seq, round_tsc, t0, hz, &r);
    r.tx_port = counters_since(tx, tx0);
    r.rx_port = counters_since(rx, rx0);
    free(seq);
    free(round_tsc);
    return r;
}

static void report(uint16_t step, double pps, bool warmup, const struct step_result *r) {
    printf("{\"step\":%u,\"warmup\":%s,\"stalled\":%s,\"pps\":%.0f,\"seconds\":%.3f,\"sent\":%" PRIu64
           ",\"achievedPps\":%.0f,\"received\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"duplicates\":%" PRIu64 ",\"reordered\":%" PRIu64
           ",\"flowsWithLoss\":%" PRIu64 ",\"rewritten\":%" PRIu64 ",\"remapped\":%" PRIu64 ",\"otherFrames\":%" PRIu64
           ",\"txRetries\":%" PRIu64 ",\"slippedMs\":%.3f"
           ",\"txPort\":{\"oerrors\":%" PRIu64 "},\"rxPort\":{\"imissed\":%" PRIu64 ",\"ierrors\":%" PRIu64
           ",\"rxNombuf\":%" PRIu64 "},\"t0UnixNs\":%" PRIu64 ",\"lostRanges\":[",
           step, warmup ? "true" : "false", r->stalled ? "true" : "false", pps, r->seconds, r->sent,
           r->seconds > 0 ? r->sent / r->seconds : 0,
           r->received, r->sent - r->distinct, r->duplicates, r->reordered, r->flows_with_loss, r->rewritten, r->remapped, r->other,
           r->retries, r->slipped_ns / 1e6, r->tx_port.oerrors, r->rx_port.imissed, r->rx_port.ierrors, r->rx_port.rx_nombuf, r->t0_unix_ns);
    for (unsigned i = 0; i < r->n_gaps; i++)
        printf("%s[%.1f,%.1f,%.0f]", i ? "," : "", r->gaps[i][0], r->gaps[i][1], r->gaps[i][2]);
    printf("]}\n");
    fflush(stdout);
}

int main(int argc, char **argv) {
    int n = rte_eal_init(argc, argv);
    if (n < 0) die("EAL", rte_strerror(rte_errno));
    struct opts o;
    parse_opts(argc - n, argv + n, &o);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGUSR1, on_end_step);
    prctl(PR_SET_TIMERSLACK, 1UL);  /* short sleeps stay short */
    struct rte_mempool *pool = rte_pktmbuf_pool_create("fastgen", SINK_DESC + 16383, 256, 0,
                                                       RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
    if (!pool) die("mbuf pool", rte_strerror(rte_errno));
    uint16_t tx = port_by_name(o.tx), rx = port_by_name(o.rx);
    if (rx != tx) port_start(tx, pool, 1024);
    port_start(rx, pool, SINK_DESC);
    wait_link(tx, o.tx, 30);
    wait_link(rx, o.rx, 30);
    /* A port is up here once its vhost-user peer set its rings up, and Open vSwitch's PMD takes the new device into
     * its send cache only when it reloads, later. Warmups lost their first 2-5 frames with no interface counter
     * moving (1 in ~40 paper-fig5 bring-ups, once in `make test`), and one that lost nothing had started 6 ms after
     * OVS logged the sink's device added: the likely cause, not confirmed. Both links must then still be up. */
    sleep_ns(LINK_SETTLE_NS);
    wait_link(tx, o.tx, 30);
    wait_link(rx, o.rx, 30);
    uint8_t *templates = make_templates(&o);
    g_src_ip = o.src_ip;
    g_dst_ip = o.dst_ip;
    struct sink s;
    memset(&s, 0, sizeof s);
    uint16_t step = 0;
    if (o.warmup_seconds > 0 && o.warmup_pps > 0) {
        struct step_result r = run_step(&o, tx, rx, pool, templates, &s, step, o.warmup_pps, o.warmup_seconds);
        report(step++, o.warmup_pps, true, &r);
    }
    for (unsigned i = 0; i < o.n_rates && !g_stop; i++) {
        if (o.n_dports) set_dport(templates, o.flows, o.dports[i < o.n_dports ? i : o.n_dports - 1]);
        struct step_result r = run_step(&o, tx, rx, pool, templates, &s, step, o.rates[i], o.seconds);
        report(step++, o.rates[i], false, &r);
    }
    rte_eth_dev_stop(tx);
    if (rx != tx) rte_eth_dev_stop(rx);
    rte_eth_dev_close(tx);
    if (rx != tx) rte_eth_dev_close(rx);
    rte_eal_cleanup();
    return g_stop ? 1 : 0;
}

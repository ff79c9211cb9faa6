/* metron-blast: a fast sender and an exact sink counter for the scaling workload at load (issue 14 item 6,
 * docs/scaling.md#at-load). The Python sender of bench/scaling/workload.py tops out at a few kpps; this one sends
 * the same frames (Ethernet/IPv4/UDP, payload "MSCL", flow u16, seq u32, send time ns u64, network order) with
 * sendmmsg on an AF_PACKET socket, and counts them at the sink with recvmmsg, per flow, without a capture file.
 *
 *   metron-blast send IFACE FLOWS SRC_MAC DST_MAC SRC_IP DST_IP SPORT DPORT
 *     flow f goes from SPORT+f to DPORT; reads "<pps>" lines on stdin (the rate from now on; 0 or EOF stops);
 *     prints "ready", then at the end one JSON line {"changes":[{"ns","pps","sent"}],"sent":[per flow],
 *     "retries":N,"end_ns":T}. A frame the kernel refuses (ENOBUFS) is sent again, never skipped, so
 *     "sent" is exactly what left the socket.
 *   metron-blast sink IFACE
 *     prints "ready", counts until stdin closes, then one JSON line: per flow the packets received, the highest
 *     seq, the sequence gaps (first missing seq, how many, send times of the neighbours) and the NAPT
 *     translations seen (source address and port, first and last seq, packets), plus the socket's own drops.
 *
 * Plain C with no DPDK: it runs in the emulated hosts' namespaces next to the agent, not inside it. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64
#define MAX_FLOWS 65536
#define MAX_MAPS 4       /* translations remembered per flow; more are counted in extra_maps */
#define MAX_GAPS (1 << 20)   /* gaps remembered in all; more are counted in extra_gaps */
#define PAYLOAD_LEN 18
#define FRAME_LEN (14 + 20 + 8 + PAYLOAD_LEN)

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double mono_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *detail) {
    fprintf(stderr, "metron-blast: %s: %s\n", what, detail);
    exit(2);
}

static int open_socket(const char *iface) {
    int s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (s < 0) die("socket(AF_PACKET)", strerror(errno));
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
                              .sll_ifindex = (int)if_nametoindex(iface)};
    if (sll.sll_ifindex == 0) die("no such interface", iface);
    if (bind(s, (struct sockaddr *)&sll, sizeof sll) < 0) die("bind", strerror(errno));
    int big = 64 << 20;  /* FORCE: above net.core.[rw]mem_max, we run as root */
    setsockopt(s, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big);
    setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
    return s;
}

static void parse_mac(const char *text, uint8_t *out) {
    unsigned v[6];
    if (sscanf(text, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6) die("bad MAC", text);
    for (int i = 0; i < 6; i++) out[i] = (uint8_t)v[i];
}

static uint16_t ip_checksum(const uint8_t *h) {
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2) sum += (uint32_t)(h[i] << 8 | h[i + 1]);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

static long parse_long(const char *text, long lo, long hi, const char *what) {
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || v < lo || v > hi) die(what, text);
    return v;
}

/* ---- send ---------------------------------------------------------------------------------------------------- */

struct change { uint64_t ns; double pps; uint64_t sent; };

static int send_main(char **argv) {
    const char *iface = argv[0];
    int flows = (int)parse_long(argv[1], 1, MAX_FLOWS - 1, "bad flow count");
    uint8_t head[FRAME_LEN - PAYLOAD_LEN];
    memset(head, 0, sizeof head);
    parse_mac(argv[3], head);
    parse_mac(argv[2], head + 6);
    head[12] = 0x08;
    uint8_t *ip = head + 14;
    ip[0] = 0x45; ip[2] = 0; ip[3] = 20 + 8 + PAYLOAD_LEN; ip[8] = 64; ip[9] = 17;
    if (inet_pton(AF_INET, argv[4], ip + 12) != 1) die("bad source address", argv[4]);
    if (inet_pton(AF_INET, argv[5], ip + 16) != 1) die("bad destination address", argv[5]);
    ip[10] = ip[11] = 0;
    uint16_t csum = ip_checksum(ip);
    ip[10] = (uint8_t)(csum >> 8); ip[11] = (uint8_t)csum;
    long sport = parse_long(argv[6], 1, 65535, "bad source port"), dport = parse_long(argv[7], 1, 65535, "bad port");
    if (sport + flows - 1 > 65535) die("source ports past 65535 for flow count", argv[1]);
    uint8_t *udp = ip + 20;
    udp[2] = (uint8_t)(dport >> 8); udp[3] = (uint8_t)dport; udp[5] = 8 + PAYLOAD_LEN;  /* checksum 0: none */

    uint32_t *seq = calloc((size_t)flows, sizeof *seq);
    static uint8_t frames[BATCH][FRAME_LEN];
    struct iovec iov[BATCH];
    struct mmsghdr msgs[BATCH];
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < BATCH; i++) {
        memcpy(frames[i], head, sizeof head);
        iov[i] = (struct iovec){frames[i], FRAME_LEN};
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    int s = open_socket(iface);
    size_t cap = 64, nchanges = 0;
    struct change *changes = malloc(cap * sizeof *changes);
    printf("ready\n");
    fflush(stdout);

    double pps = 0, t_change = mono_s();
    uint64_t total = 0, at_change = 0, retries = 0;
    int f = 0, stop = 0;
    char line[256];
    size_t llen = 0;
    while (!stop) {
        uint64_t due = pps > 0 ? at_change + (uint64_t)((mono_s() - t_change) * pps) + 1 : total;
        /* behind schedule: only look at stdin; on time: wait for it up to 50 us */
        struct timespec wait = {0, due > total ? 0 : 50000};
        struct pollfd pfd = {.fd = 0, .events = POLLIN};
        if (ppoll(&pfd, 1, &wait, NULL) > 0) {
            ssize_t n = read(0, line + llen, sizeof line - 1 - llen);
            if (n <= 0) { stop = 1; break; }
            llen += (size_t)n;
            char *nl;
            while ((nl = memchr(line, '\n', llen)) != NULL) {
                *nl = 0;
                pps = atof(line);
                if (nchanges == cap) changes = realloc(changes, (cap *= 2) * sizeof *changes);
                changes[nchanges++] = (struct change){now_ns(), pps, total};
                at_change = total;
                t_change = mono_s();
                size_t used = (size_t)(nl - line) + 1;
                memmove(line, nl + 1, llen - used);
                llen -= used;
                if (pps <= 0) stop = 1;
            }
            if (llen == sizeof line - 1) die("stdin", "line too long");
            continue;
        }
        if (due <= total) continue;
        int n = due - total > BATCH ? BATCH : (int)(due - total);
        uint64_t ts = now_ns();
        for (int i = 0, g = f; i < n; i++, g = (g + 1) % flows) {
            uint8_t *u = frames[i] + 34, *p = u + 8;
            uint16_t sp = (uint16_t)(sport + g);
            u[0] = (uint8_t)(sp >> 8); u[1] = (uint8_t)sp;
            memcpy(p, "MSCL", 4);
            p[4] = (uint8_t)(g >> 8); p[5] = (uint8_t)g;
            uint32_t q = htonl(seq[g]);
            memcpy(p + 6, &q, 4);
            for (int b = 0; b < 8; b++) p[10 + b] = (uint8_t)(ts >> (56 - 8 * b));
        }
        int done = sendmmsg(s, msgs, (unsigned)n, 0);
        if (done < 0) {
            if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR) die("sendmmsg", strerror(errno));
            retries++;
            continue;
        }
        /* the frames that left are exactly the first `done`: advance their flows' sequence numbers */
        for (int i = 0; i < done; i++, f = (f + 1) % flows) seq[f]++;
        total += (uint64_t)done;
        if (done < n) retries++;
    }
    printf("{\"changes\":[");
    for (size_t i = 0; i < nchanges; i++)
        printf("%s{\"ns\":%llu,\"pps\":%.1f,\"sent\":%llu}", i ? "," : "", (unsigned long long)changes[i].ns,
               changes[i].pps, (unsigned long long)changes[i].sent);
    printf("],\"sent\":[");
    for (int i = 0; i < flows; i++) printf("%s%u", i ? "," : "", seq[i]);
    printf("],\"retries\":%llu,\"end_ns\":%llu}\n", (unsigned long long)retries, (unsigned long long)now_ns());
    return 0;
}

/* ---- sink ---------------------------------------------------------------------------------------------------- */

struct mapping { uint32_t addr; uint16_t port; uint32_t first, last; uint64_t packets; };
struct flow { uint64_t received, reordered; int64_t top; uint64_t top_ns; int nmaps, extra_maps;
              struct mapping maps[MAX_MAPS]; };
struct gap { int flow; uint32_t first; uint32_t count; uint64_t before_ns, after_ns; };

static int sink_main(char **argv) {
    int s = open_socket(argv[0]);
    struct timeval tv = {0, 100000};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct flow *fl = calloc(MAX_FLOWS, sizeof *fl);
    struct gap *gaps = malloc(MAX_GAPS * sizeof *gaps);
    size_t ngaps = 0, extra_gaps = 0;
    uint64_t others = 0, first_ns = 0, last_ns = 0;
    int maxflow = -1;
    for (int i = 0; i < MAX_FLOWS; i++) fl[i].top = -1;
    static uint8_t bufs[BATCH][2048];
    struct iovec iov[BATCH];
    struct mmsghdr msgs[BATCH];
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < BATCH; i++) {
        iov[i] = (struct iovec){bufs[i], sizeof bufs[i]};
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    /* reset the socket's counters: what it dropped before we read is not ours */
    struct tpacket_stats st;
    socklen_t sl = sizeof st;
    getsockopt(s, SOL_PACKET, PACKET_STATISTICS, &st, &sl);
    printf("ready\n");
    fflush(stdout);
    uint64_t kernel_drops = 0;
    for (;;) {
        struct pollfd pfd = {.fd = 0, .events = POLLIN};
        if (poll(&pfd, 1, 0) > 0) {
            char c;
            if (read(0, &c, 1) <= 0) break;
        }
        int n = recvmmsg(s, msgs, BATCH, 0, NULL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) continue;
            die("recvmmsg", strerror(errno));
        }
        for (int i = 0; i < n; i++) {
            const uint8_t *p = bufs[i];
            size_t len = msgs[i].msg_len;
            int eth = 14 + (len > 14 && p[12] == 0x81 && p[13] == 0 ? 4 : 0);
            if (len < (size_t)eth + 20 || p[eth - 2] != 0x08 || p[eth - 1] != 0 || p[eth + 9] != 17) { others++; continue; }
            int ihl = (p[eth] & 15) * 4;
            const uint8_t *u = p + eth + ihl, *b = u + 8;
            if ((size_t)(b - p) + PAYLOAD_LEN > len || memcmp(b, "MSCL", 4) != 0) { others++; continue; }
            int flow = b[4] << 8 | b[5];
            uint32_t seq = (uint32_t)b[6] << 24 | (uint32_t)b[7] << 16 | (uint32_t)b[8] << 8 | b[9];
            uint64_t ts = 0;
            for (int k = 0; k < 8; k++) ts = ts << 8 | b[10 + k];
            struct flow *x = &fl[flow];
            if (flow > maxflow) maxflow = flow;
            x->received++;
            last_ns = ts;
            if (!first_ns) first_ns = ts;
            if ((int64_t)seq <= x->top) {
                x->reordered++;
            } else {
                if ((int64_t)seq > x->top + 1) {
                    if (ngaps < MAX_GAPS)
                        gaps[ngaps++] = (struct gap){flow, (uint32_t)(x->top + 1), (uint32_t)(seq - x->top - 1),
                                                     x->top_ns, ts};
                    else
                        extra_gaps++;
                }
                x->top = seq;
                x->top_ns = ts;
            }
            uint32_t addr;
            memcpy(&addr, p + eth + 12, 4);
            uint16_t port = (uint16_t)(u[0] << 8 | u[1]);
            int m = 0;
            while (m < x->nmaps && !(x->maps[m].addr == addr && x->maps[m].port == port)) m++;
            if (m == x->nmaps) {
                if (m == MAX_MAPS) { x->extra_maps++; continue; }
                x->maps[x->nmaps++] = (struct mapping){addr, port, seq, seq, 0};
            }
            struct mapping *mp = &x->maps[m];
            mp->packets++;
            if (seq < mp->first) mp->first = seq;
            if (seq > mp->last) mp->last = seq;
        }
    }
    sl = sizeof st;
    if (getsockopt(s, SOL_PACKET, PACKET_STATISTICS, &st, &sl) == 0) kernel_drops = st.tp_drops;
    printf("{\"flows\":[");
    for (int i = 0; i <= maxflow; i++) {
        struct flow *x = &fl[i];
        printf("%s{\"received\":%llu,\"top\":%lld,\"reordered\":%llu,\"extraMaps\":%d,\"maps\":[", i ? "," : "",
               (unsigned long long)x->received, (long long)x->top, (unsigned long long)x->reordered, x->extra_maps);
        for (int m = 0; m < x->nmaps; m++) {
            char a[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &x->maps[m].addr, a, sizeof a);
            printf("%s{\"addr\":\"%s\",\"port\":%u,\"first\":%u,\"last\":%u,\"packets\":%llu}", m ? "," : "", a,
                   x->maps[m].port, x->maps[m].first, x->maps[m].last, (unsigned long long)x->maps[m].packets);
        }
        printf("]}");
    }
    printf("],\"gaps\":[");
    for (size_t i = 0; i < ngaps; i++)
        printf("%s[%d,%u,%u,%llu,%llu]", i ? "," : "", gaps[i].flow, gaps[i].first, gaps[i].count,
               (unsigned long long)gaps[i].before_ns, (unsigned long long)gaps[i].after_ns);
    printf("],\"extraGaps\":%zu,\"others\":%llu,\"socketDrops\":%llu,\"firstNs\":%llu,\"lastNs\":%llu}\n", extra_gaps,
           (unsigned long long)others, (unsigned long long)kernel_drops, (unsigned long long)first_ns,
           (unsigned long long)last_ns);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 10 && strcmp(argv[1], "send") == 0) return send_main(argv + 2);
    if (argc == 3 && strcmp(argv[1], "sink") == 0) return sink_main(argv + 2);
    fprintf(stderr, "usage: metron-blast send IFACE FLOWS SRC_MAC DST_MAC SRC_IP DST_IP SPORT DPORT\n"
                    "       metron-blast sink IFACE\n");
    return 2;
}

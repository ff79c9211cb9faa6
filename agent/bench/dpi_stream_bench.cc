// HyperscanDPI stream mode against block mode on the same TCP trace, in one process (issue 24): FLOWS flows
// (default 100k), each sending SEGS in-order segments of PAYLOAD bytes of text (defaults 16 and 512), the flows
// interleaved (segment k of every flow, then segment k+1: a new flow's state is cold whenever it is touched, as
// with many concurrent flows). One flow in 100 carries "evilpayload" split across its segments 4 and 5, which
// only stream mode matches. Frames are built in mbufs batch by batch; a third graph without DPI measures that
// cost, so the DPI's own cycles per packet are the difference. Rounds interleave stream, block and I/O-only
// graphs (each round a fresh graph, so stream mode opens every flow's stream again); medians are reported.
// The trace is synthetic rather than a pcap replay: a replayed trace repeats its sequence numbers on every pass,
// and stream mode would (rightly) skip them all as retransmissions after the first.
//   usage: dpi_stream_bench [FLOWS] [SEGS] [PAYLOAD] [ROUNDS]
//   output: "result <stream_mpps> <block_mpps> <io_mpps> <stream_dpi_cyc> <block_dpi_cyc> <stream_matches>
//            <block_matches> <streams_shed> <stream_gbps> <block_gbps>"
//   (Mpps and Gbit/s of TCP payload per CPU-second of the whole loop, frame building included)
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/annotations.h"
#include "core/eal.h"
#include "core/graph.h"
#include "utils/checksum.h"

namespace {

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

uint64_t counter(const metron::Graph& g, const std::string& key) {
  std::ostringstream rep;
  g.report(rep);
  const std::string want = "d." + key + " ";
  std::istringstream in(rep.str());
  for (std::string line; std::getline(in, line);)
    if (line.rfind(want, 0) == 0) return std::stoull(line.substr(want.size()));
  return 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Run {
  double cpu = 0;
  uint64_t matches = 0, shed = 0;
};

}  // namespace

int main(int argc, char** argv) {
  using metron::store16;
  using metron::store32;
  const uint32_t flows = argc > 1 ? static_cast<uint32_t>(std::stoul(argv[1])) : 100000;
  const uint32_t segs = argc > 2 ? static_cast<uint32_t>(std::stoul(argv[2])) : 16;
  const uint32_t payload = argc > 3 ? static_cast<uint32_t>(std::stoul(argv[3])) : 512;
  const int rounds = argc > 4 ? std::stoi(argv[4]) : 3;
  if (flows == 0 || flows > (1u << 24) || segs < 6 || payload < 16 || payload > 1400) {
    std::fprintf(stderr, "dpi_stream_bench: expected FLOWS in 1..16M, SEGS >= 6, PAYLOAD in 16..1400\n");
    return 2;
  }
  metron::eal_init(metron::eal_default_args("dpib", "0"));
  metron::register_annotations();
  rte_mempool* pool = metron::packed_pktmbuf_pool("dpib_pool", 8191);

  // Text the patterns do not occur in (lowercase words from a fixed LCG), long enough for every segment offset.
  std::vector<char> text(1 << 20);
  uint32_t x = 12345;
  for (char& c : text) {
    x = x * 1103515245 + 12345;
    const uint32_t r = (x >> 16) % 32;
    c = r < 26 ? static_cast<char>('a' + r) : ' ';
  }
  const std::string pats =
      "\"evilpayload\", \"/etc/passwd\", \"cmd[.]exe\", \"union +select\", \"<script>\", \"wget http\", "
      "\"User-Agent: sqlmap\", \"attack[0-9]{3}x\"";
  const std::string flows_cap = std::to_string(std::max<uint32_t>(flows + flows / 4, 1024));
  auto click = [&](const std::string& mode) {
    if (mode.empty()) return std::string("input -> Strip(14) -> MarkIPHeader -> Discard;");
    return "input -> Strip(14) -> MarkIPHeader -> d :: HyperscanDPI(" + pats + ", MODE " + mode + ", FLOWS " + flows_cap +
           ") -> Discard;";
  };

  uint8_t hdr[54] = {0x02, 0x4d, 0, 1, 0, 0, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 6};
  store16(hdr + 14 + 2, static_cast<uint16_t>(20 + 20 + payload));
  store32(hdr + 14 + 16, 0xc0a80101);
  store16(hdr + 34 + 2, 80);
  hdr[34 + 12] = 0x50;
  hdr[34 + 13] = 0x18;  // ACK PSH
  const char* evil = "evilpayload";

  auto run = [&](const std::string& mode) {
    metron::GraphEnv env;
    static int n = 0;
    env.instance = "dpib" + std::to_string(++n);
    auto g = metron::Graph::build(click(mode), env);
    const double c0 = cpu_seconds();
    for (uint32_t s = 0; s < segs; ++s) {
      for (uint32_t f = 0; f < flows;) {
        metron::PacketBatch b;
        if (rte_pktmbuf_alloc_bulk(pool, b.pkts, metron::kBurst) != 0) {
          std::fprintf(stderr, "dpi_stream_bench: packet pool empty\n");
          std::exit(1);
        }
        for (; b.n < metron::kBurst && f < flows; ++f) {
          rte_mbuf* m = b.pkts[b.n++];
          uint8_t* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, 54 + payload));
          std::memcpy(d, hdr, 54);
          store32(d + 14 + 12, 0x0a000000 | f);
          store16(d + 34, static_cast<uint16_t>(1024 + (f % 60000)));
          store32(d + 34 + 4, 1000 + s * payload);
          std::memcpy(d + 54, text.data() + (static_cast<size_t>(f) * 7919 + s * payload) % (text.size() - payload),
                      payload);
          if (f % 100 == 0 && s == 4) std::memcpy(d + 54 + payload - 4, evil, 4);
          if (f % 100 == 0 && s == 5) std::memcpy(d + 54, evil + 4, 7);
          metron::clear_anno(m);
        }
        if (b.n < metron::kBurst) rte_pktmbuf_free_bulk(b.pkts + b.n, metron::kBurst - b.n);
        g->push_input(b);
      }
    }
    Run r;
    r.cpu = cpu_seconds() - c0;
    if (!mode.empty()) r.matches = counter(*g, "matches"), r.shed = counter(*g, "streams_shed");
    return r;
  };

  std::vector<double> cs, cb, ci;
  Run rs, rb;
  for (int i = 0; i < rounds; ++i) {
    rs = run("STREAM");
    rb = run("BLOCK");
    const Run ri = run("");
    cs.push_back(rs.cpu), cb.push_back(rb.cpu), ci.push_back(ri.cpu);
    std::fprintf(stderr, "round %d: stream %.3f s (%lu matches, %lu shed), block %.3f s (%lu matches), io %.3f s\n", i,
                 rs.cpu, rs.matches, rs.shed, rb.cpu, rb.matches, ri.cpu);
  }
  const double pkts = static_cast<double>(flows) * segs, hz = static_cast<double>(rte_get_tsc_hz());
  const double s = median(cs), b = median(cb), io = median(ci);
  const double bits = pkts * payload * 8;
  std::printf("result %.3f %.3f %.3f %.0f %.0f %lu %lu %lu %.2f %.2f\n", pkts / s / 1e6, pkts / b / 1e6, pkts / io / 1e6,
              (s - io) * hz / pkts, (b - io) * hz / pkts, rs.matches, rb.matches, rs.shed, bits / s / 1e9,
              bits / b / 1e9);
  return rs.matches == flows / 100 + (flows % 100 != 0) ? 0 : 1;
}

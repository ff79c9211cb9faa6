// A rewriter that feeds a DecIPTTL runs its step itself and sends that output past it (dec_ip_ttl.h, TtlFold in
// rewriter.cc): the frames out, the drops and DecIPTTL's counts must be those of the graph where something else
// stands between them (which keeps DecIPTTL running on its own).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/graph.h"
#include "packets.h"

namespace metron {
namespace {

using test::Flow;
using test::GroupUnderTest;

std::string report(const Graph& g) {
  std::ostringstream os;
  g.report(os);
  return os.str();
}

// Frames of many flows over three rounds (new flows, then hits), TCP and UDP, UDP with no checksum, TTLs that
// expire at DecIPTTL (0, 1) and ones that do not (2, 64, 255), ICMP (not mapped), IPv6 (mapped by v6 patterns
// only).
std::vector<std::vector<uint8_t>> traffic(int round) {
  static const uint8_t kTtl[] = {64, 1, 2, 0, 255, 64, 64};
  std::vector<std::vector<uint8_t>> out;
  for (int i = 0; i < 90; ++i) {
    Flow f;
    f.sport = static_cast<uint16_t>(2000 + i);
    f.proto = i % 9 == 4 ? 1 : i % 2 ? 6 : 17;
    f.tcp_flags = f.proto == 6 ? (round == 0 ? 0x02 : 0x10) : 0;
    f.ttl = kTtl[(i + round) % 7];
    if (i % 10 == 7) f.ipv6 = true, f.src = "2001:db8::1", f.dst = "2001:db8::2";
    std::vector<uint8_t> fr = test::frame(f);
    if (f.proto == 17 && !f.ipv6 && i % 4 == 0) fr[14 + 20 + 6] = fr[14 + 20 + 7] = 0;  // UDP without a checksum
    out.push_back(fr);
  }
  return out;
}

void expect_same(const std::string& rewriter, const std::string& between) {
  const std::string head = "input -> Strip(14) -> CheckIPHeader -> rw :: " + rewriter;
  GroupUnderTest folded(head + " -> d :: DecIPTTL -> Unstrip(14) -> [0]output;");
  GroupUnderTest apart(head + " -> " + between + " -> d :: DecIPTTL -> Unstrip(14) -> [0]output;");
  Element* rw = folded.graph->find("rw");
  ASSERT_EQ(rw->output_element(0), folded.graph->find("d")) << "wired as written";
  EXPECT_NE(rw->output_target(0), folded.graph->find("d")) << rewriter << ": DecIPTTL run by the rewriter";
  EXPECT_EQ(apart.graph->find("rw")->output_target(0), apart.graph->find("c")) << "nothing folded past a Counter";
  for (int round = 0; round < 3; ++round) {
    folded.push(traffic(round));
    apart.push(traffic(round));
  }
  ASSERT_FALSE(apart.sink.out[0].empty());
  EXPECT_EQ(folded.sink.out[0], apart.sink.out[0]) << rewriter;
  EXPECT_EQ(folded.graph->drops(), apart.graph->drops()) << rewriter;
  // Every counter the same but the Counter's own lines.
  std::string a = report(*apart.graph), f = report(*folded.graph);
  std::string a_kept;
  std::istringstream in(a);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("c.", 0) != 0) a_kept += line + "\n";
  EXPECT_EQ(f, a_kept) << rewriter;
  EXPECT_NE(f.find("d.expired "), std::string::npos) << f;
  EXPECT_EQ(f.find("d.expired 0\n"), std::string::npos) << "the traffic has expiring frames: " << f;
}

TEST(TtlFold, SynthRewriterOverIpv4OnlyTable) {
  expect_same("SynthRewriter(PATTERN 5.5.5.5 1024-65535 10.0.0.10 80, PATTERN 5.5.5.5 1024-65535 10.0.0.11 80, "
              "SELECT maglev, CAPACITY 1024)",
              "c :: Counter");
}

TEST(TtlFold, SynthRewriterOverATableThatHoldsIpv6) {
  expect_same("SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -, PATTERN 2001:db8::99 2000-3000 - -, CAPACITY 1024)",
              "c :: Counter");
}

TEST(TtlFold, IPRewriter) {
  expect_same("IPRewriter(pattern 5.5.5.5 1024-65535 - - 0 0, CAPACITY 1024)", "c :: Counter");
}

// Packets an input spec passes on unmapped (new flows' path, not a hit's) have their TTL taken down too.
TEST(TtlFold, IPRewriterPassingPacketsOn) { expect_same("IPRewriter(pass 0, CAPACITY 1024)", "c :: Counter"); }

// A DecIPTTL whose expired frames go on (output 1) is left to run: the rewriter cannot send them there.
TEST(TtlFold, ADecIPTTLWithAnExpiredOutputIsNotFolded) {
  GroupUnderTest g("input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -) "
                   "-> d :: DecIPTTL -> Unstrip(14) -> [0]output; d[1] -> Unstrip(14) -> [1]output;");
  EXPECT_EQ(g.graph->find("rw")->output_target(0), g.graph->find("d"));
  Flow f;
  f.ttl = 1;
  g.push(test::frame(f));
  EXPECT_EQ(g.sink.out[1].size(), 1u);
}

}  // namespace
}  // namespace metron

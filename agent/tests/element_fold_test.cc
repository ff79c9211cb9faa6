// Elements that run the per-packet steps of their neighbours in the synthesized chains, in their own passes over
// the batch: a rewriter or IP classifier runs the CheckIPHeader that is all that feeds its input
// (CheckIPHeader::Fold, Element::fold_input), a rewriter the DecIPTTL its output feeds (TtlFold,
// Element::fold_output). The frames out, the drops and every element's counts must be those of the graph where
// something stands between them (a Counter, which keeps each running on its own).
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
// only), and headers CheckIPHeader drops: a bad checksum, a total length past the frame, version 5, a runt.
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
    if (!f.ipv6 && i % 11 == 3) fr[14 + 10] ^= 0x40;                                   // bad header checksum
    if (!f.ipv6 && i % 13 == 5) fr[14 + 2] = 0x7f;                                     // longer than the frame
    if (!f.ipv6 && i % 17 == 6) fr[14] = 0x55;                                         // version 5
    if (i % 19 == 8) fr.resize(14 + 12);                                               // a runt
    out.push_back(fr);
  }
  return out;
}

std::string without_counter_lines(const std::string& report) {
  std::string kept;
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("c.", 0) != 0) kept += line + "\n";
  return kept;
}

// `folded` and `apart` run the same traffic: the same frames out, drops, and counts (but the Counter's).
void expect_same(GroupUnderTest& folded, GroupUnderTest& apart, const std::string& what) {
  for (int round = 0; round < 3; ++round) {
    folded.push(traffic(round));
    apart.push(traffic(round));
  }
  ASSERT_FALSE(apart.sink.out[0].empty());
  EXPECT_EQ(folded.sink.out[0], apart.sink.out[0]) << what;
  EXPECT_EQ(folded.sink.out[1], apart.sink.out[1]) << what;
  EXPECT_EQ(folded.graph->drops(), apart.graph->drops()) << what;
  const std::string f = report(*folded.graph);
  EXPECT_EQ(f, without_counter_lines(report(*apart.graph))) << what;
  for (const char* count : {"d.expired ", "chk.drops "}) {
    const size_t at = f.find(count);
    ASSERT_NE(at, std::string::npos) << f;
    EXPECT_NE(f.compare(at, std::string(count).size() + 2, std::string(count) + "0\n"), 0)
        << "the traffic has frames " << count << "counts: " << f;
  }
}

void expect_same(const std::string& rewriter, const std::string& between) {
  const std::string head = "input -> Strip(14) -> chk :: CheckIPHeader -> rw :: " + rewriter;
  GroupUnderTest folded(head + " -> d :: DecIPTTL -> Unstrip(14) -> [0]output;");
  GroupUnderTest apart(head + " -> " + between + " -> d :: DecIPTTL -> Unstrip(14) -> [0]output;");
  Element* rw = folded.graph->find("rw");
  ASSERT_EQ(rw->output_element(0), folded.graph->find("d")) << "wired as written";
  EXPECT_NE(rw->output_target(0), folded.graph->find("d")) << rewriter << ": DecIPTTL run by the rewriter";
  EXPECT_EQ(apart.graph->find("rw")->output_target(0), apart.graph->find("c")) << "nothing folded past a Counter";
  expect_same(folded, apart, rewriter);
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

// The CheckIPHeader before a rewriter: its step runs in the rewriter's key pass, what fed it feeds the rewriter.
// The group's `input` (it takes no name).
Element* input_of(const Graph& g) {
  for (const auto& e : g.elements())
    if (e->class_name() == std::string("input")) return e.get();
  return nullptr;
}

// Whether some element's output pushes to e (it still runs).
bool fed(const Graph& g, const Element* e) {
  for (const auto& u : g.elements())
    for (int k = 0; k < u->noutputs(); ++k)
      if (u->output_target(k) == e) return true;
  return false;
}

void expect_check_folded(const std::string& rewriter, const std::string& rest = "") {
  const std::string tail = "rw :: " + rewriter + " -> d :: DecIPTTL -> Unstrip(14) -> [0]output;" + rest;
  GroupUnderTest folded("input -> Strip(14) -> chk :: CheckIPHeader -> " + tail);
  GroupUnderTest apart("input -> Strip(14) -> chk :: CheckIPHeader -> c :: Counter -> " + tail);
  EXPECT_EQ(input_of(*folded.graph)->output_target(0), folded.graph->find("rw")) << rewriter << ": the check skipped";
  EXPECT_EQ(input_of(*folded.graph)->output_element(0), folded.graph->find("chk")) << "wired as written";
  EXPECT_FALSE(fed(*folded.graph, folded.graph->find("chk")));
  EXPECT_TRUE(fed(*apart.graph, apart.graph->find("chk"))) << "nothing folds before a Counter";
  expect_same(folded, apart, rewriter);
}

TEST(CheckFold, SynthRewriterOverIpv4OnlyTable) {
  expect_check_folded("SynthRewriter(PATTERN 5.5.5.5 1024-65535 10.0.0.10 80, PATTERN 5.5.5.5 1024-65535 10.0.0.11 80, "
                      "SELECT maglev, CAPACITY 1024)");
}

TEST(CheckFold, SynthRewriterOverATableThatHoldsIpv6) {
  expect_check_folded("SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -, PATTERN 2001:db8::99 2000-3000 - -, CAPACITY 1024)");
}

TEST(CheckFold, IPRewriter) { expect_check_folded("IPRewriter(pattern 5.5.5.5 1024-65535 - - 0 0, CAPACITY 1024)"); }

TEST(CheckFold, IPRewriterPassingPacketsOn) { expect_check_folded("IPRewriter(pass 0, CAPACITY 1024)"); }

TEST(CheckFold, IPFilter) {
  expect_check_folded("IPFilter(deny dst port 2003, allow tcp, allow udp, allow ip vers 6 and icmp, deny all)");
}

TEST(CheckFold, IPClassifier) {
  expect_check_folded("IPClassifier(tcp or ip vers 6, -)", " rw[1] -> Unstrip(14) -> [1]output;");
}

// Left to run: a CheckIPHeader whose bad packets go on (output 1), and one that is not all that feeds the input
// (the rewriter would check the other element's packets too).
TEST(CheckFold, OnlyACheckThatIsAllThatFeedsTheInputAndDropsWhatItRefusesIsFolded) {
  GroupUnderTest bad_out("input -> Strip(14) -> chk :: CheckIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.5 "
                         "1024-65535 - -) -> Unstrip(14) -> [0]output; chk[1] -> Unstrip(14) -> [1]output;");
  EXPECT_TRUE(fed(*bad_out.graph, bad_out.graph->find("chk")));
  GroupUnderTest two_feeds("input -> cl :: Classifier(23/06, -); cl[0] -> Strip(14) -> chk :: CheckIPHeader -> "
                           "rw :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -) -> Unstrip(14) -> [0]output; "
                           "cl[1] -> Strip(14) -> MarkIPHeader -> rw;");
  EXPECT_TRUE(fed(*two_feeds.graph, two_feeds.graph->find("chk")));
  Flow tcp;
  tcp.proto = 6;
  std::vector<uint8_t> bad = test::frame(tcp);
  bad[14 + 10] ^= 1;
  two_feeds.push({test::frame(tcp), bad, test::frame(Flow{})});
  EXPECT_EQ(two_feeds.sink.out[0].size(), 2u) << "the TCP frame and the UDP one (not checked): mapped";
  EXPECT_NE(report(*two_feeds.graph).find("chk.drops 1\n"), std::string::npos);
}

}  // namespace
}  // namespace metron

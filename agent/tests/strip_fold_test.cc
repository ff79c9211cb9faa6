// fold_strips (core/strip_fold.h): which Strip/Unstrip pairs are folded into CheckIPHeader's offset, and that a
// folded graph sends out the frames, drops and counts the unfolded one would.
#include "core/strip_fold.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/graph.h"
#include "packets.h"

namespace metron {
namespace {

using test::Flow;
using test::GroupUnderTest;

// The element classes of the configuration as the graph runs it, in declaration order.
std::string classes_run(const std::string& click) {
  std::string out;
  for (const ElementDecl& d : fold_strips(parse_click(click)).elements) out += (out.empty() ? "" : " ") + d.cls;
  return out;
}

const char* kRewriter = "SynthRewriter(PATTERN 5.5.5.5 1024-65535 10.0.0.10 80, CAPACITY 1024)";

TEST(StripFold, TheSynthesizedGroupShapeRunsWithoutStripAndUnstrip) {
  const std::string click = std::string("input -> Strip(14) -> CheckIPHeader -> ") + kRewriter +
                            " -> DecIPTTL -> Unstrip(14) -> [0]output;";
  EXPECT_EQ(classes_run(click), "input CheckIPHeader SynthRewriter DecIPTTL output");
  const ClickConfig folded = fold_strips(parse_click(click));
  EXPECT_EQ(folded.elements[1].args, std::vector<std::string>{"14"});
  // FastClick configurations' CheckIPHeader(CHECKSUM false) folds too, keeping its keywords after the offset.
  const ClickConfig keywords = fold_strips(parse_click(std::string("input -> Strip(14) -> CheckIPHeader(CHECKSUM false, "
                                                                   "VERBOSE true) -> ") + kRewriter +
                                                       " -> Unstrip(14) -> [0]output;"));
  EXPECT_EQ(keywords.elements.size(), 4u);
  EXPECT_EQ(keywords.elements[1].args, (std::vector<std::string>{"14", "CHECKSUM false", "VERBOSE true"}));
  // A reply path through the rewriter's second input, and a classifier with two ways to the same Unstrip.
  EXPECT_EQ(classes_run("input -> Strip(14) -> CheckIPHeader -> c :: IPClassifier(tcp, -);"
                        "c[0] -> DecIPTTL -> u :: Unstrip(14) -> [0]output; c[1] -> u;"),
            "input CheckIPHeader IPClassifier DecIPTTL output");
  // A reply group as synthesized: the rewriter's forward and reply inputs each behind a pair of their own, fold
  // together (either alone would leave the rewriter fed one stripped and one unstripped way).
  EXPECT_EQ(classes_run(std::string("rw :: ") + kRewriter + "; input -> dir :: Classifier(0/024d00010000, -);"
                        "dir[0] -> Strip(14) -> CheckIPHeader -> [1]rw; dir[1] -> Strip(14) -> CheckIPHeader -> [0]rw;"
                        "rw[0] -> DecIPTTL -> Unstrip(14) -> [0]output; rw[1] -> Unstrip(14) -> [1]output;"),
            "SynthRewriter input Classifier CheckIPHeader CheckIPHeader DecIPTTL output");
  // Pairs one after the other, as a chain of separate NFs each stripping and unstripping (run.sh's CHAIN_NAIVE).
  EXPECT_EQ(classes_run("input -> Strip(14) -> CheckIPHeader -> IPFilter(allow all) -> Unstrip(14)"
                        " -> Strip(14) -> CheckIPHeader -> DecIPTTL -> Unstrip(14)"
                        " -> Strip(14) -> CheckIPHeader -> DecIPTTL -> Unstrip(14) -> [0]output;"),
            "input CheckIPHeader IPFilter CheckIPHeader DecIPTTL CheckIPHeader DecIPTTL output");
  // Several pairs in one configuration (a VLAN-sized strip too).
  EXPECT_EQ(classes_run("input -> d :: Classifier(12/8100, -);"
                        "d[0] -> Strip(18) -> CheckIPHeader -> DecIPTTL -> Unstrip(18) -> [0]output;"
                        "d[1] -> Strip(14) -> CheckIPHeader -> IPFilter(allow all) -> Unstrip(14) -> [1]output;"),
            "input Classifier CheckIPHeader DecIPTTL output CheckIPHeader IPFilter");
}

TEST(StripFold, EveryClassOfAGroupFoldsAtOnce) {
  // a group with a path per class behind a tag classifier, as the synthesizer writes one with many classes
  std::string click = "input -> tag :: Classifier(";
  for (int i = 0; i < 64; ++i) click += (i ? ", " : "") + std::string("4/00") + (i < 16 ? "0" : "") + std::to_string(i);
  click += ");\n";
  for (int i = 0; i < 64; ++i)
    click += "tag[" + std::to_string(i) + "] -> Strip(14) -> CheckIPHeader -> DecIPTTL -> Unstrip(14) -> [0]output;\n";
  const ClickConfig run = fold_strips(parse_click(click));
  int checks = 0;
  for (const ElementDecl& d : run.elements) {
    EXPECT_NE(d.cls, "Strip");
    EXPECT_NE(d.cls, "Unstrip");
    if (d.cls != "CheckIPHeader") continue;
    ++checks;
    EXPECT_EQ(d.args, std::vector<std::string>{"14"});
  }
  EXPECT_EQ(checks, 64);
  EXPECT_EQ(run.connections.size(), 1 + 64u * 3);  // input -> tag, then tag -> CheckIPHeader -> DecIPTTL -> output
}

TEST(StripFold, PairsSomethingCouldTellApartAreLeftAsWritten) {
  const std::string unchanged[] = {
      // Counter counts bytes, which the strip changes (Click's semantics)
      "input -> Strip(14) -> CheckIPHeader -> Counter -> Unstrip(14) -> [0]output;",
      // bad packets leave through CheckIPHeader's output 1 with their Ethernet header stripped
      "input -> Strip(14) -> c :: CheckIPHeader -> DecIPTTL -> Unstrip(14) -> [0]output; c[1] -> [1]output;",
      // an offset already given, or a different length put back
      "input -> Strip(14) -> CheckIPHeader(0) -> DecIPTTL -> Unstrip(14) -> [0]output;",
      "input -> Strip(14) -> CheckIPHeader(CHECKSUM false, OFFSET 0) -> DecIPTTL -> Unstrip(14) -> [0]output;",
      "input -> Strip(14) -> CheckIPHeader -> DecIPTTL -> Unstrip(18) -> [0]output;",
      // a way out that puts nothing back
      "input -> Strip(14) -> CheckIPHeader -> c :: IPClassifier(tcp, -); c[0] -> Unstrip(14) -> [0]output;"
      "c[1] -> [1]output;",
      // the reply pair strips another length
      std::string("rw :: ") + kRewriter + "; input -> dir :: Classifier(0/024d00010000, -);"
          "dir[0] -> Strip(18) -> CheckIPHeader -> [1]rw; dir[1] -> Strip(14) -> CheckIPHeader -> [0]rw;"
          "rw[0] -> Unstrip(14) -> [0]output; rw[1] -> Unstrip(14) -> [1]output;",
      // unstripped packets from elsewhere join the region (the rewriter's replies, never stripped)
      std::string("input -> d :: Classifier(12/0800, -); d[0] -> Strip(14) -> CheckIPHeader -> rw :: ") + kRewriter +
          " -> Unstrip(14) -> [0]output; d[1] -> MarkIPHeader(14) -> [1]rw; rw[1] -> [1]output;",
      // an element that reads the data start in between
      "input -> Strip(14) -> CheckIPHeader -> Classifier(9/11, -) -> Unstrip(14) -> [0]output;",
  };
  for (const std::string& click : unchanged) {
    const ClickConfig written = parse_click(click);
    const ClickConfig run = fold_strips(written);
    EXPECT_EQ(run.elements.size(), written.elements.size()) << click;
    for (size_t i = 0; i < std::min(run.elements.size(), written.elements.size()); ++i)
      EXPECT_EQ(run.elements[i].args, written.elements[i].args) << click;
  }
}

TEST(StripFold, AFoldedGraphSendsTheFramesTheWrittenOneWould) {
  GroupUnderTest g("input -> Strip(14) -> CheckIPHeader -> DecIPTTL -> Unstrip(14) -> [0]output;");
  for (const auto& e : g.graph->elements()) EXPECT_NE(e->class_name(), std::string("Strip"));
  Flow f, dying, v6;
  dying.ttl = 1;
  v6.ipv6 = true;
  v6.src = "2001:db8::1";
  v6.dst = "2001:db8::2";
  std::vector<uint8_t> bad_csum = test::frame(f);
  bad_csum[14 + 10] ^= 0xff;
  const std::vector<uint8_t> runt(12, 0xab);  // shorter than the Ethernet header Strip would take off
  g.push({test::frame(f), test::frame(dying), bad_csum, runt, test::frame(v6)});
  // DecIPTTL's output for the first frame: the TTL one less, the checksum updated, the Ethernet header as sent
  Flow after = f;
  after.ttl = 63;
  Flow v6_after = v6;
  v6_after.ttl = 63;
  ASSERT_EQ(g.sink.out[0].size(), 2u);
  EXPECT_EQ(g.sink.out[0][0], test::frame(after));
  EXPECT_EQ(g.sink.out[0][1], test::frame(v6_after));
  EXPECT_EQ(g.graph->drops(), 3u);  // expired, bad checksum, runt

  // CHECKSUM false kept through the fold: the bad checksum passes (its TTL taken down), the runt still dropped
  GroupUnderTest lax("input -> Strip(14) -> CheckIPHeader(CHECKSUM false) -> DecIPTTL -> Unstrip(14) -> [0]output;");
  for (const auto& e : lax.graph->elements()) EXPECT_NE(e->class_name(), std::string("Strip"));
  lax.push({bad_csum, runt});
  ASSERT_EQ(lax.sink.out[0].size(), 1u);
  EXPECT_EQ(lax.sink.out[0][0][14 + 8], 63);
  EXPECT_EQ(lax.graph->drops(), 1u);

  // two pairs one after the other: both TTL decrements, the frame out as sent otherwise
  GroupUnderTest two("input -> Strip(14) -> CheckIPHeader -> DecIPTTL -> Unstrip(14)"
                     " -> Strip(14) -> CheckIPHeader -> DecIPTTL -> Unstrip(14) -> [0]output;");
  two.push(test::frame(f));
  Flow twice = f;
  twice.ttl = 62;
  ASSERT_EQ(two.sink.out[0].size(), 1u);
  EXPECT_EQ(two.sink.out[0][0], test::frame(twice));
}

}  // namespace
}  // namespace metron

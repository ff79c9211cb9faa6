#include "core/graph.h"

#include <gtest/gtest.h>

#include "packets.h"
#include "test_env.h"

namespace metron {
namespace {

using test::Flow;
using test::GroupUnderTest;

std::string build_error(const std::string& click) {
  try {
    GroupUnderTest g(click);
  } catch (const ClickError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Graph, ConfigErrorsNameElementAndPosition) {
  test::pool();
  EXPECT_EQ(build_error("input -> Frobnicate -> [0]output;"), "1:10: unknown element class 'Frobnicate'");
  EXPECT_EQ(build_error("input -> s :: Strip(abc) -> [0]output;"),
            "1:21: element 's' (Strip): LENGTH: expected an unsigned integer, got 'abc'");
  EXPECT_EQ(build_error("input -> c :: Counter;"), "1:10: element 'c' (Counter): has 0 output(s) connected, needs 1");
  EXPECT_EQ(build_error("input -> c :: Classifier(12/0800, -) -> [0]output; c[2] -> [1]output;"),
            "1:10: element 'c' (Classifier): output 1 not connected");
  EXPECT_EQ(build_error("input -> Counter -> [5]output;"),
            "1:24: element 'output' (output): [5]output used but the pipeline has 2 egress(es)");
  EXPECT_EQ(build_error("input -> a :: Counter -> b :: Counter -> a;"),
            "1:10: element 'a' (Counter): is part of a cycle (push paths must be acyclic)");
}

TEST(Graph, CountsAndDropsThroughAClassifier) {
  GroupUnderTest g("input -> c :: Classifier(12/0800, 12/86dd) -> cnt :: Counter -> [0]output;"
                   "c[1] -> Discard;");
  Flow v4, v6;
  v6.ipv6 = true;
  v6.src = "2001:db8::1";
  v6.dst = "2001:db8::2";
  std::vector<uint8_t> arp(60, 0);
  arp[12] = 0x08, arp[13] = 0x06;
  g.push({test::frame(v4), test::frame(v6), arp, test::frame(v4)});
  ASSERT_EQ(g.sink.out[0].size(), 2u);
  EXPECT_EQ(g.sink.out[0][0], test::frame(v4));
  EXPECT_EQ(g.graph->drops(), 2u);  // one discarded, one unmatched
  std::ostringstream rep;
  g.graph->report(rep);
  EXPECT_NE(rep.str().find("cnt.count 2\n"), std::string::npos) << rep.str();
  EXPECT_NE(rep.str().find("cnt.byte_count " + std::to_string(2 * test::frame(v4).size())), std::string::npos);
}

}  // namespace
}  // namespace metron

namespace metron {
namespace {

// A classifying group in the shape the synthesizer emits (docs/contracts.md#click): class tag split, DPI,
// SynthRewriter pool, TTL, L2 rewrite, and the software IPClassifier for unclassified (ffff) packets.
TEST(Graph, SynthesizerEmittedClassifyingGroup) {
  GroupUnderTest g(
      "input -> tag :: Classifier(4/0000, 4/0001, -);\n"
      "tag[0] -> c0 :: Counter -> Strip(14) -> CheckIPHeader -> dpi0 :: HyperscanDPI(\"att\\\"ack\", \"evil\")\n"
      "  -> rw0 :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 10.0.0.1 80, PATTERN 5.5.5.5 1024-65535 10.0.0.2 80, SELECT maglev)\n"
      "  -> DecIPTTL -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:00:02) -> [0]output;\n"
      "dpi0[1] -> Discard;\n"
      "tag[1] -> c1 :: Counter -> StoreEtherAddress(02:00:00:00:00:09, dst) -> VLANEncap(VLAN_ID 7) -> [1]output;\n"
      "tag[2] -> Strip(14) -> CheckIPHeader -> sw :: IPClassifier(\n"
      "    src net 10.0.0.0/8 and ip ttl > 1 and not tcp opt syn,\n"
      "    ip vers 6 and dst host 2001:db8::1);\n"
      "sw[0] -> Unstrip(14) -> c0;\n"
      "sw[1] -> Unstrip(14) -> c1;\n");
  Flow a;
  a.dst_mac = "02:4d:00:01:00:00";  // class 0
  Flow b;
  b.dst_mac = "02:4d:00:01:00:01";  // class 1
  Flow u;
  u.dst_mac = "02:4d:00:01:ff:ff";  // unclassified, matches sw[0]
  g.push({test::frame(a), test::frame(b), test::frame(u)});
  ASSERT_EQ(g.sink.out[0].size(), 2u);
  ASSERT_EQ(g.sink.out[1].size(), 1u);
  const auto& out = g.sink.out[0][0];
  EXPECT_EQ(out[0], 0x02);
  EXPECT_EQ(out[5], 0x02);  // EtherRewrite dst
  EXPECT_EQ(out[14 + 8], 63);  // TTL decremented
  EXPECT_EQ(out[14 + 12], 5);  // NAPT source
  EXPECT_EQ(g.sink.out[1][0][12], 0x81);  // VLAN tag pushed
}

}  // namespace
}  // namespace metron

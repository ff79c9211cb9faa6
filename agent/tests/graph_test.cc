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

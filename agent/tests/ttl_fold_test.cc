// The TTL fold (Graph::build, core/ttl.h): a DecIPTTL fed by a rewriter's output alone runs inside the rewriter,
// and the graph sends out, drops and counts exactly what the written one does.
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

const char* kNapt = "SynthRewriter(PATTERN 5.5.5.5 1024-65535 10.0.0.10 80, CAPACITY 1024)";

// The element named `name`'s report lines and the graph's drops ("name.key value"), as the exit report prints them.
std::string counters_of(const Graph& g, const std::string& name) {
  std::ostringstream all;
  g.report(all);
  std::istringstream lines(all.str());
  std::string out;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(name + ".", 0) == 0 || line.rfind("graph.drops", 0) == 0) out += line + "\n";
  return out;
}

const Element& named(const Graph& g, const std::string& name) {
  for (const auto& e : g.elements())
    if (e->name() == name) return *e;
  throw std::runtime_error("no element " + name);
}

// TCP and UDP flows with TTLs that survive, expire at the decrement (1) or were already 0, and a second packet of
// each flow (hits, not only new flows).
std::vector<std::vector<uint8_t>> mixed_frames() {
  std::vector<std::vector<uint8_t>> frames;
  const uint8_t ttls[] = {64, 2, 1, 0, 255, 1};
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 24; ++i) {
      Flow f;
      f.proto = i % 3 == 0 ? 6 : 17;
      f.tcp_flags = f.proto == 6 ? 0x10 : 0;
      f.sport = static_cast<uint16_t>(2000 + i);
      f.ttl = ttls[(i + round) % 6];
      frames.push_back(test::frame(f));
    }
  return frames;
}

TEST(TtlFold, ARewriterRunsTheDecIPTTLItFeedsAndTheGraphSendsWhatTheWrittenOneWould) {
  // the same graph, folded and kept as written (a Counter between them: the DecIPTTL is then fed by an element
  // that cannot absorb it)
  GroupUnderTest folded(std::string("input -> Strip(14) -> CheckIPHeader -> rw :: ") + kNapt +
                        " -> d :: DecIPTTL -> Unstrip(14) -> [0]output;");
  GroupUnderTest written(std::string("input -> Strip(14) -> CheckIPHeader -> rw :: ") + kNapt +
                         " -> Counter -> d :: DecIPTTL -> Unstrip(14) -> [0]output;");
  EXPECT_STRNE(named(*folded.graph, "rw").output_element(0)->class_name(), "DecIPTTL") << "not folded";
  const auto frames = mixed_frames();
  folded.push(frames);
  written.push(frames);
  ASSERT_EQ(written.sink.out[0].size(), 24u) << "half the frames leave: those with TTL 64, 2 and 255";
  EXPECT_EQ(folded.sink.out[0], written.sink.out[0]);
  for (const auto& f : folded.sink.out[0]) {
    const test::FrameTuple t = test::tuple_of(f);
    EXPECT_EQ(t.dst, "10.0.0.10");
  }
  EXPECT_EQ(counters_of(*folded.graph, "d"), counters_of(*written.graph, "d"));
  EXPECT_NE(counters_of(*folded.graph, "d").find("d.expired 24\n"), std::string::npos)
      << counters_of(*folded.graph, "d");
}

TEST(TtlFold, EachOutputOfARewriterFoldsItsOwnDecIPTTL) {
  // IPRewriter: forward translated to output 0, replies to output 1, each behind its own DecIPTTL
  const std::string body = "input -> Strip(14) -> CheckIPHeader -> c :: IPClassifier(dst host 5.5.5.5, -);"
                           "c[1] -> [0]rw :: IPRewriter(pattern 5.5.5.5 1024-65535 - - 0 1, drop); c[0] -> [1]rw;";
  GroupUnderTest folded(body + "rw[0] -> f :: DecIPTTL -> Unstrip(14) -> [0]output;"
                               "rw[1] -> r :: DecIPTTL -> Unstrip(14) -> [1]output;");
  GroupUnderTest written(body + "rw[0] -> Counter -> f :: DecIPTTL -> Unstrip(14) -> [0]output;"
                                "rw[1] -> Counter -> r :: DecIPTTL -> Unstrip(14) -> [1]output;");
  EXPECT_STRNE(named(*folded.graph, "rw").output_element(0)->class_name(), "DecIPTTL");
  EXPECT_STRNE(named(*folded.graph, "rw").output_element(1)->class_name(), "DecIPTTL");
  const auto frames = mixed_frames();
  folded.push(frames);
  written.push(frames);
  ASSERT_EQ(folded.sink.out[0], written.sink.out[0]);
  // replies to every translated flow, one with a TTL that expires
  std::vector<std::vector<uint8_t>> replies;
  for (size_t i = 0; i < folded.sink.out[0].size(); ++i) {
    const test::FrameTuple t = test::tuple_of(folded.sink.out[0][i]);
    Flow r;
    r.src = t.dst, r.dst = t.src, r.sport = t.dport, r.dport = t.sport, r.proto = t.proto;
    r.tcp_flags = r.proto == 6 ? 0x10 : 0;
    r.ttl = i % 4 == 1 ? 1 : 30;
    replies.push_back(test::frame(r));
  }
  folded.push(replies);
  written.push(replies);
  ASSERT_FALSE(written.sink.out[1].empty());
  EXPECT_EQ(folded.sink.out[1], written.sink.out[1]);
  EXPECT_EQ(counters_of(*folded.graph, "f"), counters_of(*written.graph, "f"));
  EXPECT_EQ(counters_of(*folded.graph, "r"), counters_of(*written.graph, "r"));
  EXPECT_EQ(counters_of(*folded.graph, "r").find("r.expired 0\n"), std::string::npos) << "no reply expired";
}

TEST(TtlFold, ADecIPTTLWithAnExpiredOutputOrAnotherFeederRunsAsWritten) {
  GroupUnderTest expired_out(std::string("input -> Strip(14) -> CheckIPHeader -> rw :: ") + kNapt +
                             " -> d :: DecIPTTL -> Unstrip(14) -> [0]output; d[1] -> Unstrip(14) -> [1]output;");
  EXPECT_STREQ(named(*expired_out.graph, "rw").output_element(0)->class_name(), "DecIPTTL");
  GroupUnderTest shared(std::string("input -> Strip(14) -> CheckIPHeader -> c :: IPClassifier(udp, -);"
                                    "c[0] -> rw :: ") + kNapt + " -> d :: DecIPTTL -> Unstrip(14) -> [0]output; c[1] -> d;");
  EXPECT_STREQ(named(*shared.graph, "rw").output_element(0)->class_name(), "DecIPTTL");
  expired_out.push(mixed_frames());
  EXPECT_EQ(expired_out.sink.out[1].size(), 24u) << "expired frames leave through output 1";
}

}  // namespace
}  // namespace metron

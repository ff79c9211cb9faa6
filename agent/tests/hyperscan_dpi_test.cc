// HyperscanDPI's stream mode with real TCP segments through the element: patterns split across segments, out of
// order, retransmitted, interleaved flows, UDP in block mode, a full flow table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>
#include <string>

#include "packets.h"
#include "test_env.h"
#include "utils/checksum.h"

namespace metron {
namespace {

using test::Flow;
using test::GroupUnderTest;

constexpr uint8_t kSyn = 0x02, kAck = 0x10, kPsh = 0x08, kFin = 0x01, kRst = 0x04;

// An IPv4 TCP frame of flow `f` with sequence number `seq`, `flags` and `payload` (frame() pads short frames to 60
// bytes: the padding must not count as data).
std::vector<uint8_t> seg(Flow f, uint32_t seq, const std::string& payload, uint8_t flags = kAck | kPsh) {
  f.proto = 6;
  f.payload = static_cast<uint16_t>(payload.size());
  f.tcp_flags = flags;
  auto v = test::frame(f);
  store32(&v[14 + 20 + 4], seq);
  std::copy(payload.begin(), payload.end(), v.begin() + 14 + 20 + 20);
  return v;
}
std::vector<uint8_t> l3(const std::vector<uint8_t>& v) { return {v.begin() + 14, v.end()}; }

Flow with_sport(uint16_t sport) {
  Flow f;
  f.sport = sport;
  return f;
}

Flow reply_of(Flow f) {
  std::swap(f.src, f.dst);
  std::swap(f.sport, f.dport);
  return f;
}

// The element's counter `key` from the graph's report.
uint64_t counter(const GroupUnderTest& g, const std::string& key) {
  std::ostringstream rep;
  g.graph->report(rep);
  const std::string want = "d." + key + " ";
  std::istringstream in(rep.str());
  for (std::string line; std::getline(in, line);)
    if (line.rfind(want, 0) == 0) return std::stoull(line.substr(want.size()));
  ADD_FAILURE() << "no " << want << " in\n" << rep.str();
  return 0;
}

// Exactly one packet got the match verdict (output 1): `frame`, Ethernet header stripped.
void expect_only_match(const GroupUnderTest& g, const std::vector<uint8_t>& frame, const char* why = "") {
  ASSERT_EQ(g.sink.out[1].size(), 1u) << why;
  EXPECT_EQ(g.sink.out[1][0], l3(frame)) << why;
}

std::string dpi(const std::string& args) {
  return "input -> Strip(14) -> MarkIPHeader -> d :: HyperscanDPI(\"evilpayload\", \"attack[0-9]+x\"" + args +
         ") -> [0]output; d[1] -> [1]output;";
}

TEST(HyperscanDPIStream, PatternSplitAcrossTwoInOrderSegmentsMatchesOnce) {
  GroupUnderTest g(dpi(""));
  Flow f;
  const auto syn = seg(f, 1000, "", kSyn), s1 = seg(f, 1001, "GET /evil"), s2 = seg(f, 1010, "payload HTTP/1.1");
  g.push({syn, s1, s2});
  expect_only_match(g, s2, "the segment whose bytes complete the match");
  EXPECT_EQ(g.sink.out[0], (std::vector<std::vector<uint8_t>>{l3(syn), l3(s1)}));
  EXPECT_EQ(counter(g, "matches"), 1u);
  EXPECT_EQ(counter(g, "streams_open"), 1u);
  EXPECT_EQ(counter(g, "flows"), 1u);
  // More bytes of the same direction: the pattern matched already in this stream (once per flow direction).
  g.push(seg(f, 1026, "evilpayload again"));
  EXPECT_EQ(g.sink.out[1].size(), 1u);
  EXPECT_EQ(counter(g, "matches"), 1u);

  // The same segments one by one in separate batches; and in block mode, where each packet is matched alone.
  GroupUnderTest apart(dpi(""));
  for (const auto& p : {syn, s1, s2}) apart.push(p);
  EXPECT_EQ(apart.sink.out[1].size(), 1u);
  GroupUnderTest block(dpi(", MODE BLOCK"));
  block.push({syn, s1, s2});
  EXPECT_EQ(block.sink.out[1].size(), 0u) << "block mode misses the split pattern";
  EXPECT_EQ(block.sink.out[0].size(), 3u);
}

TEST(HyperscanDPIStream, OutOfOrderSegmentIsHeldUntilTheGapFills) {
  GroupUnderTest g(dpi(""));
  Flow f;
  const auto syn = seg(f, 7, "", kSyn), s1 = seg(f, 8, "xx evil"), s2 = seg(f, 15, "payload yy");
  g.push({syn, s2});
  EXPECT_EQ(g.sink.out[0], (std::vector<std::vector<uint8_t>>{l3(syn)})) << "the early segment is held, not sent";
  EXPECT_TRUE(g.sink.out[1].empty());
  EXPECT_EQ(counter(g, "ooo_held"), 1u);
  g.push(s1);
  EXPECT_EQ(g.sink.out[0], (std::vector<std::vector<uint8_t>>{l3(syn), l3(s1)}));
  expect_only_match(g, s2, "released after the gap filled, with the match verdict");
  EXPECT_EQ(counter(g, "matches"), 1u);
  EXPECT_EQ(counter(g, "ooo_dropped"), 0u);

  // Three segments arriving 3, 2, 1 within one batch: scanned 1, 2, 3 and forwarded in that order.
  GroupUnderTest r(dpi(""));
  const auto a = seg(f, 8, "xx att"), b = seg(f, 14, "ack1"), c = seg(f, 18, "2x zz");
  r.push({syn, c, b, a});
  EXPECT_EQ(r.sink.out[0], (std::vector<std::vector<uint8_t>>{l3(syn), l3(a), l3(b)}));
  expect_only_match(r, c);
}

TEST(HyperscanDPIStream, RetransmissionIsNotScannedOrMatchedAgain) {
  GroupUnderTest g(dpi(""));
  Flow f;
  const auto syn = seg(f, 100, "", kSyn), s1 = seg(f, 101, "xx evil"), s2 = seg(f, 108, "payload yy");
  g.push({syn, s1, s2, s2});
  ASSERT_EQ(g.sink.out[1].size(), 1u);
  EXPECT_EQ(g.sink.out[0], (std::vector<std::vector<uint8_t>>{l3(syn), l3(s1), l3(s2)}))
      << "the retransmission goes on, unmatched";
  EXPECT_EQ(counter(g, "matches"), 1u);
  EXPECT_EQ(counter(g, "retransmitted_bytes_skipped"), 10u);
  // A segment overlapping scanned bytes: only its new bytes are scanned.
  g.push(seg(f, 113, "ad yy attack7x"));
  EXPECT_EQ(counter(g, "retransmitted_bytes_skipped"), 15u);
  EXPECT_EQ(g.sink.out[1].size(), 2u) << "a second pattern in the new bytes";
  EXPECT_EQ(counter(g, "matches"), 2u);
  // A retransmission of a held segment is dropped as already held.
  g.push({seg(f, 200, "later"), seg(f, 200, "later")});
  EXPECT_EQ(counter(g, "ooo_held"), 1u);
  EXPECT_EQ(counter(g, "retransmitted_bytes_skipped"), 20u);
}

TEST(HyperscanDPIStream, InterleavedFlowsAndDirectionsDoNotCrossMatch) {
  GroupUnderTest g(dpi(""));
  const Flow a, b = with_sport(5555);
  g.push({seg(a, 1, "", kSyn), seg(b, 1, "", kSyn), seg(reply_of(a), 50, "", kSyn | kAck)});
  g.push({seg(a, 2, "xx evil"), seg(b, 2, "payload"), seg(reply_of(a), 51, "payload")});
  EXPECT_TRUE(g.sink.out[1].empty()) << "'evil' of one flow direction and 'payload' of another";
  const auto a2 = seg(a, 9, "payload");
  g.push(a2);
  expect_only_match(g, a2);
  EXPECT_EQ(counter(g, "flows"), 2u);
  EXPECT_EQ(counter(g, "streams_open"), 3u);
}

TEST(HyperscanDPIStream, UdpStaysInBlockMode) {
  GroupUnderTest g(dpi(""));
  Flow u;  // UDP
  u.payload = 40;
  auto whole = test::frame(u), first = whole, second = whole;
  const std::string w = "xx evilpayload", h1 = "xx evil", h2 = "payload";
  std::copy(w.begin(), w.end(), whole.begin() + 14 + 20 + 8);
  std::copy(h1.begin(), h1.end(), first.begin() + 14 + 20 + 8);
  std::copy(h2.begin(), h2.end(), second.begin() + 14 + 20 + 8);
  g.push({first, second, whole});
  expect_only_match(g, whole);
  EXPECT_EQ(counter(g, "block_scans"), 3u);
  EXPECT_EQ(counter(g, "streams_open"), 0u);
  EXPECT_EQ(counter(g, "flows"), 0u);
}

TEST(HyperscanDPIStream, FullTableShedsNewFlowsToBlockModeAndCountsThem) {
  GroupUnderTest g(dpi(", FLOWS 1"));
  const Flow a, b = with_sport(4321);
  g.push(seg(a, 1, "", kSyn));
  EXPECT_EQ(counter(g, "streams_shed"), 0u);
  const auto whole = seg(b, 2, "xx evilpayload"), h1 = seg(b, 16, "evil"), h2 = seg(b, 20, "payload");
  g.push({whole, h1, h2});
  EXPECT_EQ(counter(g, "streams_shed"), 3u) << "each packet of a flow the table could not take";
  EXPECT_EQ(counter(g, "block_scans"), 3u);
  expect_only_match(g, whole, "a shed flow is matched per packet, not skipped");
  EXPECT_EQ(g.sink.out[0].size(), 3u);
  EXPECT_EQ(counter(g, "flows"), 1u);
}

TEST(HyperscanDPIStream, FinRstAndIdleTimeoutFreeStreamsAndHeldSegments) {
  GroupUnderTest g(dpi(""));
  Flow f;
  const Flow r = reply_of(f);
  // Both directions carry data and end with FIN: the record and both streams are released.
  g.push({seg(f, 1, "", kSyn), seg(r, 9, "", kSyn | kAck), seg(f, 2, "hello"), seg(r, 10, "world")});
  EXPECT_EQ(counter(g, "streams_open"), 2u);
  g.push({seg(f, 7, "", kFin | kAck), seg(r, 15, "", kFin | kAck)});
  EXPECT_EQ(counter(g, "flows"), 0u);
  EXPECT_EQ(counter(g, "streams_open"), 0u);
  // RST ends a flow at once; its held segments are dropped and counted.
  const Flow h = with_sport(999);
  g.push({seg(h, 1, "", kSyn), seg(h, 50, "early"), seg(h, 60, "early2")});
  EXPECT_EQ(counter(g, "ooo_held"), 2u);
  g.push(seg(h, 2, "", kRst));
  EXPECT_EQ(counter(g, "ooo_dropped"), 2u);
  EXPECT_EQ(counter(g, "flows"), 0u);
  // Holding is bounded per flow direction (HOLD) and per core (HOLD_CORE).
  GroupUnderTest b(dpi(", HOLD 2, HOLD_CORE 3"));
  const Flow x, y = with_sport(7777);
  b.push({seg(x, 1, "", kSyn), seg(x, 10, "a"), seg(x, 20, "b"), seg(x, 30, "c")});
  EXPECT_EQ(counter(b, "ooo_held"), 2u);
  EXPECT_EQ(counter(b, "ooo_dropped"), 1u);
  b.push({seg(y, 1, "", kSyn), seg(y, 10, "a"), seg(y, 20, "b")});
  EXPECT_EQ(counter(b, "ooo_held"), 3u);
  EXPECT_EQ(counter(b, "ooo_dropped"), 2u);
  // An idle flow times out and takes its held segments with it.
  GroupUnderTest t(dpi(", TIMEOUT 0.05"));
  t.push({seg(x, 1, "", kSyn), seg(x, 10, "later")});
  usleep(100000);
  t.push(seg(y, 1, "", kSyn));
  EXPECT_EQ(counter(t, "ooo_dropped"), 1u);
  EXPECT_EQ(counter(t, "flows"), 1u);
}

TEST(HyperscanDPIStream, EndAnchoredPatternMatchesOnTheFin) {
  GroupUnderTest g("input -> Strip(14) -> MarkIPHeader -> d :: HyperscanDPI(\"bye$\") -> [0]output; d[1] -> [1]output;");
  Flow f;
  g.push({seg(f, 1, "", kSyn), seg(f, 2, "good"), seg(f, 6, "bye")});
  EXPECT_TRUE(g.sink.out[1].empty()) << "more bytes may follow";
  const auto fin = seg(f, 9, "", kFin | kAck);
  g.push(fin);
  expect_only_match(g, fin, "the end of data completes the pattern: the FIN gets the verdict");
}

TEST(HyperscanDPIStream, BadModeIsAConfigError) {
  try {
    GroupUnderTest bad(dpi(", MODE FAST"));
    FAIL();
  } catch (const ClickError& e) {
    EXPECT_NE(std::string(e.what()).find("MODE: expected STREAM or BLOCK"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace metron

// Walks over a declared IPv4 flow table's flows that must reach every one wherever its record sits: the expiry
// sweep and eviction on a few flows in a big table, and a state export in slices imported into another table.
// Written for session 23's home slots (records placed by their key's hash, spread over the whole table; not kept,
// BENCHMARKS.md), they hold for any record layout: a layout that places records apart must keep them passing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "elements/flow_table.h"
#include "metron/agent/v1/agent.pb.h"
#include "packets.h"
#include "test_env.h"

namespace metron {
namespace {

Tuple v4(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport) {
  Tuple t{};
  std::memcpy(t.src, &src, 4);
  std::memcpy(t.dst, &dst, 4);
  t.sport = sport;
  t.dport = dport;
  t.proto = 17;
  return t;
}
Tuple orig_of(uint32_t i) { return v4(0x0a000000 + i, 0xc0a80101, static_cast<uint16_t>(1000 + i % 50000), 80); }
Tuple mapped_of(uint32_t i) { return v4(0x05050505, 0xc0a80101 + i / 60000, static_cast<uint16_t>(1024 + i % 60000), 80); }

// 40 flows in a table declared for 65,536, half of them idle: the sweep (8 checks a batch) expires the idle ones
// in one pass over the flows (5 batches: it checks flows, not the free records of the table), and eviction then
// finds each of the others.
TEST(FlowStateWalk, ExpiryAndEvictionReachEveryFlowOfABigTable) {
  test::eal();
  constexpr uint32_t kCap = 65536, kFlows = 40;
  FlowTable t("walk_sweep", kCap, 0, /*ipv6=*/false);
  for (uint32_t i = 0; i < kFlows; ++i) ASSERT_GE(t.insert(orig_of(i), mapped_of(i), 0, 0, 1, i % 2 ? 1000 : 0), 0);
  unsigned gone = 0, batches = 0;
  while (gone < kFlows / 2 && batches < 64) gone += t.expire(1500, 8, 0, [](const FlowMeta&) { return uint64_t{700}; }), ++batches;
  EXPECT_EQ(gone, kFlows / 2);
  EXPECT_LE(batches, 6u) << "the sweep checked records that hold no flow";
  for (uint32_t i = 0; i < kFlows; ++i)
    EXPECT_EQ(t.lookup_one(orig_of(i)) >= 0, i % 2 == 1) << "flow " << i << (i % 2 ? " expired" : " kept");
  // Every one of the rest is idle past a guarantee of 100: eviction finds them one by one.
  for (uint32_t k = 0; k < kFlows / 2; ++k)
    ASSERT_TRUE(t.evict_one(5000, 1, 1024, [](const FlowMeta&) { return uint64_t{100}; })) << k;
  EXPECT_EQ(t.size(), 0u);
  EXPECT_FALSE(t.evict_one(5000, 1, 1024, [](const FlowMeta&) { return uint64_t{100}; }));
}

// A declared table's 3,000 flows exported by the rewriter (in slices, as a state copy or a failover does) and
// imported into another: every flow arrives and keeps its mapping both ways.
TEST(FlowStateWalk, StateExportImportRoundTripKeepsEveryFlow) {
  const std::string click =
      "input -> Strip(14) -> CheckIPHeader -> c :: IPClassifier(dst host 5.5.5.5, -);"
      "c[1] -> [0]rw :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -, CAPACITY 8192); c[0] -> [1]rw;"
      "rw[0] -> Unstrip(14) -> [0]output; rw[1] -> Unstrip(14) -> [1]output;";
  constexpr uint16_t kFlows = 3000;
  test::GroupUnderTest a(click);
  std::vector<std::vector<uint8_t>> frames;
  for (uint16_t i = 0; i < kFlows; ++i) {
    test::Flow f;
    f.src = "10.0." + std::to_string(i / 200) + "." + std::to_string(i % 200 + 1);
    f.sport = static_cast<uint16_t>(3000 + i);
    frames.push_back(test::frame(f));
  }
  a.push(frames);
  ASSERT_EQ(a.sink.out[0].size(), kFlows);
  agent::v1::StateTable t;
  a.graph->find("rw")->export_state(&t);
  ASSERT_EQ(t.entries_size(), kFlows);

  test::GroupUnderTest b(click);
  ASSERT_EQ(b.graph->find("rw")->import_state(t, /*merge=*/false), kFlows);
  b.push(frames);
  ASSERT_EQ(b.sink.out[0].size(), kFlows);
  std::vector<std::vector<uint8_t>> replies;
  for (uint16_t i = 0; i < kFlows; ++i) {
    const test::FrameTuple x = test::tuple_of(a.sink.out[0][i]), y = test::tuple_of(b.sink.out[0][i]);
    ASSERT_EQ(y.sport, x.sport) << "flow " << i << " lost its mapping";
    test::Flow r;
    r.src = "192.168.1.1";
    r.dst = "5.5.5.5";
    r.sport = 80;
    r.dport = x.sport;
    replies.push_back(test::frame(r));
  }
  b.push(replies);
  ASSERT_EQ(b.sink.out[1].size(), kFlows);
  for (uint16_t i = 0; i < kFlows; ++i) EXPECT_EQ(test::tuple_of(b.sink.out[1][i]).dport, 3000 + i) << i;
  agent::v1::StateTable again;
  b.graph->find("rw")->export_state(&again);
  EXPECT_EQ(again.entries_size(), kFlows);
}

}  // namespace
}  // namespace metron

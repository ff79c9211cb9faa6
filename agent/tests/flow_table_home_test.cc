// Home slots of declared IPv4-only flow tables (flow_table.h): a new flow's record goes to the slot its forward
// key's signature names when that is free, and a forward lookup that finds its key there is answered from that one
// line. The home is a hint (the rte_hash and the index stay the truth): flows sharing a home, removals, reuse,
// walks in slices, the expiry sweep, eviction and a state export/import must all see every flow as before.
#include <gtest/gtest.h>

#include <map>
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
uint32_t home(const FlowTable& t, const Tuple& orig) { return t.home_of(FlowTable::sig4(to_key4(orig))); }
// Whether record idx is in one of the flow's two home slots (its home and the other line of its pair).
bool at_home(const FlowTable& t, const Tuple& orig, int32_t idx) {
  const uint32_t h = home(t, orig);
  return idx >= 0 && (static_cast<uint32_t>(idx) == h || static_cast<uint32_t>(idx) == t.buddy(h));
}

// Bulk lookups (lookup4, 32 keys a call) of `keys`, each checked against lookup_one4 (the rte_hash's answer).
std::vector<int32_t> bulk(const FlowTable& t, const std::vector<Key4>& keys) {
  std::vector<int32_t> out(keys.size());
  for (size_t at = 0; at < keys.size(); at += 32) {
    const unsigned n = static_cast<unsigned>(std::min<size_t>(32, keys.size() - at));
    const Key4* ptrs[32];
    for (unsigned i = 0; i < n; ++i) ptrs[i] = &keys[at + i];
    t.lookup4(ptrs, n, &out[at]);
  }
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(out[i], t.lookup_one4(keys[i])) << "key " << i;
  return out;
}

// Forward keys whose record sits in their home slots are answered there and counted (home_hits), exactly those;
// the others and every reply go the index's way. At the offloaded bench's fill (flows half the declared capacity)
// most flows get a home slot.
TEST(FlowTableHome, ForwardHitsAtHomeAreCountedAndRepliesTakeTheIndex) {
  test::eal();
  constexpr uint32_t kCap = 4096, kFlows = 2048;
  FlowTable t("home_hits", kCap, 0, /*ipv6=*/false);
  std::vector<int32_t> idx(kFlows);
  uint32_t homed = 0;
  std::vector<Key4> fwd, rev;
  for (uint32_t i = 0; i < kFlows; ++i) {
    idx[i] = t.insert(orig_of(i), mapped_of(i), 0, 0, 1, 1);
    ASSERT_GE(idx[i], 0) << i;
    homed += at_home(t, orig_of(i), idx[i]);
    fwd.push_back(to_key4(orig_of(i)));
    rev.push_back(to_key4(reversed(mapped_of(i))));
  }
  // Two slots per flow, at half the capacity: ~90% get one.
  EXPECT_GT(homed, kFlows * 8 / 10);
  EXPECT_LT(homed, kFlows) << "the test needs flows outside their home slots too";
  const std::vector<int32_t> f = bulk(t, fwd);
  for (uint32_t i = 0; i < kFlows; ++i) ASSERT_EQ(f[i], idx[i] << 1) << i;
  EXPECT_EQ(t.home_hits(), homed);
  EXPECT_EQ(t.index_hits() + t.index_fallbacks(), kFlows - homed);
  const uint64_t homes = t.home_hits();
  const std::vector<int32_t> r = bulk(t, rev);
  for (uint32_t i = 0; i < kFlows; ++i) ASSERT_EQ(r[i], idx[i] << 1 | 1) << i;
  EXPECT_EQ(t.home_hits(), homes) << "a reply key is not its record's home key";
}

// Three flows whose forward keys share a home: the first takes it, the second the other line of its pair, the
// third any free slot; all are found both ways, through removal and re-insertion. A flow mapped onto its own
// reverse (one key, answered as a reply by the rte_hash) is answered the same way from its home.
TEST(FlowTableHome, FlowsSharingAHomeAreFoundBothWaysThroughRemovalAndReuse) {
  test::eal();
  FlowTable t("home_share", 1024, 0, /*ipv6=*/false);
  std::map<uint32_t, std::vector<uint32_t>> by_home;  // home -> flows
  uint32_t a = 0, b = 0, c = 0;
  for (uint32_t i = 0;; ++i) {
    std::vector<uint32_t>& v = by_home[home(t, orig_of(i))];
    v.push_back(i);
    if (v.size() == 3) {
      a = v[0], b = v[1], c = v[2];
      break;
    }
  }
  const uint32_t h = home(t, orig_of(a));
  const Tuple other_map = mapped_of(5000);
  auto check = [&](uint32_t flow, const Tuple& m, int32_t idx) {
    const std::vector<int32_t> out = bulk(t, {to_key4(orig_of(flow)), to_key4(reversed(m))});
    EXPECT_EQ(out[0], idx < 0 ? -1 : idx << 1) << flow;
    EXPECT_EQ(out[1], idx < 0 ? -1 : idx << 1 | 1) << flow;
  };
  const int32_t ia = t.insert(orig_of(a), mapped_of(a), 0, 0, 1, 1);
  const int32_t ib = t.insert(orig_of(b), mapped_of(b), 0, 0, 1, 1);
  const int32_t ic = t.insert(orig_of(c), mapped_of(c), 0, 0, 1, 1);
  ASSERT_EQ(ia, static_cast<int32_t>(h)) << "the first flow takes its home";
  ASSERT_EQ(ib, static_cast<int32_t>(t.buddy(h))) << "the second the other line of the pair";
  ASSERT_GE(ic, 0);
  EXPECT_FALSE(at_home(t, orig_of(c), ic));
  check(a, mapped_of(a), ia);
  check(b, mapped_of(b), ib);
  check(c, mapped_of(c), ic);
  EXPECT_EQ(t.home_hits(), 2u) << "only the flows in their home slots are answered there";

  t.remove(static_cast<uint32_t>(ia));
  check(a, mapped_of(a), -1);
  check(b, mapped_of(b), ib);
  check(c, mapped_of(c), ic);
  // Back with another mapping: its home is free again, and the old reply key is gone.
  const int32_t ia2 = t.insert(orig_of(a), other_map, 0, 0, 1, 1);
  EXPECT_EQ(ia2, static_cast<int32_t>(h));
  check(a, other_map, ia2);
  EXPECT_EQ(bulk(t, {to_key4(reversed(mapped_of(a)))})[0], -1) << "the old mapping's reply key";
  t.remove(static_cast<uint32_t>(ic));
  check(c, mapped_of(c), -1);
  check(b, mapped_of(b), ib);
  const int32_t ic2 = t.insert(orig_of(c), mapped_of(c), 0, 0, 1, 1);
  ASSERT_GE(ic2, 0);
  check(c, mapped_of(c), ic2);
  check(a, other_map, ia2);

  // A flow mapped onto its own reverse: its one key answers as a reply, at home as in the rte_hash.
  const Tuple self = orig_of(9000);
  const int32_t is = t.insert(self, reversed(self), 0, 0, 1, 1);
  ASSERT_GE(is, 0);
  const uint64_t before = t.home_hits();
  EXPECT_EQ(bulk(t, {to_key4(self)})[0], is << 1 | 1);
  EXPECT_EQ(t.home_hits(), before + (at_home(t, self, is) ? 1u : 0u));
}

// Records with home slots spread over the whole table: the expiry sweep and eviction, which skip free slots
// through the used-slot bitmap, still reach every one of a few flows in a large table.
TEST(FlowTableHome, ExpiryAndEvictionFindRecordsSpreadOverTheirHomes) {
  test::eal();
  constexpr uint32_t kCap = 65536, kFlows = 40;
  FlowTable t("home_sweep", kCap, 0, /*ipv6=*/false);
  uint32_t homed = 0;
  for (uint32_t i = 0; i < kFlows; ++i) {
    const int32_t idx = t.insert(orig_of(i), mapped_of(i), 0, 0, 1, i % 2 ? 1000 : 0);
    ASSERT_GE(idx, 0);
    homed += at_home(t, orig_of(i), idx);
  }
  EXPECT_GE(homed, kFlows - 1);
  EXPECT_GT(t.records_used(), kCap / 2) << "the records are spread over the slots";
  // 8 checks a batch, each of a flow (the free slots between them are passed without a check): one pass over the
  // 40 flows takes 5 batches, however far apart they sit.
  unsigned gone = 0, batches = 0;
  while (gone < kFlows / 2 && batches < 64) gone += t.expire(1500, 8, [](const FlowMeta&) { return uint64_t{700}; }), ++batches;
  EXPECT_EQ(gone, kFlows / 2);
  EXPECT_LE(batches, 6u) << "the sweep checked free slots";
  for (uint32_t i = 0; i < kFlows; ++i)
    EXPECT_EQ(t.lookup_one(orig_of(i)) >= 0, i % 2 == 1) << "flow " << i << (i % 2 ? " expired" : " kept");
  // Every one of the rest is idle past a guarantee of 100: eviction finds them one by one.
  for (uint32_t k = 0; k < kFlows / 2; ++k)
    ASSERT_TRUE(t.evict_one(5000, 1, 1024, [](const FlowMeta&) { return uint64_t{100}; })) << k;
  EXPECT_EQ(t.size(), 0u);
  EXPECT_FALSE(t.evict_one(5000, 1, 1024, [](const FlowMeta&) { return uint64_t{100}; }));
}

// A declared table's flows exported in slices by the rewriter (state copy, failover) and imported into another:
// every flow arrives (the export walks the used slots) and keeps its mapping both ways.
TEST(FlowTableHome, StateExportImportRoundTripKeepsEveryFlow) {
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

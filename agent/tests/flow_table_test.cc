// FlowTable layout and lifecycle: compact IPv4-only tables, lookups in both directions, record reuse, growth by
// an incremental rehash, and that a big table costs resident memory only as flows arrive. Its own test binary so
// RSS deltas are not muddied by other tests' allocations.
#include <gtest/gtest.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <thread>
#include <vector>
#include <string>

#include "elements/flow_table.h"
#include "elements/hash_heap.h"
#include "elements/rewriter.h"
#include "metron/agent/v1/agent.pb.h"
#include "packets.h"
#include "test_env.h"

namespace metron {
namespace {

Tuple v4(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint8_t proto = 17) {
  Tuple t{};
  std::memcpy(t.src, &src, 4);
  std::memcpy(t.dst, &dst, 4);
  t.sport = sport;
  t.dport = dport;
  t.proto = proto;
  return t;
}

Tuple v6(uint8_t last, uint16_t sport) {
  Tuple t{};
  t.src[0] = 0x20, t.src[15] = last;
  t.dst[0] = 0x20, t.dst[15] = 0xee;
  t.sport = sport;
  t.dport = 80;
  t.proto = 6;
  t.v6 = 1;
  return t;
}

bool same(const Tuple& a, const Tuple& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

double rss_mb() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return -1;
}

// The index in front of a declared IPv4 table's rte_hash (flow_table.h) is a cache: under churn (flows removed,
// their records reused by others, buckets fuller than their 8 ways) every bulk lookup answers what the rte_hash
// alone answers, for live keys in both directions, removed ones and never-seen ones; and it answers most of them
// itself (the control: a table it could not answer would show no index hits).
TEST(FlowTable, IndexAnswersAsTheHashDoesUnderChurn) {
  test::eal();
  constexpr uint32_t kCap = 4096;
  FlowTable t("index_churn", kCap, 0, /*ipv6=*/false);
  ASSERT_TRUE(t.indexed());
  std::map<uint32_t, Tuple> live;  // record -> original tuple
  std::vector<Tuple> seen;
  uint32_t rng = 12345;
  auto next = [&] { return rng = rng * 1103515245u + 12345u; };
  for (int round = 0; round < 40; ++round) {
    for (int k = 0; k < 300; ++k) {
      if (!live.empty() && next() % 3 == 0) {  // remove a random live flow
        auto it = live.begin();
        std::advance(it, next() % live.size());
        t.remove(it->first);
        live.erase(it);
        continue;
      }
      const Tuple o = v4(0x0a000000u + next() % 50000, 0x08080808u, static_cast<uint16_t>(next()), 53);
      const Tuple m = v4(0x05050505u, 0x08080808u, static_cast<uint16_t>(1024 + next() % 60000), 53);
      const int32_t idx = t.insert(o, m, 0, 0, 1, 1);
      if (idx >= 0) live[static_cast<uint32_t>(idx)] = o, seen.push_back(o);
    }
    // Every key ever seen (forward and reply) and some never seen, 32 per bulk call, against lookup_one4.
    std::vector<Key4> keys;
    for (const Tuple& o : seen) keys.push_back(to_key4(o));
    for (const auto& [idx, o] : live) keys.push_back(reversed(t.mapped4(idx)));
    for (int k = 0; k < 64; ++k) keys.push_back(to_key4(v4(0x0b000000u + next(), 1, 2, 3)));
    for (size_t at = 0; at < keys.size(); at += 32) {
      const unsigned n = static_cast<unsigned>(std::min<size_t>(32, keys.size() - at));
      const Key4* ptrs[32];
      int32_t out[32];
      for (unsigned i = 0; i < n; ++i) ptrs[i] = &keys[at + i];
      t.lookup4(ptrs, n, out);
      for (unsigned i = 0; i < n; ++i) ASSERT_EQ(out[i], t.lookup_one4(keys[at + i])) << "round " << round << " key " << at + i;
      // The same with the caller's signatures, and the hits' record addresses handed back.
      uint32_t sigs[32];
      uint8_t* recs[32];
      int32_t again[32];
      for (unsigned i = 0; i < n; ++i) sigs[i] = FlowTable::sig4(keys[at + i]);
      t.lookup4(ptrs, sigs, n, again, recs);
      for (unsigned i = 0; i < n; ++i) {
        ASSERT_EQ(again[i], out[i]) << "round " << round << " key " << at + i;
        if (out[i] >= 0) {
          ASSERT_EQ(recs[i], t.record_at(static_cast<uint32_t>(out[i]) >> 1));
        }
      }
    }
  }
  EXPECT_GT(live.size(), 1000u);
  EXPECT_GT(t.index_hits(), t.index_fallbacks());
  // A grown table has no index and answers the same way through the rte_hash.
  FlowTable g("index_grows", 1000, 0, /*ipv6=*/false, /*grows=*/true);
  EXPECT_FALSE(g.indexed());
}

// sig4 is the signature the table's rte_hash computes for the key (its fallback lookups pass sig4's to it).
TEST(FlowTable, SignatureIsTheHashsCrc) {
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 100000; ++i) {
    Key4 k;
    uint64_t w[2];
    for (uint64_t& v : w) x ^= x << 13, x ^= x >> 7, x ^= x << 17, v = x;
    std::memcpy(&k, w, sizeof k);
    ASSERT_EQ(FlowTable::sig4(k), rte_hash_crc(&k, sizeof k, 0x4d455452)) << i;  // FlowTable::kHashSeed
  }
}

TEST(FlowTable, Ipv4TableFindsBothDirectionsAndKeepsTuples) {
  test::eal();
  FlowTable t("t", 1000, 0, /*ipv6=*/false);
  EXPECT_FALSE(t.ipv6());
  const Tuple orig = v4(0x0a000001, 0xc0a80101, 1234, 80);
  const Tuple mapped = v4(0x05050505, 0xc0a80101, 40000, 80);
  const int32_t idx = t.insert(orig, mapped, 3, 0, 1, 777);
  ASSERT_GE(idx, 0);
  EXPECT_EQ(t.lookup_one(orig), idx << 1);
  EXPECT_EQ(t.lookup_one(reversed(mapped)), idx << 1 | 1);
  EXPECT_EQ(t.lookup_one(mapped), -1) << "the mapped tuple itself is not a key";
  EXPECT_TRUE(same(t.orig(idx), orig));
  EXPECT_TRUE(same(t.mapped(idx), mapped));
  EXPECT_TRUE(same(t.rewrite_target(idx, true), reversed(orig)));
  EXPECT_EQ(t.meta(idx).backend, 3u);
  EXPECT_EQ(t.meta(idx).last_tsc, 777u);
  EXPECT_EQ(t.meta(idx).proto, 17);

  // Bulk lookup agrees with single lookups, misses included.
  const Tuple other = v4(0x0a000002, 0xc0a80101, 1234, 80);
  const Tuple rev = reversed(mapped);
  const Tuple* keys[3] = {&orig, &other, &rev};
  int32_t out[3];
  t.lookup(keys, 3, out);
  EXPECT_EQ(out[0], idx << 1);
  EXPECT_EQ(out[1], -1);
  EXPECT_EQ(out[2], idx << 1 | 1);

  EXPECT_EQ(t.insert(orig, v4(0x05050505, 0xc0a80101, 40001, 80), 0, 0, 1, 0), -1) << "flow already mapped";
  EXPECT_EQ(t.insert(other, mapped, 0, 0, 1, 0), -1) << "mapped tuple already taken";
}

TEST(FlowTable, Ipv4TableRefusesIpv6AndIpv6TableTakesBoth) {
  test::eal();
  FlowTable four("four", 100, 0, false), any("any", 100, 0, true);
  const Tuple a = v6(1, 1000), m = v6(0x99, 2000);
  EXPECT_EQ(four.insert(a, m, 0, 0, 1, 0), -1);
  EXPECT_EQ(four.lookup_one(a), -1);
  EXPECT_EQ(four.size(), 0u);
  const int32_t i6 = any.insert(a, m, 0, 0, 1, 0);
  ASSERT_GE(i6, 0);
  EXPECT_TRUE(same(any.mapped(i6), m));
  EXPECT_EQ(any.lookup_one(reversed(m)), i6 << 1 | 1);
  // Two v6 flows that differ only beyond the first 4 address bytes stay distinct.
  EXPECT_EQ(any.lookup_one(v6(2, 1000)), -1);
  const int32_t i4 = any.insert(v4(1, 2, 3, 4), v4(5, 2, 6, 4), 0, 0, 1, 0);
  ASSERT_GE(i4, 0);
  EXPECT_TRUE(same(any.orig(i4), v4(1, 2, 3, 4)));
  // The compact layout (16-byte keys, and 8 bytes of both directions' checksum deltas) is what makes 1M IPv4 flows
  // fit in a 256 MB process: under 192 MB for the table, the rest for its pools.
  EXPECT_LT(four.bytes_per_flow(), any.bytes_per_flow() * 2 / 3);
  EXPECT_LT(FlowTable::reserve_bytes(1000000, false), size_t{192} << 20);
}

TEST(FlowTable, FreedRecordsAreReusedAndFullTableRefuses) {
  test::eal();
  FlowTable t("t", 4, 0, false);
  int32_t idx[4];
  for (uint16_t i = 0; i < 4; ++i) ASSERT_GE(idx[i] = t.insert(v4(1, 2, i, 9), v4(7, 2, 100 + i, 9), 0, 0, 1, 0), 0);
  EXPECT_EQ(t.insert(v4(1, 2, 50, 9), v4(7, 2, 150, 9), 0, 0, 1, 0), FlowTable::kFull);
  t.remove(static_cast<uint32_t>(idx[1]));
  t.remove(static_cast<uint32_t>(idx[1]));  // twice is harmless
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.lookup_one(v4(1, 2, 1, 9)), -1);
  EXPECT_EQ(t.lookup_one(reversed(v4(7, 2, 101, 9))), -1);
  EXPECT_EQ(t.insert(v4(1, 2, 50, 9), v4(7, 2, 101, 9), 0, 0, 1, 0), idx[1]) << "the freed record comes back";
  unsigned live = 0;
  t.for_each([&](uint32_t) { ++live; });
  EXPECT_EQ(live, 4u);
  t.clear();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.lookup_one(v4(1, 2, 0, 9)), -1);
  for (uint16_t i = 0; i < 4; ++i) EXPECT_GE(t.insert(v4(1, 2, i, 9), v4(7, 2, 100 + i, 9), 0, 0, 1, 0), 0);
}

TEST(FlowTable, ExpiryRemovesOnlyIdleFlows) {
  test::eal();
  FlowTable t("t", 64, 0, false);
  for (uint16_t i = 0; i < 10; ++i) ASSERT_GE(t.insert(v4(1, 2, i, 9), v4(7, 2, 100 + i, 9), 0, 0, 1, i < 5 ? 0 : 1000), 0);
  unsigned gone = 0;
  for (int round = 0; round < 4; ++round) gone += t.expire(1500, 8, 0, [](const FlowMeta&) { return uint64_t{700}; });
  EXPECT_EQ(gone, 5u);
  EXPECT_EQ(t.size(), 5u);
  EXPECT_EQ(t.lookup_one(v4(1, 2, 0, 9)), -1);
  EXPECT_GE(t.lookup_one(v4(1, 2, 7, 9)), 0);
}

// The byte the per-packet progress update reads and writes whole holds the live bit (bit 0) and the state (bits
// 1-7) and nothing else: a compiler laying the bit-fields out otherwise fails here, not in the flows' timeouts.
TEST(FlowTable, ProgressByteHoldsLiveAndState) {
  FlowMeta m{};
  m.live = 1;
  m.state = 0x55;
  EXPECT_EQ(*progress_byte(m), 0xab);
  m.fout = m.rout = m.proto = 0xff;
  *progress_byte(m) = 0x54;
  EXPECT_EQ(m.live, 0);
  EXPECT_EQ(m.state, 0x2a);
  EXPECT_EQ(m.rout, 0xff);
  EXPECT_EQ(m.proto, 0xff);
}

// A pass over every record begins at most once per period: once one is over, the sweep checks nothing until the
// period since it began has gone by, then expires what has idled past its timeout meanwhile.
TEST(FlowTable, ExpirySweepsOncePerPeriod) {
  test::eal();
  FlowTable t("t", 64, 0, false);
  for (uint16_t i = 0; i < 10; ++i) ASSERT_GE(t.insert(v4(1, 2, i, 9), v4(7, 2, 100 + i, 9), 0, 0, 1, 1000), 0);
  const auto timeout = [](const FlowMeta&) { return uint64_t{700}; };
  constexpr uint64_t kPeriod = 5000;
  EXPECT_EQ(t.expire(2000, 16, kPeriod, timeout), 10u) << "a first pass begins at once";
  for (uint16_t i = 0; i < 10; ++i) ASSERT_GE(t.insert(v4(1, 3, i, 9), v4(7, 3, 100 + i, 9), 0, 0, 1, 3000), 0);
  EXPECT_EQ(t.expire(4000, 16, kPeriod, timeout), 0u) << "idle past the timeout, but the pass began 2000 ago";
  EXPECT_EQ(t.expire(6999, 16, kPeriod, timeout), 0u) << "the period is not over";
  EXPECT_EQ(t.size(), 10u);
  EXPECT_EQ(t.expire(7000, 16, kPeriod, timeout), 10u) << "a period after the last pass began, the next one";
  EXPECT_EQ(t.size(), 0u);
  // With no period the sweep goes round as fast as it is asked to (budget records per call).
  for (uint16_t i = 0; i < 4; ++i) ASSERT_GE(t.insert(v4(1, 4, i, 9), v4(7, 4, 100 + i, 9), 0, 0, 1, 8000), 0);
  EXPECT_EQ(t.expire(9000, 16, 0, timeout), 4u);
}

// A copy walks the table in slices while the core inserts, deletes and reuses records in between
// (core/state_copy.h): every flow live for the whole walk is visited exactly once with the tuples it was inserted
// with; none is visited twice.
TEST(FlowTable, SlicedWalkVisitsEveryFlowLiveThroughoutOnceWhateverChangesBetweenSlices) {
  test::eal();
  constexpr uint32_t kFlows = 20000;
  FlowTable t("t", 2 * kFlows, 0, /*ipv6=*/false);
  auto mapped_of = [](uint32_t i) { return v4(0x64400000 + i, 0xc0a80101, static_cast<uint16_t>(1024 + i % 60000), 80); };
  std::vector<int32_t> idx(kFlows);
  for (uint32_t i = 0; i < kFlows; ++i) idx[i] = t.insert(v4(0x0a000000 + i, 0xc0a80101, 1000, 80), mapped_of(i), 0, 0, 1, 1);
  std::vector<bool> removed(kFlows, false);
  std::map<uint32_t, int> visits;  // flow -> times visited
  uint32_t at = 0, extra = 0, slices = 0;
  while (at < t.records_used()) {
    at = t.for_each_from(at, 97, [&](uint32_t r) {
      const Tuple o = t.orig(r);
      uint32_t src;
      std::memcpy(&src, o.src, 4);
      if (src >= 0x0a000000 + kFlows) return;  // inserted during the walk
      const uint32_t i = src - 0x0a000000;
      ++visits[i];
      EXPECT_TRUE(same(t.mapped(r), mapped_of(i))) << "flow " << i << " visited with another flow's mapping";
    });
    ++slices;
    // Between slices, like the core: remove a flow ahead of the walk and one behind it, insert two new ones
    // (reusing the freed records).
    for (uint32_t k : {(slices * 7919u) % kFlows, (slices * 104729u) % kFlows})
      if (!removed[k]) t.remove(static_cast<uint32_t>(idx[k])), removed[k] = true;
    for (int n = 0; n < 2; ++n, ++extra)
      ASSERT_GE(t.insert(v4(0x0b000000 + extra, 0xc0a80101, 1000, 80), v4(0x65400000 + extra, 0xc0a80101, 999, 80), 0, 0, 1, 1), 0);
  }
  EXPECT_GT(slices, 100u);
  uint32_t kept = 0;
  for (uint32_t i = 0; i < kFlows; ++i) {
    EXPECT_LE(visits[i], 1) << "flow " << i << " visited twice";
    if (removed[i]) continue;
    ++kept;
    EXPECT_EQ(visits[i], 1) << "flow " << i << " was live throughout but not visited";
  }
  EXPECT_GT(kept, kFlows / 2);
}

// What a core does between batches: maintain() first, then the batch's inserts. A growing table asks the grower
// thread for room; while that is on its way a full table answers kFull with room_coming() (the test waits, as
// if the traffic paused: the grower is a thread of this process).
int32_t insert_as_core(FlowTable& t, const Tuple& orig, const Tuple& mapped, unsigned* waits) {
  for (;;) {
    const int32_t r = t.insert(orig, mapped, 0, 0, 1, 1);
    if (r != FlowTable::kFull || !t.room_coming()) return r;
    ++*waits;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    t.maintain(rte_rdtsc());
  }
}

Tuple orig_of(uint32_t i) { return v4(0x0a000000 + i, 0xc0a80101, static_cast<uint16_t>(1000 + i % 50000), 80); }
Tuple mapped_of(uint32_t i) { return v4(0x05050505, 0xc0a80101 + i / 60000, static_cast<uint16_t>(1024 + i % 60000), 80); }

// A table without a declared capacity doubles as flows arrive, between batches, off the packet path: every flow
// stays findable in both directions under its record index throughout (during each rehash too), records keep
// their index, and the old hashes go away.
TEST(FlowTable, GrowingTableDoublesAndEveryFlowStaysFindable) {
  test::eal();
  FlowTable t("grow", 100, 0, /*ipv6=*/false, /*grows=*/true);
  EXPECT_TRUE(t.grows());
  EXPECT_EQ(t.capacity(), FlowTable::kGrowthStep);
  constexpr uint32_t kFlows = 60000;
  std::vector<int32_t> idx(kFlows);
  unsigned waits = 0, checks = 0;
  for (uint32_t i = 0; i < kFlows; ++i) {
    if (i % 32 == 0) {
      t.maintain(rte_rdtsc());
      // Mid-way through whatever rehash is going on, an earlier flow is found both ways.
      if (i > 0) {
        const uint32_t k = (i * 7919u) % i;
        ASSERT_EQ(t.lookup_one(orig_of(k)), idx[k] << 1) << "flow " << k << " at " << i;
        ASSERT_EQ(t.lookup_one(reversed(mapped_of(k))), idx[k] << 1 | 1) << "flow " << k << " at " << i;
        ++checks;
      }
    }
    idx[i] = insert_as_core(t, orig_of(i), mapped_of(i), &waits);
    ASSERT_GE(idx[i], 0) << "flow " << i << " refused at capacity " << t.capacity();
  }
  EXPECT_EQ(t.size(), kFlows);
  EXPECT_GE(t.capacity(), kFlows);
  EXPECT_GE(t.growths(), 7u) << "448 -> 57,344 or more";
  EXPECT_EQ(t.growth_failures(), 0u);
  // Bulk lookups agree (they consult the old hash for what the new one does not know yet).
  for (uint32_t i = 0; i < kFlows; i += 32) {
    const Tuple* keys[32];
    Tuple ks[32];
    int32_t out[32];
    for (uint32_t k = 0; k < 32; ++k) ks[k] = k % 2 ? reversed(mapped_of(i + k)) : orig_of(i + k), keys[k] = &ks[k];
    t.lookup(keys, 32, out);
    for (uint32_t k = 0; k < 32; ++k) ASSERT_EQ(out[k], idx[i + k] << 1 | static_cast<int32_t>(k % 2)) << i + k;
  }
  for (uint32_t i = 0; i < kFlows; ++i) ASSERT_TRUE(same(t.mapped(static_cast<uint32_t>(idx[i])), mapped_of(i))) << i;
  std::printf("grew %" PRIu64 " times to %u flows, %u checks mid-growth, waited for the grower %u times\n",
              t.growths(), t.capacity(), checks, waits);
}

// During a rehash the core removes flows (expiry), reuses their records for new flows and evicts: lookups of
// removed flows miss, lookups of new flows in reused records find them, whichever hash holds their keys.
TEST(FlowTable, RemovalsAndReuseDuringARehashStayCorrect) {
  test::eal();
  FlowTable t("rehash", 100, 0, false, true);
  const uint32_t first = t.capacity();
  std::vector<int32_t> idx;
  unsigned waits = 0;
  // Fill up to the growth request, then wait until the bigger hash is adopted: a rehash is under way.
  uint32_t i = 0;
  while (t.capacity() == first) {
    t.maintain(rte_rdtsc());
    if (t.size() < first - first / 4 + 1) {
      idx.push_back(insert_as_core(t, orig_of(i), mapped_of(i), &waits));
      ASSERT_GE(idx.back(), 0);
      ++i;
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  const uint32_t before = i;
  t.maintain(rte_rdtsc());  // moves the first 16 + 2 records' keys
  ASSERT_TRUE(t.rehashing());
  // Remove every third flow, insert as many new ones (they take the freed records), without maintain(): the
  // rehash stays where it is, so removed flows had their keys in both hashes or in the old one only.
  std::vector<bool> gone(before, false);
  for (uint32_t k = 0; k < before; k += 3) t.remove(static_cast<uint32_t>(idx[k])), gone[k] = true;
  for (uint32_t k = 0; k < before; k += 3, ++i) {
    idx.push_back(t.insert(orig_of(i), mapped_of(i), 0, 0, 1, 1));
    ASSERT_GE(idx.back(), 0);
  }
  for (int round = 0; round < 2; ++round) {  // mid-rehash, then after it
    for (uint32_t k = 0; k < i; ++k) {
      if (k < before && gone[k]) {
        EXPECT_EQ(t.lookup_one(orig_of(k)), -1) << k;
        EXPECT_EQ(t.lookup_one(reversed(mapped_of(k))), -1) << k;
      } else {
        ASSERT_EQ(t.lookup_one(orig_of(k)), idx[k] << 1) << k;
        ASSERT_EQ(t.lookup_one(reversed(mapped_of(k))), idx[k] << 1 | 1) << k;
      }
    }
    for (int b = 0; b < 1000; ++b) t.maintain(rte_rdtsc());  // finish the rehash
    EXPECT_FALSE(t.rehashing());
  }
}

// A snapshot bigger than a growing table is imported by growing it on the control path (reserve).
TEST(FlowTable, ReserveGrowsAtOnceOnTheControlPath) {
  test::eal();
  FlowTable t("reserve", 100, 0, false, true);
  ASSERT_TRUE(t.reserve(20000));
  EXPECT_GE(t.capacity() - t.capacity() / 4, 20000u);
  for (uint32_t i = 0; i < 20000; ++i) ASSERT_GE(t.insert(orig_of(i), mapped_of(i), 0, 0, 1, 1), 0) << i;
  FlowTable fixed("fixed", 100, 0, false, false);
  EXPECT_FALSE(fixed.reserve(101)) << "a declared capacity does not grow";
  EXPECT_TRUE(fixed.reserve(100));
}

// The memory a declared table reserves is what reserve_bytes() says, within rte_hash's own bookkeeping; the
// per-flow bound covers every capacity.
TEST(FlowTable, ReserveBytesMatchesTheHeap) {
  test::eal();
  for (uint32_t cap : {1000u, 65536u, 100000u, 300000u}) {
    rte_malloc_socket_stats a{}, b{};
    rte_malloc_get_socket_stats(0, &a);
    {
      FlowTable t("bytes", cap, 0, false);
      rte_malloc_get_socket_stats(0, &b);
    }
    const double used = static_cast<double>(b.heap_allocsz_bytes - a.heap_allocsz_bytes);
    const double said = static_cast<double>(FlowTable::reserve_bytes(cap, false));
    EXPECT_NEAR(used / said, 1.0, 0.02) << cap << ": heap " << used << " vs " << said;
    EXPECT_LE(said / cap, FlowTable::max_bytes_per_flow(false)) << cap;
    EXPECT_LE(FlowTable::reserve_bytes(cap, true) / cap, FlowTable::max_bytes_per_flow(true)) << cap;
  }
}

TEST(FlowTable, BigTableBecomesResidentOnlyAsFlowsArrive) {
  test::eal();
  const double before = rss_mb();
  FlowTable t("big", 1u << 20, 0, false);
  const double idle = rss_mb() - before;
  // What an idle 1M-flow table may cost: rte_hash fills its free-slot ring (4 B per key slot) at creation.
  EXPECT_LT(idle, 16.0) << "an idle table is resident";
  for (uint32_t i = 0; i < 100000; ++i)
    ASSERT_GE(t.insert(v4(i, 2, 1, 9), v4(7, 2, static_cast<uint16_t>(i), static_cast<uint16_t>(i >> 16)), 0, 0, 1, 0), 0);
  EXPECT_GT(rss_mb() - before, idle + 100000.0 * 48 / (1 << 20)) << "records are real memory once used";
}

// A growth retires the previous hash; with --no-huge the EAL heap would keep it resident (rte_free zeroes every
// page of it, touched or not, and the heap never returns memory: 1M flows grown from empty kept ~126 MB of dead
// hashes, BENCHMARKS.md). A large generation lives in a DPDK heap of its own, which retiring it unmaps.
TEST(FlowTable, GrowthReturnsTheRetiredHashMemoryToTheOs) {
  test::eal();
  const size_t heaps = own_heaps_in_use();
  {
    // 458,752 flows: a 42 MB hash (8 MB of buckets, a 4 MB free-slot ring, 30 MB of key store); 4,000 flows in it.
    FlowTable t("retire", 400000, 0, false, true);
    ASSERT_EQ(t.capacity(), 458752u);
    EXPECT_EQ(own_heaps_in_use(), heaps + 1);
    for (uint32_t i = 0; i < 4000; ++i) ASSERT_GE(t.insert(orig_of(i), mapped_of(i), 0, 0, 1, 1), 0) << i;
    const double before = rss_mb();
    // Control-path growth (an import's): the next hash (917,504 flows) is made, every key moves into it and the
    // retired one is freed here and now.
    ASSERT_TRUE(t.reserve(400000));
    const double grown = rss_mb() - before;
    ASSERT_EQ(t.capacity(), 917504u);
    EXPECT_FALSE(t.rehashing());
    EXPECT_EQ(t.shared_heap_hashes(), 0u);
    EXPECT_EQ(own_heaps_in_use(), heaps + 1) << "the retired generation's heap is gone";
    // What the growth may add: the new generation's 8 MB ring (written whole at creation) and the part of its 16 MB
    // of buckets the 8,000 keys touch (entries 2 x 917,504 + 1/16 + 64 -> 2^21: 2^18 buckets of 64 B, 2^21 ring
    // slots of 4 B). Keeping the retired 42 MB generation (zeroed whole by rte_free) adds ~30 MB more.
    EXPECT_LT(grown, 24.0) << "the retired hash stayed resident";
    for (uint32_t i = 0; i < 4000; ++i) ASSERT_EQ(t.lookup_one(orig_of(i)) >> 1, static_cast<int32_t>(i)) << i;
    std::printf("growth 458,752 -> 917,504 flows: process RSS %+.1f MB\n", grown);
  }
  EXPECT_EQ(own_heaps_in_use(), heaps) << "a destroyed table's heap is gone too";
}

// Heaps of their own are few (RTE_MAX_HEAPS, the NUMA nodes' included): tables beyond them keep growing in the EAL
// heap, as before, and say so (shared_heap_hashes); they work the same.
TEST(FlowTable, TablesBeyondTheOwnHeapsUseTheEalHeapCounted) {
  test::eal();
  const size_t heaps = own_heaps_in_use();
  std::vector<std::unique_ptr<FlowTable>> tables;
  uint64_t shared = 0;
  for (int i = 0; i < RTE_MAX_HEAPS + 2; ++i) {
    // 114,688 flows: a 10.6 MB hash, the smallest growth step that gets a heap of its own.
    tables.push_back(std::make_unique<FlowTable>("many" + std::to_string(i), 100000, 0, false, true));
    shared += tables.back()->shared_heap_hashes();
  }
  EXPECT_LT(own_heaps_in_use(), static_cast<size_t>(RTE_MAX_HEAPS));
  EXPECT_EQ(own_heaps_in_use() - heaps + shared, tables.size()) << "each hash in a heap of its own or counted";
  EXPECT_GE(shared, 3u);
  for (size_t i = 0; i < tables.size(); ++i) {
    FlowTable& t = *tables[i];
    ASSERT_EQ(t.insert(orig_of(static_cast<uint32_t>(i)), mapped_of(static_cast<uint32_t>(i)), 0, 0, 1, 1), 0) << i;
    EXPECT_EQ(t.lookup_one(reversed(mapped_of(static_cast<uint32_t>(i)))), 1) << i;
  }
  tables.clear();
  EXPECT_EQ(own_heaps_in_use(), heaps);
}

TEST(FlowTable, Ipv4OnlyRewriterRefusesIpv6State) {
  test::GroupUnderTest g("input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -)"
                         " -> Unstrip(14) -> [0]output;");
  agent::v1::StateTable st;
  auto* e = st.add_entries();
  e->mutable_key()->set_src_ip(std::string(16, '\1'));
  e->mutable_key()->set_dst_ip(std::string(16, '\2'));
  e->mutable_key()->set_src_port(1);
  e->mutable_key()->set_dst_port(2);
  e->mutable_key()->set_proto(6);
  *e->mutable_mapped() = e->key();
  try {
    g.graph->find("rw")->import_state(st, false);
    FAIL() << "imported an IPv6 flow into an IPv4-only table";
  } catch (const ConfigError& err) {
    EXPECT_NE(std::string(err.what()).find("entries[0].key"), std::string::npos) << err.what();
  }
  // Patterns that keep addresses can meet IPv6 flows, so that table takes them.
  test::GroupUnderTest k("input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN - 1024-65535 - -)"
                         " -> Unstrip(14) -> [0]output;");
  EXPECT_EQ(k.graph->find("rw")->import_state(st, false), 1u);
}

}  // namespace
}  // namespace metron

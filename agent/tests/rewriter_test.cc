// SynthRewriter / IPRewriter / IPMappers on golden packets, Maglev consistency, timeouts, per-core port shares
// and flow-state export/import.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "elements/rewriter.h"
#include "metron/agent/v1/agent.pb.h"
#include "packets.h"
#include "test_env.h"
#include "utils/checksum.h"

namespace metron {
namespace {

using test::Flow;
using test::GroupUnderTest;

// Forward traffic enters rw[0], replies (to the public address) rw[1]; rw[k] leaves through [k]output.
std::string napt(const std::string& args, unsigned = 0) {
  return "input -> Strip(14) -> CheckIPHeader -> c :: IPClassifier(dst host 5.5.5.5, -);"
         "c[1] -> [0]rw :: SynthRewriter(" + args + "); c[0] -> [1]rw;"
         "rw[0] -> Unstrip(14) -> [0]output; rw[1] -> Unstrip(14) -> [1]output;";
}

struct Parsed {
  std::string src, dst;
  uint16_t sport, dport;
};
Parsed parse(const std::vector<uint8_t>& f) {
  const uint8_t* ip = f.data() + 14;
  char s[32], d[32];
  inet_ntop(AF_INET, ip + 12, s, sizeof s);
  inet_ntop(AF_INET, ip + 16, d, sizeof d);
  const uint8_t* l4 = ip + (ip[0] & 0xf) * 4;
  return {s, d, load16(l4), load16(l4 + 2)};
}

TEST(SynthRewriter, NaptTranslatesBothDirectionsWithValidChecksums) {
  for (uint8_t proto : {17, 6}) {
    GroupUnderTest g(napt("PATTERN 5.5.5.5 1024-65535 - -"));
    Flow f;
    f.proto = proto;
    g.push(test::frame(f));
    g.push(test::frame(f));
    ASSERT_EQ(g.sink.out[0].size(), 2u);
    const Parsed out = parse(g.sink.out[0][0]);
    EXPECT_EQ(out.src, "5.5.5.5");
    EXPECT_EQ(out.dst, "192.168.1.1");
    EXPECT_GE(out.sport, 1024);
    EXPECT_EQ(out.dport, 80);
    EXPECT_TRUE(test::ipv4_checksums_ok(g.sink.out[0][0], 14));
    EXPECT_EQ(g.sink.out[0][1], g.sink.out[0][0]) << "same flow, same mapping";

    Flow reply;
    reply.proto = proto;
    reply.src = "192.168.1.1";
    reply.dst = "5.5.5.5";
    reply.sport = 80;
    reply.dport = out.sport;
    g.push(test::frame(reply));
    ASSERT_EQ(g.sink.out[1].size(), 1u);
    const Parsed back = parse(g.sink.out[1][0]);
    EXPECT_EQ(back.dst, "10.0.0.1");
    EXPECT_EQ(back.dport, 1234);
    EXPECT_EQ(back.src, "192.168.1.1");
    EXPECT_TRUE(test::ipv4_checksums_ok(g.sink.out[1][0], 14));

    reply.dport = static_cast<uint16_t>(out.sport + 1);  // no such mapping
    g.push(test::frame(reply));
    EXPECT_EQ(g.sink.out[1].size(), 1u);
    EXPECT_EQ(g.graph->drops(), 1u);
  }
}

TEST(SynthRewriter, Ipv6FlowsAreTranslatedToo) {
  GroupUnderTest g("input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN 2001:db8::99 2000-3000 - -)"
                   " -> Unstrip(14) -> [0]output;");
  Flow f;
  f.ipv6 = true;
  f.src = "2001:db8::1";
  f.dst = "2001:db8::2";
  g.push(test::frame(f));
  ASSERT_EQ(g.sink.out[0].size(), 1u);
  const auto& p = g.sink.out[0][0];
  char s[64];
  inet_ntop(AF_INET6, p.data() + 14 + 8, s, sizeof s);
  EXPECT_EQ(std::string(s), "2001:db8::99");
  const uint16_t sport = load16(p.data() + 14 + 40);
  EXPECT_GE(sport, 2000);
  EXPECT_LE(sport, 3000);
  // UDP checksum over the IPv6 pseudo-header still verifies.
  uint32_t sum = csum_add_bytes(0, p.data() + 14 + 8, 32) + 17 + load16(p.data() + 14 + 4);
  sum = csum_add_bytes(sum, p.data() + 14 + 40, load16(p.data() + 14 + 4));
  EXPECT_EQ(csum_fold(sum), 0);
}

TEST(SynthRewriter, RoundRobinAndMaglevPools) {
  const std::string pool = "PATTERN - - 10.0.0.10 8080, PATTERN - - 10.0.0.11 8080, PATTERN - - 10.0.0.12 8080";
  GroupUnderTest rr("input -> Strip(14) -> CheckIPHeader -> SynthRewriter(" + pool + ") -> Unstrip(14) -> [0]output;");
  GroupUnderTest mg("input -> Strip(14) -> CheckIPHeader -> SynthRewriter(" + pool +
                    ", SELECT maglev) -> Unstrip(14) -> [0]output;");
  std::vector<std::vector<uint8_t>> frames;
  for (uint16_t i = 0; i < 300; ++i) {
    Flow f;
    f.sport = static_cast<uint16_t>(1000 + i);
    frames.push_back(test::frame(f));
  }
  rr.push(frames);
  mg.push(frames);
  mg.push(frames);  // second pass: same flows, same backends
  ASSERT_EQ(rr.sink.out[0].size(), 300u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(parse(rr.sink.out[0][i]).dst, "10.0.0.1" + std::to_string(i % 3));
  std::map<std::string, int> share;
  ASSERT_EQ(mg.sink.out[0].size(), 600u);
  for (size_t i = 0; i < 300; ++i) {
    const Parsed p = parse(mg.sink.out[0][i]);
    EXPECT_EQ(p.dport, 8080);
    EXPECT_EQ(parse(mg.sink.out[0][i + 300]).dst, p.dst);
    ++share[p.dst];
  }
  EXPECT_EQ(share.size(), 3u);
  for (const auto& [dst, n] : share) EXPECT_GT(n, 50) << dst;
}

TEST(MaglevTable, BalancedAndMinimallyDisruptive) {
  std::vector<std::string> ten, nine;
  for (int i = 0; i < 10; ++i) ten.push_back("backend-" + std::to_string(i));
  nine = ten;
  nine.erase(nine.begin() + 4);
  MaglevTable a(ten), b(nine);
  std::vector<int> count(10, 0);
  int moved = 0, kept_candidates = 0;
  for (uint32_t h = 0; h < MaglevTable::kSize; ++h) {
    const uint32_t x = a.pick(h);
    ++count[x];
    if (x == 4) continue;
    ++kept_candidates;
    const uint32_t y = b.pick(h);
    if (nine[y] != ten[x]) ++moved;
  }
  for (int c : count) EXPECT_NEAR(c, MaglevTable::kSize / 10, MaglevTable::kSize / 100);
  EXPECT_LT(moved, kept_candidates / 20) << "removing one backend moved too many other flows";
}

TEST(SynthRewriter, IdleFlowsExpire) {
  GroupUnderTest g(napt("PATTERN 5.5.5.5 1024-65535 - -, UDP_TIMEOUT 0.05, CAPACITY 16"));
  Flow f;
  g.push(test::frame(f));
  const uint16_t port = parse(g.sink.out[0][0]).sport;
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  Flow other;
  other.sport = 999;
  for (int i = 0; i < 4; ++i) g.push(test::frame(other));  // each batch sweeps part of the table
  Flow reply;
  reply.src = "192.168.1.1";
  reply.dst = "5.5.5.5";
  reply.sport = 80;
  reply.dport = port;
  g.push(test::frame(reply));
  EXPECT_TRUE(g.sink.out[1].empty()) << "the expired flow's reply must not be translated";
}

TEST(SynthRewriter, CoresAllocateFromDisjointPortShares) {
  GroupUnderTest core1(napt("PATTERN 5.5.5.5 1000-1999 - -"), 2, /*slot=*/1, /*slots=*/2);
  std::vector<std::vector<uint8_t>> frames;
  for (uint16_t i = 0; i < 100; ++i) {
    Flow f;
    f.sport = static_cast<uint16_t>(2000 + i);
    frames.push_back(test::frame(f));
  }
  core1.push(frames);
  std::set<uint16_t> ports;
  for (const auto& p : core1.sink.out[0]) {
    const uint16_t s = parse(p).sport;
    EXPECT_GE(s, 1500);
    EXPECT_LE(s, 1999);
    ports.insert(s);
  }
  EXPECT_EQ(ports.size(), 100u);
}

TEST(SynthRewriter, StateExportImportCarriesMappings) {
  GroupUnderTest a(napt("PATTERN 5.5.5.5 1024-65535 - -"));
  std::vector<std::vector<uint8_t>> frames;
  for (uint16_t i = 0; i < 50; ++i) {
    Flow f;
    f.sport = static_cast<uint16_t>(3000 + i);
    frames.push_back(test::frame(f));
  }
  a.push(frames);
  agent::v1::StateTable t;
  a.graph->find("rw")->export_state(&t);
  ASSERT_EQ(t.entries_size(), 50);
  EXPECT_EQ(t.entries(0).key().src_ip().size(), 4u);

  GroupUnderTest b(napt("PATTERN 5.5.5.5 1024-65535 - -"));
  EXPECT_EQ(b.graph->find("rw")->import_state(t, /*merge=*/false), 50u);
  // A reply to a flow mapped by `a` is translated by `b`.
  const Parsed first = parse(a.sink.out[0][7]);
  Flow reply;
  reply.src = "192.168.1.1";
  reply.dst = "5.5.5.5";
  reply.sport = 80;
  reply.dport = first.sport;
  b.push(test::frame(reply));
  ASSERT_EQ(b.sink.out[1].size(), 1u);
  EXPECT_EQ(parse(b.sink.out[1][0]).dport, 3007);
  // And forward packets of the same flows keep their port.
  b.push(frames[7]);
  ASSERT_EQ(b.sink.out[0].size(), 1u);
  EXPECT_EQ(parse(b.sink.out[0][0]).sport, first.sport);

  // Merge adds; entries already present are kept, not duplicated.
  EXPECT_EQ(b.graph->find("rw")->import_state(t, /*merge=*/true), 0u);

  // A bad snapshot is refused and leaves the table as it was.
  agent::v1::StateTable bad = t;
  bad.mutable_entries(3)->mutable_key()->set_src_ip("abc");
  EXPECT_THROW(b.graph->find("rw")->import_state(bad, false), ConfigError);
  b.push(test::frame(reply));
  EXPECT_EQ(b.sink.out[1].size(), 2u);
  agent::v1::StateTable again;
  b.graph->find("rw")->export_state(&again);
  EXPECT_EQ(again.entries_size(), 50);
}

TEST(IPRewriter, MapperElementsAndInputSpecs) {
  GroupUnderTest g(
      "rr :: RoundRobinIPMapper(- - 10.0.0.10 - 0 1, - - 10.0.0.11 - 0 1);"
      "input -> Strip(14) -> CheckIPHeader -> c :: IPClassifier(src net 10.0.0.0/24, udp, -);"
      "c[0] -> [1]rw :: IPRewriter(rr, pattern 7.7.7.7 5000-6000 - - 0 1, drop);"
      "c[1] -> [0]rw; c[2] -> [2]rw;"
      "rw[0] -> Unstrip(14) -> [0]output; rw[1] -> Unstrip(14) -> [1]output;");
  Flow a;
  a.src = "172.16.0.1";
  Flow b = a;
  b.sport = 4444;
  g.push({test::frame(a), test::frame(b)});
  ASSERT_EQ(g.sink.out[0].size(), 2u);
  EXPECT_EQ(parse(g.sink.out[0][0]).dst, "10.0.0.10");
  EXPECT_EQ(parse(g.sink.out[0][1]).dst, "10.0.0.11");
  // Reply from backend 10.0.0.11 arrives on input 1 and goes back to output 1 with the original addresses.
  Flow reply;
  reply.src = "10.0.0.11";
  reply.dst = "172.16.0.1";
  reply.sport = 80;
  reply.dport = 4444;
  g.push(test::frame(reply));
  ASSERT_EQ(g.sink.out[1].size(), 1u);
  EXPECT_EQ(parse(g.sink.out[1][0]).src, "192.168.1.1");
  // A new flow on input 1 uses its own spec (pattern to 7.7.7.7).
  Flow fresh;
  fresh.src = "10.0.0.50";
  fresh.proto = 6;
  g.push(test::frame(fresh));
  ASSERT_EQ(g.sink.out[0].size(), 3u);
  EXPECT_EQ(parse(g.sink.out[0][2]).src, "7.7.7.7");
  // TCP from elsewhere hits input 2: drop.
  Flow t;
  t.src = "172.16.9.9";
  t.proto = 6;
  g.push(test::frame(t));
  EXPECT_EQ(g.sink.out[0].size(), 3u);
}

TEST(IPRewriter, BadSpecsNameTheProblem) {
  auto err = [](const std::string& cfg) {
    try {
      GroupUnderTest g(cfg);
    } catch (const ClickError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(err("input -> Strip(14) -> CheckIPHeader -> IPRewriter(nosuch) -> [0]output;"),
            "1:40: element 'IPRewriter@3' (IPRewriter): input spec 'nosuch': no RoundRobinIPMapper/MaglevIPMapper of that name");
  EXPECT_EQ(err("input -> SynthRewriter(PATTERN 1.2.3.4 70000 - -) -> [0]output;"),
            "1:24: element 'SynthRewriter@1' (SynthRewriter): PATTERN 0 SPORT: expected an integer <= 65535, got '70000'");
  EXPECT_EQ(err("input -> SynthRewriter(PATTERN 1.2.3.4 - ::1 -) -> [0]output;"),
            "1:24: element 'SynthRewriter@1' (SynthRewriter): PATTERN 0: SADDR and DADDR are of different address families");
}

}  // namespace
}  // namespace metron

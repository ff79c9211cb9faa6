// IPv6 extension headers: the one walker (elements/ipv6_ext.h) on every header kind the synthesizer's reference
// interpreter reads through or stops at (FrameCodec.fields, docs/contracts.md#ipv6), and what the classifiers
// (IPFilter compiled and in rule order) and SynthRewriter make of packets carrying them.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "core/annotations.h"
#include "elements/ip_rules.h"
#include "elements/ipv6_ext.h"
#include "packets.h"
#include "test_env.h"
#include "utils/checksum.h"

namespace metron {
namespace {

using test::Flow;
using test::GroupUnderTest;
using test::Ipv6Ext;

constexpr uint8_t kHopByHop = 0, kRouting = 43, kFragment = 44, kDestOptions = 60, kAh = 51, kEsp = 50,
                  kNoNext = 59;

Flow udp6(uint16_t dport = 53) {
  Flow f;
  f.ipv6 = true;
  f.src = "2001:db8::1";
  f.dst = "2001:db8:1::2";
  f.proto = 17;
  f.sport = 4000;
  f.dport = dport;
  return f;
}

std::vector<uint8_t> udp6_with(const std::vector<Ipv6Ext>& ext, uint16_t dport = 53) {
  return test::with_ipv6_extensions(test::frame(udp6(dport)), ext);
}

Ipv6Upper walk(const std::vector<uint8_t>& f) {
  return ipv6_upper_layer(f.data() + 14, static_cast<int>(f.size() - 14));
}

TEST(Ipv6Walker, NoExtensionHeader) {
  const Ipv6Upper u = walk(udp6_with({}));
  EXPECT_EQ(u.proto, 17);
  EXPECT_EQ(u.l4, 40);
  EXPECT_TRUE(u.first_frag);
  EXPECT_FALSE(u.mf);
  EXPECT_FALSE(u.cut);
}

TEST(Ipv6Walker, HopByHopRoutingAndDestinationOptionsAreSkippedByTheirLength) {
  for (uint8_t type : {kHopByHop, kRouting, kDestOptions})
    for (uint8_t len : {0, 1, 3}) {
      const Ipv6Upper u = walk(udp6_with({{type, len}}));
      EXPECT_EQ(u.proto, 17) << int(type);
      EXPECT_EQ(u.l4, 40 + (len + 1) * 8) << int(type);
      EXPECT_TRUE(u.first_frag);
      EXPECT_FALSE(u.cut);
    }
  const Ipv6Upper all = walk(udp6_with({{kHopByHop, 1}, {kDestOptions}, {kRouting, 2}, {kDestOptions}}));
  EXPECT_EQ(all.proto, 17);
  EXPECT_EQ(all.l4, 40 + 16 + 8 + 24 + 8);
}

TEST(Ipv6Walker, FragmentHeaderGivesOffsetAndMoreFragments) {
  Ipv6Upper u = walk(udp6_with({{kFragment, 0, 0, true}}));
  EXPECT_EQ(u.proto, 17);
  EXPECT_EQ(u.l4, 48);
  EXPECT_TRUE(u.first_frag);
  EXPECT_TRUE(u.mf);
  u = walk(udp6_with({{kHopByHop}, {kFragment, 0, 185, false}}));  // the last fragment
  EXPECT_EQ(u.proto, 17);
  EXPECT_FALSE(u.first_frag);
  EXPECT_FALSE(u.mf);
  // The reference walks on behind a later fragment's header (and takes the last fragment header's fields).
  u = walk(udp6_with({{kFragment, 0, 7, true}, {kDestOptions}}));
  EXPECT_EQ(u.proto, 17);
  EXPECT_EQ(u.l4, 56);
  EXPECT_FALSE(u.first_frag);
  u = walk(udp6_with({{kFragment, 0, 7, true}, {kFragment, 0, 0, false}}));
  EXPECT_TRUE(u.first_frag);
  EXPECT_FALSE(u.mf);
}

TEST(Ipv6Walker, AhEspNoNextAndUnknownHeadersEndTheWalk) {
  for (uint8_t type : {kAh, kEsp, kNoNext, uint8_t{253}, uint8_t{139}}) {
    const Ipv6Upper u = walk(udp6_with({{kHopByHop}, {type, 1}}));
    EXPECT_EQ(u.proto, type);
    EXPECT_EQ(u.l4, 48);
    EXPECT_FALSE(u.cut);
  }
}

TEST(Ipv6Walker, ChainCutShortEndsAtTheHeaderThatDoesNotFit) {
  // Payload length 8 holds the hop-by-hop header only: the destination options header after it does not fit.
  std::vector<uint8_t> f = udp6_with({{kHopByHop}, {kDestOptions}});
  store16(f.data() + 14 + 4, 8);
  Ipv6Upper u = walk(f);
  EXPECT_TRUE(u.cut);
  EXPECT_EQ(u.proto, kDestOptions);
  EXPECT_EQ(u.l4, 48);
  EXPECT_EQ(u.end, 48);
  // The frame itself ends inside the chain (MarkIPHeader does not check the payload length).
  f = udp6_with({{kHopByHop}, {kRouting, 4}});
  f.resize(14 + 40 + 8 + 12);
  u = walk(f);
  EXPECT_EQ(u.proto, 17) << "a header longer than what is left is skipped; nothing is read beyond the frame";
  EXPECT_GT(u.l4, u.end);
  f.resize(14 + 40 + 4);
  u = walk(f);
  EXPECT_TRUE(u.cut);
  EXPECT_EQ(u.proto, kHopByHop);
}

// IPFilter, compiled (rte_acl) and in rule order, reads protocol and ports behind every kind of header.
TEST(Ipv6Classifiers, PortsAndProtocolBehindEveryHeaderKind) {
  struct Case {
    std::vector<Ipv6Ext> ext;
    int out;  // expected output: 0 DNS, 1 AH, 2 a fragment without ports, -1 dropped
  };
  const std::vector<Case> cases = {
      {{}, 0},
      {{{kHopByHop}}, 0},
      {{{kRouting, 2}}, 0},
      {{{kDestOptions, 1}}, 0},
      {{{kFragment, 0, 0, true}}, 0},                      // first fragment: its ports are read
      {{{kHopByHop}, {kFragment, 0, 185, false}}, 2},      // later fragment: no ports, but `ip frag`
      {{{kHopByHop}, {kRouting}, {kDestOptions}, {kFragment, 0, 0, true}, {kDestOptions}}, 0},
      {{{kHopByHop}, {kAh, 2}}, 1},                        // AH: protocol 51, nothing read behind it
      {{{kDestOptions}, {uint8_t{253}}}, -1},
  };
  const std::string rules = "1 ip proto ah, 0 udp dst port 53 and src host 2001:db8::1, 2 ip frag";
  for (const char* compile : {"true", "false"}) {
    GroupUnderTest g("input -> Strip(14) -> CheckIPHeader -> c :: IPFilter(" + rules + ", COMPILE " + compile +
                         "); c[0] -> Unstrip(14) -> [0]output; c[1] -> Unstrip(14) -> [1]output; "
                         "c[2] -> Unstrip(14) -> [2]output;",
                     3);
    std::vector<size_t> expect(3, 0);
    for (const Case& c : cases) {
      g.push(udp6_with(c.ext));
      if (c.out >= 0) ++expect[c.out];
      for (int k = 0; k < 3; ++k) ASSERT_EQ(g.sink.out[k].size(), expect[k]) << compile << " output " << k;
    }
    // The same headers in front of a non-matching port change nothing.
    g.push(udp6_with({{kHopByHop}, {kDestOptions}}, 54));
    EXPECT_EQ(g.sink.out[0].size(), expect[0]);
  }
}

// A later fragment carries no ICMP header: `icmp type` holds for first fragments only, as in Click's IPFilter.
TEST(Ipv6Classifiers, IcmpTypeHoldsForFirstFragmentsOnly) {
  for (const char* compile : {"true", "false"}) {
    GroupUnderTest g(std::string("input -> Strip(14) -> CheckIPHeader -> IPFilter(deny icmp type 0, allow all, "
                                 "COMPILE ") + compile + ") -> Unstrip(14) -> [0]output;");
    Flow v4;
    v4.proto = 1;
    std::vector<uint8_t> later4 = test::frame(v4);
    later4[14 + 6] = 0x00, later4[14 + 7] = 0x10;  // offset 16 x 8: no ICMP header, bytes of data
    later4[14 + 20] = 0;                           // the byte the key reads as its type
    store16(later4.data() + 14 + 10, 0);
    store16(later4.data() + 14 + 10, ipv4_header_csum(later4.data() + 14, 20));
    std::vector<uint8_t> first4 = test::frame(v4);
    first4[14 + 20] = 0;  // echo reply
    Flow v6 = udp6();
    v6.proto = 58;
    std::vector<uint8_t> body6 = test::frame(v6);
    body6[14 + 40] = 0;
    const auto later6 = test::with_ipv6_extensions(body6, {{kFragment, 0, 16, false}});
    const auto first6 = test::with_ipv6_extensions(body6, {{kFragment, 0, 0, true}});
    g.push({later4, first4, later6, first6});
    ASSERT_EQ(g.sink.out[0].size(), 2u) << compile;
    EXPECT_EQ(g.sink.out[0][0], later4);
    EXPECT_EQ(g.sink.out[0][1], later6);
  }
}

// The compiled classifier's key and the reference facts read the same fields through random chains, cut anywhere.
TEST(Ipv6Classifiers, FastKeyEqualsFactsThroughRandomChains) {
  std::mt19937 rng(11);
  test::pool();
  const uint8_t kinds[] = {kHopByHop, kRouting, kDestOptions, kFragment, kAh, kEsp, 6, 17, 58};
  for (int i = 0; i < 20000; ++i) {
    Flow f = udp6();
    const uint8_t uppers[] = {6, 17, 58};
    f.proto = uppers[rng() % 3];
    f.tcp_flags = static_cast<uint8_t>(rng());
    std::vector<Ipv6Ext> ext;
    for (unsigned n = rng() % 5; n > 0; --n) {
      Ipv6Ext e{kinds[rng() % 6], static_cast<uint8_t>(rng() % 3), static_cast<uint16_t>(rng() % 3), rng() % 2 == 0};
      ext.push_back(e);
    }
    std::vector<uint8_t> bytes = test::with_ipv6_extensions(test::frame(f), ext);
    if (rng() % 4 == 0) bytes.resize(14 + 40 + rng() % (bytes.size() - 54 + 1));
    if (rng() % 4 == 0) store16(bytes.data() + 14 + 4, static_cast<uint16_t>(rng() % 80));
    rte_mbuf* m = test::mbuf_of(bytes);
    rte_pktmbuf_adj(m, 14);
    mark_ip(m, rte_pktmbuf_mtod(m, uint8_t*), 6);
    PacketFacts facts;
    ASSERT_TRUE(packet_facts(m, &facts));
    FlowKey6 fast{};
    ASSERT_TRUE(ipv6_flow_key(m, &fast));
    const FlowKey6 slow = flow_key6_of(facts);
    ASSERT_EQ(std::memcmp(&slow, &fast, sizeof fast), 0) << "packet " << i;
    const Ipv6Upper u = ipv6_upper_layer(rte_pktmbuf_mtod(m, uint8_t*), rte_pktmbuf_data_len(m));
    ASSERT_EQ(facts.proto, u.proto);
    if (!u.first_frag || u.l4 + 4 > u.end) {
      ASSERT_EQ(facts.sport, 0) << "packet " << i;
    }
    rte_pktmbuf_free(m);
  }
}

std::vector<uint8_t> upper(const std::vector<uint8_t>& f) {
  const Ipv6Upper u = walk(f);
  return std::vector<uint8_t>(f.begin() + 14 + u.l4, f.end());
}

bool udp6_checksum_ok(const std::vector<uint8_t>& f) {
  const std::vector<uint8_t> l4 = upper(f);
  uint32_t sum = csum_add_bytes(0, f.data() + 14 + 8, 32) + 17 + static_cast<uint32_t>(l4.size());
  return csum_fold(csum_add_bytes(sum, l4.data(), l4.size())) == 0;
}

// SynthRewriter maps a flow by the ports behind its extension headers and rewrites them there.
TEST(Ipv6Rewriter, TranslatesPortsBehindExtensionHeaders) {
  GroupUnderTest g("input -> Strip(14) -> CheckIPHeader -> rw :: SynthRewriter(PATTERN 2001:db8::99 2000-3000 - 8053)"
                   " -> Unstrip(14) -> [0]output;");
  const std::vector<std::vector<Ipv6Ext>> chains = {
      {{kHopByHop}},
      {{kRouting, 1}},
      {{kDestOptions, 2}},
      {{kFragment, 0, 0, true}},
      {{kHopByHop}, {kRouting}, {kDestOptions}, {kFragment, 0, 0, true}, {kDestOptions}},
  };
  uint16_t mapped = 0;
  for (const auto& ext : chains) {
    const auto in = udp6_with(ext);
    g.push(in);
    ASSERT_EQ(g.sink.out[0].size(), 1u);
    const std::vector<uint8_t> out = g.sink.out[0][0];
    g.sink.out[0].clear();
    ASSERT_EQ(out.size(), in.size());
    // the extension headers are untouched, the address and the ports behind them rewritten
    const size_t l4 = in.size() - upper(in).size();
    EXPECT_TRUE(std::equal(in.begin() + 54, in.begin() + static_cast<long>(l4), out.begin() + 54));
    char s[64];
    inet_ntop(AF_INET6, out.data() + 14 + 8, s, sizeof s);
    EXPECT_EQ(std::string(s), "2001:db8::99");
    const uint16_t sport = load16(out.data() + l4);
    EXPECT_GE(sport, 2000);
    EXPECT_LE(sport, 3000);
    if (mapped) {
      EXPECT_EQ(sport, mapped) << "one flow (the same 5-tuple), one mapping, whatever its headers";
    }
    mapped = sport;
    EXPECT_EQ(load16(out.data() + l4 + 2), 8053);
    EXPECT_TRUE(udp6_checksum_ok(out));
  }
  // No ports: a later fragment, AH, ESP; not TCP/UDP behind an unknown header. Dropped, counted.
  for (const auto& ext : std::vector<std::vector<Ipv6Ext>>{
           {{kFragment, 0, 185, false}}, {{kAh, 2}}, {{kEsp}}, {{kHopByHop}, {uint8_t{253}}}})
    g.push(udp6_with(ext));
  EXPECT_TRUE(g.sink.out[0].empty());
  EXPECT_EQ(g.graph->drops(), 4u);
}

}  // namespace
}  // namespace metron

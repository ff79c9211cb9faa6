// Golden packets through each standard element: exact bytes out, per output.
#include <gtest/gtest.h>

#include <random>

#include "packets.h"
#include "test_env.h"
#include "utils/checksum.h"

namespace metron {
namespace {

using test::Flow;
using test::GroupUnderTest;

std::vector<uint8_t> sub(const std::vector<uint8_t>& v, size_t from) { return {v.begin() + from, v.end()}; }

TEST(Checksum, MatchesAKnownHeader) {
  // A textbook IPv4 header whose checksum is 0xb861 (independent of every helper in this repo).
  const uint8_t hdr[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                           0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(ipv4_header_csum(hdr, 20), 0xb861);
  EXPECT_EQ(csum_update16(0xb861, 0x4011, 0x3f11), 0xb961);  // TTL 64 -> 63
  // DecIPTTL's constant term (0xfeff) is that word-by-word update for every checksum, TTL and protocol.
  for (uint32_t hc = 0; hc <= 0xffff; ++hc)
    for (uint32_t ttl = 2; ttl <= 255; ttl += 1 + hc % 7) {
      const uint16_t word = static_cast<uint16_t>(ttl << 8 | (hc * 31 & 0xff));
      const uint16_t want = csum_update16(static_cast<uint16_t>(hc), word, static_cast<uint16_t>(word - 0x100));
      ASSERT_EQ(csum_apply(static_cast<uint16_t>(hc), 0xfeff), want) << hc << " " << ttl;
      // DecIPTTL's form: the stored checksum, network order, updated without swapping it.
      ASSERT_EQ(rte_be_to_cpu_16(ipv4_ttl_dec_csum(rte_cpu_to_be_16(static_cast<uint16_t>(hc)))), want)
          << hc << " " << ttl;
    }
}

// ipv4_header_csum sums an option-less header in 32-bit words, longer ones in half-words: both must give the
// byte-pair loop's checksum (csum_add_bytes, RFC 1071 as written), for random headers and the all-zero and
// all-ones ones whose sums sit on the one's-complement edges (0 and 0xffff).
TEST(Checksum, HeaderSumEqualsTheBytePairLoopAtEveryLength) {
  std::mt19937 rng(22);
  for (size_t hlen = 20; hlen <= 60; hlen += 4) {
    for (int i = 0; i < 2000; ++i) {
      uint8_t hdr[60];
      for (size_t j = 0; j < hlen; ++j) hdr[j] = static_cast<uint8_t>(i == 0 ? 0 : i == 1 ? 0xff : rng());
      const uint16_t want = csum_fold(csum_add_bytes(csum_add_bytes(0, hdr, 10), hdr + 12, hlen - 12));
      ASSERT_EQ(ipv4_header_csum(hdr, hlen), want) << "hlen " << hlen << " header " << i;
    }
  }
}

// ipv4_header_valid (CheckIPHeader's test) is Click's: the byte-pair sum of the whole header folds to 0xffff. Both
// spellings of a zero checksum verify; a header with one bit of its checksum flipped does not.
TEST(Checksum, HeaderValidIsClicksWholeHeaderSum) {
  std::mt19937 rng(28);
  for (size_t hlen = 20; hlen <= 60; hlen += 4) {
    for (int i = 0; i < 20000; ++i) {
      uint8_t hdr[60];
      for (size_t j = 0; j < hlen; ++j) hdr[j] = static_cast<uint8_t>(rng());
      if (i % 2) store16(hdr + 10, ipv4_header_csum(hdr, hlen));  // half of them carry their checksum
      const bool want = csum_fold(csum_add_bytes(0, hdr, hlen)) == 0;
      ASSERT_EQ(ipv4_header_valid(hdr, hlen), want) << "hlen " << hlen << " header " << i;
      if (i % 2) {
        ASSERT_TRUE(ipv4_header_valid(hdr, hlen)) << "hlen " << hlen << " header " << i;
        hdr[rng() % hlen] ^= static_cast<uint8_t>(1u << (rng() % 8));
        ASSERT_FALSE(ipv4_header_valid(hdr, hlen)) << "hlen " << hlen << " header " << i << ", a bit flipped";
      }
    }
  }
  // The known header, its checksum 0xb861; one whose checksum computes to 0x0000 verifies stored as 0xffff too.
  uint8_t hdr[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                     0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_TRUE(ipv4_header_valid(hdr, 20));
  store16(hdr + 10, 0);
  store16(hdr + 18, static_cast<uint16_t>(load16(hdr + 18) + ipv4_header_csum(hdr, 20)));  // now sums to zero
  ASSERT_EQ(ipv4_header_csum(hdr, 20), 0x0000);
  EXPECT_TRUE(ipv4_header_valid(hdr, 20));
  store16(hdr + 10, 0xffff);
  EXPECT_TRUE(ipv4_header_valid(hdr, 20));
}

TEST(Elements, StripUnstripRoundTrip) {
  GroupUnderTest g("input -> Strip(14) -> [0]output; ");
  Flow f;
  g.push(test::frame(f));
  ASSERT_EQ(g.sink.out[0].size(), 1u);
  EXPECT_EQ(g.sink.out[0][0], sub(test::frame(f), 14));
  GroupUnderTest h("input -> Strip(14) -> Unstrip(14) -> [0]output;");
  h.push(test::frame(f));
  EXPECT_EQ(h.sink.out[0][0], test::frame(f));
  GroupUnderTest tiny("input -> Strip(100) -> [0]output;");
  tiny.push(std::vector<uint8_t>(60, 1));
  EXPECT_TRUE(tiny.sink.out[0].empty());
  EXPECT_EQ(tiny.graph->drops(), 1u);
}

TEST(Elements, EtherEncapAndRewrite) {
  Flow f;
  GroupUnderTest g("input -> Strip(14) -> EtherEncap(0x0800, 02:00:00:00:00:01, 02:4d:00:01:00:02) -> [0]output;");
  g.push(test::frame(f));
  EXPECT_EQ(g.sink.out[0][0], test::frame(f));
  GroupUnderTest r("input -> EtherRewrite(0a:0b:0c:0d:0e:0f, 01:02:03:04:05:06) -> [0]output;");
  r.push(test::frame(f));
  const auto& o = r.sink.out[0][0];
  EXPECT_EQ(std::vector<uint8_t>(o.begin(), o.begin() + 12),
            (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 0xa, 0xb, 0xc, 0xd, 0xe, 0xf}));
  EXPECT_EQ(sub(o, 12), sub(test::frame(f), 12));
}

TEST(Elements, StoreEtherAddressWritesOneAddress) {
  Flow f;
  GroupUnderTest g("input -> StoreEtherAddress(0a:0b:0c:0d:0e:0f, src) -> StoreEtherAddress(01:02:03:04:05:06, dst)"
                   " -> [0]output;");
  g.push(test::frame(f));
  Flow expect = f;
  expect.src_mac = "0a:0b:0c:0d:0e:0f";
  expect.dst_mac = "01:02:03:04:05:06";
  EXPECT_EQ(g.sink.out[0][0], test::frame(expect));
}

TEST(Elements, VlanEncapDecap) {
  Flow f;
  Flow tagged = f;
  tagged.vlan = 0x2064;  // PCP 1, VID 100
  GroupUnderTest e("input -> VLANEncap(VLAN_ID 100, VLAN_PCP 1) -> [0]output;");
  e.push(test::frame(f));
  EXPECT_EQ(e.sink.out[0][0], test::frame(tagged));
  GroupUnderTest d("input -> VLANDecap -> [0]output;");
  d.push({test::frame(tagged), test::frame(f)});
  EXPECT_EQ(d.sink.out[0][0], test::frame(f));
  EXPECT_EQ(d.sink.out[0][1], test::frame(f)) << "untagged frames pass unchanged";
}

TEST(Elements, CheckIPHeaderSendsBadPacketsToOutput1) {
  GroupUnderTest g("input -> Strip(14) -> c :: CheckIPHeader -> Unstrip(14) -> [0]output; c[1] -> Unstrip(14) -> [1]output;");
  Flow f;
  auto good = test::frame(f);
  auto bad_csum = good;
  bad_csum[14 + 10] ^= 1;
  auto bad_len = good;
  store16(bad_len.data() + 14 + 2, 1000);
  auto bad_ver = good;
  bad_ver[14] = 0x35;
  Flow v6;
  v6.ipv6 = true;
  v6.src = "2001:db8::1";
  v6.dst = "2001:db8::2";
  g.push({good, bad_csum, bad_len, bad_ver, test::frame(v6)});
  ASSERT_EQ(g.sink.out[0].size(), 2u);
  EXPECT_EQ(g.sink.out[0][0], good);
  EXPECT_EQ(g.sink.out[0][1], test::frame(v6));
  EXPECT_EQ(g.sink.out[1].size(), 3u);
}

// A NIC with IPv4 checksum offload on (DpdkPort turns it on) writes its verdict in each mbuf; CheckIPHeader takes
// it for frames as their port delivered them, as DPDK's l3fwd does, and sums the header itself otherwise.
TEST(Elements, CheckIPHeaderTakesTheNicChecksumVerdictOnlyForFramesAsReceived) {
  Flow f;
  const auto good = test::frame(f);
  auto corrupt = good;
  corrupt[14 + 10] ^= 1;
  constexpr uint64_t kGood = RTE_MBUF_F_RX_IP_CKSUM_GOOD, kBad = RTE_MBUF_F_RX_IP_CKSUM_BAD;
  constexpr uint64_t kNone = RTE_MBUF_F_RX_IP_CKSUM_NONE;
  // (kBad: a NIC's BAD on a header that sums right, which no correct NIC writes, shows who decided.)
  const std::vector<std::pair<std::vector<uint8_t>, uint64_t>> frames = {
      {corrupt, kGood},  // the NIC's word: passes (its sum is the NIC's to check)
      {good, kBad},      // anything but GOOD is summed here: passes
      {corrupt, 0},      // no verdict (a port without the offload): summed here, dropped
      {corrupt, kNone},  // the NIC did not check it: summed, dropped
      {good, 0},
  };
  const char* rewriter = "SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -, CAPACITY 1024)";
  // Frames as received: from `input`, directly or through a Classifier; the check on its own (in front of
  // DecIPTTL) or run by the element it feeds (a rewriter's or IPFilter's first pass, CheckIPHeader::Fold).
  for (const std::string& click :
       {std::string("input -> Strip(14) -> CheckIPHeader -> DecIPTTL -> Unstrip(14) -> [0]output;"),
        std::string("input -> c :: Classifier(12/0800, -); c[0] -> Strip(14) -> CheckIPHeader -> DecIPTTL -> "
                    "Unstrip(14) -> [0]output; c[1] -> [1]output;"),
        "input -> Strip(14) -> CheckIPHeader -> " + std::string(rewriter) + " -> Unstrip(14) -> [0]output;",
        std::string("input -> Strip(14) -> CheckIPHeader -> IPFilter(allow all) -> Unstrip(14) -> [0]output;"),
        std::string("input -> CheckIPHeader(14) -> DecIPTTL -> [0]output;")}) {
    GroupUnderTest g(click);
    g.push(frames);
    ASSERT_EQ(g.sink.out[0].size(), 3u) << click;
    EXPECT_EQ(g.graph->drops(), 2u) << click;
    EXPECT_FALSE(ipv4_header_valid(g.sink.out[0][0].data() + 14, 20)) << click << ": the NIC's GOOD stood";
    EXPECT_TRUE(ipv4_header_valid(g.sink.out[0][1].data() + 14, 20)) << click;
    EXPECT_TRUE(ipv4_header_valid(g.sink.out[0][2].data() + 14, 20)) << click;
  }
  // Frames something changed on the way (an Unstrip before the check, a Strip the check is not folded with), or
  // a check that is not at the IP header behind the Ethernet one: the verdict is not about this header; the
  // header is summed, whatever the mbuf says.
  for (const std::string& click :
       {std::string("input -> Strip(14) -> Unstrip(14) -> Strip(14) -> CheckIPHeader -> DecIPTTL -> Unstrip(14) -> "
                    "[0]output;"),
        std::string("input -> Strip(14) -> CheckIPHeader -> Counter -> Unstrip(14) -> [0]output;"),
        std::string("input -> CheckIPHeader(18) -> DecIPTTL -> [0]output;")}) {
    GroupUnderTest g(click);
    std::vector<std::pair<std::vector<uint8_t>, uint64_t>> sent = frames;
    if (click.find("(18)") != std::string::npos) {  // the IPv4 header behind a VLAN tag the graph did not take out
      for (auto& [frame, flags] : sent) {
        frame.insert(frame.begin() + 12, {0x81, 0x00, 0x00, 0x07});
      }
    }
    g.push(sent);
    // the corrupt header dropped whatever the verdict, the good one passed whatever the verdict
    ASSERT_EQ(g.sink.out[0].size(), 2u) << click;
    EXPECT_EQ(g.graph->drops(), 3u) << click;
    const size_t at = click.find("(18)") != std::string::npos ? 18 : 14;
    for (const auto& out : g.sink.out[0]) EXPECT_TRUE(ipv4_header_valid(out.data() + at, 20)) << click;
  }
}

TEST(Elements, DecIPTTLKeepsTheChecksumValid) {
  GroupUnderTest g("input -> Strip(14) -> CheckIPHeader -> d :: DecIPTTL -> Unstrip(14) -> [0]output; d[1] -> Unstrip(14) -> [1]output;");
  Flow f;
  f.ttl = 64;
  Flow dying = f;
  dying.ttl = 1;
  g.push({test::frame(f), test::frame(dying)});
  ASSERT_EQ(g.sink.out[0].size(), 1u);
  Flow expect = f;
  expect.ttl = 63;
  EXPECT_EQ(g.sink.out[0][0], test::frame(expect));  // frame() computes the checksum from scratch
  EXPECT_EQ(g.sink.out[1].size(), 1u);
}

// Single-output elements pass on the batch they were given, its kept packets moved down in place: in one burst
// with bad frames between good ones, each element must keep the good frames in their order and count each bad
// one as one drop (a wrong slot in the move would repeat, lose or reorder frames).
TEST(Elements, OneOutputChainKeepsOrderAndCountsDropsInOneBurst) {
  GroupUnderTest g("input -> Strip(14) -> CheckIPHeader -> DecIPTTL -> Unstrip(14) -> [0]output;");
  std::vector<std::vector<uint8_t>> burst, expect;
  for (int i = 0; i < 30; ++i) {
    Flow f;
    f.sport = static_cast<uint16_t>(1000 + i);
    f.ttl = i % 5 == 3 ? 1 : 64;  // expired at DecIPTTL
    auto frame = test::frame(f);
    if (i % 7 == 2) frame[14 + 10] ^= 1;  // bad checksum: dropped by CheckIPHeader
    burst.push_back(frame);
    if (i % 5 == 3 || i % 7 == 2) continue;
    f.ttl = 63;
    expect.push_back(test::frame(f));
  }
  g.push(burst);
  EXPECT_EQ(g.sink.out[0], expect);
  EXPECT_EQ(g.graph->drops(), burst.size() - expect.size());
  EXPECT_EQ(burst.size() - expect.size(), 6u + 4u - 1u);  // i%5==3: 6, i%7==2: 4, both (i=23): 1
}

TEST(Elements, SetIPChecksumRepairsTheHeader) {
  GroupUnderTest g("input -> Strip(14) -> MarkIPHeader -> SetIPChecksum -> Unstrip(14) -> [0]output;");
  Flow f;
  auto broken = test::frame(f);
  broken[14 + 10] = broken[14 + 11] = 0;
  g.push(broken);
  EXPECT_EQ(g.sink.out[0][0], test::frame(f));
}

TEST(Elements, LookupIPRouteLongestPrefixBothFamilies) {
  GroupUnderTest g("input -> Strip(14) -> CheckIPHeader -> r :: LookupIPRoute(0.0.0.0/0 0, 192.168.0.0/16 1, "
                   "192.168.1.0/24 10.0.0.1 2, 2001:db8::/32 1) -> [0]output; r[1] -> [1]output; r[2] -> [2]output;",
                   3);
  Flow a;  // 192.168.1.1
  Flow b;
  b.dst = "192.168.7.7";
  Flow c;
  c.dst = "8.8.8.8";
  Flow d;
  d.ipv6 = true;
  d.src = "2001:db8::1";
  d.dst = "2001:db8:0:1::5";
  Flow e = d;
  e.dst = "2002::1";  // no IPv6 default: dropped
  g.push({test::frame(a), test::frame(b), test::frame(c), test::frame(d), test::frame(e)});
  EXPECT_EQ(g.sink.out[2].size(), 1u);
  EXPECT_EQ(g.sink.out[1].size(), 2u);
  EXPECT_EQ(g.sink.out[0].size(), 1u);
  EXPECT_EQ(g.graph->drops(), 1u);
}

TEST(Elements, HyperscanDPIFindsPatternsInPayload) {
  GroupUnderTest g("input -> Strip(14) -> CheckIPHeader -> d :: HyperscanDPI(\"evil[0-9]+\", \"/etc/passwd\") -> [0]output;"
                   "d[1] -> [1]output;");
  Flow f;
  f.payload = 40;
  auto clean = test::frame(f);
  auto evil = clean;
  const char* word = "xx evil42 yy";
  std::copy(word, word + 12, evil.begin() + 14 + 20 + 8 + 4);
  auto header_only = clean;  // pattern bytes in the MAC header do not count
  std::copy(word + 3, word + 9, header_only.begin());
  g.push({clean, evil, header_only});
  EXPECT_EQ(g.sink.out[0].size(), 2u);
  ASSERT_EQ(g.sink.out[1].size(), 1u);
  EXPECT_EQ(g.sink.out[1][0], sub(evil, 14));
  try {
    GroupUnderTest bad("input -> HyperscanDPI(\"a(b\") -> [0]output;");
    FAIL();
  } catch (const ClickError& e) {
    EXPECT_NE(std::string(e.what()).find("pattern 0 'a(b'"), std::string::npos) << e.what();
  }
}

TEST(Elements, CounterAndDiscardInAGroup) {
  GroupUnderTest g("input -> c :: Counter -> Discard;");
  Flow f;
  g.push({test::frame(f), test::frame(f), test::frame(f)});
  std::ostringstream rep;
  g.graph->report(rep);
  EXPECT_NE(rep.str().find("c.count 3\n"), std::string::npos);
  EXPECT_EQ(g.graph->drops(), 3u);
}

}  // namespace
}  // namespace metron

#include "dispatch/steer_rule.h"

#include <gtest/gtest.h>

namespace metron {
namespace {

pb::NicRule Valid() {
  pb::NicRule r;
  r.set_id(0xffffffffffffffffull);
  r.set_nic("eth1");
  r.set_priority(3);
  r.mutable_match()->set_eth_dst("02:4D:00:07:00:00");
  r.mutable_match()->set_eth_dst_mask("ff:ff:ff:ff:00:00");
  r.mutable_match()->set_ip_dst(std::string("\x0a\x01\x00\x00", 4));
  r.mutable_match()->set_ip_dst_prefix(16);
  r.mutable_match()->set_ip_proto(6);
  r.mutable_match()->set_l4_dst(0x1f00);
  r.mutable_match()->set_l4_dst_mask(0xff00);
  r.mutable_action()->set_queue(2);
  return r;
}

// The error's code and message: it must name where, which field, and the offending value.
void ExpectInvalid(const pb::NicRule& r, const std::string& needle) {
  SteerRule out;
  out.id = 42;
  grpc::Status s = ParseNicRule(r, "rules[1]", &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << needle;
  EXPECT_NE(s.error_message().find(needle), std::string::npos) << s.error_message();
  EXPECT_EQ(out.id, 42u) << "output written on error";
}

TEST(SteerRule, ParsesAndPrintsBack) {
  SteerRule r;
  ASSERT_TRUE(ParseNicRule(Valid(), "rules[0]", &r).ok());
  EXPECT_EQ(r.id, 0xffffffffffffffffull);
  EXPECT_TRUE(r.match.has_eth_dst);
  EXPECT_EQ(r.match.eth_dst, (MacAddr{0x02, 0x4d, 0, 7, 0, 0}));
  EXPECT_EQ(r.match.ip_version(), 4);
  EXPECT_EQ(r.match.ip_dst.len, 16);
  EXPECT_EQ(r.match.l4_dst.value, 0x1f00);
  EXPECT_EQ(r.action.kind, SteerActionKind::kQueue);
  const pb::NicRule back = ToProto(r);
  EXPECT_EQ(back.match().eth_dst(), "02:4d:00:07:00:00");
  EXPECT_EQ(back.match().eth_dst_mask(), "ff:ff:ff:ff:00:00");
  EXPECT_EQ(back.match().ip_dst(), Valid().match().ip_dst());
  EXPECT_EQ(back.id(), Valid().id());
  SteerRule again;
  ASSERT_TRUE(ParseNicRule(back, "x", &again).ok());
  EXPECT_EQ(ToProto(again).SerializeAsString(), back.SerializeAsString());
}

TEST(SteerRule, EthDstWithoutMaskIsExact) {
  pb::NicRule p = Valid();
  p.mutable_match()->clear_eth_dst_mask();
  SteerRule r;
  ASSERT_TRUE(ParseNicRule(p, "r", &r).ok());
  EXPECT_EQ(r.match.eth_dst_mask, (MacAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
}

TEST(SteerRule, ErrorsNameFieldAndValue) {
  pb::NicRule r = Valid();
  r.mutable_match()->set_eth_dst("02:4d:zz:07:00:00");
  ExpectInvalid(r, "rules[1].match.eth_dst: \"02:4d:zz:07:00:00\"");

  r = Valid();
  r.mutable_match()->set_eth_dst("02:4d:00:07:00:01");
  ExpectInvalid(r, "rules[1].match.eth_dst: \"02:4d:00:07:00:01\" has bits outside mask");

  r = Valid();
  r.mutable_match()->set_ip_dst(std::string("\x0a\x01\x00", 3));
  ExpectInvalid(r, "rules[1].match.ip_dst: 0x0a0100 has 3 bytes");

  r = Valid();
  r.mutable_match()->set_ip_dst_prefix(33);
  ExpectInvalid(r, "rules[1].match.ip_dst_prefix: 33 exceeds 32");

  r = Valid();
  r.mutable_match()->set_ip_dst_prefix(8);
  ExpectInvalid(r, "rules[1].match.ip_dst: 0x0a010000 has bits set beyond prefix length 8");

  r = Valid();
  r.mutable_match()->set_ip_src(std::string(16, '\0'));
  ExpectInvalid(r, "rules[1].match.ip_dst: IPv4 address with an IPv6 ip_src");

  r = Valid();
  r.mutable_match()->set_ether_type(0x86dd);
  ExpectInvalid(r, "rules[1].match.ether_type: 34525 contradicts the IPv4 address");

  r = Valid();
  r.mutable_match()->set_ip_proto(1);
  ExpectInvalid(r, "rules[1].match.ip_proto: 1: l4 ports need ip_proto");

  r = Valid();
  r.mutable_match()->set_l4_dst(70000);
  ExpectInvalid(r, "rules[1].match.l4_dst: 70000 exceeds 65535");

  r = Valid();
  r.mutable_match()->set_vlan(4095);
  ExpectInvalid(r, "rules[1].match.vlan: 4095");

  r = Valid();
  r.clear_nic();
  ExpectInvalid(r, "rules[1].nic: empty");

  r = Valid();
  r.clear_action();
  ExpectInvalid(r, "rules[1].action: not set");

  r = Valid();
  r.mutable_match()->clear_ip_dst();
  r.mutable_match()->clear_ip_dst_prefix();
  ExpectInvalid(r, "rules[1].match.ip_proto: 6 needs an IP version");
}

TEST(SteerRule, TagRulesFollowTheTagContract) {
  SteerRule r;
  ASSERT_TRUE(TagRule(pb::TAG_MAC, 0x0102, 3, "tag", &r).ok());
  EXPECT_EQ(r.match.eth_dst, (MacAddr{0x02, 0x4d, 0x01, 0x02, 0, 0}));
  EXPECT_EQ(r.match.eth_dst_mask, (MacAddr{0xff, 0xff, 0xff, 0xff, 0, 0}));
  EXPECT_EQ(r.action.value, 3u);
  ASSERT_TRUE(TagRule(pb::TAG_VLAN, 4094, 1, "tag", &r).ok());
  EXPECT_EQ(r.match.vlan, 4094);
  EXPECT_FALSE(r.match.has_eth_dst);

  EXPECT_EQ(TagRule(pb::TAG_MAC, 0, 0, "groups[2].tag", &r).error_message(),
            "groups[2].tag.value: 0 is not a MAC group tag 1..65535");
  EXPECT_EQ(TagRule(pb::TAG_MAC, 65536, 0, "t", &r).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(TagRule(pb::TAG_VLAN, 4095, 0, "t", &r).error_message(), "t.value: 4095 is not a VLAN id 1..4094");
  EXPECT_EQ(TagRule(pb::TAG_TYPE_UNSPECIFIED, 5, 0, "t", &r).error_message(),
            "t.type: 0 is not TAG_MAC or TAG_VLAN");
}

}  // namespace
}  // namespace metron

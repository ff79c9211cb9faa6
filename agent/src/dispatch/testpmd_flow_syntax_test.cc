#include "dispatch/testpmd_flow_syntax.h"

#include <gtest/gtest.h>

namespace metron {
namespace {

SteerRule Rule(const std::function<void(pb::NicRule&)>& fill) {
  pb::NicRule p;
  p.set_id(9);
  p.set_nic("eth1");
  p.mutable_action()->set_queue(1);
  fill(p);
  SteerRule r;
  grpc::Status s = ParseNicRule(p, "rule", &r);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return r;
}

// Printing then parsing gives the same rule back, for every kind of match and action.
TEST(TestpmdFlowSyntax, RoundTrips) {
  std::vector<SteerRule> rules;
  SteerRule tag;
  ASSERT_TRUE(TagRule(pb::TAG_MAC, 0x0a0b, 3, "t", &tag).ok());
  tag.id = 9;
  tag.nic = "eth1";
  rules.push_back(tag);
  rules.push_back(Rule([](auto& p) { p.mutable_match()->set_vlan(100); p.mutable_match()->set_ether_type(0x0806); }));
  rules.push_back(Rule([](auto& p) { p.mutable_match()->set_ether_type(0x88cc); p.set_priority(4); }));
  rules.push_back(Rule([](auto& p) {
    p.mutable_match()->set_ip_src(std::string("\x0a\x01\x00\x00", 4));
    p.mutable_match()->set_ip_src_prefix(16);
    p.mutable_match()->set_ip_proto(17);
    p.mutable_match()->set_l4_dst(53);
    p.mutable_match()->set_l4_dst_mask(0xffff);
    p.mutable_match()->set_l4_src(0x4000);
    p.mutable_match()->set_l4_src_mask(0xc000);
  }));
  rules.push_back(Rule([](auto& p) {
    std::string a(16, '\0');
    a[0] = '\x20', a[1] = '\x01';
    p.mutable_match()->set_ip_dst(a);
    p.mutable_match()->set_ip_dst_prefix(16);
    p.mutable_match()->set_ip_proto(6);
    p.mutable_action()->set_drop(true);
  }));
  rules.push_back(Rule([](auto& p) {
    p.mutable_match()->set_ether_type(0x86dd);
    p.mutable_match()->set_ip_proto(132);
    p.mutable_action()->set_mark(0xbeef);
  }));
  for (const SteerRule& r : rules) {
    const std::string text = ToTestpmd(r, 3, 0);
    SteerRule back;
    uint16_t port = 0;
    grpc::Status s = ParseTestpmd(text, "eth1", 9, &back, &port);
    ASSERT_TRUE(s.ok()) << text << "\n" << s.error_message();
    EXPECT_EQ(port, 3);
    EXPECT_EQ(ToProto(back).SerializeAsString(), ToProto(r).SerializeAsString()) << text;
  }
}

TEST(TestpmdFlowSyntax, AcceptsTestpmdSpellingsWrittenByHand) {
  SteerRule r;
  grpc::Status s = ParseTestpmd(
      "flow create 0 ingress pattern eth dst is 02:4d:00:07:00:01 / ipv4 dst is 192.168.1.1 / tcp dst is 80 / end "
      "actions queue index 2 / end",
      "eth1", 5, &r, nullptr);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.match.eth_dst_mask, (MacAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  EXPECT_EQ(r.match.ip_dst.len, 32);
  EXPECT_EQ(r.match.ip_proto, 6);
  EXPECT_EQ(r.match.l4_dst.value, 80);
  EXPECT_EQ(r.match.l4_dst.mask, 0xffff);
  EXPECT_EQ(r.action.value, 2u);
}

TEST(TestpmdFlowSyntax, ErrorsNameTheColumn) {
  SteerRule r;
  auto err = [&](const std::string& line) { return ParseTestpmd(line, "eth1", 1, &r, nullptr).error_message(); };
  EXPECT_EQ(err("flow create 0 egress pattern eth / end actions drop / end"),
            "testpmd flow, column 15: expected ingress, priority or pattern (egress/transfer/group are not NicRule "
            "attributes), got 'egress'");
  EXPECT_EQ(err("flow create 0 pattern eth src is 02:00:00:00:00:01 / end actions drop / end"),
            "testpmd flow, column 27: 'eth src' is not a NicRule match field, got 'src'");
  EXPECT_EQ(err("flow create 0 pattern eth / ipv4 src spec 10.0.0.0 src mask 255.0.255.0 / end actions drop / end"),
            "testpmd flow, column 61: the address mask is not a prefix, got '255.0.255.0'");
  EXPECT_EQ(err("flow create 0 pattern ipv4 / eth / end actions drop / end"),
            "testpmd flow, column 30: pattern items out of order or repeated, got 'eth'");
  EXPECT_EQ(err("flow create 0 pattern eth / end actions queue index x / end"),
            "testpmd flow, column 53: a queue index (0..65535), got 'x'");
  EXPECT_EQ(err("flow create 0 pattern eth / end actions end"),
            "testpmd flow, column 41: expected an action before end, got 'end'");
  EXPECT_EQ(err("flow create 0 pattern eth / vlan tci spec 0x2064 tci mask 0xffff / end actions drop / end"),
            "testpmd flow, column 59: vlan tci must match the VLAN id exactly (mask 0x0fff, no PCP/DEI bits), got "
            "'0xffff'");
  // Semantic checks are ParseNicRule's, the same as for rules sent over gRPC.
  EXPECT_EQ(err("flow create 0 pattern eth dst spec 02:4d:00:07:00:01 dst mask ff:ff:ff:ff:00:00 / end actions drop / end")
                .rfind("testpmd flow.match.eth_dst: \"02:4d:00:07:00:01\" has bits outside mask", 0),
            0u);
}

}  // namespace
}  // namespace metron

// How SteerRules become rte_flow rules: item by item, spec and mask, in network byte order; and that a real
// PMD's validator (net_tap, in a private netns) accepts them.
#include "dispatch/rte_flow_rules.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <rte_ethdev.h>

#include "drivers/dpdk_port.h"
#include "dispatch/testpmd_flow_syntax.h"
#include "dispatch/veth_fixture.h"
#include "test_env.h"

namespace metron {
namespace {

SteerRule Parse(const pb::NicRule& p) {
  SteerRule r;
  grpc::Status s = ParseNicRule(p, "rule", &r);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return r;
}

pb::NicRule Base(uint32_t priority = 0) {
  pb::NicRule p;
  p.set_id(1);
  p.set_nic("eth1");
  p.set_priority(priority);
  p.mutable_action()->set_queue(3);
  return p;
}

std::vector<rte_flow_item_type> Types(const RteFlowRule& f) {
  std::vector<rte_flow_item_type> t;
  for (const auto& i : f.pattern()) t.push_back(i.type);
  return t;
}

TEST(RteFlowRules, MacGroupTagMatchesGroupBitsOnly) {
  SteerRule r;
  ASSERT_TRUE(TagRule(pb::TAG_MAC, 7, 3, "tag", &r).ok());
  std::unique_ptr<RteFlowRule> f;
  ASSERT_TRUE(RteFlowRule::Build(r, 0, &f).ok());
  EXPECT_EQ(f->attr().ingress, 1u);
  EXPECT_EQ(f->attr().priority, 0u);
  ASSERT_EQ(Types(*f), (std::vector<rte_flow_item_type>{RTE_FLOW_ITEM_TYPE_ETH, RTE_FLOW_ITEM_TYPE_END}));
  const auto* spec = static_cast<const rte_flow_item_eth*>(f->pattern()[0].spec);
  const auto* mask = static_cast<const rte_flow_item_eth*>(f->pattern()[0].mask);
  const uint8_t want_spec[6] = {0x02, 0x4d, 0x00, 0x07, 0, 0}, want_mask[6] = {0xff, 0xff, 0xff, 0xff, 0, 0};
  EXPECT_EQ(0, memcmp(spec->hdr.dst_addr.addr_bytes, want_spec, 6));
  EXPECT_EQ(0, memcmp(mask->hdr.dst_addr.addr_bytes, want_mask, 6));
  EXPECT_EQ(mask->hdr.ether_type, 0);
  EXPECT_EQ(mask->has_vlan, 0u);
  ASSERT_EQ(f->actions().size(), 2u);
  EXPECT_EQ(f->actions()[0].type, RTE_FLOW_ACTION_TYPE_QUEUE);
  EXPECT_EQ(static_cast<const rte_flow_action_queue*>(f->actions()[0].conf)->index, 3);
  EXPECT_EQ(f->actions()[1].type, RTE_FLOW_ACTION_TYPE_END);
  EXPECT_EQ(ToTestpmd(r, 0, 0),
            "flow create 0 ingress priority 0 pattern eth dst spec 02:4d:00:07:00:00 dst mask ff:ff:ff:ff:00:00 "
            "/ end actions queue index 3 / end");
}

TEST(RteFlowRules, VlanTagWithInnerEtherType) {
  pb::NicRule p = Base(2);
  p.mutable_match()->set_vlan(100);
  p.mutable_match()->set_ether_type(0x0806);
  const SteerRule r = Parse(p);
  std::unique_ptr<RteFlowRule> f;
  ASSERT_TRUE(RteFlowRule::Build(r, 0, &f).ok());
  ASSERT_EQ(Types(*f), (std::vector<rte_flow_item_type>{RTE_FLOW_ITEM_TYPE_ETH, RTE_FLOW_ITEM_TYPE_VLAN,
                                                        RTE_FLOW_ITEM_TYPE_END}));
  EXPECT_EQ(f->pattern()[0].spec, nullptr) << "ether_type goes to the VLAN item's inner type";
  const auto* vs = static_cast<const rte_flow_item_vlan*>(f->pattern()[1].spec);
  const auto* vm = static_cast<const rte_flow_item_vlan*>(f->pattern()[1].mask);
  EXPECT_EQ(ntohs(vs->hdr.vlan_tci), 100);
  EXPECT_EQ(ntohs(vm->hdr.vlan_tci), 0x0fff) << "PCP/DEI bits are not matched";
  EXPECT_EQ(ntohs(vs->hdr.eth_proto), 0x0806);
  EXPECT_EQ(f->attr().priority, 2u);
  EXPECT_EQ(ToTestpmd(r, 1, 0),
            "flow create 1 ingress priority 2 pattern eth / vlan tci spec 100 tci mask 0x0fff "
            "inner_type is 0x0806 / end actions queue index 3 / end");
}

TEST(RteFlowRules, Ipv4FiveTupleInNetworkOrder) {
  pb::NicRule p = Base(5);
  p.mutable_match()->set_ip_src(std::string("\x0a\x01\x00\x00", 4));
  p.mutable_match()->set_ip_src_prefix(16);
  p.mutable_match()->set_ip_dst(std::string("\xc0\xa8\x01\x07", 4));
  p.mutable_match()->set_ip_dst_prefix(32);
  p.mutable_match()->set_ip_proto(17);
  p.mutable_match()->set_l4_dst(5000);
  p.mutable_match()->set_l4_dst_mask(0xffff);
  p.mutable_match()->set_l4_src(0x4000);
  p.mutable_match()->set_l4_src_mask(0xc000);
  const SteerRule r = Parse(p);
  std::unique_ptr<RteFlowRule> f;
  ASSERT_TRUE(RteFlowRule::Build(r, 0, &f).ok());
  ASSERT_EQ(Types(*f), (std::vector<rte_flow_item_type>{RTE_FLOW_ITEM_TYPE_ETH, RTE_FLOW_ITEM_TYPE_IPV4,
                                                        RTE_FLOW_ITEM_TYPE_UDP, RTE_FLOW_ITEM_TYPE_END}));
  EXPECT_EQ(f->pattern()[0].spec, nullptr) << "ETH matches any when the rule has no L2 field";
  const auto* is = static_cast<const rte_flow_item_ipv4*>(f->pattern()[1].spec);
  const auto* im = static_cast<const rte_flow_item_ipv4*>(f->pattern()[1].mask);
  EXPECT_EQ(ntohl(is->hdr.src_addr), 0x0a010000u);
  EXPECT_EQ(ntohl(im->hdr.src_addr), 0xffff0000u);
  EXPECT_EQ(ntohl(is->hdr.dst_addr), 0xc0a80107u);
  EXPECT_EQ(ntohl(im->hdr.dst_addr), 0xffffffffu);
  EXPECT_EQ(is->hdr.next_proto_id, 17);
  EXPECT_EQ(im->hdr.next_proto_id, 0xff);
  const auto* us = static_cast<const rte_flow_item_udp*>(f->pattern()[2].spec);
  const auto* um = static_cast<const rte_flow_item_udp*>(f->pattern()[2].mask);
  EXPECT_EQ(ntohs(us->hdr.dst_port), 5000);
  EXPECT_EQ(ntohs(um->hdr.dst_port), 0xffff);
  EXPECT_EQ(ntohs(us->hdr.src_port), 0x4000);
  EXPECT_EQ(ntohs(um->hdr.src_port), 0xc000);
  EXPECT_EQ(ToTestpmd(r, 0, 0),
            "flow create 0 ingress priority 5 pattern eth / ipv4 src spec 10.1.0.0 src mask 255.255.0.0 "
            "dst spec 192.168.1.7 dst mask 255.255.255.255 proto is 17 / udp src spec 16384 src mask 0xc000 "
            "dst spec 5000 dst mask 0xffff / end actions queue index 3 / end");
}

TEST(RteFlowRules, Ipv6PrefixTcpWithoutPortsDropAndMark) {
  pb::NicRule p = Base();
  std::string addr(16, '\0');
  addr[0] = '\x20', addr[1] = '\x01', addr[2] = '\x0d', addr[3] = '\xb8', addr[6] = '\x10';
  p.mutable_match()->set_ip_dst(addr);
  p.mutable_match()->set_ip_dst_prefix(52);
  p.mutable_match()->set_ip_proto(6);
  p.mutable_action()->set_drop(true);
  SteerRule r = Parse(p);
  std::unique_ptr<RteFlowRule> f;
  ASSERT_TRUE(RteFlowRule::Build(r, 0, &f).ok());
  ASSERT_EQ(Types(*f), (std::vector<rte_flow_item_type>{RTE_FLOW_ITEM_TYPE_ETH, RTE_FLOW_ITEM_TYPE_IPV6,
                                                        RTE_FLOW_ITEM_TYPE_TCP, RTE_FLOW_ITEM_TYPE_END}));
  const auto* im = static_cast<const rte_flow_item_ipv6*>(f->pattern()[1].mask);
  const uint8_t want[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(0, memcmp(im->hdr.dst_addr, want, 16));
  EXPECT_EQ(static_cast<const rte_flow_item_ipv6*>(f->pattern()[1].spec)->hdr.proto, 6);
  EXPECT_EQ(f->pattern()[2].spec, nullptr) << "TCP without ports matches any TCP header";
  EXPECT_EQ(f->actions()[0].type, RTE_FLOW_ACTION_TYPE_DROP);
  EXPECT_EQ(ToTestpmd(r, 0, 0),
            "flow create 0 ingress priority 0 pattern eth / ipv6 dst spec 2001:db8:0:1000:: dst mask "
            "ffff:ffff:ffff:f000:: proto is 6 / tcp / end actions drop / end");

  p.mutable_action()->set_mark(0xbeef);
  r = Parse(p);
  ASSERT_TRUE(RteFlowRule::Build(r, 2, &f).ok());
  ASSERT_EQ(f->actions().size(), 3u);
  EXPECT_EQ(f->actions()[0].type, RTE_FLOW_ACTION_TYPE_MARK);
  EXPECT_EQ(static_cast<const rte_flow_action_mark*>(f->actions()[0].conf)->id, 0xbeefu);
  EXPECT_EQ(f->actions()[1].type, RTE_FLOW_ACTION_TYPE_QUEUE);
  EXPECT_EQ(static_cast<const rte_flow_action_queue*>(f->actions()[1].conf)->index, 2);
}

// net_tap implements rte_flow validation in software (it cannot create rules here: no tc flower), so a rule it
// validates is at least well-formed for a real PMD: items in a legal order, specs/masks it understands.
TEST(RteFlowRules, NetTapValidatesTheBuiltRules) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: creates a tap interface in a private netns";
  test::VethNetns ns;
  auto port = DpdkPort::open("net_tap_rteflow0,iface=mtap0", 4, 4, test::pool());
  std::vector<SteerRule> rules;
  SteerRule tag;
  ASSERT_TRUE(TagRule(pb::TAG_MAC, 7, 3, "tag", &tag).ok());
  rules.push_back(tag);
  ASSERT_TRUE(TagRule(pb::TAG_VLAN, 100, 1, "tag", &tag).ok());
  rules.push_back(tag);
  pb::NicRule p = Base(1);
  p.mutable_match()->set_ip_dst(std::string("\xc0\xa8\x01\x00", 4));
  p.mutable_match()->set_ip_dst_prefix(24);
  p.mutable_match()->set_ip_proto(17);
  p.mutable_match()->set_l4_dst(5000);
  p.mutable_match()->set_l4_dst_mask(0xffff);
  rules.push_back(Parse(p));
  p.mutable_action()->set_drop(true);
  rules.push_back(Parse(p));
  for (const SteerRule& r : rules) {
    std::unique_ptr<RteFlowRule> f;
    ASSERT_TRUE(RteFlowRule::Build(r, 0, &f).ok());
    rte_flow_error err{};
    const int rc = rte_flow_validate(port->port_id(), &f->attr(), f->pattern().data(), f->actions().data(), &err);
    EXPECT_EQ(rc, 0) << ToTestpmd(r, port->port_id(), 0) << ": " << (err.message ? err.message : "no message");
  }
}

}  // namespace
}  // namespace metron

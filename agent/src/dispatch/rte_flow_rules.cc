#include "dispatch/rte_flow_rules.h"

#include <arpa/inet.h>

#include <cstring>

namespace metron {

grpc::Status RteFlowRule::Build(const SteerRule& rule, uint16_t default_queue, std::unique_ptr<RteFlowRule>* out) {
  std::unique_ptr<RteFlowRule> f(new RteFlowRule());
  const SteerMatch& m = rule.match;
  f->attr_.ingress = 1;
  f->attr_.priority = rule.priority;

  auto add = [&](rte_flow_item_type type, const void* spec, const void* mask) {
    f->pattern_.push_back({type, spec, nullptr, mask});
  };

  const uint8_t version = m.ip_version();
  // Explicit ether_type only when no IP item says it already (and not on ETH when a VLAN item follows).
  const uint16_t ether_type = version ? 0 : m.ether_type;
  bool eth_used = false;
  if (m.has_eth_dst) {
    std::memcpy(f->eth_spec_.hdr.dst_addr.addr_bytes, m.eth_dst.data(), 6);
    std::memcpy(f->eth_mask_.hdr.dst_addr.addr_bytes, m.eth_dst_mask.data(), 6);
    eth_used = true;
  }
  // A VLAN item after ETH already means "tagged"; ETH's has_vlan bit would say it again and some PMDs (net_tap)
  // reject that field.
  if (!m.vlan && ether_type) {
    f->eth_spec_.hdr.ether_type = htons(ether_type);
    f->eth_mask_.hdr.ether_type = 0xffff;
    eth_used = true;
  }
  add(RTE_FLOW_ITEM_TYPE_ETH, eth_used ? &f->eth_spec_ : nullptr, eth_used ? &f->eth_mask_ : nullptr);
  if (m.vlan) {
    f->vlan_spec_.hdr.vlan_tci = htons(m.vlan);
    f->vlan_mask_.hdr.vlan_tci = htons(0x0fff);
    if (ether_type) {
      f->vlan_spec_.hdr.eth_proto = htons(ether_type);
      f->vlan_mask_.hdr.eth_proto = 0xffff;
    }
    add(RTE_FLOW_ITEM_TYPE_VLAN, &f->vlan_spec_, &f->vlan_mask_);
  }

  if (version == 4) {
    bool used = false;
    if (m.ip_src.version) {
      std::memcpy(&f->ipv4_spec_.hdr.src_addr, m.ip_src.addr.data(), 4);
      PrefixMask(m.ip_src.len, reinterpret_cast<uint8_t*>(&f->ipv4_mask_.hdr.src_addr), 4);
      used |= m.ip_src.len > 0;
    }
    if (m.ip_dst.version) {
      std::memcpy(&f->ipv4_spec_.hdr.dst_addr, m.ip_dst.addr.data(), 4);
      PrefixMask(m.ip_dst.len, reinterpret_cast<uint8_t*>(&f->ipv4_mask_.hdr.dst_addr), 4);
      used |= m.ip_dst.len > 0;
    }
    if (m.ip_proto) {
      f->ipv4_spec_.hdr.next_proto_id = m.ip_proto;
      f->ipv4_mask_.hdr.next_proto_id = 0xff;
      used = true;
    }
    add(RTE_FLOW_ITEM_TYPE_IPV4, used ? &f->ipv4_spec_ : nullptr, used ? &f->ipv4_mask_ : nullptr);
  } else if (version == 6) {
    bool used = false;
    if (m.ip_src.version) {
      std::memcpy(f->ipv6_spec_.hdr.src_addr, m.ip_src.addr.data(), 16);
      PrefixMask(m.ip_src.len, f->ipv6_mask_.hdr.src_addr, 16);
      used |= m.ip_src.len > 0;
    }
    if (m.ip_dst.version) {
      std::memcpy(f->ipv6_spec_.hdr.dst_addr, m.ip_dst.addr.data(), 16);
      PrefixMask(m.ip_dst.len, f->ipv6_mask_.hdr.dst_addr, 16);
      used |= m.ip_dst.len > 0;
    }
    if (m.ip_proto) {
      f->ipv6_spec_.hdr.proto = m.ip_proto;
      f->ipv6_mask_.hdr.proto = 0xff;
      used = true;
    }
    add(RTE_FLOW_ITEM_TYPE_IPV6, used ? &f->ipv6_spec_ : nullptr, used ? &f->ipv6_mask_ : nullptr);
  }

  if (m.ip_proto == 6 || m.ip_proto == 17 || m.ip_proto == 132) {
    const bool ports = m.l4_src.mask || m.l4_dst.mask;
    const uint16_t sv = htons(m.l4_src.value), sm = htons(m.l4_src.mask);
    const uint16_t dv = htons(m.l4_dst.value), dm = htons(m.l4_dst.mask);
    if (m.ip_proto == 6) {
      f->tcp_spec_.hdr.src_port = sv, f->tcp_mask_.hdr.src_port = sm;
      f->tcp_spec_.hdr.dst_port = dv, f->tcp_mask_.hdr.dst_port = dm;
      add(RTE_FLOW_ITEM_TYPE_TCP, ports ? &f->tcp_spec_ : nullptr, ports ? &f->tcp_mask_ : nullptr);
    } else if (m.ip_proto == 17) {
      f->udp_spec_.hdr.src_port = sv, f->udp_mask_.hdr.src_port = sm;
      f->udp_spec_.hdr.dst_port = dv, f->udp_mask_.hdr.dst_port = dm;
      add(RTE_FLOW_ITEM_TYPE_UDP, ports ? &f->udp_spec_ : nullptr, ports ? &f->udp_mask_ : nullptr);
    } else {
      f->sctp_spec_.hdr.src_port = sv, f->sctp_mask_.hdr.src_port = sm;
      f->sctp_spec_.hdr.dst_port = dv, f->sctp_mask_.hdr.dst_port = dm;
      add(RTE_FLOW_ITEM_TYPE_SCTP, ports ? &f->sctp_spec_ : nullptr, ports ? &f->sctp_mask_ : nullptr);
    }
  }
  add(RTE_FLOW_ITEM_TYPE_END, nullptr, nullptr);

  switch (rule.action.kind) {
    case SteerActionKind::kQueue:
      f->queue_.index = static_cast<uint16_t>(rule.action.value);
      f->actions_.push_back({RTE_FLOW_ACTION_TYPE_QUEUE, &f->queue_});
      break;
    case SteerActionKind::kDrop:
      f->actions_.push_back({RTE_FLOW_ACTION_TYPE_DROP, nullptr});
      break;
    case SteerActionKind::kMark:
      f->mark_.id = rule.action.value;
      f->queue_.index = default_queue;
      f->actions_.push_back({RTE_FLOW_ACTION_TYPE_MARK, &f->mark_});
      f->actions_.push_back({RTE_FLOW_ACTION_TYPE_QUEUE, &f->queue_});
      break;
  }
  f->actions_.push_back({RTE_FLOW_ACTION_TYPE_END, nullptr});
  *out = std::move(f);
  return grpc::Status::OK;
}

}  // namespace metron

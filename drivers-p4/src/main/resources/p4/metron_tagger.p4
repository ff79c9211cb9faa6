/*
 * Metron tagging pipeline for P4Runtime switches (v1model).
 *
 * One table, `tagger`, holds the stateless part of every service chain that the controller offloads to this
 * switch: first-match classifier rules over the IPv4/IPv6 5-tuple, in priority order (higher wins, as the
 * synthesizer's OffloadRules), each either tagging the packet for its traffic-class group on a server
 * (docs/contracts.md#tags), forwarding it untouched, or dropping it.
 *
 *   set_tag_mac(tag, port)          dst MAC := 02:4d:GG:GG:CC:CC, out `port`
 *   push_vlan_tag(vid, tag, port)   push 802.1Q with VLAN id = group tag, dst MAC := 02:4d:00:00:CC:CC
 *   forward(port)                   out `port`, unchanged (classes that need no server, transit)
 *   drop()                          default
 *
 * No P4 compiler installs on the build machine: p4info.txt next to this file was written by hand to match it
 * (same names, bit widths and match kinds; ids chosen with P4Runtime's per-type prefixes).
 */
#include <core.p4>
#include <v1model.p4>

typedef bit<9>   port_t;
typedef bit<48>  mac_t;
typedef bit<32>  ipv4_t;
typedef bit<128> ipv6_t;

const bit<16> ETH_TYPE_IPV4 = 0x0800;
const bit<16> ETH_TYPE_IPV6 = 0x86dd;
const bit<16> ETH_TYPE_VLAN = 0x8100;
const bit<8>  PROTO_TCP = 6;
const bit<8>  PROTO_UDP = 17;

header ethernet_t {
    mac_t   dst_addr;
    mac_t   src_addr;
    bit<16> ether_type;
}

header vlan_t {
    bit<3>  pcp;
    bit<1>  dei;
    bit<12> vid;
    bit<16> ether_type;
}

header ipv4_t_h {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  dscp_ecn;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    ipv4_t  src_addr;
    ipv4_t  dst_addr;
}

header ipv6_t_h {
    bit<4>   version;
    bit<8>   traffic_class;
    bit<20>  flow_label;
    bit<16>  payload_len;
    bit<8>   next_hdr;
    bit<8>   hop_limit;
    ipv6_t   src_addr;
    ipv6_t   dst_addr;
}

header l4_ports_t {
    bit<16> src_port;
    bit<16> dst_port;
}

struct headers_t {
    ethernet_t ethernet;
    vlan_t     vlan;
    ipv4_t_h   ipv4;
    ipv6_t_h   ipv6;
    l4_ports_t l4;
}

struct local_metadata_t {
    bit<8>  ip_proto;
    bit<16> l4_src_port;
    bit<16> l4_dst_port;
}

parser TaggerParser(packet_in pkt, out headers_t hdr, inout local_metadata_t meta,
                    inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETH_TYPE_IPV4: parse_ipv4;
            ETH_TYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        meta.ip_proto = hdr.ipv4.protocol;
        // only first fragments carry ports
        transition select(hdr.ipv4.protocol, hdr.ipv4.frag_offset) {
            (PROTO_TCP, 0): parse_l4;
            (PROTO_UDP, 0): parse_l4;
            default: accept;
        }
    }
    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        meta.ip_proto = hdr.ipv6.next_hdr;
        transition select(hdr.ipv6.next_hdr) {
            PROTO_TCP: parse_l4;
            PROTO_UDP: parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        pkt.extract(hdr.l4);
        meta.l4_src_port = hdr.l4.src_port;
        meta.l4_dst_port = hdr.l4.dst_port;
        transition accept;
    }
}

control TaggerVerifyChecksum(inout headers_t hdr, inout local_metadata_t meta) {
    apply { }
}

control TaggerIngress(inout headers_t hdr, inout local_metadata_t meta, inout standard_metadata_t std) {

    direct_counter(CounterType.packets_and_bytes) tagger_counter;

    action drop() {
        mark_to_drop(std);
        tagger_counter.count();
    }

    action forward(port_t port) {
        std.egress_spec = port;
        tagger_counter.count();
    }

    action set_tag_mac(mac_t tag, port_t port) {
        hdr.ethernet.dst_addr = tag;
        std.egress_spec = port;
        tagger_counter.count();
    }

    action push_vlan_tag(bit<12> vid, mac_t tag, port_t port) {
        hdr.vlan.setValid();
        hdr.vlan.pcp = 0;
        hdr.vlan.dei = 0;
        hdr.vlan.vid = vid;
        hdr.vlan.ether_type = hdr.ethernet.ether_type;
        hdr.ethernet.ether_type = ETH_TYPE_VLAN;
        hdr.ethernet.dst_addr = tag;
        std.egress_spec = port;
        tagger_counter.count();
    }

    table tagger {
        key = {
            std.ingress_port         : ternary @name("ingress_port");
            hdr.ethernet.ether_type  : ternary @name("eth_type");
            hdr.ipv4.src_addr        : ternary @name("ipv4_src");
            hdr.ipv4.dst_addr        : ternary @name("ipv4_dst");
            hdr.ipv6.src_addr        : ternary @name("ipv6_src");
            hdr.ipv6.dst_addr        : ternary @name("ipv6_dst");
            meta.ip_proto            : ternary @name("ip_proto");
            meta.l4_src_port         : range   @name("l4_src_port");
            meta.l4_dst_port         : range   @name("l4_dst_port");
        }
        actions = {
            set_tag_mac;
            push_vlan_tag;
            forward;
            drop;
        }
        default_action = drop();
        counters = tagger_counter;
        size = 4096;
    }

    apply {
        tagger.apply();
    }
}

control TaggerEgress(inout headers_t hdr, inout local_metadata_t meta, inout standard_metadata_t std) {
    apply { }
}

control TaggerComputeChecksum(inout headers_t hdr, inout local_metadata_t meta) {
    apply { }
}

control TaggerDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv6);
        pkt.emit(hdr.l4);
    }
}

V1Switch(TaggerParser(), TaggerVerifyChecksum(), TaggerIngress(), TaggerEgress(),
         TaggerComputeChecksum(), TaggerDeparser()) main;

// Golden-packet helpers for tests: build real frames in mbufs, run them through a group graph, collect what
// leaves each egress.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/element.h"
#include "core/graph.h"

namespace metron::test {

struct Flow {
  std::string src = "10.0.0.1";
  std::string dst = "192.168.1.1";
  uint16_t sport = 1234;
  uint16_t dport = 80;
  uint8_t proto = 17;  // 6 tcp, 17 udp, 1 icmp
  uint8_t ttl = 64;
  uint16_t payload = 18;
  uint8_t tcp_flags = 0;  // TCP only: SYN 0x02, FIN 0x01, RST 0x04, ACK 0x10
  std::string dst_mac = "02:4d:00:01:00:02";
  std::string src_mac = "02:00:00:00:00:01";
  uint16_t vlan = 0;  // 0 = untagged
  bool ipv6 = false;
};

// Frame bytes: Ethernet [+ VLAN] + IPv4/IPv6 + UDP/TCP/ICMP header + zero payload, checksums valid.
std::vector<uint8_t> frame(const Flow& f);
// One IPv6 extension header for with_ipv6_extensions: hop-by-hop (0), routing (43), destination options (60)
// and anything the walker does not read through (AH 51, ESP 50, ...) take (len + 1) x 8 bytes of zeros and
// PadN; a fragment header (44) is 8 bytes with the offset (8-byte units) and more-fragments flag.
struct Ipv6Ext {
  uint8_t type;
  uint8_t len = 0;
  uint16_t frag_offset = 0;
  bool mf = false;
};
// The IPv6 frame with `ext` between its IPv6 header (at l3) and its upper layer, in order: next-header chain and
// payload length fixed, the upper layer (and its checksum, which does not cover them) unchanged.
std::vector<uint8_t> with_ipv6_extensions(const std::vector<uint8_t>& frame, const std::vector<Ipv6Ext>& ext,
                                          size_t l3 = 14);
rte_mbuf* mbuf_of(const std::vector<uint8_t>& bytes);
std::vector<uint8_t> bytes_of(const rte_mbuf* m);

// The addresses, ports and protocol of an IPv4 TCP/UDP frame (IP header at l3).
struct FrameTuple {
  std::string src, dst;
  uint16_t sport = 0, dport = 0;
  uint8_t proto = 0;
};
FrameTuple tuple_of(const std::vector<uint8_t>& frame, size_t l3 = 14);

// Verifies the IPv4 header checksum and the TCP/UDP checksum of a frame (IP at l3 offset).
bool ipv4_checksums_ok(const std::vector<uint8_t>& frame, size_t l3);

class CollectSink : public EgressSink {
 public:
  explicit CollectSink(int n) : out(n) {}
  void egress(int k, PacketBatch& b) override {
    for (uint16_t i = 0; i < b.n; ++i) {
      out[k].push_back(bytes_of(b.pkts[i]));
    }
    b.free_all();
  }
  int egress_count() const override { return static_cast<int>(out.size()); }
  std::vector<std::vector<std::vector<uint8_t>>> out;
};

// A group graph with its sink.
struct GroupUnderTest {
  explicit GroupUnderTest(const std::string& click, int egress = 2, unsigned slot = 0, unsigned slots = 1);
  // Pushes frames through `input` in bursts of up to 32.
  void push(const std::vector<std::vector<uint8_t>>& frames);
  void push(const std::vector<uint8_t>& f) { push(std::vector<std::vector<uint8_t>>{f}); }
  // The same, each frame's mbuf with ol_flags as a port's receive path wrote them (a NIC's checksum verdict).
  void push(const std::vector<std::pair<std::vector<uint8_t>, uint64_t>>& frames);
  CollectSink sink;
  std::unique_ptr<Graph> graph;
};

}  // namespace metron::test

#include "packets.h"

#include <arpa/inet.h>

#include <cstring>
#include <stdexcept>

#include "core/annotations.h"
#include "test_env.h"
#include "utils/args.h"
#include "utils/checksum.h"

namespace metron::test {

namespace {
uint32_t l4_sum(const uint8_t* l4, size_t len, uint32_t pseudo) { return csum_add_bytes(pseudo, l4, len); }
}  // namespace

std::vector<uint8_t> frame(const Flow& f) {
  std::vector<uint8_t> p;
  uint8_t mac[6];
  parse_mac(f.dst_mac, "dst", mac);
  p.insert(p.end(), mac, mac + 6);
  parse_mac(f.src_mac, "src", mac);
  p.insert(p.end(), mac, mac + 6);
  if (f.vlan) {
    p.push_back(0x81), p.push_back(0x00);
    p.push_back(static_cast<uint8_t>(f.vlan >> 8)), p.push_back(static_cast<uint8_t>(f.vlan));
  }
  const size_t l3 = p.size() + 2;
  const size_t l4len = (f.proto == 6 ? 20 : 8) + f.payload;
  if (!f.ipv6) {
    p.push_back(0x08), p.push_back(0x00);
    p.resize(l3 + 20 + l4len, 0);
    uint8_t* ip = p.data() + l3;
    ip[0] = 0x45;
    store16(ip + 2, static_cast<uint16_t>(20 + l4len));
    ip[8] = f.ttl;
    ip[9] = f.proto;
    store32(ip + 12, ntohl(parse_ipv4(f.src, "src")));
    store32(ip + 16, ntohl(parse_ipv4(f.dst, "dst")));
    store16(ip + 10, ipv4_header_csum(ip, 20));
  } else {
    p.push_back(0x86), p.push_back(0xdd);
    p.resize(l3 + 40 + l4len, 0);
    uint8_t* ip = p.data() + l3;
    ip[0] = 0x60;
    store16(ip + 4, static_cast<uint16_t>(l4len));
    ip[6] = f.proto;
    ip[7] = f.ttl;
    parse_ipv6(f.src, "src", ip + 8);
    parse_ipv6(f.dst, "dst", ip + 24);
  }
  const size_t iphl = f.ipv6 ? 40 : 20;
  uint8_t* l4 = p.data() + l3 + iphl;
  if (f.proto == 6 || f.proto == 17) {
    store16(l4, f.sport);
    store16(l4 + 2, f.dport);
    if (f.proto == 6) l4[12] = 0x50, l4[13] = f.tcp_flags;
    else store16(l4 + 4, static_cast<uint16_t>(l4len));
    uint32_t pseudo = f.ipv6 ? csum_add_bytes(0, p.data() + l3 + 8, 32) : csum_add_bytes(0, p.data() + l3 + 12, 8);
    pseudo += f.proto + static_cast<uint32_t>(l4len);
    const size_t off = f.proto == 6 ? 16 : 6;
    uint16_t c = csum_fold(l4_sum(l4, l4len, pseudo));
    if (f.proto == 17 && c == 0) c = 0xffff;
    store16(l4 + off, c);
  } else if (f.proto == 1) {
    l4[0] = 8;
    store16(l4 + 2, csum_fold(csum_add_bytes(0, l4, l4len)));
  }
  return p;
}

std::vector<uint8_t> with_ipv6_extensions(const std::vector<uint8_t>& f, const std::vector<Ipv6Ext>& ext, size_t l3) {
  std::vector<uint8_t> p(f.begin(), f.begin() + static_cast<long>(l3 + 40));
  uint8_t next = f[l3 + 6];
  p[l3 + 6] = ext.empty() ? next : ext[0].type;
  for (size_t i = 0; i < ext.size(); ++i) {
    const Ipv6Ext& e = ext[i];
    const size_t at = p.size();
    p.resize(at + (e.type == 44 ? 8 : (e.len + 1) * 8u), 0);
    p[at] = i + 1 < ext.size() ? ext[i + 1].type : next;
    if (e.type == 44) {
      store16(p.data() + at + 2, static_cast<uint16_t>(e.frag_offset << 3 | (e.mf ? 1 : 0)));
      store32(p.data() + at + 4, 0x12345678);
    } else {
      p[at + 1] = e.len;
      p[at + 2] = 1;  // PadN over the rest
      p[at + 3] = static_cast<uint8_t>(p.size() - at - 4);
    }
  }
  const size_t added = p.size() - (l3 + 40);
  p.insert(p.end(), f.begin() + static_cast<long>(l3 + 40), f.end());
  store16(p.data() + l3 + 4, static_cast<uint16_t>(load16(p.data() + l3 + 4) + added));
  return p;
}

FrameTuple tuple_of(const std::vector<uint8_t>& f, size_t l3) {
  const uint8_t* ip = f.data() + l3;
  char s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, ip + 12, s, sizeof s);
  inet_ntop(AF_INET, ip + 16, d, sizeof d);
  const uint8_t* l4 = ip + (ip[0] & 0xf) * 4;
  return {s, d, load16(l4), load16(l4 + 2), ip[9]};
}

bool ipv4_checksums_ok(const std::vector<uint8_t>& p, size_t l3) {
  const uint8_t* ip = p.data() + l3;
  const size_t hl = (ip[0] & 0xf) * 4;
  if (ipv4_header_csum(ip, hl) != load16(ip + 10)) return false;
  const uint8_t proto = ip[9];
  if (proto != 6 && proto != 17) return true;
  const size_t l4len = load16(ip + 2) - hl;
  uint32_t sum = csum_add_bytes(0, ip + 12, 8) + proto + static_cast<uint32_t>(l4len);
  sum = csum_add_bytes(sum, ip + hl, l4len);
  return csum_fold(sum) == 0;
}

rte_mbuf* mbuf_of(const std::vector<uint8_t>& bytes) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool());
  if (m == nullptr) throw std::runtime_error("test pool exhausted");
  char* d = rte_pktmbuf_append(m, static_cast<uint16_t>(bytes.size()));
  if (d == nullptr) throw std::runtime_error("frame too large");
  std::memcpy(d, bytes.data(), bytes.size());
  clear_anno(m);
  return m;
}

std::vector<uint8_t> bytes_of(const rte_mbuf* m) {
  const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
  return std::vector<uint8_t>(d, d + rte_pktmbuf_data_len(m));
}

GroupUnderTest::GroupUnderTest(const std::string& click, int egress, unsigned slot, unsigned slots)
    : sink(egress) {
  pool();  // brings up the EAL and the annotation field
  GraphEnv env;
  env.egress = &sink;
  env.slot = slot;
  env.slots = slots;
  static int instance = 0;
  env.instance = "t" + std::to_string(++instance);
  graph = Graph::build(click, env);
}

void GroupUnderTest::push(const std::vector<std::vector<uint8_t>>& frames) {
  for (size_t i = 0; i < frames.size();) {
    PacketBatch b;
    while (b.n < kBurst && i < frames.size()) b.push_back(mbuf_of(frames[i++]));
    graph->push_input(b);
  }
}

void GroupUnderTest::push(const std::vector<std::pair<std::vector<uint8_t>, uint64_t>>& frames) {
  for (size_t i = 0; i < frames.size();) {
    PacketBatch b;
    while (b.n < kBurst && i < frames.size()) {
      rte_mbuf* m = mbuf_of(frames[i].first);
      m->ol_flags = frames[i++].second;
      b.push_back(m);
    }
    graph->push_input(b);
  }
}

}  // namespace metron::test

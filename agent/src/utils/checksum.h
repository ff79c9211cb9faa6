// Internet checksum helpers (RFC 1071) and incremental updates (RFC 1624), all on network-order data.
#pragma once

#include <rte_ip.h>

#include <cstdint>
#include <cstring>

namespace metron {

// Network to host order and back (the same swap either way). DPDK's rte_be_to_cpu_16/32 swap a variable in an
// `asm volatile` (rte_byteorder.h), which the compiler may neither fold into a comparison with a constant nor
// merge with another swap of the same value nor drop when unused: the per-packet paths swap with the builtins.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "be16/be32 swap: a little-endian host");
constexpr uint16_t be16(uint16_t v) { return __builtin_bswap16(v); }
constexpr uint32_t be32(uint32_t v) { return __builtin_bswap32(v); }

inline uint32_t csum_add_bytes(uint32_t sum, const uint8_t* p, size_t len) {
  for (; len >= 2; p += 2, len -= 2) sum += static_cast<uint32_t>(p[0]) << 8 | p[1];
  if (len) sum += static_cast<uint32_t>(p[0]) << 8;
  return sum;
}

inline uint16_t csum_fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// The one's-complement sum of an option-less IPv4 header (nearly every packet; CheckIPHeader verifies each one),
// folded to 16 bits, over native-endian words, with or without its checksum field: two 8-byte words and a 4-byte
// one, added with their carries brought around (2^64 = 1 modulo 2^16 - 1, as 2^32 and 2^16 are), the same sum
// as the loop over half-words, bit for bit, without the loop.
inline uint16_t ipv4_header20_sum(const uint8_t* ip, bool with_checksum) {
  uint64_t a, b;
  uint32_t c;
  std::memcpy(&a, ip, 8);
  std::memcpy(&b, ip + 8, 8);
  std::memcpy(&c, ip + 16, 4);
  if (!with_checksum) b &= ~uint64_t{0xffff0000};  // bytes 10-11 (little-endian: bits 16-31 of bytes 8-15)
  uint64_t s = a + b;
  s += s < a;  // the carry out of bit 63, back in at bit 0 (s <= 2^64 - 2 before it: no second carry)
  const uint64_t t = s + c;
  s = t + (t < s);
  s = (s & 0xffffffff) + (s >> 32);  // < 2^33
  s = (s & 0xffffffff) + (s >> 32);  // < 2^32
  return __rte_raw_cksum_reduce(static_cast<uint32_t>(s));
}

// Full IPv4 header checksum (the checksum field itself excluded), in host order. DPDK's rte_raw_cksum sums
// whole words at a time, several times faster than a byte loop on the per-packet path.
inline uint16_t ipv4_header_csum(const uint8_t* ip, size_t hlen) {
  // The raw sum is over native-endian words, i.e. already in wire order once stored; callers use host order.
  if (hlen == 20) return be16(static_cast<uint16_t>(~ipv4_header20_sum(ip, false)));
  uint32_t sum = __rte_raw_cksum(ip, 10, 0);
  sum = __rte_raw_cksum(ip + 12, hlen - 12, sum);
  return be16(static_cast<uint16_t>(~__rte_raw_cksum_reduce(sum)));
}

// Whether an IPv4 header's checksum verifies, decided as Click's CheckIPHeader decides it (click_in_cksum over the
// whole header, checksum field included, is 0): the one's-complement sum of all its words is 0xffff, so a stored
// 0x0000 and 0xffff both stand for a computed zero. One sum, no separate checksum to compute and compare.
inline bool ipv4_header_valid(const uint8_t* ip, size_t hlen) {
  if (hlen == 20) return ipv4_header20_sum(ip, true) == 0xffff;
  return __rte_raw_cksum_reduce(__rte_raw_cksum(ip, hlen, 0)) == 0xffff;
}

// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), for 16-bit words in host order.
inline uint16_t csum_update16(uint16_t hc, uint16_t old_word, uint16_t new_word) {
  uint32_t sum = static_cast<uint16_t>(~hc) + static_cast<uint16_t>(~old_word) + new_word;
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// Several RFC 1624 updates at once: csum_apply(hc, sum of csum_term(old_i, new_i)) equals applying
// csum_update16(hc, old_i, new_i) word by word for the words that changed (an unchanged word's term is 0, as
// skipping it is: one's-complement sums fold the same however they are grouped).
inline uint32_t csum_term(uint16_t old_word, uint16_t new_word) {
  const uint32_t t = static_cast<uint16_t>(~old_word) + static_cast<uint32_t>(new_word);
  // A mask, not a select: whether a port changes depends on the packet (a balancer keeps some destination ports,
  // not others), and the compiler made the select a branch that mispredicted.
  return t & (0u - static_cast<uint32_t>(old_word != new_word));
}
inline uint16_t csum_apply(uint16_t hc, uint32_t terms) {
  uint32_t sum = static_cast<uint16_t>(~hc) + terms;
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// csum_apply with the terms already summed and folded to 16 bits: one fold is enough (~hc + d < 0x1ffff). The
// same in either byte order, given both in it (RFC 1071's byte-order independence).
inline uint16_t csum_apply16(uint16_t hc, uint16_t d) {
  uint32_t sum = static_cast<uint16_t>(~hc) + static_cast<uint32_t>(d);
  sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// An IPv4 header's checksum as stored (network order) after its TTL went down by one (the TTL, the high byte of
// its word, was at least 2: no borrow): RFC 1624 eqn. 3 with ~m + m' = 0xfeff for every packet, as in Click's
// DecIPTTL, added in the stored order (csum_apply16: either order) so neither side is swapped.
inline uint16_t ipv4_ttl_dec_term() { return be16(0xfeff); }
inline uint16_t ipv4_ttl_dec_csum(uint16_t stored) { return csum_apply16(stored, ipv4_ttl_dec_term()); }
inline uint16_t csum_update32(uint16_t hc, uint32_t old_v, uint32_t new_v) {
  hc = csum_update16(hc, static_cast<uint16_t>(old_v >> 16), static_cast<uint16_t>(new_v >> 16));
  return csum_update16(hc, static_cast<uint16_t>(old_v), static_cast<uint16_t>(new_v));
}

// Whether an IP protocol number is TCP or UDP (headers with ports), as one expression the compiler does not turn
// into a branch on which of the two it is: traffic mixes them packet by packet, and such a branch mispredicts at
// every change (a mixed trace ran 1.13-1.19x slower than a one-protocol one; BENCHMARKS.md, session 26). The
// per-packet tests of TCP-or-UDP go through it.
inline bool tcp_or_udp(uint8_t proto) { return (proto == 6) | (proto == 17); }

// Big-endian fields as one load or store and a byte swap each: stored byte by byte (a shift and a store per byte)
// they took 18 instructions per packet in a rewriter hit's rewrite alone (callgrind; 80 -> 67 for the rewrite).
inline uint16_t load16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return be16(v);
}
inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return be32(v);
}
inline void store16(uint8_t* p, uint16_t v) {
  v = be16(v);
  std::memcpy(p, &v, 2);
}
inline void store32(uint8_t* p, uint32_t v) {
  v = be32(v);
  std::memcpy(p, &v, 4);
}

}  // namespace metron

// IPv6 extension headers read through to the upper layer: the one walker of the classifiers (ip_rules.cc) and
// the rewriters (rewriter_core.cc), so both read the same protocol and ports. It reads them as the synthesizer's
// reference interpreter does (FrameCodec.fields; docs/contracts.md#ipv6), which the real-data-plane checker
// (tests/e2e/test_real_equivalence.py) compares the agent with:
// - hop-by-hop (0), routing (43) and destination options (60) are skipped by their length field ((len + 1) x 8
//   bytes), a fragment header (44) by its 8 bytes, in any order and number, until another next-header value;
// - that value is the protocol: TCP, UDP, ICMPv6, and also AH (51), ESP (50), no-next-header (59) and anything
//   unknown, which end the walk (none of them is read through);
// - a fragment header gives the first-fragment and more-fragments facts (the last one met wins); the walk goes
//   on behind it even in a later fragment (the reference does), but a later fragment has no transport header;
// - a header whose first 8 bytes do not fit in the datagram (40 + payload length, at most the bytes there are)
//   ends the walk with `cut`: the reference has no reading of such a packet (outside its model); here its
//   protocol is the extension header that did not fit, so no transport test holds. A header longer than what is
//   left is skipped as the reference skips it; readers check `l4` against `end`, so nothing is read past it.
// Header-only so the per-packet paths inline it; no allocation, a bounded loop (each step moves >= 8 bytes).
#pragma once

#include <cstdint>

#include "utils/checksum.h"

namespace metron {

struct Ipv6Upper {
  uint8_t proto = 0;        // the upper-layer protocol (or the extension header that did not fit)
  bool first_frag = true;   // fragment offset 0 (true without a fragment header)
  bool mf = false;          // more-fragments flag
  bool cut = false;         // the chain runs past the datagram's end
  int l4 = 40;              // offset of the upper-layer header from the IP header
  int end = 40;             // the datagram's length from the IP header
};

constexpr bool ipv6_extension_walked(uint8_t next_header) {
  return next_header == 0 || next_header == 43 || next_header == 44 || next_header == 60;
}

// `ip`: a marked IPv6 header with `left` >= 40 bytes after it in the buffer.
inline Ipv6Upper ipv6_upper_layer(const uint8_t* ip, int left) {
  Ipv6Upper u;
  const int claimed = 40 + load16(ip + 4);
  u.end = claimed < left ? claimed : left;
  u.proto = ip[6];
  while (ipv6_extension_walked(u.proto)) {
    const uint8_t* h = ip + u.l4;
    if (u.l4 + 8 > u.end) {
      u.cut = true;
      return u;
    }
    if (u.proto == 44) {
      const uint16_t off = load16(h + 2);
      u.first_frag = (off & 0xfff8) == 0;
      u.mf = (off & 1) != 0;
      u.l4 += 8;
    } else {
      u.l4 += (h[1] + 1) * 8;
    }
    u.proto = h[0];
  }
  return u;
}

}  // namespace metron

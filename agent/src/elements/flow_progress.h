// A flow's progress under Click's rewriter rules (FlowMeta::state, which picks the flow's Click timeout), as a
// table read once per packet: inline, since every rewriter hit looks it up.
#pragma once

#include <cstdint>

namespace metron {

namespace progress_detail {
// Click's rules for a flow's progress, as written: the one definition, which kProgress tabulates.
constexpr uint8_t progress_rule(unsigned state, bool tcp, unsigned dir, unsigned flags, bool payload) {
  if (!tcp) {  // UDP: replies seen, packets counted up to 3
    const unsigned count = (state >> 1 & 3u) + 1 < 3u ? (state >> 1 & 3u) + 1 : 3u;
    return static_cast<uint8_t>((state & 1u) | dir | count << 1);
  }
  unsigned st = state;
  if (flags & 0x04) st |= 12;                               // RST: both directions done
  else if (flags & 0x01) st |= 4u << dir;                   // FIN: this direction done
  else if ((flags & 0x02) || payload) st &= ~(4u << dir);   // SYN or data: this direction open again
  if (payload) st |= 1u << dir;
  return static_cast<uint8_t>(st & 0x7f);
}

// Every next progress, by [tcp][reply][payload][RST|SYN|FIN][the record's byte] (16 KB): one load per packet,
// with no branch on the protocol or the flags, where the rules as branches mispredicted at every change between
// TCP and UDP (see tcp_or_udp) and as masks took ~40 instructions. Indexed by, and giving, the byte the state
// shares with the record's live bit (FlowMeta: live in bit 0, the state above it), which it keeps: the update
// reads and writes that byte whole, with no bit-field shifts and masks on either side.
struct ProgressTable {
  uint8_t next[2][2][2][8][256];
  constexpr ProgressTable() : next() {
    for (unsigned t = 0; t < 2; ++t)
      for (unsigned d = 0; d < 2; ++d)
        for (unsigned p = 0; p < 2; ++p)
          for (unsigned f = 0; f < 8; ++f)
            for (unsigned b = 0; b < 256; ++b)
              next[t][d][p][f][b] = static_cast<uint8_t>(progress_rule(b >> 1, t != 0, d, f, p != 0) << 1 | (b & 1));
  }
};
inline constexpr ProgressTable kProgress;
}  // namespace progress_detail

// A flow's progress after one more packet: UDP counts packets up to 3 and notes replies; TCP notes data each way,
// and a FIN (one way) or RST (both) closes what SYN or data opens. `tcp_flags` and `tcp_payload` (the TCP segment
// carries data) are ignored for UDP, whose packets may pass whatever follows their header there: a UDP row ignores
// them, so they index it unmasked.
// `live_state`: a record's live bit (bit 0) and state (above it) as one byte (flow_table.h's progress_byte), the
// same byte returned with the state moved on and the live bit as it was.
inline uint8_t next_progress_byte(uint8_t live_state, bool tcp, bool reply, uint8_t tcp_flags, bool tcp_payload) {
  return progress_detail::kProgress.next[tcp][reply][tcp_payload][tcp_flags & 7u][live_state];
}
inline uint8_t next_progress(uint8_t state, bool tcp, bool reply, uint8_t tcp_flags, bool tcp_payload) {
  return next_progress_byte(static_cast<uint8_t>(state << 1), tcp, reply, tcp_flags, tcp_payload) >> 1;
}

}  // namespace metron

// Per-packet annotations that survive header stripping, like Click's network-header annotation: where the IP
// header is, as an absolute offset into the mbuf's buffer so Strip/Unstrip/EtherEncap never need to fix it.
// Stored in an mbuf dynamic field registered once per process.
#pragma once

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cstdint>

namespace metron {

struct PacketAnno {
  uint16_t ip_abs;  // offset of the IP header from buf_addr; valid when ip_ver != 0
  uint8_t ip_ver;   // 4, 6, or 0 = not marked
  uint8_t paint;    // Click's paint annotation
};

extern int g_anno_offset;
// Registers the dynamic field; idempotent. Called by the engine and tests after EAL init.
void register_annotations();

// `offset`: g_anno_offset, which a loop over many packets reads once (the stores could alias the global, which
// each packet would load again).
inline PacketAnno& anno(rte_mbuf* m, int offset) { return *RTE_MBUF_DYNFIELD(m, offset, PacketAnno*); }
inline PacketAnno& anno(rte_mbuf* m) { return anno(m, g_anno_offset); }

// The IP header; with the annotation already read (a per-packet path that needs more of it reads it once).
inline uint8_t* ip_header(rte_mbuf* m, const PacketAnno& a) { return static_cast<uint8_t*>(m->buf_addr) + a.ip_abs; }
inline uint8_t* ip_header(rte_mbuf* m) { return ip_header(m, anno(m)); }

// anno_offset: as anno()'s.
inline void mark_ip(rte_mbuf* m, const uint8_t* ip, uint8_t ver, int anno_offset) {
  PacketAnno& a = anno(m, anno_offset);
  a.ip_abs = static_cast<uint16_t>(ip - static_cast<uint8_t*>(m->buf_addr));
  a.ip_ver = ver;
}
inline void mark_ip(rte_mbuf* m, const uint8_t* ip, uint8_t ver) { mark_ip(m, ip, ver, g_anno_offset); }

// Bytes from the IP header to the end of the packet's (single-segment) data.
inline int ip_bytes_left(rte_mbuf* m, const PacketAnno& a) {
  return static_cast<int>(m->data_off + m->data_len) - static_cast<int>(a.ip_abs);
}
inline int ip_bytes_left(rte_mbuf* m) { return ip_bytes_left(m, anno(m)); }

// Packets come from ports with anno reset; elements that create packets call this. `offset`: as anno()'s.
inline void clear_anno(rte_mbuf* m, int offset) { anno(m, offset) = PacketAnno{0, 0, 0}; }
inline void clear_anno(rte_mbuf* m) { clear_anno(m, g_anno_offset); }

}  // namespace metron

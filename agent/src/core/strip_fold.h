// Folding `Strip(N) -> CheckIPHeader ... Unstrip(N)` into `CheckIPHeader(N) ...` before a graph is built: the
// configurations the synthesizer emits (and most hand-written FastClick ones) strip the Ethernet header only so
// that CheckIPHeader finds the IP header at the data start, and put it back before the frame leaves. The elements
// between them read the IP header through the annotation CheckIPHeader sets (its absolute position in the
// buffer), never through the data start, so with CheckIPHeader told the offset instead they see the same
// header and the frame leaves exactly as Unstrip would have left it: two elements fewer on every batch (13 + 11
// of the ~450 cycles per packet of the offloaded chain's 16-group bench, 8 + 8 standalone; BENCHMARKS.md).
//
// Folded only when nothing could tell the difference (anything else is left as written):
//  - the Strip's one output goes to a CheckIPHeader without an offset (keywords such as CHECKSUM false are kept)
//    whose only input it is, and whose output 1 (bad packets) is unconnected: a frame too short to strip is
//    dropped either way;
//  - every path from that CheckIPHeader reaches an Unstrip of the same length through elements that read the
//    IP header only through its annotation (kOffsetFree), and nothing else feeds those elements or Unstrips but
//    other such Strip/CheckIPHeader pairs of the same length, which fold with it (a rewriter's forward and reply
//    inputs).
// Counter is not among them: it counts bytes, which Strip changes (Click's semantics).
#pragma once

#include "core/click_ast.h"

namespace metron {

// The configuration with every foldable Strip/Unstrip pair folded (the rest unchanged, same positions).
ClickConfig fold_strips(const ClickConfig& in);

}  // namespace metron

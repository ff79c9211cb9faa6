#include "core/annotations.h"

#include <rte_errno.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace metron {

int g_anno_offset = -1;

void register_annotations() {
  static std::once_flag once;
  std::call_once(once, [] {
    const rte_mbuf_dynfield desc = {"metron_anno", sizeof(PacketAnno), alignof(PacketAnno), 0};
    int off = rte_mbuf_dynfield_register(&desc);
    if (off < 0) throw std::runtime_error(std::string("mbuf annotation field: ") + rte_strerror(rte_errno));
    g_anno_offset = off;
  });
}

}  // namespace metron

// libFuzzer target: arbitrary bytes as a frame through a group graph that uses every packet-touching element,
// first as is and then with its IP header marked without any check (MarkIPHeader), so malformed headers reach
// the rewriters, route lookup and DPI. Nothing may crash or read outside the frame (ASan).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "core/annotations.h"
#include "core/eal.h"
#include "core/graph.h"

namespace {

class NullSink : public metron::EgressSink {
 public:
  void egress(int, metron::PacketBatch& b) override { b.free_all(); }
  int egress_count() const override { return 4; }
};

const char* kConfig =
    "input -> v :: VLANDecap -> c :: Classifier(12/0800, 12/86dd, -);"
    "c[0] -> Strip(14) -> chk :: CheckIPHeader -> f :: IPFilter(deny src net 10.0.0.0/8 && udp, 1 tcp dst port 80, allow all)"
    " -> rw :: SynthRewriter(PATTERN 5.5.5.5 1024-2047 - -, PATTERN 5.5.5.6 1024-2047 10.9.9.9 80, SELECT maglev, CAPACITY 1024)"
    " -> t :: DecIPTTL -> SetIPChecksum -> r :: LookupIPRoute(0.0.0.0/0 0, 10.0.0.0/8 1) -> d :: HyperscanDPI(\"evil[0-9]+\")"
    " -> Unstrip(14) -> [0]output;"
    "f[1] -> [1]rw; rw[1] -> [1]output; chk[1] -> [2]output; t[1] -> [2]output; r[1] -> [3]output; d[1] -> [3]output;"
    "c[1] -> Strip(14) -> CheckIPHeader -> rw6 :: SynthRewriter(PATTERN 2001:db8::1 3000-4000 - -) -> EtherEncap(0x86dd, 02:00:00:00:00:01, 02:00:00:00:00:02) -> [1]output;"
    "c[2] -> m :: MarkIPHeader(14) -> i :: IPRewriter(pattern 6.6.6.6 5000-6000 - - 0 1, drop) -> VLANEncap(VLAN_ID 7) -> [2]output;"
    "i[1] -> Strip(14) -> MarkIPHeader -> sw :: IPClassifier(ip vers 6 and src net 2001:db8::/32 and icmp type 128,"
    " tcp opt syn and ip ttl > 3 and ip firstfrag, -) -> LookupIPRoute(::/0 0) -> [3]output;"
    "sw[1] -> Unstrip(14) -> StoreEtherAddress(02:00:00:00:00:01, src) -> [3]output; sw[2] -> Discard;";

NullSink g_sink;
std::unique_ptr<metron::Graph> g_graph;
rte_mempool* g_pool = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  metron::eal_init(metron::eal_default_args("fuzzpkt", "0"));
  metron::register_annotations();
  g_pool = metron::packed_pktmbuf_pool("fuzz_pool", 1023);
  metron::GraphEnv env;
  env.egress = &g_sink;
  g_graph = metron::Graph::build(kConfig, env);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1500) return 0;
  metron::PacketBatch b;
  for (int copy = 0; copy < 2; ++copy) {
    rte_mbuf* m = rte_pktmbuf_alloc(g_pool);
    if (m == nullptr) abort();
    char* d = rte_pktmbuf_append(m, static_cast<uint16_t>(size));
    if (size) std::memcpy(d, data, size);
    metron::clear_anno(m);
    b.push_back(m);
  }
  g_graph->push_input(b);
  return 0;
}

"""The deployed chain does exactly what its Click NFs do, on the real data plane: every corpus chain is
submitted over REST to the embedded host on paper-fig3 (OVS rules + agent pipeline), frames the synthesizer
generated are replayed from the source host (aimed at the chain's rule boundaries, and every other one of a
kind switches treat specially: IP fragments, options, TTL 0/1, broadcast, multicast, ARP and other EtherTypes,
IPv6 extension headers and fragments, VLAN tags, cut and inconsistent headers, bad checksums), and what arrives
is compared frame by frame with the reference interpreter running the chain's own NFs (verdict, egress, every
byte, one NAPT mapping per flow). METRON_REAL_FRAMES sets the frames per chain (`make check-long`: 10^6);
METRON_REAL_CHAINS (chain JSON files, comma-separated) checks those chains instead of the corpus."""
import os
from pathlib import Path

import pytest

import realcheck

REPO = Path(__file__).resolve().parents[2]
CORPUS = ([Path(p) for p in os.environ["METRON_REAL_CHAINS"].split(",")] if os.environ.get("METRON_REAL_CHAINS")
          else sorted((REPO / "synthesizer" / "corpus").glob("*.json")))
KINDS = 22  # FrameGenerator.Kind
# 2 x 22 kinds x 30: every special kind 30 times
FRAMES = int(os.environ.get("METRON_REAL_FRAMES", str(2 * KINDS * 30)))
# A gap in the agent, outside this test's reach: OVS and the reference read an IPv6 packet's protocol and ports
# behind its extension headers (docs/contracts.md#ipv6); the agent's classifiers walk only a fragment header
# (agent/src/elements/ip_rules.cc packet_facts, ipv6_flow_key) and its SynthRewriter none (rewriter_core.cc
# tuple_of: "such packets are not TCP/UDP here"). Such frames that went through the agent are counted apart;
# test_ipv6_extension_headers_through_the_agent fails (strict xfail) once the agent reads them.
AGENT_IPV6_GAP = ("agent reads no IPv6 extension header but a fragment header in classifiers, none in "
                  "SynthRewriter (ip_rules.cc, rewriter_core.cc)")
RESULTS = {}

pytestmark = pytest.mark.system  # skipped until `make build` made the host and the agent (conftest)


@pytest.mark.parametrize("chain_file", CORPUS, ids=[c.stem for c in CORPUS])
def test_deployed_corpus_chain_does_what_its_click_nfs_do(clean, chain_file, tmp_path):
    result = realcheck.check(clean, chain_file, FRAMES, tmp_path)
    RESULTS[chain_file.stem] = result
    print("\n" + result.summary())
    assert result.mismatches - result.ipv6_extension_mismatches == 0, result.explain()
    assert result.report["sent"] == FRAMES
    # every special kind was sent and compared (none of them all outside the model)
    kinds = result.report["kinds"]
    assert len(kinds) == KINDS, sorted(kinds)
    if result.replies:  # a chain with a reply ingress: replies to what arrived, most of them restored
        assert result.replies["delivered"] > result.replies["sent"] // 4, result.summary()
    for kind, t in kinds.items():
        assert t["sent"] >= FRAMES // (2 * KINDS), (kind, t)
        assert t["outside"] < t["sent"], (kind, t)


@pytest.mark.xfail(strict=True, reason=AGENT_IPV6_GAP)
def test_ipv6_extension_headers_through_the_agent(clean, tmp_path):
    corpus = REPO / "synthesizer" / "corpus"
    results = RESULTS or {"fw1000-napt-lb": realcheck.check(clean, corpus / "fw1000-napt-lb.json", FRAMES, tmp_path)}
    gaps = {name: r.ipv6_extension_mismatches for name, r in results.items()}
    print("\nIPv6 frames with extension headers mismatching, per chain:", gaps)
    assert not any(gaps.values()), gaps

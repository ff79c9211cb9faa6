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

pytestmark = pytest.mark.system  # skipped until `make build` made the host and the agent (conftest)


@pytest.mark.parametrize("chain_file", CORPUS, ids=[c.stem for c in CORPUS])
def test_deployed_corpus_chain_does_what_its_click_nfs_do(clean, chain_file, tmp_path):
    result = realcheck.check(clean, chain_file, FRAMES, tmp_path)
    print("\n" + result.summary())
    assert result.mismatches == 0, result.explain()
    assert result.report["sent"] == FRAMES
    # every special kind was sent and compared (none of them all outside the model)
    kinds = result.report["kinds"]
    assert len(kinds) == KINDS, sorted(kinds)
    if result.replies:  # a chain with a reply ingress: replies to what arrived, most of them restored
        assert result.replies["delivered"] > result.replies["sent"] // 4, result.summary()
    for kind, t in kinds.items():
        assert t["sent"] >= FRAMES // (2 * KINDS), (kind, t)
        assert t["outside"] < t["sent"], (kind, t)

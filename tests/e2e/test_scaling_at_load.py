"""Split and merge at load (issue 14 item 6, docs/scaling.md#at-load): the demo chain FW(4 rules) -> NAPT -> LB
(one traffic class, no SpinCycles) on paper-fig3 with the embedded host, a real agent, real OVS and real packets,
1024 UDP flows of the class sent by metron-blast (sendmmsg, agent/tools/metron_blast.c) and counted per flow at
the sink. A rate ladder up to METRON_ATLOAD_PPS (default 100,000 pps) finds the highest rate the emulated path
holds with no loss; one step below it (room for the swings of a shared machine) the operator's REST calls divide the class onto a second core (split by a
source-port bit) and join it back (merge). Asserts cores 1 -> 2 -> 1, both halves carrying packets while split,
no packet lost in either operation's window nor in the baseline window (no operation) of the same run nor in
any window after them, every
flow translated by the NAPT with one mapping from its first packet to its last; prints the numbers.

The rate the path holds depends on the machine (2 CPUs shared with other builds here: the test prints the load
average); below METRON_ATLOAD_MIN_PPS (default 10,000) it fails, naming the ladder; a
baseline window that loses packets fails it too (the operations could not be judged), naming the switch's and
the agent's drop counters."""
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))
sys.path.insert(0, str(REPO / "bench" / "scaling"))

from metron_demo.session import Session  # noqa: E402
import atload  # noqa: E402
import atload_bench  # noqa: E402

TOP_PPS = int(os.environ.get("METRON_ATLOAD_PPS", "100000"))
MIN_PPS = int(os.environ.get("METRON_ATLOAD_MIN_PPS", "10000"))

pytestmark = pytest.mark.system


def test_split_and_merge_at_load_lose_no_packet_and_no_mapping(tmp_path):
    rates = sorted({TOP_PPS // 10, TOP_PPS // 4, TOP_PPS // 2, TOP_PPS * 3 // 4, TOP_PPS})
    with Session("paper-fig3", run_root=tmp_path, log=lambda m: None) as s:
        r = atload_bench.measure(s, rates, margin=1)
        after = s.host.call("GET", "/scaling/demo")
        s.host.call("DELETE", "/chains/demo")
    w = {x["label"]: x for x in r["windows"]}
    print(f"at load: ladder (pps, sent, received) {r['ladder']}; operations at {r['opPps']} pps; "
          f"baseline {w['baseline']['lost']} lost of {w['baseline']['sent']} in {w['baseline']['seconds']:.1f} s; "
          f"split {w['split']['lost']} of {w['split']['sent']} (call {w['split']['callMs']:.0f} ms); "
          f"merge {w['merge']['lost']} of {w['merge']['sent']} (call {w['merge']['callMs']:.0f} ms); "
          f"total sent {r['sent']} lost {r['lost']}; mappings changed {len(r['mappingsChanged'])}; "
          f"load average {r['loadavg']}; drop counters {r['drops']}")
    assert r["socketDrops"] == 0, "the sink's counter itself dropped frames: the loss count would be meaningless"
    assert r["opPps"] >= MIN_PPS, f"the path held less than {MIN_PPS} pps: {r['ladder']}"

    split, merge = r["split"], r["merge"]
    assert (split["kind"], split["outcome"]) == ("split", "DONE"), split
    assert (merge["kind"], merge["outcome"]) == ("merge", "DONE"), merge
    assert "divided by source-port bit" in split["slice"], split
    groups = r["groupsWhileSplit"]
    assert len(groups) == 2 and len({g["core"] for g in groups}) == 2, groups
    assert len(after["groups"]) == 1 and len(after["cores"]) == 1, after["groups"]
    cls = str(groups[0]["classes"][0])
    rates = {g["id"]: g["classRates"].get(cls, 0) for g in r["loadWhileSplit"]["groups"]}
    assert len(rates) == 2 and all(v > 0 for v in rates.values()), rates  # both halves carry packets

    # the NAPT: every flow translated, one mapping from its first packet to its last, across both operations
    assert r["unmapped"] == [], r["unmapped"][:10]
    assert r["mappingsChanged"] == {}, dict(list(r["mappingsChanged"].items())[:5])
    assert w["baseline"]["lost"] == 0, (
        f"the path loses packets at {r['opPps']} pps with no operation: {w['baseline']}; drops {r['drops']}")
    assert w["split"]["lost"] == 0, w["split"]
    assert w["merge"]["lost"] == 0, w["merge"]
    # every window from the operations' rate on (the ladder's last step may have overflowed the path by design)
    at_rate = r["windows"][r["windows"].index(w["baseline"]):]
    assert [(x["label"], x["lost"]) for x in at_rate if x["lost"]] == [], at_rate

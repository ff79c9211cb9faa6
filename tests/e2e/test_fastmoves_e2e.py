"""Moves at rate on the fast network (issue 23 item 2, docs/updates.md#loss-free-moves-at-rate): the demo chain
FW(4) -> NAPT -> LB through the embedded host on `--fast` topologies (OVS-DPDK, vhost-user, the agents on
net_virtio_user), metron-fastgen sending 1024 UDP flows at METRON_FASTMOVES_PPS (default 265,000 pps offered, at
least 250,000 really sent) in one long step, and one operation through the REST API in its middle
(bench/fastnet/moves.py). The sink counts per flow: lost, duplicated, reordered, and flows whose translation (NAPT
source port, LB backend) changed from the warmup's (`remapped`). Each test prints the rate, the counts, where in
time a loss was and the operation's window.

- paper-fig3: a make-before-break update (the firewall gains a rule; NAPT and LB unchanged, their flows carried)
  and an update the switch refuses half way (s1's flow table is full: the agent ran the new groups beside the old
  ones and the flows were copied, then the bundle is refused) lose nothing, reorder nothing, remap nothing; the
  refused one says the running version is untouched and traffic stays on the old placement.
- two-servers (one worker core per server on the fast network: a split has no second core on srv1, so the
  operator's split is the scale-out of half the class to srv2): the scale-out and the merge back.
- An agent restart (SIGTERM, state saved; the controller redeploys the chain on the restarted agent): frames sent
  while no agent serves its port are lost by nature (nothing holds them); the test bounds that loss at the
  downtime measured and asserts every flow keeps its translation and nothing is duplicated or reordered.

Runtime: about 40 s per topology bring-up and 10-15 s per operation."""
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "fastnet"))
sys.path.insert(0, str(REPO / "deploy" / "demo"))

from metron_demo.session import Session  # noqa: E402
from metron_topo import fastgen, fastnet  # noqa: E402
from metron_client import HostError  # noqa: E402
import moves  # noqa: E402

pytestmark = [pytest.mark.system,
              pytest.mark.skipif(fastnet.unavailable() is not None, reason=f"fast network: {fastnet.unavailable()}"),
              pytest.mark.skipif(fastgen.binary() is None, reason="metron-fastgen not built (make e2e-build)")]


def assert_hitless(r):
    st = r["step"]
    assert r["op"]["error"] is None, r["op"]["error"]
    assert not st["stalled"] and st["achievedPps"] >= moves.FLOOR_PPS, st
    assert (st["lost"], st["duplicates"], st["reordered"]) == (0, 0, 0), (st, r["drops"])
    assert st["remapped"] == 0, f"{st['remapped']} flows changed their NAPT port or LB backend: {st}"
    assert st["received"] == st["sent"] == st["rewritten"] and st["otherFrames"] == 0, st


def loaded(tmp_path_factory, topology):
    with Session(topology, run_root=tmp_path_factory.mktemp("fastmoves"), log=lambda m: None, fast=True) as s:
        s.plan = moves.deploy(s)
        s.load = moves.Load(s, s.plan.allowed_port)
        try:
            assert s.load.warmup["lost"] == 0 and s.load.warmup["received"] == s.load.warmup["sent"], s.load.warmup
            yield s
        finally:
            s.load.close()


@pytest.fixture(scope="class")
def fig3(tmp_path_factory):
    yield from loaded(tmp_path_factory, "paper-fig3")


@pytest.fixture(scope="class")
def two(tmp_path_factory):
    yield from loaded(tmp_path_factory, "two-servers")


class TestOneServer:
    rules = moves.RULES

    def test_an_update_at_rate_loses_nothing(self, fig3):
        TestOneServer.rules += 1
        r = fig3.load.operate("update", lambda: moves.update(fig3, TestOneServer.rules))
        print("\n" + moves.describe(r))
        answer = r["op"]["answer"]
        assert answer and answer["state"] == "ACTIVE" and "make-before-break" in answer["reason"], r["op"]
        assert "1024 flows carried over" in answer["reason"], answer
        assert_hitless(r)

    def test_an_update_the_switch_refuses_half_way_leaves_traffic_on_the_old_version(self, fig3):
        before = fig3.host.call("GET", "/chains/demo")
        with moves.FullTable(fig3):
            r = fig3.load.operate("refused update", lambda: moves.update(fig3, TestOneServer.rules + 1))
        print("\n" + moves.describe(r))
        e = r["op"]["error"]
        assert isinstance(e, HostError) and e.status == 502, r["op"]
        err = json.loads(e.body)
        assert err["error"] == "SWITCH_FAILURE" and "of:0000000000000001" in err["message"], err
        assert "the running version is untouched (the new one was rolled back)" in err["message"], err
        after = fig3.host.call("GET", "/chains/demo")
        assert after["state"] == "ACTIVE" and after["definition"] == before["definition"], (before, after)
        r["op"]["error"] = None
        assert_hitless(r)

    def test_an_agent_restart_at_rate_keeps_every_translation(self, fig3):
        r = fig3.load.operate("agent restart", lambda: moves.restart(fig3))
        st = r["step"]
        print("\n" + moves.describe(r))
        assert r["op"]["error"] is None, r["op"]["error"]
        assert not st["stalled"] and st["achievedPps"] >= moves.FLOOR_PPS, st
        # Frames sent while no agent serves srv1's port are lost: nothing on the path holds them (the switch's
        # transmit to a vhost-user port with no reader drops: ovs_tx_failure_drops). Bounded by the time from the
        # SIGTERM to the chain running again, at the rate sent, so a longer outage (or loss outside it) fails.
        bound = int(st["achievedPps"] * r["op"]["answer"]["downMs"] / 1e3)
        assert st["lost"] <= bound, (st["lost"], bound)
        assert (st["duplicates"], st["reordered"], st["remapped"]) == (0, 0, 0), st


class TestTwoServers:
    def test_scale_out_to_the_second_server_and_back_at_rate(self, two):
        out = two.load.operate("scale-out", lambda: moves.split(two))
        print("\n" + moves.describe(out) + f"; {out['op']['answer']}")
        doc = two.host.call("GET", "/scaling/demo")
        other = [g for g in doc["groups"] if g["id"] != "g0"]
        assert len(other) == 1, doc["groups"]
        remote = moves.group_packets(two, "srv2")  # the new half runs on the second server and carried its flows
        assert remote.get(other[0]["id"], 0) > 0, (other, remote)
        back = two.load.operate("merge back", lambda: moves.merge(two, other[0]["id"]))
        print(moves.describe(back) + f"; {back['op']['answer']}")
        assert out["op"]["answer"]["outcome"] == "DONE", out["op"]
        assert back["op"]["answer"]["outcome"] == "DONE", back["op"]
        assert len(two.host.call("GET", "/scaling/demo")["groups"]) == 1
        assert_hitless(out)
        assert_hitless(back)

"""Moves at rate on the fast network (issue 23 item 2, docs/updates.md#loss-free-moves-at-rate): the demo chain
FW(4) -> NAPT -> LB through the embedded host on `--fast` topologies (OVS-DPDK, vhost-user, the agents on
net_virtio_user), one metron-fastgen per topology sending 1024 UDP flows, one step per operation through the REST
API (bench/fastnet/moves.py). The rate is the highest of moves.LADDER (265, 200, 160 kpps offered; 265 kpps sends
at least 250 kpps) whose two steps with no operation lose nothing (when none does, the lowest, if no step of it lost
more than moves.LOSS_BOUND); the fixture prints it and those steps. An operation where the generator fell below the
rate's floor and nothing else failed is measured again, once (at_rate). The sink counts per flow: lost, duplicated,
reordered, and flows whose translation (NAPT source port, LB backend) changed from the warmup's (`remapped`). Each
test prints the rate, the counts, where in time a loss was and the
operation's window.

- paper-fig3: a make-before-break update (the firewall gains a rule; NAPT and LB unchanged, their flows carried)
  and an update the switch refuses half way (s1's flow table is full: the agent ran the new groups beside the old
  ones and the flows were copied, then the bundle is refused): 0 duplicated, 0 reordered, 0 remapped, loss
  within moves.LOSS_BOUND (measured 0 in most runs, see there); the refused one says the running version is untouched
  and the chain keeps its definition.
- two-servers (one worker core per server on the fast network: a split has no second core on srv1, so the
  operator's split is the scale-out of half the class to the other server, whose group must carry packets): the scale-out
  and the merge back, as above.
- An agent restart (SIGTERM, state saved; the controller redeploys the chain on the restarted agent): frames sent
  while no agent serves its port are lost (nothing holds them); the loss is bounded by the downtime measured,
  and nothing is duplicated, reordered or remapped.
- two-servers: a planned agent restart (docs/failover.md#planned-restart-drain): the chain's server drained (the chain
  moves make-before-break to the other server with its flows), its agent restarted, the server undrained with the
  chain moved back: nothing dropped at the restarted server's ports while its agent is down, 0 duplicated, 0
  reordered, 0 remapped, loss within LOSS_BOUND as for the other moves (measured: see docs/failover.md), the restarted agent carrying the chain after;
  and a drain with nowhere to go (the other server drained) refused with the chain untouched.

Runtime: 95-110 s for the first four tests (two topology bring-ups of 22-31 s, 11-16 s of baseline steps each, update
6-10 s, refused update 5-6 s, restart 5 s, scale-out and back 5-24 s, all longer with more load); the planned restart
adds a step of 45-90 s (two make-before-break moves across servers, an agent restart and 11 s of waits for OVS's
counters; TestTwoServers took 137-266 s in all at load 5-22)."""
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "fastnet"))
sys.path.insert(0, str(REPO / "deploy" / "demo"))

from metron_topo import fastgen, fastnet  # noqa: E402
from metron_client import HostError  # noqa: E402
import moves  # noqa: E402

MIN_PPS = 150_000  # below it the fast path is no faster than the kernel path's best (BENCHMARKS.md)

pytestmark = [pytest.mark.system,
              pytest.mark.skipif(fastnet.unavailable() is not None, reason=f"fast network: {fastnet.unavailable()}"),
              pytest.mark.skipif(fastgen.binary() is None, reason="metron-fastgen not built (make e2e-build)")]



def assert_sent(st, rate=True):
    """The generator kept sending, and (rate) sent at least the floor of the rate asked."""
    assert not st["stalled"], st
    assert not rate or st["achievedPps"] >= moves.floor(st["pps"]), st


def at_rate(measure, check):
    """measure() runs operations at rate and answers their results, check(r, rate) asserts on one: the operations
    are measured again, once, when every check held but the rate, the generator having sent less than the floor of
    the rate asked. The generator stands for traffic from outside the servers but shares their 2 CPUs: while an
    operation's work runs beside it its schedule slips (metron_fastgen.c MAX_CATCHUP), and the step then says
    nothing about the rate it names (a CI run: a scale-out at 160 kpps asked sent 149 kpps, the floor 151, 160 frames
    lost, nothing else wrong). What the first attempt lost, duplicated, reordered or remapped fails as in any step;
    only its rate is asked again. Giving the generator the CPU first (SCHED_RR) kept its schedule (slipped 0-52 ms)
    but starved the agents' rings instead: 14074 and 28901 frames lost in a scale-out's step (2 of 2 runs)."""
    results = measure()
    short = [r for r in results if r["step"]["achievedPps"] < moves.floor(r["step"]["pps"])]
    if short:
        for r in results:
            check(r, rate=False)
        print("\nthe generator sent below the rate's floor in " + ", ".join(
            f"{r['label']} ({r['step']['achievedPps']:.0f} of {r['step']['pps']:.0f} pps)" for r in short)
            + ": measured again")
        results = measure()
    for r in results:
        check(r)
    return results


def assert_hitless(r, rate=True):
    st = r["step"]
    assert r["op"]["error"] is None, r["op"]["error"]
    assert_sent(st, rate)
    assert (st["duplicates"], st["reordered"]) == (0, 0), (st, r["drops"])
    assert st["lost"] <= moves.LOSS_BOUND, (st, r["drops"])
    assert st["remapped"] == 0, f"{st['remapped']} flows changed their NAPT port or LB backend: {st}"
    assert st["received"] == st["rewritten"] == st["sent"] - st["lost"] and st["otherFrames"] == 0, st


def loaded(tmp_path_factory, topology):
    root = tmp_path_factory.mktemp("fastmoves")
    with moves.session(topology, root) as s:
        s.plan = moves.deploy(s)
        s.load = moves.Load(s, s.plan.allowed_port)
        try:
            warm = s.load.warmup
            assert warm["lost"] == 0 and warm["received"] == warm["sent"], json.dumps(warm)
            # the path loses now and then by itself (see moves.LOSS_BOUND): when it did at every rate of the ladder, the
            # lowest is used if no step of it lost more than an operation may (a run here: 22-851 frames, one burst
            # a step, in one of two steps at each of 265, 200 and 160 kpps)
            baseline = s.load.settle(tolerance=moves.LOSS_BOUND)
            rate = (f"the lowest of {moves.LADDER}: none had {moves.BASELINE_STEPS} steps with no operation that lost "
                    f"nothing, and at it none lost more than {moves.LOSS_BOUND} frames" if s.load.lossy else
                    f"the highest of {moves.LADDER} whose {moves.BASELINE_STEPS} steps with no operation lost nothing")
            print(f"\n{topology}: operations at {s.load.pps} pps offered, {rate}:\n  "
                  + "\n  ".join(moves.describe(r) for r in baseline))
            assert s.load.pps >= MIN_PPS, f"the path did not carry {MIN_PPS} pps without loss"
            yield s
        finally:
            s.load.close()
            for log in Path(s.state["run_dir"]).glob("*.log"):  # the run directory goes with the topology
                (root / f"{topology}-{log.name}").write_bytes(log.read_bytes())


@pytest.fixture(scope="class")
def fig3(tmp_path_factory):
    yield from loaded(tmp_path_factory, "paper-fig3")


@pytest.fixture(scope="class")
def two(tmp_path_factory):
    yield from loaded(tmp_path_factory, "two-servers")


class TestOneServer:
    rules = moves.RULES

    def test_an_update_at_rate_loses_nothing(self, fig3):
        def update():
            TestOneServer.rules += 1
            r = fig3.load.operate("update", lambda: moves.update(fig3, TestOneServer.rules))
            print("\n" + moves.describe(r))
            answer = r["op"]["answer"]
            assert answer and answer["state"] == "ACTIVE" and "make-before-break" in answer["reason"], r["op"]
            assert "1024 flows carried over" in answer["reason"], answer
            return [r]
        at_rate(update, assert_hitless)

    def test_an_update_the_switch_refuses_half_way_leaves_traffic_on_the_old_version(self, fig3):
        def refused():
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
            return [r]
        at_rate(refused, assert_hitless)

    def test_an_agent_restart_at_rate_keeps_every_translation(self, fig3):
        def restart():
            r = fig3.load.operate("agent restart", lambda: moves.restart(fig3))
            print("\n" + moves.describe(r))
            assert r["op"]["error"] is None, r["op"]["error"]
            return [r]

        def check(r, rate=True):
            st = r["step"]
            assert_sent(st, rate)
            # Frames sent while no agent serves srv1's port are lost: nothing on the path holds them (the switch's
            # transmit to a vhost-user port with no reader drops: ovs_tx_failure_drops). Bounded by the time from
            # the SIGTERM to the chain running again, at the rate sent, so a longer outage (or loss outside it) fails.
            bound = int(st["achievedPps"] * r["op"]["answer"]["downMs"] / 1e3)
            assert st["lost"] <= bound, (st["lost"], bound)
            assert (st["duplicates"], st["reordered"], st["remapped"]) == (0, 0, 0), st
        at_rate(restart, check)


class TestTwoServers:
    def test_scale_out_to_the_second_server_and_back_at_rate(self, two):
        try:
            at_rate(lambda: self.scale_out_and_back(two), assert_hitless)
        finally:  # a group left scaled out by a failure half way is not for later tests (the drain would move it)
            for g in two.host.call("GET", "/scaling/demo")["groups"]:
                if g["id"] != "g0":
                    try:
                        moves.merge(two, g["id"])
                    except HostError as e:
                        print(f"left {g['id']} scaled out: {e}")

    @staticmethod
    def scale_out_and_back(two):
        out = two.load.operate("scale-out", lambda: moves.split(two))
        print("\n" + moves.describe(out) + f"; {out['op']['answer']}")
        doc = two.host.call("GET", "/scaling/demo")
        other = [g for g in doc["groups"] if g["id"] != "g0"]
        assert len(other) == 1, doc["groups"]
        # the halves run on the two servers (placement may have put the chain on either) and both carried packets
        where = {srv: moves.group_packets(two, srv) for srv in ("srv1", "srv2")}
        homes = {g: srv for srv, groups in where.items() for g, n in groups.items() if n > 0}
        assert {"g0", other[0]["id"]} <= set(homes) and homes["g0"] != homes[other[0]["id"]], where
        back = two.load.operate("merge back", lambda: moves.merge(two, other[0]["id"]))
        print(moves.describe(back) + f"; {back['op']['answer']}")
        assert out["op"]["answer"]["outcome"] == "DONE", out["op"]
        assert back["op"]["answer"]["outcome"] == "DONE", back["op"]
        assert len(two.host.call("GET", "/scaling/demo")["groups"]) == 1
        return [out, back]

    def test_a_planned_agent_restart_drains_the_server_first_and_loses_nothing(self, two):
        def planned():
            server = moves.chain_server(two)
            other = "srv2" if server == "srv1" else "srv1"
            r = two.load.operate("planned restart", lambda: moves.planned_restart(two, server))
            if r["op"]["error"] is not None:
                moves.undrain(two, server)  # a drain stopped half way leaves the server drained: not for later tests
            answer = r["op"]["answer"]
            marks = {k: round(r["op"]["startMs"] + v) for k, v in answer["marks"].items()} if answer else {}
            print("\n" + moves.describe(r) + (f"; {server} drained, restarted, undrained at {marks} ms from the step's "
                                             f"start; its ports' drops while down {answer['downDrops']}; drain "
                                             f"{answer['drain']}; undrain {answer['undrain']}" if answer else ""))
            assert r["op"]["error"] is None, r["op"]["error"]
            drain, undrain = answer["drain"], answer["undrain"]
            assert drain["drained"] and [(m["chain"], m["from"], m["to"]) for m in drain["moves"]] == [
                ("demo", f"metron:{server}", f"metron:{other}")], drain
            assert "1024 flows carried over" in drain["moves"][0]["detail"], drain
            assert answer["idleAfterDrain"] == {}, \
                f"{server} still ran the chain once drained: {answer['idleAfterDrain']}"
            assert not undrain["drained"] and [(m["from"], m["to"]) for m in undrain["moves"]] == [
                (f"metron:{other}", f"metron:{server}")], undrain
            assert "1024 flows carried over" in undrain["moves"][0]["detail"], undrain
            # the restarted agent carries the chain again, and nothing says the server is drained any more
            assert sum(moves.group_packets(two, server).values()) > 0
            assert not next(x for x in two.host.call("GET", "/servers")["servers"] if x["id"] == f"metron:{server}")[
                "drained"]
            assert two.host.call("GET", "/chains/demo")["servers"] == [{"id": f"metron:{server}", "drained": False}]
            return [r]

        def check(r, rate=True):
            st = r["step"]
            assert_sent(st, rate)
            assert (st["duplicates"], st["reordered"], st["remapped"]) == (0, 0, 0), (st, r["drops"])
            # planned, so the switch had nothing to hand the stopped agent: no drop at its ports while it was down
            # (the unplanned restart above loses every frame sent then). What the path loses by itself (a serving
            # agent's ring full while its worker was off the CPU, the restarting agent taking the CPUs too: up to
            # moves.LOSS_BOUND, see there) is printed with where it was
            assert r["op"]["answer"]["downDrops"] == {}, r["op"]["answer"]["downDrops"]
            assert st["lost"] <= moves.LOSS_BOUND, (st, r["drops"])
            assert st["received"] == st["rewritten"] == st["sent"] - st["lost"] and st["otherFrames"] == 0, st
        at_rate(planned, check)

    def test_draining_the_last_server_that_takes_chains_is_refused_and_touches_nothing(self, two):
        server = moves.chain_server(two)
        other = "srv2" if server == "srv1" else "srv1"
        before = two.host.call("GET", "/chains/demo")
        assert two.host.call("POST", f"/servers/metron:{other}/drain") == {
            "server": f"metron:{other}", "drained": True, "moves": []}
        try:
            with pytest.raises(HostError) as e:
                two.host.call("POST", f"/servers/metron:{server}/drain")
            assert e.value.status == 409, e.value
            err = json.loads(e.value.body)
            assert err["error"] == "IMPOSSIBLE_PLACEMENT" and err["message"] == (
                f"server metron:{server} not drained: chain(s) [demo] run on it and no other server could take them "
                f"(every other server is drained: [metron:{other}]); nothing was moved and the server takes chains "
                "as before"), err
            after = two.host.call("GET", "/chains/demo")
            assert after == before and after["servers"] == [{"id": f"metron:{server}", "drained": False}], after
        finally:
            two.host.call("POST", f"/servers/metron:{other}/undrain")

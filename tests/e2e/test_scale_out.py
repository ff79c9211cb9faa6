"""Scale-out across servers (issue 14 item 2, docs/scaling.md#scale-out) on the two-servers topology with the
embedded host, two real agents (one worker core each), real OVS and real packets: the demo chain (FW -> SpinCycles
-> NAPT -> LB, one stateful class) runs on one server whose only core it fills; eight UDP flows ramp up until the
controller divides the class and, with no core free on that server, places the new half on the other server
(re-tagged at the offload switch s1, flow state moved over gRPC), then back down until the half comes back. Both
servers carry packets of the chain while it is spread, every flow keeps its NAPT mapping (and LB backend) from
its first packet to its last, and the packets lost at the sink are counted and reported (the test requires none).
Eight more flows start while the chain is spread, so both servers make new NAPT mappings: the external ports
each server hands out are disjoint and lie in its group's port share (docs/scaling.md#port-shares) — with the
agents' per-core ranges, core 0 of each server, they were the same.
"""
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))
sys.path.insert(0, str(REPO / "bench" / "scaling"))

from metron_demo.session import Session  # noqa: E402
from support import wait_for  # noqa: E402
from test_class_split import FLOWS, DemoRun  # noqa: E402
import workload  # noqa: E402

pytestmark = pytest.mark.system  # skipped until `make build` made the host and the agent (conftest)


LATE_SPORT = 41000  # source ports of the flows started while the chain is spread (ids FLOWS..2*FLOWS-1)
LATE_PPS = 30
NAPT_RANGE = (1024, 65535)  # the demo NAPT's pattern (deploy/demo/metron_demo/chains.py)
PORT_SHARES = 16            # GroupAssignment.PORT_SHARES


def servers_of(doc):
    """group id -> the server it runs on, from a /scaling/<chain> document."""
    return {g["id"]: g["server"] for g in doc["groups"]}


def test_the_demo_chain_spreads_over_two_servers_and_comes_back_keeping_mappings(tmp_path):
    with Session("two-servers", run_root=tmp_path, log=lambda m: None) as s:
        late = {}

        def new_flows_while_spread(demo):
            sender = workload.Sender(s.netns("src"), FLOWS, sport=LATE_SPORT, flow_base=FLOWS,
                                     dport=demo.plan.allowed_port, dport_step=0)
            try:
                sender.rate(LATE_PPS)
                time.sleep(1.5)
                late["log"] = sender.finish()
            finally:
                sender.kill()

        run = DemoRun(s, tmp_path, while_split=new_flows_while_spread)
        home = run.before["groups"][0]["server"]
        cls, log, during, timeline, after, arrivals = run.cls, run.log, run.during, run.timeline, run.after, \
            run.arrivals
        history = after["history"]
        sent = log["sent"] + late["log"]["sent"]  # flow ids 0..FLOWS-1, then the late ones
        lost = workload.lost(arrivals, sent)
        windows = workload.loss_windows(arrivals, sent)
        print(f"scale-out e2e: sent {sum(log['sent'])} packets in {FLOWS} flows, lost "
              f"{sum(len(v) for v in lost.values())}; history "
              f"{[(e['kind'], e['outcome'], e['reactionMs'], e['steps'], e['slice']) for e in history]}; while spread "
              f"{[(g['id'], g['server'], g.get('slices')) for g in during['groups']]}; loss windows {windows[:5]}")
        assert [(e["kind"], e["outcome"]) for e in history] == [("split", "DONE"), ("merge", "DONE")], history
        split, merge = history
        assert "new half on another server" in split["reason"], split
        assert "remote agent" in split["steps"], split
        # while spread: one group on each server, each holding a half of the class and carrying packets of it
        where = servers_of(during)
        assert len(where) == 2 and home in where.values() and len(set(where.values())) == 2, where
        assert [g for g in during["groups"] if g["server"] != home][0]["remote"] is True
        # each half's class rate was above 0 in some report while spread (a 50 ms report of a half at a few tens of
        # packets/s may hold none); the other server's half is measured on that server's own reports
        rates = {gid: max((g["classRates"].get(str(cls), 0) for _, d in timeline.docs
                           for g in (d.get("load") or {}).get("groups", []) if g["id"] == gid), default=0)
                 for gid in where}
        assert all(r > 0 for r in rates.values()), rates
        # the chain's server kept its one core; the other server's core ran the other half
        assert len(during["cores"]) == 1, during["cores"]
        assert servers_of(after) == {after["groups"][0]["id"]: home}, after["groups"]
        assert "slices" not in after["groups"][0], after["groups"]

        # the flows started while spread: those of the other server's slice got their mapping there, the others on
        # the chain's server (as did every early flow); no external port is handed out by both servers
        far_group = [g for g in during["groups"] if g["server"] != home][0]
        part = far_group["slices"][str(cls)]
        late_flows = range(FLOWS, 2 * FLOWS)
        made_far = {f for f in late_flows if (LATE_SPORT + f - FLOWS) & part["sportMask"] == part["sportValue"]}
        made_home = set(range(2 * FLOWS)) - made_far
        napt = {f: arrivals.napt.get(f, set()) for f in range(2 * FLOWS)}
        assert all(len(v) == 1 for v in napt.values()), napt
        port = {f: next(iter(v))[1] for f, v in napt.items()}
        shares = {g["server"]: g["portShare"] for g in during["groups"]}
        print(f"ports made on {home} (share {shares[home]}): {sorted(port[f] for f in made_home)}; on "
              f"{far_group['server']} (share {shares[far_group['server']]}): {sorted(port[f] for f in made_far)}")
        assert made_far and made_home - set(range(FLOWS)), (part, made_far)
        assert {port[f] for f in made_far}.isdisjoint(port[f] for f in made_home), port
        assert len(set(port.values())) == 2 * FLOWS, port
        per = (NAPT_RANGE[1] - NAPT_RANGE[0] + 1) // PORT_SHARES
        assert shares[home] != shares[far_group["server"]], shares
        assert all((port[f] - NAPT_RANGE[0]) // per == shares[far_group["server"]] for f in made_far), port
        assert all((port[f] - NAPT_RANGE[0]) // per == shares[home] for f in made_home), port

        assert run.capture_drops == 0, "the capture itself dropped packets: the loss check would be meaningless"
        assert min(log["sent"]) > 30, log["sent"]
        assert min(late["log"]["sent"]) > 0, late["log"]["sent"]
        assert lost == {}, windows[:10]
        run.assert_mappings_kept()

        cli = subprocess.run([str(REPO / "deploy" / "embedded" / "metron"), "--data", str(s.data), "scaling",
                              "demo"], capture_output=True, text=True, timeout=60)
        assert cli.returncode == 0, cli.stderr
        assert "server" in cli.stdout and home in cli.stdout, cli.stdout
        s.host.call("DELETE", "/chains/demo")


def test_a_restarted_agent_of_the_other_server_gets_its_half_back_with_its_flows(tmp_path):
    """While the demo chain is spread over both servers, the agent of the server holding the scaled-out half is
    restarted (SIGTERM: it saves its tables; the launcher's --state-dir). The controller's agent watch sees the new
    boot id and deploys that half there again (ServerRecovery), filled from the agent's file; the switch rules were
    left pointing at it. Packets of the half's flows reach the sink again before the merge, the other half's flows
    lose nothing, the half's losses lie around the restart, and every flow keeps one NAPT translation and one LB
    backend from its first packet to its last (a half redeployed empty would give its flows new ports)."""
    with Session("two-servers", run_root=tmp_path, log=lambda m: None) as s:
        marks = {}

        def restart_other_agent(run):
            during = s.host.call("GET", "/scaling/demo")
            remote = [g for g in during["groups"] if g.get("remote")]
            assert len(remote) == 1, during["groups"]
            node = remote[0]["server"].split(":")[-1]
            assert node in s.state["nodes"], (remote[0]["server"], list(s.state["nodes"]))
            marks.update(node=node, group=remote[0]["id"], stop_ns=time.time_ns())
            s.restart_agent(node)

            def redeployed():
                try:
                    return any(g["pipelineId"] == "demo" and g["groupId"] == marks["group"]
                               for g in s.agent_stats(node)["groups"])
                except RuntimeError:  # the agent is still starting
                    return False

            wait_for(redeployed, 60, f"the controller to redeploy {marks['group']} on the restarted {node}")
            marks["back_ns"] = time.time_ns()
            time.sleep(2.0)  # still spread, at the high rate: the half carries its flows again
            return during

        run = DemoRun(s, tmp_path, while_split=restart_other_agent)
        history = run.after["history"]
        log_text = (Path(s.state["run_dir"]) / f"agent-{marks['node']}.log").read_text(errors="replace")
        half = next(g for g in run.during["groups"] if g["id"] == marks["group"])
        sl = half["slices"][str(run.cls)]
        moved = [f for f in range(FLOWS) if (40000 + f) & sl["sportMask"] == sl["sportValue"]]
        lost = workload.lost(run.arrivals, run.log["sent"])
        windows = workload.loss_windows(run.arrivals, run.log["sent"])
        again = {f: sum(1 for (flow, _), ns in run.arrivals.sent_ns.items()
                        if flow == f and marks["back_ns"] <= ns <= marks["back_ns"] + 2_000_000_000)
                 for f in moved}
        print(f"scale-out restart e2e: {marks['node']} restarted in "
              f"{(marks['back_ns'] - marks['stop_ns']) / 1e6:.0f} ms (stop to redeployed); half {marks['group']} "
              f"flows {moved}; packets after: {again}; lost {sum(len(v) for v in lost.values())} of "
              f"{sum(run.log['sent'])}, windows {windows[:5]}; history "
              f"{[(e['kind'], e['outcome'], e['steps']) for e in history]}")
        assert [(e["kind"], e["outcome"]) for e in history] == [("split", "DONE"), ("merge", "DONE")], history
        assert 0 < len(moved) < FLOWS, (sl, moved)
        assert f"state: restored pipeline 'demo' group '{marks['group']}'" in log_text, log_text[-2000:]
        assert all(n > 0 for n in again.values()), again
        assert run.capture_drops == 0, "the capture itself dropped packets: the loss check would be meaningless"
        assert not set(lost) - set(moved), {f: len(v) for f, v in lost.items()}
        for before, after, flow, first, n in windows:
            assert (before is None or before >= marks["stop_ns"] - 1_000_000_000) and \
                (after is None or after <= marks["back_ns"] + 1_000_000_000), (flow, first, n, marks)
        run.assert_mappings_kept()
        s.host.call("DELETE", "/chains/demo")


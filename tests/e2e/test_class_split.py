"""The demo chain (FW -> NAPT -> LB: one stateful traffic class) scales past one core (issue 14 item 1,
docs/scaling.md#class-split) on paper-fig3 with the embedded host, a real agent (2 worker cores), real OVS and
real packets: eight UDP flows of the one class, from different source ports, ramp up until the controller
divides the class by a source-port bit onto the second core, and back down until the halves join again. The
active cores follow the load (1 -> 2 -> 1), every flow keeps its NAPT mapping (and LB backend) from its first
packet to its last, and the packets lost at the sink are counted and reported (the test requires none).

SpinCycles between the firewall and the NAPT makes a core's capacity reachable with a Python sender (as in
test_scaling.py); the chain is otherwise the demo's (deploy/demo/metron_demo/chains.py)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))
sys.path.insert(0, str(REPO / "bench" / "scaling"))

from metron_demo import chains  # noqa: E402
from metron_demo.session import Session  # noqa: E402
import workload  # noqa: E402

FLOWS = 8
CAPACITY_PPS = 1500     # one core's nominal packet rate with SpinCycles (hz / CYCLES)
LOW_PPS = 40            # idle for the policy

pytestmark = pytest.mark.system  # skipped until `make build` made the host and the agent (conftest)


def demo_chain(name, ingress, egress, cycles):
    """The demo's FW(4 rules) -> NAPT -> LB with a SpinCycles after the firewall, autoScale on, up to 2 cores."""
    body, plan = chains.fw_napt_lb(name, 4, ingress, egress, cores=1, max_cores=2)
    chain = json.loads(body)
    chain["nfs"].insert(1, {"name": "spin", "click": f"FromDevice(in0) -> SpinCycles(CYCLES {cycles}) -> "
                                                     "ToDevice(out0);"})
    chain["links"] = [{"from": "fw.out0", "to": "spin.in0"}, {"from": "spin.out0", "to": "napt.in0"},
                      {"from": "napt.out0", "to": "lb.in0"}]
    chain["deployment"]["autoScale"] = True
    return json.dumps(chain), plan


class DemoRun:
    """The demo chain deployed on a session's topology and taken through workload.split_then_merge: what the
    host said before, while split and after, the sender's log, the timeline and the packets at the sink."""

    def __init__(self, s, tmp_path, while_split=lambda run: None):
        """while_split(run) is called while the chain is split; `during` is what it returns, or the /scaling
        document read after it when it returns None."""
        net = s.network()
        body, self.plan = demo_chain("demo", net["ingress"][0], net["egress"][0],
                                     int(workload.tsc_hz() / CAPACITY_PPS))
        assert workload.submit(s.host, body)["state"] == "ACTIVE"
        self.before = s.host.call("GET", "/scaling/demo")
        # one class on the server (the firewall's denies stay on the switch): no split by whole classes exists
        assert len(self.before["groups"]) == 1 and len(self.before["groups"][0]["classes"]) == 1, \
            self.before["groups"]
        self.cls = self.before["groups"][0]["classes"][0]

        capture = workload.Capture(s.netns("sink"), tmp_path / "sink.pcap")
        self.timeline = workload.Timeline(s.host, "demo")
        self.timeline.start()
        sender = workload.Sender(s.netns("src"), FLOWS, sport=40000, dport=self.plan.allowed_port, dport_step=0)
        self.sender = sender  # while_split may change the rate
        try:
            self.log, self.during = workload.split_then_merge(
                sender, self.timeline, LOW_PPS, CAPACITY_PPS,
                lambda: self._during(s, while_split))
        finally:
            sender.kill()
            self.samples = self.timeline.stop()
            pcap, self.capture_drops = capture.stop()
        self.after = s.host.call("GET", "/scaling/demo")
        self.arrivals = workload.read_pcap(pcap)

    def _during(self, s, while_split):
        doc = while_split(self)
        return doc if doc is not None else s.host.call("GET", "/scaling/demo")

    def assert_mappings_kept(self):
        """One NAPT translation and one LB backend per flow, from the first packet to the last."""
        for flow in range(FLOWS):
            napt = self.arrivals.napt[flow]
            assert len(napt) == 1, (flow, {m: self.arrivals.napt_seqs[(flow, m)] for m in napt},
                                    self.log["sent"][flow], self.after["history"])
            assert next(iter(napt))[0] == chains.NAPT_ADDRESS
            assert len(self.arrivals.dst[flow]) == 1, (flow, self.arrivals.dst[flow])


def test_the_demo_chain_divides_its_class_onto_a_second_core_and_back_keeping_mappings(tmp_path):
    with Session("paper-fig3", run_root=tmp_path, log=lambda m: None) as s:
        run = DemoRun(s, tmp_path)
        assert len(run.before["cores"]) == 1
        cls, log, during, samples, after, arrivals, capture_drops = (run.cls, run.log, run.during, run.samples,
                                                                     run.after, run.arrivals, run.capture_drops)
        history = after["history"]
        assert [(e["kind"], e["outcome"]) for e in history] == [("split", "DONE"), ("merge", "DONE")], history
        split, merge = history
        assert split["movedClasses"] == [cls] and merge["movedClasses"] == [cls]
        assert f"class {cls} divided by source-port bit" in split["slice"], split
        assert f"class {cls} divided by source-port bit" in split["reason"], split
        assert f"class {cls} joined over source-port bit" in merge["slice"], merge
        bit = int(split["slice"].split("source-port bit ")[1].split(":")[0])
        # while split: both groups hold a half of the class and both carry packets of it
        groups = {g["id"]: g for g in during["groups"]}
        assert len(groups) == 2 and len({g["core"] for g in groups.values()}) == 2, during["groups"]
        assert all(g["classes"] == [cls] and str(cls) in g.get("slices", {}) for g in groups.values()), groups
        assert {g["slices"][str(cls)]["sportValue"] >> bit & 1 for g in groups.values()} == {0, 1}, groups
        rates = {g["id"]: g["classRates"].get(str(cls), 0) for g in during["load"]["groups"]}
        assert all(r > 0 for r in rates.values()), rates
        cores = [c for _, c, _ in samples]
        first_two = cores.index(2)
        assert set(cores[:first_two]) == {1}
        assert cores[-1] == 1 and 1 in cores[first_two:]
        assert len(after["cores"]) == 1 and len(after["groups"]) == 1
        assert "slices" not in after["groups"][0], after["groups"]

        assert capture_drops == 0, "the capture itself dropped packets: the loss check would be meaningless"
        # every flow kept sending across both operations (5 pps each at the low rate, for at least 7 s; a busy
        # machine can make the controller split early, at a low rate)
        assert min(log["sent"]) > 30, log["sent"]
        lost = workload.lost(arrivals, log["sent"])
        windows = workload.loss_windows(arrivals, log["sent"])
        print(f"class split e2e: sent {sum(log['sent'])} packets in {FLOWS} flows, lost "
              f"{sum(len(v) for v in lost.values())}; split at {log['splitAtPps']} pps; divided by bit {bit}; "
              f"split reaction {split['reactionMs']} ms "
              f"steps [{split['steps']}]; merge steps [{merge['steps']}]; loss windows {windows[:5]}")
        assert lost == {}, windows[:10]
        run.assert_mappings_kept()
        # the flows of both halves really went through the split: each half had flows of its own
        moved = [f for f in range(FLOWS) if (40000 + f) >> bit & 1]
        assert 0 < len(moved) < FLOWS, (bit, moved)

        cli = subprocess.run([str(REPO / "deploy" / "embedded" / "metron"), "--data", str(s.data), "scaling",
                              "demo"], capture_output=True, text=True, timeout=60)
        assert cli.returncode == 0, cli.stderr
        assert "divided by source-port bit" in cli.stdout, cli.stdout
        s.host.call("DELETE", "/chains/demo")

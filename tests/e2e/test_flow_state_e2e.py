"""Flow state that cannot fit, end to end (issue 13: never a silent drop): FW -> NAPT -> LB on paper-fig3 whose NAPT
declares a capacity (Click's MAPPING_CAPACITY) of 16 flows. 40 UDP flows are sent; the agent maps 16 and refuses the
rest, as Click's IPRewriter does with a full table whose flows are all within their guarantee, and the controller
raises a flow-state alert naming the chain, its group, the element and the refused count (REST), while the 16
mapped flows cross the chain with 16 distinct NAPT ports. An agent that dropped the flows silently, or a controller
that did not read the counters, fails it."""
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))

from metron_demo import chains, traffic  # noqa: E402
from support import wait_for  # noqa: E402

pytestmark = pytest.mark.system

CAPACITY = 16
FLOWS = 40


def test_a_full_table_refuses_new_flows_and_the_controller_says_so(clean):
    session = clean
    net = session.network()
    body, plan = chains.fw_napt_lb("capped", 10, net["ingress"][0], net["egress"][0])
    capped = body.replace("IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop)",
                          f"IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop, MAPPING_CAPACITY {CAPACITY})")
    assert capped != body, "the demo's NAPT changed: this test no longer declares a capacity"
    session.host.call("POST", "/chains", capped.encode())

    flows = [traffic.Flow("allow", i, traffic.SRC_IP, "udp", 21000 + i, plan.allowed_port) for i in range(FLOWS)]
    run = Path(session.state["run_dir"])
    # a first flow until the chain carries traffic (rules and pipeline in place)
    probe = wait_for(lambda: _send(session, run, flows[:1], "probe").allowed.get(0), 60, "the chain to carry traffic")
    assert probe
    arrivals = _send(session, run, flows, "all")

    napt_ports = {seen[1] for fid, seen_list in arrivals.allowed.items() for seen in seen_list}
    assert len(arrivals.allowed) == CAPACITY, f"{len(arrivals.allowed)} flows crossed, capacity {CAPACITY}"
    assert len(napt_ports) == CAPACITY, "each mapped flow has a NAPT port of its own"

    def alert():
        doc = session.host.call("GET", "/scaling/capped")
        return [a for a in doc.get("flowStateAlerts", []) if a["refused"] > 0]

    alerts = wait_for(alert, 20, "the controller's flow-state alert")
    a = alerts[0]
    assert a["chain"] == "capped" and a["group"] and a["element"]
    assert a["capacity"] == CAPACITY and a["flows"] == CAPACITY
    refused = sum(x["refused"] for x in session.host.call("GET", "/scaling/capped")["flowStateAlerts"])
    assert refused >= FLOWS - CAPACITY, f"{refused} refused flows reported, {FLOWS - CAPACITY} sent past capacity"


def _send(session, run, flow_list, name):
    tag = f"{name}-{time.monotonic_ns()}"
    cap = traffic.Capture(session.netns("sink"), run / f"{tag}.pcap")
    try:
        traffic.write_pcap(run / f"{tag}-sent.pcap", flow_list, 2)
        traffic.replay(session.netns("src"), run / f"{tag}-sent.pcap", pps=500)
        time.sleep(1.0)
    finally:
        arrivals = traffic.analyze(cap.stop())
    return arrivals

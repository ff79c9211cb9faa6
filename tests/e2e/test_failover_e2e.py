"""Routing changes (paper Fig. 5) on one machine: a chain offloaded at s1 reaches its server behind s3 over the
direct s1-s3 link; when that link goes down (a real veth, reported by OVS as PORT_STATUS) the host has the
controller reroute the chain over s2, and traffic flows again with the same server, groups and flow state. The host
arms no fast-failover groups here (--failover-groups off): this is the controller's own reroute; the switch's
failover with groups is test_fast_failover_e2e.py's."""
import re
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))

from metron_demo import scenario, traffic  # noqa: E402
from metron_demo.session import Session  # noqa: E402
from metron_topo import launcher  # noqa: E402

pytestmark = pytest.mark.system  # skipped until `make build` made the host and the agent (conftest)


def outputs_of_tagging_rules(session):
    """Ports s1 sends tagged (server-bound) traffic to, from OVS's own flow table."""
    return {m.group(1) for line in session.flows("s1") if "set_field:02:4d:" in line
            for m in [re.search(r"output:(\d+)$", line)] if m}


def send_and_check(session, plan, tag):
    cap = traffic.Capture(session.netns("sink"), Path(session.state["run_dir"]) / f"{tag}.pcap")
    flows = traffic.flows(plan, allowed=6, denied=6)
    pcap = Path(session.state["run_dir"]) / f"{tag}-traffic.pcap"
    traffic.write_pcap(pcap, flows, 3)
    traffic.replay(session.netns("src"), pcap)
    time.sleep(1.0)
    return traffic.check(traffic.analyze(cap.stop()), flows)


def test_a_failed_link_reroutes_the_chain_and_traffic_flows_again(tmp_path):
    with Session("paper-fig5", run_root=tmp_path, log=lambda m: None, host_args=["--failover-groups", "off"]) as s:
        chain, plan, _, _ = scenario.deploy(s, "fig5", 50)
        assert chain["state"] == "ACTIVE"
        assert outputs_of_tagging_rules(s) == {"2"}, "the direct s1-s3 link is the shortest path"
        ok, lines = send_and_check(s, plan, "before")
        assert ok, "\n".join(lines)

        launcher.set_port(s.state, "s1", 2, up=False)
        deadline = time.monotonic() + 60
        while outputs_of_tagging_rules(s) != {"3"} and time.monotonic() < deadline:
            time.sleep(0.2)
        assert outputs_of_tagging_rules(s) == {"3"}, "s1 now sends the chain's traffic towards s2"
        placement = s.host.call("GET", "/placements")["placements"][0]
        assert placement["server"] == "metron:srv1"
        ok, lines = send_and_check(s, plan, "after")
        assert ok, "\n".join(lines)

"""Prometheus metrics (issue 15, item 1) end to end: a real Prometheus (Debian's package) scrapes the embedded host
(/metrics) and the agent (--metrics-listen, started by the topology launcher) on paper-fig3 while a chain carries
real UDP traffic, and its query API answers the chain's packet rate (rate() over the agent's and the switch's
counters > 0) and the split the test asks for over REST, with the chain's new core count."""
import re
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))
sys.path.insert(0, str(REPO / "bench" / "scaling"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from metron_demo.session import Session  # noqa: E402
import prometheus_server  # noqa: E402
import workload  # noqa: E402

CLASSES = 4
PPS = 200

pytestmark = [pytest.mark.system,
              pytest.mark.skipif(not prometheus_server.available(),
                                 reason="prometheus not installed (deploy/deps/e2e.apt)")]


def test_prometheus_scrapes_the_chains_packet_rate_and_a_split(tmp_path):
    with Session("paper-fig3", run_root=tmp_path, log=lambda m: None, tls=False) as s:
        net = s.network()
        body = workload.chain_json("watched", net["ingress"][0], net["egress"][0], CLASSES, 1000, auto_scale=False)
        assert workload.submit(s.host, body)["state"] == "ACTIVE"
        host = s.host.rest.split("/")[2]  # host:port of the embedded host's web server
        agent = s.state["nodes"]["srv1"]["metrics"]
        jobs = {"metron-controller": {"targets": [host], "basic_auth": ("admin", s.host.auth_password())},
                "metron-agent": {"targets": [agent]}}
        sender = workload.Sender(s.netns("src"), CLASSES)
        try:
            sender.rate(PPS)
            with prometheus_server.Prometheus(tmp_path / "prometheus", jobs) as prom:
                # the agent's counters: packets entering the chain's group on its core; the controller's: packets
                # matching the chain's offload rules at the ingress switch
                agent_q = 'sum(rate(metron_agent_group_packets_total{pipeline="watched"}[5s]))'
                switch_q = 'sum(rate(metron_chain_switch_packets_total{chain="watched",role="offload"}[5s]))'
                prom.wait_for(agent_q + " > 0", what="agent packet rate of the chain")
                prom.wait_for(switch_q + " > 0", what="switch packet rate of the chain")
                time.sleep(6)  # a whole rate window of steady traffic
                agent_rate, switch_rate = prom.query(agent_q)[0][1], prom.query(switch_q)[0][1]
                print(f"sent {PPS} pps; Prometheus: agent {agent_rate:.0f} pps, switch {switch_rate:.0f} pps")
                assert 0.5 * PPS < agent_rate < 1.5 * PPS and 0.5 * PPS < switch_rate < 1.5 * PPS
                assert prom.query('metron_chain_state{chain="watched",state="ACTIVE"}')
                assert [v for _, v in prom.query("metron_server_up")] == [1], prom.query("metron_server_up")
                assert prom.query('metron_chain_cores{chain="watched"}')[0][1] == 1

                split = s.host.call("POST", "/scaling/watched/split?group=g0")
                assert split["outcome"] == "DONE", split
                done = prom.wait_for('metron_scaling_operations{chain="watched",kind="split",outcome="done"} == 1',
                                     what="the split in the controller's metrics")
                assert done[0][0]["job"] == "metron-controller"
                prom.wait_for('metron_chain_cores{chain="watched"} == 2', what="two cores after the split")
                # both groups now carry traffic on their own cores, as the agent counts it
                groups = prom.wait_for('count(rate(metron_agent_group_packets_total{pipeline="watched"}[5s]) > 0)'
                                       ' == 2', timeout=60, what="two groups with traffic")
                assert groups
                # every target healthy, and every metric the Grafana dashboard queries is one Prometheus has
                health = prom.targets()
                assert all(h == "up" for h, _ in health.values()), health
                dashboard = (REPO / "deploy" / "grafana" / "metron.json").read_text()
                wanted = set(re.findall(r"metron_[a-z_]+", dashboard))
                missing = wanted - set(prom.api("label/__name__/values"))
                assert len(wanted) > 10 and not missing, missing
        finally:
            sender.kill()
        s.host.call("DELETE", "/chains/watched")

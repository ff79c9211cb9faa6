"""Metron end to end on one machine: paper-fig3, the embedded host, a real agent, real OVS, real packets.
The same scenario as `make demo` (smaller firewall), then removal, host restart and agent restart."""
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))

from metron_demo import chains, scenario, traffic  # noqa: E402
from metron_demo.session import Session  # noqa: E402  (puts deploy/embedded on the path)
from metron_topo import launcher  # noqa: E402
from support import wait_for  # noqa: E402

RULES = 100

pytestmark = pytest.mark.system  # skipped until `make build` made the host and the agent (conftest)


def test_chain_runs_end_to_end_with_real_packets(clean, tmp_path):
    out = scenario.run(clean, name="e2e", n_rules=RULES, log=lambda m: None)
    assert out.ok, "\n".join(out.lines)
    # The dashboard shows the live chain, its classes and tags and the switch counters of the traffic just sent.
    user = "admin:" + clean.host.auth_password()
    url = clean.host.rest.replace("/onos/metron", "/metron/ui/").replace("http://", f"http://{user}@")
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                          f"--user-data-dir={tmp_path}", "--dump-dom", url], capture_output=True, text=True,
                         timeout=120).stdout
    assert "<td>e2e</td><td>ACTIVE</td>" in dom
    assert "02:4d:" in dom  # class tags
    counters = dom[dom.index('<table id="counters">'):]
    assert re.search(r"<td>e2e</td><td>(OFFLOAD|offload)[^<]*</td><td>of:0000000000000001</td><td>\d+</td><td>[1-9]",
                     counters), counters[:2000]


def test_removing_a_chain_removes_its_rules_and_pipeline(clean):
    chain, _, _, _ = scenario.deploy(clean, "gone", RULES)
    assert chain["state"] == "ACTIVE"
    assert scenario.metron_rule_count(clean, "s1") >= RULES
    assert any(g["pipelineId"] == "gone" for g in clean.agent_stats()["groups"])
    clean.host.call("DELETE", "/chains/gone")
    assert scenario.metron_rule_count(clean, "s1") == 0
    assert scenario.metron_rule_count(clean, "s2") == 0
    assert not any(g["pipelineId"] == "gone" for g in clean.agent_stats()["groups"])
    assert clean.host.call("GET", "/chains")["chains"] == []
    assert [t for t in clean.host.call("GET", "/tags")["tags"] if t["chain"] == "gone"] == []


def test_a_restarted_host_resumes_its_chains(clean):
    chain, _, _, _ = scenario.deploy(clean, "durable", RULES)
    rules_before = scenario.metron_rule_count(clean, "s1")
    old_pid = clean.host_pid()
    clean.stop_host()
    clean.start_host()
    assert clean.host_pid() != old_pid
    chains_after = {c["name"]: c for c in clean.host.call("GET", "/chains")["chains"]}
    assert chains_after["durable"]["state"] == "ACTIVE"
    assert [p["chain"] for p in clean.host.call("GET", "/placements")["placements"]] == ["durable"]
    # Rules stayed on the switch across the restart and the host still attributes them to the chain.
    assert scenario.metron_rule_count(clean, "s1") == rules_before
    assert {r["chain"] for r in clean.host.call("GET", "/rules")["rules"]} == {"durable"}
    clean.host.call("DELETE", "/chains/durable")
    assert scenario.metron_rule_count(clean, "s1") == 0


def test_a_restarted_host_keeps_traffic_flowing(clean):
    scenario.deploy(clean, "flowing", RULES)
    clean.stop_host()
    clean.start_host()
    plan = chains.firewall(RULES)[1]
    cap = traffic.Capture(clean.netns("sink"), Path(clean.state["run_dir"]) / "restart.pcap")
    flows = traffic.flows(plan, allowed=6, denied=6)
    pcap = Path(clean.state["run_dir"]) / "restart-traffic.pcap"
    traffic.write_pcap(pcap, flows, 3)
    traffic.replay(clean.netns("src"), pcap)
    time.sleep(1.0)
    ok, lines = traffic.check(traffic.analyze(cap.stop()), flows)
    assert ok, "\n".join(lines)


def metron_cli(session, *args):
    return subprocess.run([str(REPO / "deploy" / "embedded" / "metron"), "--data", str(session.data), *args],
                          capture_output=True, text=True, timeout=180)


def test_cli_runs_the_onos_cli_commands_against_the_host(clean, tmp_path):
    net = clean.network()
    body, _ = chains.fw_napt_lb("cli", RULES, net["ingress"][0], net["egress"][0])
    (tmp_path / "cli.json").write_text(body)
    r = metron_cli(clean, "chain-add", str(tmp_path / "cli.json"))
    assert r.returncode == 0, r.stderr
    assert "chain cli ACTIVE in " in r.stdout and "server metron:srv1" in r.stdout
    chains_out = metron_cli(clean, "chains").stdout
    assert "cli" in chains_out and "ACTIVE" in chains_out
    assert "02:4d:" in metron_cli(clean, "tcs", "cli").stdout
    assert "of:0000000000000001" in metron_cli(clean, "placement", "cli").stdout
    rules = [line for line in metron_cli(clean, "rules", "of:0000000000000001").stdout.splitlines()
             if line.startswith("cli ")]
    assert len(rules) >= RULES
    assert "core 1" in metron_cli(clean, "servers").stdout
    r = metron_cli(clean, "chain-remove", "cli")
    assert r.returncode == 0 and "chain cli removed in" in r.stdout
    r = metron_cli(clean, "chain-remove", "cli")
    assert r.returncode == 1 and "404" in r.stderr and "cli" in r.stderr


def test_a_session_leaves_nothing_behind(tmp_path):
    s = Session("single", run_root=tmp_path, log=lambda m: None)
    with s:
        state, pid = s.state, s.host_pid()
        assert [p["name"] for p in state["processes"]] == ["ovsdb-server", "ovs-vswitchd", "of-relay",
                                                           "agent-srv1", "metron-host"]
    assert launcher.leaks(state) == []
    assert not Path(f"/proc/{pid}").exists()
    assert not Path(state["run_dir"]).exists()


# Last: until the controller redeploys chains on a restarted agent, this leaves a chain it cannot remove.
def test_a_restarted_agent_gets_its_chain_redeployed(clean):
    scenario.deploy(clean, "again", RULES)
    clean.restart_agent("srv1")
    def redeployed():
        try:
            return any(g["pipelineId"] == "again" for g in clean.agent_stats()["groups"])
        except RuntimeError:  # the agent is still starting
            return False

    wait_for(redeployed, 60, "the controller to redeploy chain 'again' on the restarted agent")

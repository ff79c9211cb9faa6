"""Metron end to end on one machine: paper-fig3, the embedded host, a real agent, real OVS, real packets.
The same scenario as `make demo` (smaller firewall), then removal, host restart and agent restart."""
import html
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


def dashboard(session, tmp_path, budget_ms=6000, screenshot=None):
    """The dashboard's DOM after headless Chromium ran its scripts for budget_ms of virtual time (several polls)."""
    user = "admin:" + session.host.auth_password()
    url = session.host.rest.replace("/onos/metron", "/metron/ui/").replace("http://", f"http://{user}@")
    argv = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            f"--user-data-dir={tmp_path / 'chromium'}", f"--virtual-time-budget={budget_ms}", "--window-size=1400,2400"]
    if screenshot:
        subprocess.run(argv + [f"--screenshot={screenshot}", url], capture_output=True, timeout=120)
    return subprocess.run(argv + ["--dump-dom", url], capture_output=True, text=True, timeout=120).stdout


def table(dom, name):
    """A dashboard table's rows as lists of cell texts."""
    body = re.search(r'<table id="table-%s">(.*?)</table>' % name, dom, re.S)
    assert body, dom[:3000]
    return [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S) if "<td" in row]


def test_chain_runs_end_to_end_with_real_packets(clean, tmp_path):
    out = scenario.run(clean, name="e2e", n_rules=RULES, log=lambda m: None)
    assert out.ok, "\n".join(out.lines)
    # While allowed traffic flows, the dashboard shows what REST reports: the chain, its class entries with their
    # tags, where it runs, its packet rate and its core's over time, and the switch counters of what was sent.
    _, plan = chains.fw_napt_lb("e2e", RULES, "x", "y")
    pcap = tmp_path / "allowed.pcap"
    traffic.write_pcap(pcap, [f for f in traffic.flows(plan, 50, 0)], packets_per_flow=40)
    sender = subprocess.Popen(["ip", "netns", "exec", clean.netns("src"), "tcpreplay", "-q", "-i", "eth0",
                               "--pps=1000", "--loop=0", str(pcap)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: clean.host.call("GET", "/scaling/e2e").get("ingressPps", 0) > 100, 30,
                 "the ingress port's packet rate measured")
        dom = dashboard(clean, tmp_path, screenshot=tmp_path / "dashboard.png")
        rest = {p: clean.host.call("GET", p) for p in ("/chains", "/chains/e2e/classes", "/placements", "/tags",
                                                         "/servers", "/rules", "/scaling/e2e")}
    finally:
        sender.kill()
        sender.wait()
    assert '<div id="errors" hidden=""' in dom, re.search(r'<div id="errors".*?</div>', dom, re.S).group(0)
    assert "Optional[" not in dom and not any("Optional[" in str(v) for v in rest.values())
    assert ["e2e", "ACTIVE"] in [r[:2] for r in table(dom, "chain")]
    classes = table(dom, "class")
    entries = [(str(c["id"]), e["match"], e["does"]) for c in rest["/chains/e2e/classes"]["classes"]
               for e in c["entries"]]
    assert [(r[1], r[3], r[5]) for r in classes if r[0] == "e2e"] == entries
    assert any("02:4d:" in r[5] for r in classes)  # class tags
    placement = [p for p in rest["/placements"]["placements"] if p["chain"] == "e2e"][0]
    assert f'data-chain="e2e" data-server="{placement["server"]}" data-offload="{placement["offloadDevice"]}"' in dom
    for t in [t for t in rest["/tags"]["tags"] if t["chain"] == "e2e"]:
        assert [t["server"], t["nic"], "mac " + t["mac"][:11], "e2e", t["groupId"]] in table(dom, "tag")
    # rates over time: the chain's ingress rate and its core's packet rate are drawn, and not zero
    assert re.search(r'<polyline [^>]*data-series="e2e"', dom)
    legend = re.search(r'data-series="e2e">e2e: ([\d.]+)(k?) pps<', dom)
    assert legend and float(legend.group(1)) > 0, dom[dom.index('id="chart-chains"'):][:2000]
    load = rest["/scaling/e2e"]["load"]
    core = f'{load["server"]} core {load["groups"][0]["core"]}'
    assert re.search(r'<polyline [^>]*data-series="%s"' % re.escape(core), dom)
    # the switch counters of the traffic sent: offload rules on s1 counted packets
    offload = [r for r in table(dom, "rule") if r[:3] == ["e2e", "of:0000000000000001", "offload"]]
    assert offload and int(offload[0][3]) >= RULES and int(offload[0][4]) > 0, table(dom, "rule")


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

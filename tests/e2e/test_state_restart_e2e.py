"""Flow state across an agent restart, end to end: FW -> NAPT -> LB on paper-fig3 (embedded host, real OVS, the real
agent started by the topology launcher with --state-dir and a 1 s checkpoint). UDP flows get their NAPT port and LB
backend; the agent of their server is restarted - SIGTERM (state saved at shutdown) or SIGKILL (only the last
checkpoint survives) - and once the controller has redeployed the chain there, the same flows reach the sink with
the same translation while new flows get ports of their own. Last, an open TCP connection through FW -> NAPT -> LB
with replies carries data again after the restart (its mapping restored, replies steered back to it).

New flows are sent first after the restart and the old ones in reverse order: an agent that lost its tables would
hand the old flows other ports and backends, so these tests fail without the saved state."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))

from metron_demo import chains, scenario, traffic  # noqa: E402
from metron_topo import agent  # noqa: E402
from support import VIP, route_replies_between_hosts, wait_for  # noqa: E402

RULES = 50
SERVER = "srv1"

pytestmark = pytest.mark.system  # skipped until `make build` made the host and the agent (conftest)


def udp_flows(plan, first_id, count, first_sport):
    return [traffic.Flow("allow", first_id + i, traffic.SRC_IP, "udp", first_sport + i, plan.allowed_port)
            for i in range(count)]


def translations(session, flows, name, packets=2):
    """Sends `flows` (first packets in list order) and answers flow id -> the set of (src, sport, dst, dport) the
    sink saw for it."""
    run = Path(session.state["run_dir"])
    cap = traffic.Capture(session.netns("sink"), run / f"{name}.pcap")
    try:
        traffic.write_pcap(run / f"{name}-sent.pcap", flows, packets)
        traffic.replay(session.netns("src"), run / f"{name}-sent.pcap", pps=500)
        time.sleep(1.0)  # the last frames are still crossing the switches and the agent
    finally:
        arrivals = traffic.analyze(cap.stop())
    return {fid: set(seen) for fid, seen in arrivals.allowed.items()}


def agent_log(session):
    return (Path(session.state["run_dir"]) / f"agent-{SERVER}.log").read_text(errors="replace")


def first_translation(session, chain, plan, flow_id):
    """Sends a one-flow probe until it crosses the chain; returns its translation."""
    probe = udp_flows(plan, flow_id, 1, 22000 + flow_id)
    seen = wait_for(lambda: translations(session, probe, f"{chain}-probe-{time.monotonic_ns()}").get(flow_id), 60,
                    f"traffic to cross chain '{chain}'")
    return next(iter(seen))


def restart(session, chain, plan, sig, probe=True):
    """Stops the server's agent with `sig` and starts it again the way the launcher does; returns once the
    controller has redeployed the chain there and, with `probe`, a new UDP flow crosses it (its translation)."""
    if sig == signal.SIGKILL:
        proc = [p for p in session.state["processes"] if p["name"] == f"agent-{SERVER}"][-1]
        os.kill(proc["pid"], signal.SIGKILL)  # restart_agent's stop then only reaps it
    session.restart_agent(SERVER)

    def redeployed():
        try:
            return any(g["pipelineId"] == chain for g in session.agent_stats(SERVER)["groups"])
        except RuntimeError:  # the agent is still starting
            return False

    wait_for(redeployed, 90, f"the controller to redeploy chain '{chain}' on the restarted agent")
    return first_translation(session, chain, plan, 900) if probe else None


def check_restart_keeps_translations(session, chain, sig, settle_s):
    _, plan, _, _ = scenario.deploy(session, chain, RULES)
    first_translation(session, chain, plan, 800)  # the chain carries traffic: every flow below is established
    old = udp_flows(plan, 0, 12, 20000)
    before = translations(session, old, f"{chain}-before")
    assert sorted(before) == [f.id for f in old], f"not every flow crossed the chain before the restart: {before}"
    assert all(len(seen) == 1 for seen in before.values()), before
    napt_ports = {next(iter(seen))[1] for seen in before.values()}
    assert len(napt_ports) == len(old)
    time.sleep(settle_s)  # SIGKILL: past the agent's next checkpoint (agent.STATE_CHECKPOINT_MS)

    probe = restart(session, chain, plan, sig)
    assert probe[1] not in napt_ports, f"a new flow got the port of a restored flow: {probe}"
    log = agent_log(session)
    if sig == signal.SIGTERM:
        assert "state: saved" in log, log[-2000:]
    assert f"state: restored pipeline '{chain}'" in log, log[-2000:]

    # New flows first: they must work, and must not take a port an old flow holds.
    new = udp_flows(plan, 100, 6, 21000)
    fresh = translations(session, new, f"{chain}-new")
    assert sorted(fresh) == [f.id for f in new], fresh
    fresh_ports = {t[1] for seen in fresh.values() for t in seen}
    assert not fresh_ports & napt_ports, f"new flows got ports of restored flows: {fresh_ports & napt_ports}"
    assert all(next(iter(seen))[0] == chains.NAPT_ADDRESS for seen in fresh.values())

    after = translations(session, list(reversed(old)), f"{chain}-after")
    assert after == before, "\n".join(f"flow {fid}: before {before[fid]} after {after.get(fid)}"
                                      for fid in sorted(before) if after.get(fid) != before[fid])


def test_a_gracefully_restarted_agent_keeps_every_flow_translation(clean):
    check_restart_keeps_translations(clean, "kept", signal.SIGTERM, settle_s=0)


def test_a_crashed_agent_keeps_the_translations_of_its_last_checkpoint(clean):
    check_restart_keeps_translations(clean, "crashed", signal.SIGKILL,
                                     settle_s=2.5 * agent.STATE_CHECKPOINT_MS / 1000)


# One connection: echoes every line with the peer it came from (the NAPT's public address and port).
ECHO_SERVER = """
import json, socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", %d)); s.listen(16)
print("ready", flush=True)
while True:
    c, peer = s.accept()
    f = c.makefile("rb")
    for line in f:
        c.sendall(b"echo:" + line)
        print(json.dumps({"peer": list(peer), "got": line.decode()}), flush=True)
""" % chains.BACKEND_PORT

# Opens `warmup` short connections (so the kept one does not hold the allocator's first port, which a fresh table
# would hand out again), then one connection that sends each line of stdin and prints the echo.
KEEPALIVE_CLIENT = """
import socket, sys
for i in range(3):
    socket.create_connection((%r, %d), timeout=10).close()
c = socket.create_connection((%r, %d), timeout=90)
f = c.makefile("rb")
print("connected", flush=True)
for line in sys.stdin:
    c.sendall(line.encode())
    print(f.readline().decode().strip(), flush=True)
"""




# Last in this module: it changes the end hosts' MACs and routes.
def test_an_open_tcp_connection_carries_data_again_after_an_agent_restart(clean):
    net = clean.network()
    body, _ = chains.fw_napt_lb_replies("conn", RULES, net["ingress"][0], net["egress"][0])
    assert clean.host.call("POST", "/chains", body.encode())["state"] == "ACTIVE"
    route_replies_between_hosts(clean)
    server = subprocess.Popen(["ip", "netns", "exec", clean.netns("sink"), "/usr/bin/python3", "-u", "-c",
                               ECHO_SERVER], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    client = None
    try:
        assert server.stdout.readline().strip() == "ready", server.stderr.read()
        client = subprocess.Popen(["ip", "netns", "exec", clean.netns("src"), "/usr/bin/python3", "-u", "-c",
                                   KEEPALIVE_CLIENT % (VIP, chains.SERVICE_PORT, VIP, chains.SERVICE_PORT)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert client.stdout.readline().strip() == "connected", client.stderr.read()

        def say(line):
            client.stdin.write(line + "\n")
            client.stdin.flush()
            return client.stdout.readline().strip()

        assert say("before") == "echo:before"
        restart(clean, "conn", None, signal.SIGTERM, probe=False)
        assert "state: restored pipeline 'conn'" in agent_log(clean)
        # TCP retransmits until the chain is back; the segment must then reach the same backend from the same
        # NAPT port, and the backend's answer must be restored to the connection.
        assert say("after") == "echo:after", client.stderr.read()
    finally:
        for p in (client, server):
            if p is not None:
                p.kill()
                p.wait()
    seen = [json.loads(line) for line in server.stdout.read().splitlines() if line.startswith("{")]
    assert [c["got"] for c in seen] == ["before\n", "after\n"], seen
    assert seen[0]["peer"] == seen[1]["peer"] and seen[0]["peer"][0] == chains.NAPT_ADDRESS, seen

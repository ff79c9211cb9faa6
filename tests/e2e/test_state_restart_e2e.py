"""Flow state across an agent restart, end to end: FW -> NAPT -> LB on paper-fig3 (embedded host, real OVS, the real
agent started by the topology launcher with --state-dir and a 1 s checkpoint). UDP flows get their NAPT port and LB
backend; the agent of their server is restarted - SIGTERM (state saved at shutdown) or SIGKILL (only the last
checkpoint survives) - and once the controller has redeployed the chain there, the same flows reach the sink with
the same translation while new flows get ports of their own.

New flows are sent first after the restart and the old ones in reverse order: an agent that lost its tables would
hand the old flows other ports and backends, so these tests fail without the saved state."""
import os
import signal
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))

from metron_demo import chains, scenario, traffic  # noqa: E402
from metron_demo.session import Session  # noqa: E402  (puts deploy/embedded on the path)
from metron_client import HostError  # noqa: E402
from metron_topo import agent  # noqa: E402

RULES = 50
SERVER = "srv1"

pytestmark = pytest.mark.system  # skipped until `make build` made the host and the agent (conftest)


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    s = Session("paper-fig3", run_root=tmp_path_factory.mktemp("run"), log=lambda m: None)
    with s:
        yield s


@pytest.fixture
def clean(session):
    yield session
    for c in session.host.call("GET", "/chains")["chains"]:
        try:
            session.host.call("DELETE", "/chains/" + c["name"])
        except HostError:
            pass  # the test that left it has already failed and says why


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


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


def restart(session, chain, plan, sig):
    """Stops the server's agent with `sig` and starts it again the way the launcher does; returns once the
    controller has redeployed the chain there and a new probe flow crosses it (the probe's translation)."""
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
    return first_translation(session, chain, plan, 900)


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

"""Metron in the real Karaf with a real switch: userspace Open vSwitch connected to the stand-in's OpenFlow
southbound (onos-standin org.metron.standin.openflow: ONOS 2.7.0's OpenFlowDeviceProvider, OpenFlowRuleProvider
and FlowStatsCollector stood in for, on the project's own OpenFlow 1.3 code), a real metron-agent attached to the
bridge by a veth (AF_PACKET), and real packets from a host namespace through the switch and the agent.

Built with the emulation's own helper (topologies/metron_topo: private ovsdb-server/ovs-vswitchd in a namespace,
netdev bridges, veths with tx offload off, the agent in the server's namespace, the OpenFlow relay to a controller
in the root namespace), topology `single`: src - s1/1, s1/2 - srv1 eth0, s1/3 - sink. The agent runs on shared 2 MB
hugepages (reserved and given back here) so that a black-box NF can run beside it as a DPDK secondary (issue 24).
Needs root, OVS and the built agent; takes the machine-wide lock:
    flock /tmp/metron-sys.lock /usr/bin/python3 -m pytest -q tests/karaf/test_openflow.py
"""
import json
import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from test_karaf import installed, metric_samples, wait_for  # noqa: F401  (installed: the Metron apps in the Karaf)

sys.path.insert(0, str(ROOT / "topologies"))
sys.path.insert(0, str(ROOT / "deploy" / "demo"))
from metron_topo import agent as topo_agent, launcher, model, netcfg as topo_netcfg  # noqa: E402
from metron_topo.ovs import Ovs  # noqa: E402
from metron_demo import blackbox, chains, traffic  # noqa: E402

SWITCH = "of:0000000000000001"
INGRESS, TO_SERVER, EGRESS = f"{SWITCH}/1", f"{SWITCH}/2", f"{SWITCH}/3"
RULES = 20  # firewall rules: enough for several offloaded deny entries, quick to install
POLL_MS = 500  # flow statistics poll (ONOS: 5 s), so that entries turn ADDED quickly
NF_FWD = ROOT / "agent" / "build" / "metron-nf-fwd"  # the project's minimal black-box NF (agent/nflib)
# The fields of a black box in the chain's REST view (rest/codec/BlackBoxCodec, docs/blackbox.md)
BOX_FIELDS = {"nf", "group", "server", "element", "mode", "state", "onFailure", "pid", "restarts", "sent", "returned",
              "nfDropped", "ringFull", "bypassed", "failedClosed", "nfLost", "nfSleeps", "nfWakeups", "link",
              "lastExit"}

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, veths, OVS)")


def results(name, **values):
    """Measured numbers of this test, printed and kept under bench/results for the README."""
    print(f"{name}: {json.dumps(values)}")
    out = ROOT / "bench" / "results" / "karaf-openflow.json"
    data = json.loads(out.read_text()) if out.exists() else {}
    data[name] = values
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2) + "\n")


@pytest.fixture(scope="module")
def openflow_port(karaf, installed):  # noqa: F811
    """The stand-in's OpenFlow listener on a free port with a short statistics poll (Karaf.listen_openflow)."""
    return karaf.listen_openflow(POLL_MS)


@pytest.fixture(scope="module")
def net(karaf, openflow_port, tmp_path_factory):
    """Topology `single` with its agent, s1 connected to the Karaf; torn down (and leak-checked) after. The agent runs
    on 2 MB hugepages whose files it keeps for DPDK secondaries (the black-box NF in MODE RING needs them), as the
    embedded host's black-box e2e runs it: reserved here, given back with the files at the end."""
    saved = os.environ.get(topo_agent.HUGE_SHARED_ENV)
    os.environ[topo_agent.HUGE_SHARED_ENV] = "1"  # for the agent restarted by a test too
    try:
        with topo_agent.hugepages(1, log=print) as line:
            if not os.environ.get(topo_agent.HUGE_DIR_ENV):
                pytest.fail(f"black boxes in RING mode need hugepages: {line}")
            state = launcher.up("single", run_root=tmp_path_factory.mktemp("of"),
                                controller=f"tcp:127.0.0.1:{openflow_port}", log=print)
            try:
                yield state
            finally:
                launcher.down(state.path, log=lambda m: None)
                topo_agent.remove_hugepage_files(state["id"] + "-")  # the agent is down: the files it kept go
                assert launcher.leaks(state) == []
    finally:
        if saved is None:
            os.environ.pop(topo_agent.HUGE_SHARED_ENV, None)
        else:
            os.environ[topo_agent.HUGE_SHARED_ENV] = saved


def port_numbers(karaf, did=SWITCH):
    """Numbers of the enabled ports; ONOS's codec writes a named port (OpenFlowDeviceProvider names them) as
    "[name](number)"."""
    ports = json.loads(karaf.http("GET", f"/onos/v1/devices/{did}/ports")[1])["ports"]
    return {re.search(r"(\d+)\)?$", str(p["port"])).group(1) for p in ports if p["isEnabled"]}


def device(karaf, did):
    status, body = karaf.http("GET", f"/onos/v1/devices/{did}")
    return json.loads(body) if status == 200 else None


def onos_flows(karaf, did=SWITCH):
    status, body = karaf.http("GET", f"/onos/v1/flows/{did}")
    assert status in (200, 404), (status, body)
    return [f for f in json.loads(body)["flows"] if f.get("appId") == "org.metron.app"] if status == 200 else []


def ovs_cookies(karaf, state):
    """The cookies of Metron's flows among those OVS itself holds on s1 (ovs-ofctl -O OpenFlow13 dump-flows; ONOS's
    core app has its LLDP intercept there too)."""
    out = Ovs(state["run_dir"]).ofctl(state["nodes"]["s1"]["bridge"], "dump-flows").stdout
    return karaf.app_cookies({int(line.split("cookie=")[1].split(",")[0], 16) for line in out.splitlines()
                              if "cookie=" in line})


def chain(karaf, name):
    status, body = karaf.http("GET", f"/onos/metron/chains/{name}")
    return json.loads(body) if status == 200 else None


def declare_server(karaf, net):
    """netcfg (ONOS's REST) declaring the topology's agent as a server, s1, and the server's cable to s1/2; answers
    (the config, the server's device id)."""
    cfg = topo_netcfg.for_state(net.path)
    server = next(iter(cfg["devices"]))
    cable = {"basic": {"type": "DIRECT", "bidirectional": True}}
    cfg["devices"][SWITCH] = {"basic": {"name": "s1"}}
    cfg["links"] = {f"{server}/1-{TO_SERVER}": cable}
    status, body = karaf.http("POST", "/onos/v1/network/configuration", cfg)
    assert status == 200, (status, body)
    return cfg, server


def submit_until_active(karaf, server, spec):
    """Once the server is available, the chain submitted over Metron's REST (201) and ACTIVE; answers (the submit
    time, seconds from it to ACTIVE)."""
    wait_for(f"{server} available", lambda: (d := device(karaf, server)) and d["available"], timeout=30)
    submitted = time.time()
    status, answer = karaf.http("POST", "/onos/metron/chains", json.dumps(spec))
    assert status == 201, (status, answer)
    wait_for(f"{spec['name']} ACTIVE", lambda: (chain(karaf, spec["name"]) or {}).get("state") == "ACTIVE",
             timeout=60, interval=0.1)
    return submitted, time.time() - submitted


def undeclare(karaf, cfg):
    for did in cfg["devices"]:
        karaf.http("DELETE", f"/onos/v1/network/configuration/devices/{did}")
    karaf.http("DELETE", "/onos/v1/network/configuration/links")


def send_and_capture(state, name, flows, packets_per_flow=3):
    """Replays the flows from src (scapy-built pcap, tcpreplay) and returns the sink's arrivals."""
    work = Path(state["run_dir"])
    cap = traffic.Capture(state["nodes"]["sink"]["netns"], work / f"{name}-sink.pcap")
    pcap = work / f"{name}.pcap"
    traffic.write_pcap(pcap, flows, packets_per_flow)
    traffic.replay(state["nodes"]["src"]["netns"], pcap, pps=500)
    time.sleep(1.0)
    return traffic.analyze(cap.stop())


def test_a_chain_through_a_real_switch_and_agent_carries_real_packets(karaf, installed, net):  # noqa: F811
    """The whole path with a real switch: OVS connects and is device of:..01 with its ports; netcfg declares the
    agent's server and its cable to s1/2; a FW -> NAPT -> LB chain submitted over Metron's REST goes ACTIVE, its
    switch rules are ADDED in ONOS's /onos/v1/flows and are the flows OVS holds (same cookies); packets sent from
    src arrive at sink with the firewall's verdicts and the NAPT's and LB's rewrites. Deleting the chain takes its
    flows off OVS. Then the agent is killed: the chain is DEGRADED and nothing arrives; the agent restarted: ACTIVE
    and the traffic flows again."""
    t0 = time.time()
    sw = wait_for(f"{SWITCH} available", lambda: (d := device(karaf, SWITCH)) and d["available"] and d, timeout=30)
    connected_s = time.time() - t0
    ports = json.loads(karaf.http("GET", f"/onos/v1/devices/{SWITCH}/ports")[1])["ports"]
    print("switch:", json.dumps(sw)[:400], "ports:", [(p["port"], p["isEnabled"], p["annotations"].get("portName"))
                                                      for p in ports])
    assert sw["type"] == "SWITCH" and sw["role"] == "MASTER", sw
    assert port_numbers(karaf) >= {"1", "2", "3"}, ports

    cfg, server = declare_server(karaf, net)
    name = "hk-of-fw-napt-lb"
    body, plan = chains.fw_napt_lb(name, RULES, INGRESS, EGRESS)
    spec = json.loads(body)
    spec["deployment"]["egressMac"] = traffic.SINK_MAC
    flows = traffic.flows(plan, allowed=6, denied=6)
    try:
        submitted, active_s = submit_until_active(karaf, server, spec)
        ours = wait_for("every Metron rule ADDED", lambda: (f := onos_flows(karaf)) and all(
            x["state"] == "ADDED" for x in f) and f, timeout=30, interval=0.1)
        added_s = time.time() - submitted
        onos_ids = {int(f["id"]) for f in ours}
        on_ovs = ovs_cookies(karaf, net)
        print(f"{len(ours)} Metron rules ADDED on {SWITCH}; OVS holds {len(on_ovs)} flows")
        assert onos_ids == on_ovs, (sorted(onos_ids - on_ovs), sorted(on_ovs - onos_ids))

        arrivals = send_and_capture(net, "active", flows)
        ok, lines = traffic.check(arrivals, flows)
        print("\n".join(lines))
        assert ok, "\n".join(lines)

        # the agent dies: DEGRADED, nothing arrives; back: ACTIVE, traffic again
        killed = time.time()
        os.killpg(net["nodes"]["srv1"]["agent_pid"], signal.SIGKILL)
        wait_for(f"{name} DEGRADED", lambda: (chain(karaf, name) or {}).get("state") == "DEGRADED", timeout=20,
                 interval=0.1)
        degraded_s = time.time() - killed
        dead = send_and_capture(net, "dead", flows)
        print(f"agent dead: {sum(len(v) for v in dead.allowed.values())} allowed packets arrived")
        assert not dead.allowed and not dead.denied, (dead.allowed, dead.denied)
        restarted = time.time()
        launcher.start_agent(net, model.load("single").servers[0])
        wait_for(f"{name} ACTIVE again", lambda: (chain(karaf, name) or {}).get("state") == "ACTIVE", timeout=60,
                 interval=0.1)
        reactive_s = time.time() - restarted
        again = send_and_capture(net, "again", flows)
        ok, lines = traffic.check(again, flows)
        print("\n".join(lines))
        assert ok, "\n".join(lines)

        deleted = time.time()
        assert karaf.http("DELETE", f"/onos/metron/chains/{name}")[0] == 204
        wait_for("Metron's flows gone from OVS", lambda: not ovs_cookies(karaf, net), timeout=30, interval=0.1)
        gone_s = time.time() - deleted
        wait_for("Metron's entries gone from ONOS", lambda: not onos_flows(karaf), timeout=30)
        results("single-node", switch_available_s=round(connected_s, 2), rules=len(ours),
                submit_to_active_s=round(active_s, 2), submit_to_all_added_s=round(added_s, 2),
                kill_to_degraded_s=round(degraded_s, 2), restart_to_active_s=round(reactive_s, 2),
                delete_to_ovs_empty_s=round(gone_s, 2), poll_ms=POLL_MS)
    finally:
        karaf.http("DELETE", f"/onos/metron/chains/{name}")
        undeclare(karaf, cfg)


def test_a_switch_that_disconnects_is_unavailable_and_back_when_it_reconnects(karaf, net):
    """OVS losing its controller connection (its controller removed) makes the device unavailable, as ONOS's
    OpenFlowDeviceProvider reports a closed channel; set again, the device is available with its ports."""
    ovs, br = Ovs(net["run_dir"]), net["nodes"]["s1"]["bridge"]
    target = ovs.vsctl("get-controller", br).stdout.strip()
    wait_for(f"{SWITCH} available", lambda: (d := device(karaf, SWITCH)) and d["available"], timeout=30)
    t0 = time.time()
    ovs.vsctl("del-controller", br)
    wait_for(f"{SWITCH} unavailable", lambda: not device(karaf, SWITCH)["available"], timeout=15, interval=0.1)
    down_s = time.time() - t0
    t1 = time.time()
    ovs.vsctl("set-controller", br, target)
    wait_for(f"{SWITCH} available again", lambda: device(karaf, SWITCH)["available"], timeout=30, interval=0.1)
    up_s = time.time() - t1
    assert port_numbers(karaf) >= {"1", "2", "3"}
    results("disconnect", disconnect_to_unavailable_s=round(down_s, 2), reconnect_to_available_s=round(up_s, 2))


def box(karaf, name):
    """The chain's (one) black box as ONOS's REST shows it, or None."""
    boxes = (chain(karaf, name) or {}).get("blackBoxes") or []
    return boxes[0] if boxes else None


def box_when(karaf, name, ok, what, timeout=30):
    """The box once ok(box) holds (its counters reach the controller with the agent's next load report)."""
    return wait_for(what, lambda: (b := box(karaf, name)) and ok(b) and b, timeout=timeout, interval=0.1)


def console_box(karaf, name):
    """The black-box line `onos:metron-chains` prints under the chain, as {key: value}."""
    lines = karaf.ssh("onos:metron-chains").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"name={name} "))
    line = lines[at + 1].strip()
    assert line.startswith("black box ids "), lines[at:at + 3]
    return dict(w.split("=", 1) for w in line.split()[3:])


def box_metric(karaf, family, name, what=None):
    """The value of `family`'s one sample for the chain (and `what`) in /onos/metron/metrics."""
    values = [v for labels, v in metric_samples(karaf, family).items() if f'chain="{name}"' in labels
              and (what is None or f'what="{what}"' in labels)]
    assert len(values) == 1, (family, name, what, values)
    return values[0]


def cmdline(pid):
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode() if Path(f"/proc/{pid}").exists() else None


def test_a_black_box_nf_runs_is_shown_and_restarted_as_onos_shows_it(karaf, installed, net):  # noqa: F811
    """Issue 24 in the real Karaf: FW -> ids -> NAPT -> LB whose `ids` is a separate process (metron-nf-fwd, a DPDK
    secondary of the agent on zero-copy rings; it passes UDP to 5000, drops UDP to 5001), submitted over Metron's
    REST, goes ACTIVE with its box RUNNING (the pid the REST view names is that program); real packets: port 5000
    arrives through the NAPT and the LB, port 5001 does not and is counted as the NF's drops, alike in the chain's
    REST view, the `onos:metron-chains` console line and /onos/metron/metrics (metron_blackbox_*). The NF SIGKILLed
    mid-traffic: the agent restarts it (restarts 1, a new pid, RUNNING, lastExit signal 9, as ONOS's REST shows it),
    fail-closed drops the frames sent while it is down (a gap at the sink) and counts them (failedClosed, and the
    metric), the chain stays ACTIVE. A chain whose NF program does not exist is refused by the agent: 502 and FAILED
    naming the NF and the program; the running chain keeps its rules, its NF instance and its traffic. Removing the
    chain ends the NF."""
    assert NF_FWD.exists(), f"{NF_FWD} missing: build the agent (make agent-build)"
    run = Path(net["run_dir"])
    src, sink = net["nodes"]["src"]["netns"], net["nodes"]["sink"]["netns"]
    cfg, server = declare_server(karaf, net)
    name, bad = "hk-of-bb", "hk-of-bb-missing"
    spec = json.loads(blackbox.chain_json(name, NF_FWD, "closed", INGRESS, EGRESS))
    spec["deployment"]["egressMac"] = traffic.SINK_MAC
    try:
        _, active_s = submit_until_active(karaf, server, spec)
        first = box_when(karaf, name, lambda b: b["state"] == "RUNNING" and b["pid"] > 0, "the box RUNNING")
        print("black box:", json.dumps(first))
        assert set(first) == BOX_FIELDS, set(first) ^ BOX_FIELDS
        assert (first["nf"], first["mode"], first["onFailure"], first["server"], first["restarts"]) == \
            ("ids", "RING", "CLOSED", server, 0), first
        assert first["link"] in ("DIRECT", "AGENT") and first["nfLost"] == 0, first
        assert cmdline(first["pid"]) == str(NF_FWD), (first["pid"], cmdline(first["pid"]))
        rules = {int(f["id"]) for f in onos_flows(karaf)}
        assert rules and rules == ovs_cookies(karaf, net), (sorted(rules), sorted(ovs_cookies(karaf, net)))

        # ---- real packets: the NF's verdicts at the sink and in ONOS's three views ----
        wait_for(f"{name} to carry traffic", lambda: blackbox.burst(src, sink, run / f"warm-{time.monotonic_ns()}.pcap")
                 .get(blackbox.PASS_PORT), timeout=60, interval=0)
        got = blackbox.burst(src, sink, run / "verdicts.pcap", (blackbox.PASS_PORT, blackbox.DROP_PORT), seconds=1.0)
        passed = got.get(blackbox.PASS_PORT, [])
        print(f"verdicts: {len(passed)} port-{blackbox.PASS_PORT} frames arrived, "
              f"{len(got.get(blackbox.DROP_PORT, []))} port-{blackbox.DROP_PORT}")
        assert passed and blackbox.translated(passed), passed[:3]
        assert not got.get(blackbox.DROP_PORT), "frames to the NF's --drop-port crossed it"
        counted = box_when(karaf, name, lambda b: b["nfDropped"] > 0 and b["returned"] > 0, "the NF's drops counted")
        cli = console_box(karaf, name)
        print("onos:metron-chains:", cli)
        assert (cli["state"], cli["pid"], cli["restarts"], cli["onFailure"], cli["mode"], cli["server"]) == \
            ("RUNNING", str(first["pid"]), "0", "CLOSED", "RING", server), cli
        assert int(cli["nfDropped"]) >= counted["nfDropped"], (cli, counted)
        assert box_metric(karaf, "metron_blackbox_up", name) == 1
        assert box_metric(karaf, "metron_blackbox_restarts_total", name) == 0
        assert box_metric(karaf, "metron_blackbox_packets_total", name, "nf_dropped") >= counted["nfDropped"]
        assert box_metric(karaf, "metron_blackbox_packets_total", name, "returned") >= counted["returned"]

        # ---- the NF SIGKILLed mid-traffic: restarted by the agent, fail-closed meanwhile ----
        before = box(karaf, name)
        cap = traffic.Capture(sink, run / "kill.pcap")
        senders = blackbox.Senders(src, [blackbox.PASS_PORT, blackbox.DROP_PORT])
        try:
            time.sleep(1.0)
            killed_ns = time.time_ns()
            os.kill(before["pid"], signal.SIGKILL)
            after = box_when(karaf, name, lambda b: b["restarts"] == 1 and b["state"] == "RUNNING"
                             and b["pid"] not in (0, before["pid"]), "the NF restarted, as ONOS's REST shows it")
            restart_seen_ms = (time.time_ns() - killed_ns) / 1e6
            time.sleep(1.0)
        finally:
            senders.stop()
            got = blackbox.arrivals(cap.stop())
        after = box_when(karaf, name, lambda b: b["failedClosed"] > 0, "the fail-closed drops counted", timeout=10)
        print(f"after the kill (restart seen in ONOS's REST {restart_seen_ms:.0f} ms after it):", json.dumps(after))
        assert after["lastExit"] == "signal 9" and cmdline(after["pid"]) == str(NF_FWD), after
        assert after["bypassed"] == 0 and after["nfDropped"] > before["nfDropped"], (before, after)
        sent = sorted(t for t, _ in got.get(blackbox.PASS_PORT, []))
        assert not got.get(blackbox.DROP_PORT), "frames to the NF's --drop-port crossed it (fail-closed)"
        last_before = max((t for t in sent if t < killed_ns), default=None)
        first_after = min((t for t in sent if t >= killed_ns), default=None)
        assert last_before and first_after, "port-5000 frames did not arrive both before and after the kill"
        gap_ms = (first_after - last_before) / 1e6
        print(f"fail-closed: no port-{blackbox.PASS_PORT} frame sent in {gap_ms:.0f} ms around the kill arrived, "
              f"failedClosed {after['failedClosed']}")
        assert gap_ms > 20, f"frames sent while the NF was down arrived ({gap_ms:.1f} ms gap)"
        assert (chain(karaf, name) or {}).get("state") == "ACTIVE"  # a restart alone leaves the chain ACTIVE
        assert box_metric(karaf, "metron_blackbox_restarts_total", name) == 1
        assert box_metric(karaf, "metron_blackbox_packets_total", name, "failed_closed") >= after["failedClosed"]
        cli = console_box(karaf, name)
        assert (cli["restarts"], cli["pid"], cli["lastExit"]) == ("1", str(after["pid"]), "signal_9"), cli

        # ---- a program that does not exist: FAILED naming it; the running chain untouched. It enters where the
        # running chain leaves (s1/3; that chain has no reply rules there), so it is not refused for sharing an
        # ingress and its deploy reaches the agent, on the server's other core ----
        missing = "/nonexistent/metron-nf"
        why = f"black-box NF 'ids' ({missing}): not found"
        status, answer = karaf.http("POST", "/onos/metron/chains", blackbox.chain_json(bad, missing, "closed",
                                                                                      EGRESS, INGRESS))
        print(f"a missing program: {status} {answer[:300]}")
        assert status == 502 and why in answer, (status, answer)
        doc = chain(karaf, bad)
        assert doc["state"] == "FAILED" and why in doc["reason"], doc
        kept = box(karaf, name)
        assert (chain(karaf, name)["state"], kept["pid"], kept["restarts"], kept["state"]) == \
            ("ACTIVE", after["pid"], 1, "RUNNING"), kept
        assert {int(f["id"]) for f in onos_flows(karaf)} >= rules and ovs_cookies(karaf, net) >= rules
        got = blackbox.burst(src, sink, run / "kept.pcap", (blackbox.PASS_PORT, blackbox.DROP_PORT))
        assert got.get(blackbox.PASS_PORT) and blackbox.translated(got[blackbox.PASS_PORT]), got
        assert not got.get(blackbox.DROP_PORT)
        assert karaf.http("DELETE", f"/onos/metron/chains/{bad}")[0] in (200, 202, 204)

        # ---- removing the chain ends its NF (SIGTERM to its process group, docs/blackbox.md) ----
        assert karaf.http("DELETE", f"/onos/metron/chains/{name}")[0] == 204
        wait_for("the NF ended with its chain", lambda: cmdline(after["pid"]) is None, timeout=30, interval=0.1)
        results("blackbox", submit_to_active_s=round(active_s, 2), kill_to_restart_in_rest_ms=round(restart_seen_ms),
                fail_closed_gap_ms=round(gap_ms), failed_closed=after["failedClosed"],
                nf_dropped=after["nfDropped"], link=after["link"])
    finally:
        for c in (bad, name):
            karaf.http("DELETE", f"/onos/metron/chains/{c}")
        undeclare(karaf, cfg)

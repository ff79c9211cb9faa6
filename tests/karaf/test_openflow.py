"""Metron in the real Karaf with a real switch: userspace Open vSwitch connected to the stand-in's OpenFlow
southbound (onos-standin org.metron.standin.openflow: ONOS 2.7.0's OpenFlowDeviceProvider, OpenFlowRuleProvider
and FlowStatsCollector stood in for, on the project's own OpenFlow 1.3 code), a real metron-agent attached to the
bridge by a veth (AF_PACKET), and real packets from a host namespace through the switch and the agent.

Built with the emulation's own helper (topologies/metron_topo: private ovsdb-server/ovs-vswitchd in a namespace,
netdev bridges, veths with tx offload off, the agent in the server's namespace, the OpenFlow relay to a controller
in the root namespace), topology `single`: src - s1/1, s1/2 - srv1 eth0, s1/3 - sink.
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
from test_karaf import installed, wait_for  # noqa: F401  (the module's Karaf with the Metron apps installed)

sys.path.insert(0, str(ROOT / "topologies"))
sys.path.insert(0, str(ROOT / "deploy" / "demo"))
from metron_topo import launcher, model, netcfg as topo_netcfg  # noqa: E402
from metron_topo.ovs import Ovs  # noqa: E402
from metron_demo import chains, traffic  # noqa: E402

SWITCH = "of:0000000000000001"
INGRESS, TO_SERVER, EGRESS = f"{SWITCH}/1", f"{SWITCH}/2", f"{SWITCH}/3"
RULES = 20  # firewall rules: enough for several offloaded deny entries, quick to install
POLL_MS = 500  # flow statistics poll (ONOS: 5 s), so that entries turn ADDED quickly

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
    """Topology `single` with its agent, s1 connected to the Karaf; torn down (and leak-checked) after."""
    state = launcher.up("single", run_root=tmp_path_factory.mktemp("of"), controller=f"tcp:127.0.0.1:{openflow_port}",
                        log=print)
    try:
        yield state
    finally:
        launcher.down(state.path, log=lambda m: None)
        assert launcher.leaks(state) == []


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

    cfg = topo_netcfg.for_state(net.path)
    server = next(iter(cfg["devices"]))
    cable = {"basic": {"type": "DIRECT", "bidirectional": True}}
    cfg["devices"][SWITCH] = {"basic": {"name": "s1"}}
    cfg["links"] = {f"{server}/1-{TO_SERVER}": cable}
    status, body = karaf.http("POST", "/onos/v1/network/configuration", cfg)
    assert status == 200, (status, body)
    name = "hk-of-fw-napt-lb"
    body, plan = chains.fw_napt_lb(name, RULES, INGRESS, EGRESS)
    spec = json.loads(body)
    spec["deployment"]["egressMac"] = traffic.SINK_MAC
    flows = traffic.flows(plan, allowed=6, denied=6)
    try:
        wait_for(f"{server} available", lambda: (d := device(karaf, server)) and d["available"], timeout=30)
        submitted = time.time()
        status, answer = karaf.http("POST", "/onos/metron/chains", json.dumps(spec))
        assert status == 201, (status, answer)
        wait_for(f"{name} ACTIVE", lambda: (chain(karaf, name) or {}).get("state") == "ACTIVE", timeout=60,
                 interval=0.1)
        active_s = time.time() - submitted
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
        for did in cfg["devices"]:
            karaf.http("DELETE", f"/onos/v1/network/configuration/devices/{did}")
        karaf.http("DELETE", "/onos/v1/network/configuration/links")


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

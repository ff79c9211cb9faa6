"""The topology launcher against the real machine: namespaces, veths, a private OVS, real pings."""
import json
import os
import re
import socket
import subprocess
import time

import pytest

from metron_topo import agent, launcher, model
from metron_topo.ovs import Ovs
from metron_topo.sh import run

ALL = ["single", "paper-fig3", "paper-fig5", "fattree-k4"]


def ofports(state, switch):
    """OpenFlow port number -> interface name, as OVS reports it."""
    out = Ovs(state["run_dir"]).ofctl(state["nodes"][switch]["bridge"], "show").stdout
    return {int(n): name for n, name in re.findall(r"^ (\d+)\((\S+)\):", out, re.M)}


@pytest.mark.parametrize("name", ALL)
def test_up_builds_every_declared_node_and_port_then_down_leaves_nothing(topology, name):
    topo = model.load(name)
    state = topology(name, controller="tcp:127.0.0.1:1")
    text, healthy = launcher.status(state.path)
    assert healthy, text
    for sw in topo.switches:
        declared = {int(ep.port) for link in topo.links for ep in link if ep.node == sw.name}
        assert set(ofports(state, sw.name)) == declared, sw.name
        dpid = Ovs(state["run_dir"]).vsctl("get", "bridge", state["nodes"][sw.name]["bridge"],
                                           "datapath_id").stdout.strip().strip('"')
        assert int(dpid, 16) == sw.dpid
    for node in topo.hosts + topo.servers:
        links = run(["ip", "-o", "link", "show"], netns=state["nodes"][node.name]["netns"]).stdout
        for nic in getattr(node, "nics", [model.Nic("eth0", getattr(node, "mac", None))]):
            assert re.search(rf"\d+: {nic.name}@\S+: <[^>]*\bUP\b.*link/ether {nic.mac}", links), (node, links)
    launcher.down(state.path, log=lambda m: None)
    assert launcher.leaks(state) == []
    assert not state.path.exists()


def udp_reaches(src_ns, sink_ns, timeout=2.0):
    """Sends UDP datagrams from src (10.0.0.1) to sink (10.0.0.2) until one arrives or `timeout` passes."""
    receiver = subprocess.Popen(["ip", "netns", "exec", sink_ns, "/usr/bin/python3", "-c",
                                 "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM);"
                                 "s.bind(('10.0.0.2', 5008)); s.settimeout(%f); print(s.recv(64).decode())"
                                 % timeout], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    run(["/usr/bin/python3", "-c", "import socket, time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
         "for _ in range(%d):\n    s.sendto(b'probe', ('10.0.0.2', 5008)); time.sleep(0.1)" % (timeout * 10)],
        netns=src_ns)
    out = receiver.communicate(timeout=timeout + 5)[0]
    return out.strip() == "probe"


@pytest.mark.parametrize("name", ["single", "paper-fig3"])
def test_hosts_reach_each_other_through_the_bridges_once_flows_allow_it(topology, name):
    state = topology(name)
    src, sink = state["nodes"]["src"]["netns"], state["nodes"]["sink"]["netns"]
    # fail_mode=secure and no controller: the bridges forward nothing by themselves.
    assert not udp_reaches(src, sink)
    ovs = Ovs(state["run_dir"])
    for sw in model.load(name).switches:
        ovs.ofctl(state["nodes"][sw.name]["bridge"], "add-flow", "actions=NORMAL")
    assert udp_reaches(src, sink)
    # TCP across the veths works too (needs tx offload off; shared/notes/dataplane.md).
    server = subprocess.Popen(["ip", "netns", "exec", sink, "/usr/bin/python3", "-c",
                               "import socket; s = socket.create_server(('10.0.0.2', 5009)); c, _ = s.accept();"
                               "print(c.recv(100).decode(), flush=True)"], stdout=subprocess.PIPE, text=True)
    try:
        client = "import socket, time\n" \
                 "for _ in range(50):\n" \
                 "    try: c = socket.create_connection(('10.0.0.2', 5009), timeout=2); break\n" \
                 "    except OSError: time.sleep(0.1)\n" \
                 "c.sendall(b'x' * 100)"
        run(["/usr/bin/python3", "-c", client], netns=src)
        assert server.communicate(timeout=10)[0].strip() == "x" * 100
    finally:
        server.kill()
        server.wait()


def test_two_instances_of_one_topology_run_side_by_side(topology):
    a, b = topology("single"), topology("single")
    assert a["id"] != b["id"]
    assert a["nodes"]["srv1"]["mgmt_ip"] != b["nodes"]["srv1"]["mgmt_ip"]
    assert launcher.status(a.path)[1] and launcher.status(b.path)[1]
    # Both really switch packets: two userspace datapaths in one namespace would collide on their "ovs-netdev"
    # tap, and the second instance's bridge would exist in its database only.
    for state in (a, b):
        Ovs(state["run_dir"]).ofctl(state["nodes"]["s1"]["bridge"], "add-flow", "actions=NORMAL")
    for state in (a, b):
        assert udp_reaches(state["nodes"]["src"]["netns"], state["nodes"]["sink"]["netns"]), state["id"]


def test_switches_reach_the_controller_through_the_relay(topology):
    """The bridges live in the topology's OVS namespace; their OpenFlow connection to a controller listening
    on the root namespace's loopback goes through the recorded relay, reconnecting when the controller returns."""
    with socket.create_server(("127.0.0.1", 0)) as ctl:
        ctl.settimeout(20)
        state = topology("single", controller=f"tcp:127.0.0.1:{ctl.getsockname()[1]}")
        assert any(p["name"] == "of-relay" for p in state["processes"])
        conn, _ = ctl.accept()
        with conn:
            conn.settimeout(20)
            hello = conn.recv(8)
            assert hello[0] == 0x04 and hello[1] == 0, f"expected an OpenFlow 1.3 HELLO, got {hello!r}"
        conn, _ = ctl.accept()  # OVS reconnects (through the relay) after the controller dropped it
        conn.close()


def test_down_removes_the_rest_when_something_was_already_removed_by_hand(topology):
    state = topology("paper-fig3")
    run(["ip", "netns", "del", state["nodes"]["src"]["netns"]])
    launcher.down(state.path, log=lambda m: None)
    assert launcher.leaks(state) == []


def test_a_failed_build_tears_down_what_it_had_built(tmp_path, monkeypatch):
    calls = []
    real = Ovs.add_bridge

    def fail_on_second(self, bridge, *args, **kw):
        calls.append(bridge)
        if len(calls) == 2:
            raise RuntimeError("injected failure creating the second bridge")
        return real(self, bridge, *args, **kw)

    monkeypatch.setattr(Ovs, "add_bridge", fail_on_second)
    with pytest.raises(RuntimeError, match="injected"):
        launcher.up("paper-fig3", run_root=tmp_path, agents=False, log=lambda m: None)
    (run_dir,) = [p for p in tmp_path.iterdir()] or [None]
    assert run_dir is None, "the run directory of a failed build is removed with everything in it"
    assert not [ns for ns in run(["ip", "netns", "list"]).stdout.split() if ns.startswith(calls[0][:6])]


@pytest.mark.parametrize("doc, message", [
    ({"name": "x", "switches": [{"name": "s1", "dpid": 1}], "links": [["s1:1", "h9:eth0"]],
      "ingress": ["s1:1"], "egress": ["s1:1"]}, "links[0]: endpoint 'h9:eth0' names unknown node 'h9'"),
    ({"name": "x", "switches": [{"name": "s1", "dpid": 1}, {"name": "s2", "dpid": 1}], "links": [],
      "ingress": [], "egress": []}, "switches[1] 's2': dpid 1 must be a unique"),
    ({"name": "x", "switches": [{"name": "s1", "dpid": 1}], "links": [["s1:1", "s1:2"]],
      "ingress": ["s1:1"], "egress": ["s1:2"]}, "links[0]: links 's1:1' to its own node"),
    ({"name": "x", "switches": [], "links": [], "ingress": [], "egress": [], "extra": 1}, "unknown key(s) ['extra']"),
    ({"name": "x", "switches": [{"name": "s1", "dpid": 1}],
      "servers": [{"name": "v", "cores": 1, "nics": [{"name": "eth0", "mac": "02:00:00:00:00:01"}]}],
      "links": [["s1:1", "v:eth1"]], "ingress": ["s1:1"], "egress": ["s1:1"]}, "server 'v' has no NIC 'eth1'"),
])
def test_bad_topology_files_are_rejected_naming_the_entry(tmp_path, doc, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(model.TopologyError) as e:
        launcher.up(str(path), run_root=tmp_path / "run", agents=False, log=lambda m: None)
    assert message in str(e.value) and str(path) in str(e.value)
    assert not (tmp_path / "run").exists() or not any((tmp_path / "run").iterdir())


@pytest.mark.skipif(agent.binary() is None, reason="agent not built (agent/build/metron-agent)")
def test_agents_run_in_their_server_namespaces_and_listen_on_the_management_link(topology):
    state = topology("paper-fig3", agents=True)
    node = state["nodes"]["srv1"]
    host, port = node["agent"].split(":")
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, open(f"{state['run_dir']}/agent-srv1.log").read()
            time.sleep(0.2)
    # The agent is the recorded process itself (ip netns exec execs it) and lives in the server's namespace.
    proc = next(p for p in state["processes"] if p["name"] == "agent-srv1")
    assert os.stat(f"/proc/{proc['pid']}/ns/net").st_ino == os.stat(f"/run/netns/{node['netns']}").st_ino
    assert state["network"]["servers"][0]["agent"] == node["agent"]
    assert [n["attachment"] for n in state["network"]["servers"][0]["nics"]] == \
        ["of:0000000000000001/2", "of:0000000000000002/2"]
    assert any(p.startswith("/var/run/dpdk/") for p in state["paths"])

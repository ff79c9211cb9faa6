"""The cluster test's real network (tests/karaf/test_cluster.py): topology `two-servers` built by the emulation's
own helper (topologies/metron_topo: a private ovsdb-server/ovs-vswitchd in a namespace of its own, userspace
netdev bridges s1 and s2, veths with tx offload off, one namespace per host and server), joined to the cluster's
bridge (cluster_runtime.Cluster):

- the OVS namespace gets an address on the cluster's subnet, and every bridge gets the three nodes' OpenFlow
  listeners as its controllers (`ovs-vsctl set-controller br tcp:<node 1>:6653 tcp:<node 2>:6653 ...`, reconnect
  backoff 1 s): each switch keeps one connection per node, as with an ONOS cluster;
- each server's namespace gets an address on the cluster's subnet too, and its metron-agent serves gRPC there
  (instead of the helper's management /30 in the root namespace: the nodes live in namespaces of their own and
  nothing is routed between namespaces here), its NICs the server's veths into the switches (AF_PACKET fanout).

  src - s1/1, s1/2 - srv1 eth0, s1/4 - srv2 eth0, s1/3 - s2/3, s2/1 - sink (the servers' eth1 into s2 unused:
  the chain enters and leaves a server by one NIC, `"nics": 1`).

Traffic: scapy-built pcaps replayed from src with tcpreplay, captured at sink with tcpdump
(deploy/demo/metron_demo.traffic), flows of the paper-fig3 chain's firewall (docs/examples/paper-fig3-fw-napt-lb.json).
Teardown (`down`) removes exactly what the helper's state file lists (the veths into the cluster bridge are
recorded there too), on failure as well, and checks nothing is left.
"""
import os
import re
import signal
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from conftest import ROOT

sys.path.insert(0, str(ROOT / "topologies"))
sys.path.insert(0, str(ROOT / "deploy" / "demo"))
from metron_topo import agent as topo_agent, launcher, model  # noqa: E402
from metron_topo.ovs import Ovs  # noqa: E402
from metron_topo.ports import free_port  # noqa: E402
from metron_topo.sh import ip_batch  # noqa: E402
from metron_demo import chains, traffic  # noqa: E402

TOPOLOGY = "two-servers"
OF_PORT = 6653  # every node's OpenFlow listener (the stand-in's default, ONOS's), one per namespace
SW1, SW2 = "of:0000000000000001", "of:0000000000000002"
# the paper-fig3 chain's firewall (docs/examples/paper-fig3-fw-napt-lb.json): deny 10.1.0.1-3, allow udp 5000
PLAN = chains.firewall(4)[1]
FLOWS = traffic.flows(PLAN, allowed=6, denied=6)


class TopoAgent:
    """A server's real agent in its namespace, with the interface of conftest.Agent the cluster test uses."""

    def __init__(self, net, server):
        self.net, self.server = net, server

    @property
    def node(self):
        return self.net.state["nodes"][self.server.name]

    @property
    def address(self):
        return self.node["agent"]

    @property
    def port(self):
        return topo_agent.GRPC_PORT

    @property
    def netns(self):
        return self.node["netns"]

    @property
    def process(self):
        return SimpleNamespace(pid=self.node["agent_pid"])

    def kill(self):
        """SIGKILL (a crash), reaped."""
        pid = self.node["agent_pid"]
        try:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass

    def restart(self):
        """The agent started again where it served (same namespace, address, NICs and state directory)."""
        self.kill()
        launcher.start_agent(self.net.state, self.server)
        return self

    def close(self):
        pass  # the topology's teardown stops what it started


class ClusterNet:
    def __init__(self, cluster, run_root):
        self.cluster, self.run_root = cluster, run_root
        self.state = None
        self.topo = model.load(TOPOLOGY)
        self.agents = []
        self.captures = []  # tcpdumps started here: stopped at teardown if a failure left one running

    # ------------------------------------------------------------------ up / down
    def up(self):
        c = self.cluster
        self.state = launcher.up(TOPOLOGY, run_root=self.run_root, controller=None, agents=False,
                                 log=lambda m: print(m))
        tid = self.state["id"]
        joins = [(self.state["ovs_netns"], f"{c.subnet}.100")]
        joins += [(self.state["nodes"][s.name]["netns"], f"{c.subnet}.{101 + k}")
                  for k, s in enumerate(self.topo.servers)]
        for k, (ns, ip) in enumerate(joins):
            end = f"{tid}c{k}"
            self.state.record("veths", end)
            ip_batch([f"link add {end} type veth peer name {end}n", f"link set {end}n netns {ns}",
                      f"link set {end} master {c.bridge}", f"link set {end} up"])
            ip_batch([f"link set {end}n name cl0", f"addr add {ip}/24 dev cl0", "link set cl0 up"], netns=ns)
        for k, s in enumerate(self.topo.servers):
            ip = joins[1 + k][1]
            self.state.node(s.name).update(mgmt_ip=ip, agent=f"{ip}:{topo_agent.GRPC_PORT}")
        self.state.save()
        for s in self.topo.servers:
            launcher.start_agent(self.state, s)
            self.agents.append(TopoAgent(self, s))
        ovs = Ovs(self.state["run_dir"])
        for sw in self.topo.switches:
            br = self.bridge(sw.name)
            ovs.vsctl("set-controller", br, *[f"tcp:{n.ip}:{OF_PORT}" for n in c.nodes])
            # a dead node's connection is retried every second at most, not OVS's default 8 s
            for uuid in self.controllers(br):
                ovs.vsctl("set", "controller", uuid, "max_backoff=1000")
        return self

    def down(self):
        for cap in self.captures:
            if cap.proc.poll() is None:
                cap.proc.kill()
                cap.proc.wait(timeout=10)
        if self.state is not None:
            launcher.down(self.state.path, log=lambda m: None)
            left = launcher.leaks(self.state)
            assert left == [], f"left behind by the cluster's topology: {left}"

    # ------------------------------------------------------------------ the switches
    def bridge(self, switch):
        """The OVS bridge of a switch, by name (s1) or ONOS device id (of:0000000000000001)."""
        name = next((s.name for s in self.topo.switches if s.device_id == switch), switch)
        return self.state["nodes"][name]["bridge"]

    def ovs(self):
        return Ovs(self.state["run_dir"])

    def controllers(self, br):
        out = self.ovs().vsctl("get", "bridge", br, "controller").stdout.strip("[] \n")
        return [u.strip() for u in out.split(",") if u.strip()]

    def controller_roles(self, switch):
        """{node id: (connected, role)} as OVS itself holds them for the bridge's connections (its Controller
        table's is_connected and role: master, slave or other = EQUAL)."""
        ovs, by_ip = self.ovs(), {n.ip: n.id for n in self.cluster.nodes}
        out = {}
        for uuid in self.controllers(self.bridge(switch)):
            target = ovs.vsctl("get", "controller", uuid, "target").stdout.strip().strip('"')
            connected = ovs.vsctl("get", "controller", uuid, "is_connected").stdout.strip() == "true"
            role = ovs.vsctl("--if-exists", "get", "controller", uuid, "role").stdout.strip() or "-"
            out[by_ip.get(target.split(":")[1], target)] = (connected, role)
        return out

    def flows(self, switch):
        """The flows OVS holds on the switch: [(cookie, table, priority, match)] (ovs-ofctl dump-flows)."""
        text = self.ovs().ofctl(self.bridge(switch), "dump-flows").stdout
        out = []
        for line in text.splitlines():
            if "cookie=" not in line:
                continue
            fields = dict(f.split("=", 1) for f in line.split(" actions=")[0].replace(",", " ").split() if "=" in f)
            match = ",".join(sorted(f for f in line.split(" actions=")[0].replace(",", " ").split()
                                    if not f.startswith(("cookie=", "duration=", "table=", "n_packets=", "n_bytes=",
                                                         "idle_age=", "hard_age=", "priority=", "send_flow_rem",
                                                         "reset_counts", "idle_timeout=", "hard_timeout="))))
            out.append((int(fields["cookie"], 16), int(fields.get("table", 0)), int(fields.get("priority", 32768)),
                        match))
        return out

    # ------------------------------------------------------------------ netcfg
    def netcfg(self):
        """The servers (driver metron-server, their eth0 cabled to s1/2 and s1/4), the cables as links and the
        s1/3-s2/3 link (declared, though the stand-in's LLDP discovery finds it too: the tests do not wait for
        discovery). The switches
        are declared without `"type": "SWITCH"`: they are the real ones that connect, not netcfg switches."""
        cable = {"basic": {"type": "DIRECT", "bidirectional": True}}
        devices, links = {}, {f"{SW1}/3-{SW2}/3": cable}
        for a in self.agents:
            peer = self.topo.peer(model.Endpoint(a.server.name, "eth0"))
            port = f"{self.topo.switch(peer.node).device_id}/{peer.port}"
            did = f"metron:{a.address}"
            devices[did] = {"basic": {"name": a.server.name, "driver": "metron-server"},
                            "metron": {"deadlineMs": 5000, "nics": {"eth0": port}}}
            links[f"{did}/1-{port}"] = cable
        devices[SW1] = {"basic": {"name": "s1"}}
        devices[SW2] = {"basic": {"name": "s2"}}
        return {"devices": devices, "links": links}

    # ------------------------------------------------------------------ traffic
    def send(self, name, packets_per_flow=3, pps=500, during=None):
        """Replays the flows from src (packets_per_flow each, at pps) while capturing at sink; `during` (a
        callable) runs in a thread once the replay started. Answers (arrivals, packets of allowed flows sent)."""
        work = Path(self.state["run_dir"])
        cap = traffic.Capture(self.state["nodes"]["sink"]["netns"], work / f"{name}-sink.pcap")
        self.captures.append(cap)
        pcap = work / f"{name}.pcap"
        traffic.write_pcap(pcap, FLOWS, packets_per_flow)
        worker = None
        if during is not None:
            worker = traffic.Background(lambda: (time.sleep(1.0), during())[1])
            worker.start()
        try:
            traffic.replay(self.state["nodes"]["src"]["netns"], pcap, pps=pps)
        finally:
            if worker is not None:
                worker.join(timeout=120)
        time.sleep(1.0)
        arrivals = traffic.analyze(cap.stop())
        if worker is not None and worker.error is not None:
            raise worker.error
        return arrivals, packets_per_flow * sum(1 for f in FLOWS if f.kind == "allow"), cap

    def assert_traffic(self, when):
        """Every allowed flow arrives at sink through the chain (NAPT source, LB backend, the sink's MAC), no
        denied one: deploy/demo's verdicts."""
        arrivals, sent, _ = self.send(when.replace(" ", "-"))
        ok, lines = traffic.check(arrivals, FLOWS)
        got = sum(len(v) for v in arrivals.allowed.values())
        print(f"traffic {when}: {got}/{sent} allowed packets arrived\n  " + "\n  ".join(lines))
        assert ok, f"traffic {when}:\n" + "\n".join(lines)
        return got, sent


class Stream:
    """Traffic for a while (the flows over and over at a fixed rate, every packet numbered), from src to sink, in
    the background: what a kill in between costs is what does not arrive."""

    def __init__(self, net, name, seconds, pps=400):
        self.net, self.pps = net, pps
        self.per_flow = max(1, int(seconds * pps / len(FLOWS)))
        work = Path(net.state["run_dir"])
        self.pcap = work / f"{name}.pcap"
        traffic.write_pcap(self.pcap, FLOWS, self.per_flow)
        self.cap = traffic.Capture(net.state["nodes"]["sink"]["netns"], work / f"{name}-sink.pcap")
        net.captures.append(self.cap)
        self.replay = traffic.Background(lambda: traffic.replay(net.state["nodes"]["src"]["netns"], self.pcap,
                                                                pps=pps))
        self.started = time.time()
        self.replay.start()

    def finish(self):
        """Waits for the replay's end; answers {sent, arrived, lost, lost_seconds: [(from, to)] after the start,
        denied, translated ok} for the allowed flows."""
        self.replay.join(timeout=300)
        if self.replay.error is not None:
            raise self.replay.error
        time.sleep(1.0)
        packets = self.cap.stop()
        from scapy.all import Raw
        allowed = [f for f in FLOWS if f.kind == "allow"]
        seen = set()
        for p in packets:
            if Raw in p:
                m = re.search(rb"metron-allow-(\d+)-(\d+)", bytes(p[Raw].load))
                if m:
                    seen.add((int(m.group(1)), int(m.group(2))))
        missing = sorted(k for k in range(self.per_flow) for f in allowed if (f.id, k) not in seen)
        # round k of the flows went out k * len(FLOWS) / pps seconds after the replay started
        at = [round(k * len(FLOWS) / self.pps, 2) for k in missing]
        arrivals = traffic.analyze(packets)
        ok, lines = traffic.check(arrivals, FLOWS)
        return {"sent": self.per_flow * len(allowed), "arrived": len(seen), "lost": len(missing),
                "lost_between_s": [at[0], at[-1]] if at else None, "verdicts_ok": ok, "verdicts": lines,
                "tcpdump_dropped": self.cap.dropped}


# What Open vSwitch itself does with roles, asked over two raw OpenFlow 1.3 connections to a scratch bridge of the
# topology's OVS (passive listener on its namespace's loopback): a runs in the OVS namespace, prints JSON.
ROLE_PROBE = r'''
import json, socket, struct, sys
port = int(sys.argv[1])
EQUAL, MASTER, SLAVE = 1, 2, 3
def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(struct.pack("!BBHI", 4, 0, 8, 1))
    return s
def recv(s):
    head = b""
    while len(head) < 8:
        head += s.recv(8 - len(head))
    _, t, n, xid = struct.unpack("!BBHI", head)
    body = b""
    while len(body) < n - 8:
        body += s.recv(n - 8 - len(body))
    return t, xid, body
def until(s, xid):
    # the answers to xid: (ROLE_REPLY role | ERROR (type, code)) and a barrier's reply
    out = []
    while True:
        t, x, body = recv(s)
        if t == 2:  # echo request
            s.sendall(struct.pack("!BBHI", 4, 3, 8 + len(body), x) + body)
        elif x == xid and t == 25:
            return ["role", struct.unpack("!I", body[:4])[0]]
        elif x == xid and t == 1:
            out.append(list(struct.unpack("!HH", body[:4])))
        elif x == xid + 1 and t == 21:
            return out
def role(s, r, xid, gen=0):
    s.sendall(struct.pack("!BBHII4xQ", 4, 24, 24, xid, r, gen))
    return until(s, xid)
def flow_mod(s, xid, prio):
    # OFPFC_ADD, table 0, empty match (OXM, length 4, padded), no instructions; then a barrier
    fm = struct.pack("!QQBBHHHIIIH2x", 0xabc, 0, 0, 0, 0, 0, prio, 0xffffffff, 0xffffffff, 0xffffffff, 0)
    fm += struct.pack("!HH4x", 1, 4)
    s.sendall(struct.pack("!BBHI", 4, 14, 8 + len(fm), xid) + fm + struct.pack("!BBHI", 4, 20, 8, xid + 1))
    return until(s, xid)
a, b = conn(), conn()
r = {}
r["a MASTER (generation 0)"] = role(a, MASTER, 100)
r["b SLAVE (generation 0)"] = role(b, SLAVE, 110)
r["flow mod of b (SLAVE)"] = flow_mod(b, 120, 11)
r["flow mod of a (MASTER)"] = flow_mod(a, 130, 12)
r["b MASTER"] = role(b, MASTER, 140)
r["a's role now"] = role(a, 0, 150)
r["flow mod of a (demoted)"] = flow_mod(a, 160, 13)
r["a EQUAL"] = role(a, EQUAL, 170)
r["flow mod of a (EQUAL)"] = flow_mod(a, 180, 14)
print(json.dumps(r))
'''


def probe_roles(net):
    """Runs ROLE_PROBE against a scratch bridge (no ports, a passive OpenFlow listener) in the topology's OVS;
    answers its JSON: per step, the switch's ROLE_REPLY role or its errors [(type, code)] (empty: accepted)."""
    import json
    import subprocess
    ovs, br = net.ovs(), f"{net.state['id']}xr"
    net.state.record("bridges", br)
    port = free_port()  # (the OVS namespace has nothing else listening)
    ovs.vsctl("add-br", br, "--", "set", "bridge", br, "datapath_type=netdev", "protocols=OpenFlow13",
              "fail_mode=secure", "other-config:disable-in-band=true")
    try:
        ovs.vsctl("set-controller", br, f"ptcp:{port}:127.0.0.1")
        deadline = time.time() + 10
        while True:
            r = subprocess.run(["ip", "netns", "exec", net.state["ovs_netns"], "/usr/bin/python3", "-c",
                                ROLE_PROBE, str(port)], capture_output=True, text=True, timeout=30)
            if r.returncode == 0 or time.time() > deadline:
                break
            time.sleep(0.2)  # the listener is not up yet
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    finally:
        ovs.del_bridge(br)

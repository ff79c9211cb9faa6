"""Builds a topology from its file (netns hosts/servers, veths, private OVS userspace bridges, agents) and tears
down exactly what it built, from the state file (never by name pattern or process name)."""
import fcntl
import ipaddress
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path

from . import agent, certs, fastnet, model
from .ovs import Ovs
from .sh import CommandError, ip_batch, run
from .state import State, proc_start_time

REPO = Path(__file__).resolve().parents[2]
DEFAULT_RUN_ROOT = REPO / "run"
# Management links (root namespace <-> server namespace, for the agents' gRPC) use /30s from this block,
# allocated under a lock against the addresses already configured on the machine.
MGMT_BLOCK = ipaddress.ip_network("100.127.0.0/16")
LOCK = "/tmp/metron-topo.lock"


# Every name a topology creates starts with its id: two letters (METRON_TOPO_PREFIX, default "mt", so parallel
# users can keep their namespaces apart) and 4 hex digits, 6 characters that fit 15-character interface names.
ID_PREFIX = os.environ.get("METRON_TOPO_PREFIX", "mt")
if not re.fullmatch(r"[a-z]{2}", ID_PREFIX):
    raise ValueError(f"METRON_TOPO_PREFIX must be two lowercase letters, got {ID_PREFIX!r}")


def new_id():
    return ID_PREFIX + secrets.token_hex(2)


def _used_addresses():
    out = run(["ip", "-o", "-4", "addr", "show"]).stdout
    used = set()
    for line in out.splitlines():
        parts = line.split()
        if "inet" in parts:
            used.add(ipaddress.ip_interface(parts[parts.index("inet") + 1]).network)
    return used


def _free_mgmt_subnets(count):
    used = _used_addresses()
    out = []
    for net in MGMT_BLOCK.subnets(new_prefix=30):
        if not any(net.overlaps(u) for u in used):
            out.append(net)
            if len(out) == count:
                return out
    raise RuntimeError(f"no free /30 left in {MGMT_BLOCK} for management links")


def up(topology, *, run_root=DEFAULT_RUN_ROOT, controller=None, agents=True, topo_id=None, tls=False, fast=False,
       log=print):
    """Brings `topology` (a name or path) up. Returns the State. On failure, tears down what was built.
    tls: make a lab PKI in <run dir>/tls (certs.py), start every agent with mutual TLS, and record the
    controller's files per server (network.servers[].tls, netcfg).
    fast: the fast network (fastnet.py, README.md#fast-network): OVS-DPDK bridges on hugepages, vhost-user ports."""
    topo = model.load(topology)
    topo_id = topo_id or new_id()
    run_dir = Path(run_root) / topo_id
    run_dir.mkdir(parents=True, exist_ok=False)
    state = State.create(run_dir / "state.json", id=topo_id, topology=topo.name, topology_file=topo.source,
                         run_dir=str(run_dir), controller=controller, tls=bool(tls), fast=bool(fast))
    t0 = time.monotonic()
    try:
        _build(topo, state, controller, agents, log)
    except BaseException:
        log(f"topology {topo.name} ({topo_id}): build failed, tearing down what was built")
        down(state.path, log=log)
        raise
    state.data["up_seconds"] = round(time.monotonic() - t0, 3)
    state.save()
    return state


def _build(topo, state, controller, agents, log):
    tid = state["id"]
    fast = state.data.get("fast")
    dpdk = None
    if fast:
        why = fastnet.unavailable()
        if why:
            raise RuntimeError(f"fast network unavailable: {why}")
        mb = fastnet.memory_mb(len(topo.servers) * agent.AGENT_MEMORY_MB)
        dpdk = fastnet.dpdk_config(fastnet.reserve_hugepages(state, mb), tid)
        state.record("paths", fastnet.socket_dir(tid))
        for d in fastnet.runtime_dirs(tid):
            state.record("paths", d)
        Path(fastnet.socket_dir(tid)).mkdir(parents=True)
    # The switches live in a namespace of their own (see relay.py for why), with their OVS daemon.
    ovs_ns = f"{tid}-ovs"
    state.record("namespaces", ovs_ns)
    run(["ip", "netns", "add", ovs_ns])
    ip_batch(["link set lo up"], netns=ovs_ns)
    state.data["ovs_netns"] = ovs_ns
    ovs = Ovs(state["run_dir"])
    state.data["ovs_dir"] = str(ovs.dir)
    ovs.start(state, netns=ovs_ns, dpdk=dpdk)
    switch_controller = _start_relay(state, ovs_ns, controller) if controller else None

    # Namespaces for hosts and servers.
    for node in topo.hosts + topo.servers:
        ns = f"{tid}-{node.name}"
        state.record("namespaces", ns)
        run(["ip", "netns", "add", ns])
        ip_batch(["link set lo up"], netns=ns)
        state.node(node.name).update(netns=ns, ifaces={})
    macs = {(s.name, n.name): n.mac for s in topo.servers for n in s.nics}
    macs.update({(h.name, "eth0"): h.mac for h in topo.hosts})
    bridge_ports = (_vhost_links if fast else _veth_links)(topo, state, ovs_ns, macs)

    # Bridges (named after the topology id so they never collide with anyone else's).
    for sw in topo.switches:
        br = f"{tid}{sw.name}"
        state.record("bridges", br)
        ovs.add_bridge(br, sw.dpid, bridge_ports[sw.name], switch_controller)
        state.node(sw.name).update(bridge=br, dpid=sw.dpid, device_id=sw.device_id, netns=ovs_ns)
    state.save()
    _management(topo, state)
    state.data["network"] = network_view(topo, state)
    state.save()

    binary = agent.binary() if agents else None
    if agents and binary is None:
        log("agent binary not built (agent/build/metron-agent or $METRON_AGENT): servers run without agents")
    if binary:
        for srv in topo.servers:
            start_agent(state, srv, binary)
    log(f"topology {topo.name} is up as {tid}{' (fast network: OVS-DPDK, vhost-user)' if fast else ''}: "
        f"{len(topo.switches)} switches, {len(topo.hosts)} hosts, {len(topo.servers)} servers; state {state.path}")


def _vhost_links(topo, state, ovs_ns, macs):
    """The fast network's links: a switch-switch link is a pair of memif ports (fastnet.link_port_options); a host's
    or server's interface is a vhost-user port of its switch whose socket the DPDK process of that node serves
    (fastgen for hosts, the agent for servers: NIC k of a server is its ethdev fastnet.vdev_name(k)). Answers the
    bridges' ports."""
    tid, switches = state["id"], {s.name for s in topo.switches}
    nic_index = {(s.name, n.name): k for s in topo.servers for k, n in enumerate(s.nics)}
    bridge_ports = {s: [] for s in switches}
    for i, (a, b) in enumerate(topo.links):
        if a.node in switches and b.node in switches:
            pa, pb = f"{tid}p{i}a", f"{tid}p{i}b"
            bridge_ports[a.node].append((pa, int(a.port), fastnet.link_port_options(tid, i, "a")))
            bridge_ports[b.node].append((pb, int(b.port), fastnet.link_port_options(tid, i, "b")))
            state.node(a.node).setdefault("ports", {})[a.port] = pa
            state.node(b.node).setdefault("ports", {})[b.port] = pb
            continue
        if a.node not in switches and b.node not in switches:
            raise model.TopologyError(f"link {a}-{b}: the fast network connects nodes only through switches")
        sw, ep = (a, b) if a.node in switches else (b, a)
        sock, port = f"{fastnet.socket_dir(tid)}/{ep.node}-{ep.port}.sock", f"{tid}v{i}"
        bridge_ports[sw.node].append((port, int(sw.port), fastnet.vhost_port_options(sock)))
        state.node(sw.node).setdefault("ports", {})[sw.port] = port
        iface = {"mac": macs[(ep.node, ep.port)], "peer": str(sw), "socket": sock}
        if (ep.node, ep.port) in nic_index:
            iface["dpdk_port"] = fastnet.vdev_name(nic_index[(ep.node, ep.port)])
        state.node(ep.node)["ifaces"][ep.port] = iface
    state.save()
    return bridge_ports


def _veth_links(topo, state, ovs_ns, macs):
    """Links: one veth pair each. Answers the bridges' ports."""
    tid = state["id"]
    hosts = {h.name: h for h in topo.hosts}
    # Links: one veth pair each. Switch ends move into the OVS namespace and join the bridge; host/server ends
    # move into the node's namespace and take the interface name the topology declares.
    bridge_ports = {s.name: [] for s in topo.switches}
    root_cmds, ns_cmds, offload_off = [], {}, []
    for i, (a, b) in enumerate(topo.links):
        ends = [f"{tid}l{i}a", f"{tid}l{i}b"]
        for veth in ends:
            state.record("veths", veth)
        root_cmds.append(f"link add {ends[0]} type veth peer name {ends[1]}")
        for end, ep in zip(ends, (a, b)):
            if ep.node in bridge_ports:
                bridge_ports[ep.node].append((end, int(ep.port)))
                root_cmds.append(f"link set {end} netns {ovs_ns}")
                ns_cmds.setdefault(ovs_ns, []).append(f"link set {end} up")
                offload_off.append((ovs_ns, end))
                state.node(ep.node).setdefault("ports", {})[ep.port] = end
            else:
                ns = state.node(ep.node)["netns"]
                root_cmds.append(f"link set {end} netns {ns}")
                cmds = ns_cmds.setdefault(ns, [])
                cmds.append(f"link set {end} name {ep.port}")
                cmds.append(f"link set {ep.port} address {macs[(ep.node, ep.port)]}")
                cmds.append(f"link set {ep.port} up")
                if ep.node in hosts:
                    cmds.append(f"addr add {hosts[ep.node].ip} dev {ep.port}")
                offload_off.append((ns, ep.port))
                state.node(ep.node)["ifaces"][ep.port] = {"mac": macs[(ep.node, ep.port)], "peer": str(
                    a if ep == b else b)}
    ip_batch(root_cmds)
    for ns, cmds in ns_cmds.items():
        ip_batch(cmds, netns=ns)
    # Without this, TCP over veth stalls (checksums left to an offload no one performs).
    for ns, dev in offload_off:
        run(["ethtool", "-K", dev, "tx", "off"], netns=ns)
    return bridge_ports


def _management(topo, state):
    """Management links for the agents' gRPC (kernel veths in either network), and their TLS files."""
    tid = state["id"]
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subnets = _free_mgmt_subnets(len(topo.servers))
        for k, (srv, net) in enumerate(zip(topo.servers, subnets)):
            root_if, ns = f"{tid}m{k}", state.node(srv.name)["netns"]
            state.record("veths", root_if)
            host_ip, agent_ip = list(net.hosts())
            ip_batch([f"link add {root_if} type veth peer name {root_if}n",
                      f"link set {root_if}n netns {ns}",
                      f"addr add {host_ip}/30 dev {root_if}", f"link set {root_if} up"])
            ip_batch([f"link set {root_if}n name mgmt", f"addr add {agent_ip}/30 dev mgmt", "link set mgmt up"],
                     netns=ns)
            state.node(srv.name).update(mgmt_ip=str(agent_ip), agent=f"{agent_ip}:{agent.GRPC_PORT}",
                                        metrics=f"{agent_ip}:{agent.METRICS_PORT}")
    state.save()
    if state.data.get("tls"):
        lab = certs.make_lab(Path(state["run_dir"]) / "tls",
                             {s.name: [state.node(s.name)["mgmt_ip"]] for s in topo.servers})
        for srv in topo.servers:
            cert, key = lab["agents"][srv.name]
            state.node(srv.name).update(tls_files=[str(cert), str(key), str(lab["ca"])],
                                        controller_tls=certs.controller_fields(lab))
        state.save()


def _start_relay(state, ovs_ns, controller):
    """Starts the OpenFlow relay for `controller` (tcp:HOST:PORT); returns the target the switches use."""
    kind, host, port = controller.split(":")
    if kind != "tcp":
        raise ValueError(f"controller {controller!r}: only tcp:HOST:PORT is supported")
    port_file = Path(state["run_dir"]) / "of-relay.port"
    argv = ["/usr/bin/python3", "-m", "metron_topo.relay", ovs_ns, host, port, str(port_file)]
    logf = open(Path(state["run_dir"]) / "of-relay.log", "ab")
    p = subprocess.Popen(argv, cwd=str(REPO / "topologies"), stdout=logf, stderr=subprocess.STDOUT,
                         start_new_session=True)
    logf.close()
    state.record_process("of-relay", p.pid, argv)
    deadline = time.monotonic() + 20
    while not port_file.exists():
        if p.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"OpenFlow relay did not start; see {state['run_dir']}/of-relay.log")
        time.sleep(0.02)
    return f"tcp:127.0.0.1:{port_file.read_text().strip()}"


def set_port(state, switch, port, up):
    """Sets a switch port's link up or down (its veth lives in the OVS namespace), as a cable pull would. The fast
    network's ports are no kernel links: the port is set administratively down in the switch (OFPPC_PORT_DOWN:
    the switch drops what it sends there and reports the link down), and for a link between two switches so is
    the far end, as a veth's peer loses its carrier with it."""
    node = state["nodes"][switch]
    if state.data.get("fast"):
        ovs = Ovs(state["run_dir"])
        for sw, p in [(switch, str(port))] + _far_switch_end(state, switch, str(port)):
            ovs.ofctl(state["nodes"][sw]["bridge"], "mod-port", state["nodes"][sw]["ports"][p],
                      "up" if up else "down")
        return
    run(["ip", "link", "set", node["ports"][str(port)], "up" if up else "down"], netns=node["netns"])


def _far_switch_end(state, switch, port):
    """[(switch, port)] of the other end of a switch-switch link at switch:port, [] for a host's or server's."""
    topo = model.load(state["topology_file"])
    names = {s.name for s in topo.switches}
    for a, b in topo.links:
        for near, far in ((a, b), (b, a)):
            if (near.node, near.port) == (switch, port) and far.node in names:
                return [(far.node, far.port)]
    return []


def server_device_id(name):
    return f"metron:{name}"


def network_view(topo, state):
    """The topology as the controller sees it (ONOS ids: of:<dpid>/<port> for switches, metron:<server>/<n>
    for server NICs, n = NIC index + 1), recorded in the state file for the embedded host."""
    ids = {s.name: s.device_id for s in topo.switches}
    nic_port = {(s.name, n.name): i + 1 for s in topo.servers for i, n in enumerate(s.nics)}
    ids.update({s.name: server_device_id(s.name) for s in topo.servers})

    def cp(ep):
        port = ep.port if ep.node in {s.name for s in topo.switches} else nic_port.get((ep.node, ep.port))
        return f"{ids[ep.node]}/{port}"

    links = [[cp(a), cp(b)] for a, b in topo.links if a.node in ids and b.node in ids]

    def nic_name(server, nic):  # the fast network's agents name their NICs after their DPDK ethdevs
        return state.node(server).get("ifaces", {}).get(nic, {}).get("dpdk_port", nic)

    return {
        "switches": [{"name": s.name, "device_id": s.device_id} for s in topo.switches],
        "servers": [{"name": s.name, "device_id": ids[s.name],
                     "cores": agent.worker_cores(s, state.data.get("fast")),
                     "agent": state.node(s.name).get("agent"),
                     **({"tls": state.node(s.name)["controller_tls"]} if "controller_tls" in state.node(s.name)
                        else {}),
                     "nics": [{"name": nic_name(s.name, n.name), "mac": n.mac, "port": nic_port[(s.name, n.name)],
                               "attachment": cp(topo.peer(model.Endpoint(s.name, n.name)))}
                              for n in s.nics]} for s in topo.servers],
        "hosts": [{"name": h.name, "ip": h.ip, "mac": h.mac, "netns": state.node(h.name)["netns"],
                   "attachment": cp(topo.peer(model.Endpoint(h.name, "eth0")))} for h in topo.hosts],
        "links": links,
        "ingress": [cp(e) for e in topo.ingress],
        "egress": [cp(e) for e in topo.egress],
    }


def start_agent(state, server, binary=None):
    """Starts (or restarts) the agent of one server inside its namespace; recorded like every other process."""
    binary = binary or agent.binary()
    node = state.node(server.name)
    prefix = f"{state['id']}-{server.name}"
    vdevs = None
    if state.data.get("fast"):
        vdevs = [fastnet.vdev(k, node["ifaces"][n.name]["socket"], n.mac) for k, n in enumerate(server.nics)]
    argv = agent.command(binary, server, node["mgmt_ip"], prefix, agent.state_dir(state["run_dir"], server.name),
                         node.get("tls_files"), vdevs=vdevs, huge_dir=state.data.get("huge_dir"))
    if agent.runtime_dir(prefix) not in state["paths"]:
        state.record("paths", agent.runtime_dir(prefix))
    logf = open(Path(state["run_dir"]) / f"agent-{server.name}.log", "ab")
    p = subprocess.Popen(["ip", "netns", "exec", node["netns"]] + argv, stdout=logf, stderr=subprocess.STDOUT,
                         start_new_session=True)
    logf.close()
    state.record_process(f"agent-{server.name}", p.pid, argv)
    if vdevs and not fastnet.boost_once_serving(p.pid, (node["mgmt_ip"], agent.METRICS_PORT)):
        raise RuntimeError(f"the agent of {server.name} did not serve its metrics port in time: see its log "
                           f"{Path(state['run_dir']) / f'agent-{server.name}.log'}")
    node["agent_pid"] = p.pid
    state.save()
    return p.pid


def _alive(proc):
    return proc.get("start") is not None and proc_start_time(proc["pid"]) == proc["start"]


def stop_process(proc, timeout=5.0):
    """SIGTERM, then SIGKILL, a process we recorded — only if it is still the very process we started."""
    if not _alive(proc):
        return
    try:
        os.kill(proc["pid"], signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _alive(proc) and time.monotonic() < deadline:
            _reap(proc["pid"])
            time.sleep(0.02)
        if _alive(proc):
            os.kill(proc["pid"], signal.SIGKILL)
            while _alive(proc):
                _reap(proc["pid"])
                time.sleep(0.02)
    except ProcessLookupError:
        pass


def _reap(pid):
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def down(state_path, *, keep_logs=False, log=print):
    """Removes exactly what the state file lists, most dependent first. Errors are collected, not fatal, so one
    stuck resource does not leave the rest behind; they are raised together at the end."""
    state = State.open(state_path)
    errors = []
    procs = state["processes"]
    # Agents and any other extra processes first, OVS daemons last (bridges are deleted through ovsdb).
    for proc in reversed(procs):
        if not proc["name"].startswith("ovs"):
            stop_process(proc)
    ovs = Ovs(state["run_dir"])
    daemons = {p["name"]: p for p in procs if p["name"].startswith("ovs")}
    if all(name in daemons and _alive(daemons[name]) for name in ("ovsdb-server", "ovs-vswitchd")):
        for br in state["bridges"]:
            r = ovs.del_bridge(br)
            if r.returncode != 0:
                errors.append(f"del-br {br}: {r.stderr.strip()}")
    for name in ("ovs-vswitchd", "ovsdb-server"):
        if name in daemons:
            stop_process(daemons[name])
    existing = set(run(["ip", "-o", "link", "show"]).stdout.split())
    for veth in state["veths"]:
        # A pair disappears with either end (or with its namespace): only delete what still exists.
        if f"{veth}:" in existing or any(w.startswith(f"{veth}@") for w in existing):
            r = run(["ip", "link", "del", veth], check=False)
            if r.returncode != 0 and "Cannot find" not in r.stderr:
                errors.append(f"ip link del {veth}: {r.stderr.strip()}")
    for path in state["paths"]:
        shutil.rmtree(path, ignore_errors=True)
    fastnet.release_hugepages(state)  # after ovs-vswitchd and the agents: their pages are free by now
    current_ns = set(run(["ip", "netns", "list"]).stdout.split())
    for ns in state["namespaces"]:
        if ns in current_ns:
            r = run(["ip", "netns", "del", ns], check=False)
            if r.returncode != 0:
                errors.append(f"ip netns del {ns}: {r.stderr.strip()}")
    leftovers = leaks(state)
    if leftovers:
        errors.append(f"still present after teardown: {leftovers}")
    if errors:
        raise RuntimeError(f"topology {state['id']} teardown incomplete: " + "; ".join(errors))
    if not keep_logs:
        shutil.rmtree(state["run_dir"], ignore_errors=True)
    log(f"topology {state['topology']} ({state['id']}) is down")


def leaks(state):
    """Everything the state file lists that still exists on the machine."""
    out = []
    out += [f"process {p['name']} pid {p['pid']}" for p in state["processes"] if _alive(p)]
    current_ns = set(run(["ip", "netns", "list"]).stdout.split())
    out += [f"netns {ns}" for ns in state["namespaces"] if ns in current_ns]
    links = run(["ip", "-o", "link", "show"]).stdout
    names = {w.split("@")[0].rstrip(":") for line in links.splitlines() for w in line.split()[1:2]}
    out += [f"link {v}" for v in state["veths"] + state["bridges"] if v in names]
    out += [f"path {p}" for p in state["paths"] if Path(p).exists()]
    if state.data.get("hugepages") and Path(state["hugepages"]).exists():
        out.append(f"hugepages reserved and not given back ({state['hugepages']})")
    return out


def status(state_path):
    """A summary of the topology and which of its recorded resources are alive. Returns (text, healthy)."""
    state = State.open(state_path)
    lines = [f"topology {state['topology']} id {state['id']} ({state['topology_file']})",
             f"ovs: {state.data.get('ovs_dir')}  controller: {state.data.get('controller') or '-'}"]
    healthy = True
    for p in state["processes"]:
        alive = _alive(p)
        healthy &= alive
        lines.append(f"  process {p['name']:<16} pid {p['pid']:<8} {'running' if alive else 'DEAD'}")
    current_ns = set(run(["ip", "netns", "list"]).stdout.split())
    for ns in state["namespaces"]:
        ok = ns in current_ns
        healthy &= ok
        lines.append(f"  netns   {ns:<24} {'present' if ok else 'MISSING'}")
    ovs = Ovs(state["run_dir"])
    for br in state["bridges"]:
        try:
            ovs.vsctl("br-exists", br)
            conn = "-"
            if state.data.get("controller"):
                uuid = ovs.vsctl("get", "bridge", br, "controller").stdout.strip("[] \n")
                conn = ovs.vsctl("get", "controller", uuid, "is_connected").stdout.strip()
            lines.append(f"  bridge  {br:<24} present, controller connected: {conn}")
        except CommandError:
            healthy = False
            lines.append(f"  bridge  {br:<24} MISSING")
    for name, node in state["nodes"].items():
        if "agent" in node:
            lines.append(f"  server  {name:<24} agent {node['agent']}")
    return "\n".join(lines), healthy

"""Metron on a 3-node cluster: three real Karaf 4.2.9 nodes, each in its own network namespace, whose ONOS Cluster,
Leadership, Mastership and Storage services are backed by a real Atomix 3.1.9 cluster laid out as ONOS 2.7 runs one:
each node an Atomix member holding no partition, and three Atomix storage members (separate processes in namespaces
of their own, tests/karaf/atomix-storage, the counterpart of ONOS's atomix-agent) holding the Raft management group
and the Raft partition group (cluster_runtime.py).

Real: Karaf, Felix, Jetty; ONOS 2.7.0's Central bundles (onos-api, core-common, core-serializers, cli, rest);
Atomix 3.1.9's own bundles from Central (as ONOS installs them), its membership, Raft partitions, LeaderElector and
AtomicMap primitives, spoken over TCP between the namespaces; the Metron .oar files, installed once through ONOS's
REST on one node; real metron-agents reached over gRPC from every node; real switches: userspace Open vSwitch
(topology `two-servers` built by topologies/metron_topo, cluster_net.py: private ovsdb-server/ovs-vswitchd in a
namespace, bridges s1 and s2) whose bridges each connect to all three nodes' OpenFlow listeners, the agents' NICs
veths into s1 (AF_PACKET), and real packets from a host namespace (src) through s1, the chain's agent, s1, s2 to the
sink's namespace.
Stood in for (tests/karaf/onos-standin, Central does not serve them): ONOS's core services on top of Atomix. The
stand-in's ClusterService reads Atomix membership; LeadershipService and MastershipService are elections on Atomix
LeaderElectors (a device's master is its election's leader; a dead node's candidacies go when its Raft session
expires); ConsistentMaps are Atomix AtomicMaps; apps, network config and flow tables are shared through Atomix maps
(the device and link stores are shared as ONOS's GossipDeviceStore/GossipLinkStore share theirs: a device's master
writes what it accepted, every node applies it and posts the DeviceEvents; ONOS keeps flow entries with a device's
master, here every node reads one shared flow table per device). ONOS's own
failure detector (Phi accrual over its messaging) is Atomix's membership here. ONOS's OpenFlow subsystem is the
stand-in's org.metron.standin.openflow on the project's OpenFlow 1.3 code, following OpenFlowDeviceProvider and
RoleManager: each node's connection to a switch becomes the same `of:` device, the device's master (an Atomix
election) asks its connection for MASTER, the other nodes for EQUAL (ONOS's STANDBY; generation id 0 as ONOS
sends), only a MASTER connection sends flow mods (AbstractOpenFlowSwitch), a batch reaching another node is
forwarded to the master (ECFlowRuleStore); Open vSwitch itself demotes the old master when a new one asks and
refuses a SLAVE's flow mods (checked in the first switch test).

What the tests assert, in order (one chain, two agents with one worker core each): the app active on all three after
one install; the chain submitted on a node that does not own it deployed once (one pipeline, one set of switch
rules, no rule twice) and readable on all, its switches' connections as OVS holds them (one per node, the master's
`master`, the others `other`), the flows OVS holds equal to the rules ONOS reads, and packets through it (NAPT and
LB rewrites seen at the sink, denied flows dropped); s1's master relinquishing it (ONOS's REST): another node's
connection MASTER, the flows kept, packets through; while all three run, each agent asked for liveness by its
device's master alone (the data segments each agent receives per node, read on the agent's side with `ss -tni`:
every node asks every agent for resources and load, only the master adds the probe and the agent watch) and, its
agent SIGKILLed, the chain moved once, by its owner alone, ACTIVE on the other server, packets through it there; the
agent back on its port, probed by its master alone, nothing of the chain put back or deployed twice; the node acting
for the chain SIGSTOPped past its cluster session and resumed: it names the survivors' masters and a drain sent to it
is run by the chain's new owner (ONOS's SERVICE_RESTORED, every leadership read afresh); the node acting
for the chain SIGKILLed while packets stream through the chain: the chain ACTIVE on the survivors, another node
acting for it, nothing redeployed, the dead node's switch connections gone and a survivor MASTER, the switches'
flows unchanged, the packets lost across the kill counted (bench/results/cluster_node_kill_packets_lost.json; bound
NODE_KILL_LOSS_BOUND); that node restarted: nothing duplicated, its connections back (EQUAL), the flows OVS holds
(dump-flows) the same, each once; the agent running the chain SIGKILLed and its owner node SIGKILLed once it readied
the move on the other server, before its failover deadline: the next owner takes back what the dead one readied and
moves the chain once (ACTIVE there on every survivor, one pipeline of it, no move left readied, its tags its
placement's, nothing journalled, no rule twice, packets through), then agent and node started again; the owner's split
interrupted (the other agent SIGSTOPped so the scale-out hangs
in its first agent call, the owner node SIGKILLed, the agent resumed): the next owner finishes or rolls back the
journalled operation (journal empty, chain ACTIVE, each class or class part in one group on one core, no orphan
pipeline, no rule twice) and the chain splits or merges again on it; a DELETE with every agent dead stays deleted on
all nodes and none of the chain's flows is left on the switches.

Measured (bench/results), each from the karaf.log of the node it happens on (millisecond stamps, the same clock
as the kill), with what the test's own reads saw in the note: agent_failover_ms (the agent running a chain killed ->
the chain's owner has it running ACTIVE on the other server, switch rules and records written; the test then reads
it ACTIVE there on every node; goal 3000; the note says where the time went: agent found dead on the device's master,
the device event on the chain's owner, the failover deadline, readied, moved, and when each node's REST answer showed
it) and cluster_takeover_ms (the node acting for a chain killed -> the new owner has taken the chain over and
reconciled it; the test reads the new leader over SSH and the chain ACTIVE on the survivors; goal 5000; the note
names any Raft partition that elected a new leader (none: the storage members hold them), the masterships that moved
and any survivor whose own session expired). Status and figures: tests/karaf/README.md; nothing is marked xfail.
"""
import json
import os
import re
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import cluster_runtime as cr
import karaf_runtime as kr
import cluster_net
from cluster_net import ClusterNet, Stream
from conftest import BOOT_FEATURES, STANDIN_JAR, install_order
from test_karaf import APP, SW1, SW2, chain_json, device, metron_flows, metron_servers, scr_components, wait_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
RESULTS = kr.ROOT / "bench" / "results"
CHAIN = "hk-cluster-web"
TAKEOVER_WAIT_S = 20  # 4 times the goal: a takeover later than that is reported as none
FAILOVER_BOUND_MS = 15000  # 5 times the goal; b792e96's drivers took 25-37 s
TOPIC = f"metron-chain:{CHAIN}"


@pytest.fixture(scope="module")
def cluster(oars):
    order, skipped = install_order(oars)
    artifacts = {str(kr.maven_path("org.metron", "metron-onos-standin", "1.0-SNAPSHOT")): STANDIN_JAR}
    t0 = time.time()
    cr.warm_cache(BOOT_FEATURES, artifacts, order)
    c = cr.Cluster()
    pytest.cluster_instance = c
    try:
        c.net_up()
        t1 = time.time()
        c.boot(BOOT_FEATURES, artifacts)
        print(f"cache warm in {t1 - t0:.1f} s; 3 nodes ready in {time.time() - t1:.1f} s: {c.nodes}")
        answers = {o.name: c.nodes[0].karaf.http("POST", "/onos/v1/applications?activate=true", o.path.read_bytes(),
                                                 content_type="application/octet-stream", timeout=300)
                   for o in order}
        c.installed = (order, skipped, answers)
        yield c
    finally:
        pytest.cluster_instance = None
        c.close(keep=os.environ.get("METRON_KEEP_KARAF") == "1")


@pytest.fixture(scope="module")
def servers(cluster, tmp_path_factory):
    """The real network (cluster_net): OVS switches s1 and s2 connected to all three nodes, two servers (one worker
    core each) whose agents serve on the cluster's subnet, reachable from every node's namespace; src and sink.
    Torn down, and checked for leftovers, after the module (before the cluster)."""
    net = ClusterNet(cluster, tmp_path_factory.mktemp("cn"))
    cluster.net = net
    try:
        net.up()
        yield net.agents
    finally:
        net.down()


def alive(cluster):
    return [n.karaf for n in cluster.alive()]


def chain_on(k):
    status, body = k.http("GET", f"/onos/metron/chains/{CHAIN}", timeout=20)
    return json.loads(body) if status == 200 else None


def placements_view(k, retry_s=20):
    """{"placements": [...], "readied": [...]} as node k reads them (readied: failover moves holding cores/tags). A
    503 (the cluster store did not answer: a node was just killed, a store partition elects a new leader) is retried
    for up to retry_s, as a client does; None when it still answers something else."""
    deadline = time.time() + retry_s
    while True:
        status, body = k.http("GET", "/onos/metron/placements", timeout=20)
        if status != 503 or time.time() > deadline:
            break
        time.sleep(1)
    return json.loads(body) if status == 200 else None


def active_on(k, server):
    """Whether node k reads the chain ACTIVE and placed on server (its placement, not a move readied there); the
    two asked at once (an answer other than 200 counts as not yet)."""
    with ThreadPoolExecutor(2) as pool:
        c, view = pool.map(lambda f: f(), (lambda: chain_on(k), lambda: placements_view(k, retry_s=0)))
    return bool(c and c.get("state") == "ACTIVE" and view and any(
        p["chain"] == CHAIN and p.get("server") == server for p in view["placements"]))


def leaderboard(k, full=False):
    """{topic: leader node id} (full: the whole entry, candidates too) as ONOS's real `onos:leaders -j` prints it
    on node k (onos-cli 2.7.0, on the stand-in's LeadershipAdminService)."""
    out = k.ssh("onos:leaders -j", check=False, timeout=30)
    try:
        return {t["topic"]: t if full else t["leader"] for t in json.loads(out[out.index("["):])}
    except ValueError:
        return {}


def leader(cluster):
    """The node acting for the chain (leader of its topic) as the first live node sees it; None without one."""
    l = leaderboard(cluster.alive()[0].karaf).get(TOPIC)
    return None if l in (None, "none") else l


def masters(k, dids):
    """{device: master node id} through ONOS's real REST (/onos/v1/mastership/{id}/master) on node k."""
    out = {}
    for d in dids:
        status, body = k.http("GET", f"/onos/v1/mastership/{d}/master", timeout=20)
        out[d] = json.loads(body).get("nodeId") if status == 200 else f"HTTP {status}"
    return out


def rules(k, did):
    """Metron's rules of a switch as node k reads them: (flow id, selector, treatment, priority, table)."""
    return sorted(json.dumps([f["id"], f["selector"], f["treatment"], f.get("priority"), f.get("tableId")],
                             sort_keys=True) for f in metron_flows(k, did))


def doubles(k, did):
    """Rules of a switch that match and act the same as another rule with another id (a second deployment)."""
    seen, dup = set(), []
    for f in metron_flows(k, did):
        key = json.dumps([f["selector"], f["treatment"], f.get("priority"), f.get("tableId")], sort_keys=True)
        (dup.append(key) if key in seen else seen.add(key))
    return dup


def chain_cores(k, server, timeout=15, dead=False):
    """The cores the agent of `server` reports running the chain, read through node k once the agent answers k: a
    server k could not reach in its agent timeout is listed with no cores (GET /onos/metron/servers: reachable false),
    and one whose device is unavailable is not listed, neither of which is an agent running nothing (a loaded CI run
    read cores [] where the groups had a core, without saying whether the agent had answered; this read tells them
    apart). `dead`: the agent was killed; whatever k lists of it once (nothing, or no cores)."""
    if dead:
        return sorted(c["id"] for c in metron_servers(k).get(server, {}).get("cores", []) if c["chain"] == CHAIN)
    last = {}

    def answering():
        last["view"] = metron_servers(k).get(server)
        return last["view"] if last["view"] and last["view"]["reachable"] else None
    deadline = time.time() + timeout
    while (view := answering()) is None:
        assert time.time() < deadline, f"{server} did not answer {k} in {timeout} s: {last['view']}"
        time.sleep(0.5)
    return sorted(c["id"] for c in view["cores"] if c["chain"] == CHAIN)


def agent_segments(agent):
    """{(peer ip, peer port): data segments the agent received on that TCP connection}, read from the agent's side
    of its established connections (`ss -tni` in the server's namespace: the agents listen on the cluster's subnet and
    each node connects from its own namespace's address). No keepalive runs on an idle channel (GrpcAgentClient:
    keepAliveWithoutCalls false), so a segment with data is a request (or a stream's flow control) of that node."""
    out = subprocess.run(["ip", "netns", "exec", agent.netns, "ss", "-tniH", "state", "established",
                          f"( sport = :{agent.port} )"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    segs, peer = {}, None
    for line in out.splitlines():
        m = re.match(r"\s*\d+\s+\d+\s+\S+:\d+\s+(\S+):(\d+)", line)
        if m:
            peer = (re.sub(r"^\[(::ffff:)?|\]$", "", m.group(1)), int(m.group(2)))  # [::ffff:a.b.c.d]
            continue
        d = re.search(r"data_segs_in:(\d+)", line)
        if peer and d:
            segs[peer] = int(d.group(1))
            peer = None
    return segs


def requests_per_node(cluster, agents, window_s):
    """{agent address: {node id: data segments the agent received from that node within window_s}}: what each
    node asks of each agent while the test asks nothing (no REST call that reaches an agent meanwhile)."""
    before = {a.address: agent_segments(a) for a in agents}
    time.sleep(window_s)
    after = {a.address: agent_segments(a) for a in agents}
    by_ip = {n.ip: n.id for n in cluster.nodes}
    out = {}
    for a in agents:
        counts = {n.id: 0 for n in cluster.alive()}
        for conn, n in after[a.address].items():
            node = by_ip.get(conn[0])
            if node in counts:
                counts[node] += n - before[a.address].get(conn, 0)
        out[a.address] = counts
    return out


def assert_only_masters_probe(cluster, agents, k, window_s=4.0):
    """Every node asks every agent for its resources and load (the scaling monitor, once a second): what only the
    device's master adds is the liveness probe (ServerDevices, every 500 ms) and the app's agent watch (every
    500 ms), about 4 requests a second more. Each agent must hear that surplus from its master alone."""
    seen = requests_per_node(cluster, agents, window_s)
    owners = masters(k, [f"metron:{a.address}" for a in agents])
    print(f"data segments each agent received per node in {window_s} s (master: {owners}): {seen}")
    for a in agents:
        master = owners[f"metron:{a.address}"]
        counts = seen[a.address]
        others = [c for n, c in counts.items() if n != master]
        assert master in counts, (a.address, master, counts)
        # the master's surplus: at least 2 requests a second more than any other node (4 expected)
        assert counts[master] >= max(others, default=0) + 2 * window_s, (
            f"agent {a.address} is not probed by its master {master} alone: {counts}")


def log_lines(node, pattern, since):
    """(epoch seconds, line) of the entries of node's log (a Karaf's karaf.log, a storage member's atomix.log) matching
    pattern logged at or after since."""
    f = node.log_file
    if not f.exists():
        return []
    stamped = ((kr.log_stamp(line), line) for line in f.read_text(errors="replace").splitlines())
    return [(t, line) for t, line in stamped if t is not None and t >= since - 0.001 and re.search(pattern, line)]


def nodes_logging(cluster, pattern, since):
    """{node id: matching lines} of every node (alive or not) that logged pattern since `since`."""
    return {n.id: l for n in cluster.nodes if (l := log_lines(n, pattern, since))}


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), "?")
    mem = int(next(l.split()[1] for l in Path("/proc/meminfo").read_text().splitlines()
                   if l.startswith("MemTotal"))) >> 20
    return f"{cpu}, {os.cpu_count()} cores, {mem} GB, load avg {os.getloadavg()[0]:.0f} (shared)"


def write_result(name, value, goal, note=None):
    """bench/results/<name>.json; value None (with a note) when the event did not happen at all."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    doc = {"name": name, "value": None if value is None else round(value, 1), "unit": "ms", "baseline": "goal",
           "baseline_value": goal, "ratio": None if value is None else round(value / goal, 3), "machine": machine()}
    if note:
        doc["note"] = note
    (RESULTS / f"{name}.json").write_text(json.dumps(doc) + "\n")
    print(json.dumps(doc))


def ovs_rules(cluster, k):
    """{switch: sorted cookies of Metron's flows among those Open vSwitch itself holds} (ovs-ofctl dump-flows on the
    real bridge; ONOS's core app has its LLDP intercept there too, node k tells Metron's app id)."""
    return {d: k.app_cookies(sorted(c for c, *_ in cluster.net.flows(d))) for d in (SW1, SW2)}


def assert_ovs_holds_the_rules(cluster, k, timeout=20):
    """What the switches hold is the Metron rules node k reads, each exactly once (cookie = ONOS flow id), and
    nothing else (no rule twice, none left over). Answers ovs_rules."""
    deadline = time.time() + timeout
    while True:
        onos = {d: sorted(int(f["id"]) for f in metron_flows(k, d)) for d in (SW1, SW2)}
        held = ovs_rules(cluster, k)
        if onos == held or time.time() > deadline:
            break
        time.sleep(0.5)
    assert onos == held, {d: {"onos only": sorted(set(onos[d]) - set(held[d])), "ovs only": sorted(
        set(held[d]) - set(onos[d])), "ovs twice": sorted(c for c in set(held[d]) if held[d].count(c) > 1)}
        for d in (SW1, SW2)}
    assert all(held.values()), f"no Metron flow on a switch: {held}"
    return held


def assert_switch_roles(cluster, k, timeout=20):
    """Open vSwitch's own record of each switch's controller connections (its Controller table): every live node
    connected, the device's master (ONOS mastership, on Atomix) in role `master`, every other live node `other`
    (EQUAL: what ONOS's OpenFlowDeviceProvider asks for STANDBY), a killed node not connected."""
    deadline = time.time() + timeout
    while True:
        owners = masters(k, [SW1, SW2])
        got = {d: {n: (c, r if c else "-") for n, (c, r) in cluster.net.controller_roles(d).items()}
               for d in (SW1, SW2)}
        want = {d: {n.id: (False, "-") if n.killed else (True, "master" if n.id == owners[d] else "other")
                    for n in cluster.nodes} for d in (SW1, SW2)}
        if got == want or time.time() > deadline:
            break
        time.sleep(0.5)
    print(f"switch connections as OVS holds them (masters {owners}): {got}")
    assert got == want, (got, want)


# --------------------------------------------------------------------------------------------------- the app
def test_apps_installed_on_one_node_are_active_on_all_three(cluster):
    order, skipped, answers = cluster.installed
    assert APP in [o.name for o in order], skipped
    bad = {n: a for n, a in answers.items() if a[0] != 200}
    assert not bad, f"ONOS REST refused apps on {cluster.nodes[0]}: {bad}"
    mine = {bsn for o in order for bsn in o.symbolic_names()}
    t0 = time.time()
    for n in cluster.nodes:
        def ready(k=n.karaf):
            bundles = k.bundles()
            if any(bundles.get(b, (0, "absent"))[1] != "Active" for b in mine):
                return False
            comps = {c: s for c, (b, s) in scr_components(k).items() if b in mine}
            return comps and all(s and all(x == "ACTIVE" for x in s) for s in comps.values()) and comps
        comps = wait_for(f"Metron's bundles and components active on {n}", ready, timeout=180, interval=2)
        print(f"{n}: {len(mine)} bundles Active, {len(comps)} components ACTIVE ({time.time() - t0:.1f} s)")
        apps = json.loads(n.karaf.http("GET", "/onos/v1/applications")[1])["applications"]
        assert {a["name"]: a["state"] for a in apps if a["name"] in answers} == {a: "ACTIVE" for a in answers}


# --------------------------------------------------------------------------------------------------- switch roles
def test_open_vswitch_takes_flow_mods_from_master_and_equal_connections_only(cluster, servers):
    """What the stand-in's OpenFlow southbound relies on, asked of the real Open vSwitch over two raw OpenFlow 1.3
    connections (cluster_net.ROLE_PROBE, a scratch bridge): role requests with generation id 0 (ONOS's) granted; a
    SLAVE's flow mod refused with OFPET_BAD_REQUEST/OFPBRC_IS_SLAVE (1, 10); a MASTER's and an EQUAL's taken; a
    second MASTER demotes the first to SLAVE."""
    r = cluster_net.probe_roles(cluster.net)
    print(json.dumps(r))
    assert r["a MASTER (generation 0)"] == ["role", 2] and r["b SLAVE (generation 0)"] == ["role", 3], r
    assert r["flow mod of b (SLAVE)"] == [[1, 10]], r
    assert r["flow mod of a (MASTER)"] == [] and r["flow mod of a (EQUAL)"] == [], r
    assert r["b MASTER"] == ["role", 2] and r["a's role now"] == ["role", 3], r
    assert r["flow mod of a (demoted)"] == [[1, 10]], r


# --------------------------------------------------------------------------------------------------- a chain
def test_a_chain_submitted_on_one_node_is_deployed_once_and_readable_on_all(cluster, servers):
    first, second = cluster.nodes[0].karaf, cluster.nodes[1].karaf
    ids = [f"metron:{a.address}" for a in servers]
    cfg = cluster.net.netcfg()
    status, body = first.http("POST", "/onos/v1/network/configuration", cfg)
    assert status == 200, (status, body)
    links = 2 * len(cfg["links"])
    for n in cluster.nodes:
        for did in [*ids, SW1, SW2]:
            wait_for(f"{did} available on {n}", lambda k=n.karaf, d=did: (x := device(k, d)) and x["available"],
                     timeout=90)
        wait_for(f"{links} links on {n}", lambda k=n.karaf: len(json.loads(k.http("GET", "/onos/v1/links")[1])
                                                                ["links"]) >= links, timeout=60)
    status, body = second.http("POST", "/onos/metron/chains", chain_json(CHAIN))
    print(f"submit on {cluster.nodes[1]}:", status, body[:300])
    # 201: this node took it; 202: another node owns it (every node runs for every chain) and brings it up;
    # 421: another node acts for it (b792e96's app)
    assert status in (201, 202, 421), (status, body)
    if status == 421:
        for k in (first, cluster.nodes[2].karaf):
            status, body = k.http("POST", "/onos/metron/chains", chain_json(CHAIN))
            if status == 201:
                break
        assert status == 201, ("no node took the chain", status, body)
    for n in cluster.nodes:
        wait_for(f"{CHAIN} ACTIVE on {n}", lambda k=n.karaf: (c := chain_on(k)) and c.get("state") == "ACTIVE",
                 timeout=90)
    # one pipeline in all: on one agent, one core; nothing on the other
    cores = {s: chain_cores(first, s) for s in ids}
    print("chain's cores per server:", cores, "; acting node:", leader(cluster))
    assert sorted(len(c) for c in cores.values()) == [0, 1], cores
    # one set of switch rules, the same seen from every node, no entry twice
    views = {str(n): (rules(n.karaf, SW1), rules(n.karaf, SW2)) for n in cluster.nodes}
    sw1, sw2 = views[str(cluster.nodes[0])]
    print(f"{len(sw1)} rules on {SW1}, {len(sw2)} on {SW2}, the same on every node: "
          f"{all(v == (sw1, sw2) for v in views.values())}")
    assert sw1 and sw2, "no Metron rule on the switches"
    assert all(v == (sw1, sw2) for v in views.values()), {k: (len(a), len(b)) for k, (a, b) in views.items()}
    assert not doubles(first, SW1) and not doubles(first, SW2), "a switch rule installed twice"
    for n in cluster.nodes:
        assert chain_on(n.karaf)["state"] == "ACTIVE"
    cluster.chain_servers = ids
    cluster.devices = [*ids, SW1, SW2]
    # one master per device (an Atomix election each), the same seen from every node
    seen = {str(n): masters(n.karaf, cluster.devices) for n in cluster.nodes}
    print("masters:", seen[str(cluster.nodes[0])])
    assert all(v == seen[str(cluster.nodes[0])] for v in seen.values()), seen
    assert all(m in {n.id for n in cluster.nodes} for m in seen[str(cluster.nodes[0])].values()), seen
    # the real switches: one connection per node, the master's MASTER; they hold the rules once; packets cross
    assert_switch_roles(cluster, first)
    held = assert_ovs_holds_the_rules(cluster, first)
    print(f"OVS holds {len(held[SW1])} flows on {SW1} and {len(held[SW2])} on {SW2}: the rules ONOS reads, once")
    cluster.net.assert_traffic("after the deployment")


# --------------------------------------------------------------------------------------------------- switch master
def test_a_switch_master_that_gives_up_its_role_hands_the_switch_to_another_node(cluster, servers):
    """ONOS's REST relinquish (MastershipWebResource, on the master of s1): another node wins the switch's election
    and its connection asks for MASTER, the old master's connection goes EQUAL (its STANDBY, DeviceManager
    .reassertRole), as OVS itself records them; the switches keep their flows and packets still cross. The next
    change of s1's rules (the agent failover below) goes out through the new master's connection."""
    k = cluster.nodes[0].karaf
    old = masters(k, [SW1])[SW1]
    node = next(n for n in cluster.nodes if n.id == old)
    held = ovs_rules(cluster, k)
    status, body = node.karaf.http("GET", f"/onos/v1/mastership/{SW1}/relinquish")
    assert status == 201, (status, body)
    new = wait_for(f"a master of {SW1} other than {old}", lambda: (m := masters(k, [SW1])[SW1]) != old
                   and m in {n.id for n in cluster.nodes} and m, timeout=30, interval=0.2)
    print(f"{old} gave up {SW1}: {new} is its master")
    assert_switch_roles(cluster, k)
    assert ovs_rules(cluster, k) == held, "the switches' flows changed with their master"
    cluster.net.assert_traffic("after the switch's master changed")


def test_a_server_master_that_gives_up_its_role_hands_the_server_to_a_node_that_keeps_it_available(cluster,
                                                                                               servers):
    """ONOS's REST relinquish on the master of the server running the chain: the node the role comes to asks Metron's
    provider isReachable (DeviceManager's mastership listener) and must answer from its own reach of the agent, not
    from what it announced (a node that had not announced the device answered no, gave the role up, the device went
    unavailable and Metron moved the chain off a live server). Read on every node while the role moves: the device
    stays available, no node gives up its role, nothing moves, the chain stays ACTIVE."""
    k = cluster.nodes[0].karaf
    hosting = next((s for s in cluster.chain_servers if chain_cores(k, s)), None)
    assert hosting, "the chain runs on no agent"
    before_cores = {s: chain_cores(k, s) for s in cluster.chain_servers}
    old = masters(k, [hosting])[hosting]
    node = next(n for n in cluster.nodes if n.id == old)
    t0 = time.time()
    status, body = node.karaf.http("GET", f"/onos/v1/mastership/{hosting}/relinquish")
    assert status == 201, (status, body)
    unavailable = []
    end = time.time() + 5  # longer than Metron's lost-server deadline (1500 ms) and a few probe periods
    while time.time() < end:
        for n in cluster.alive():
            d = device(n.karaf, hosting)
            if not (d and d["available"]):
                unavailable.append((n.id, round(time.time() - t0, 2)))
        time.sleep(0.1)
    new = masters(k, [hosting])[hosting]
    print(f"{old} gave up {hosting}: its master is {new}; unavailable on (node, s): {unavailable[:10]}")
    assert new in {n.id for n in cluster.nodes} and new != old, f"no other node masters {hosting}: {new}"
    gave_up = nodes_logging(cluster, rf"for {re.escape(hosting)}, but this node cannot reach", t0)
    assert not gave_up, f"a node gave up the role of a live server: {gave_up}"
    assert not unavailable, f"{hosting} went unavailable while its master changed: {unavailable[:10]}"
    moved = nodes_logging(cluster, rf"Chain {CHAIN} (placed on|moved off)|Metron server {re.escape(hosting)} "
                          r"unavailable", t0)
    assert not moved, f"the chain was handled as if {hosting} were lost: {moved}"
    assert {s: chain_cores(k, s) for s in cluster.chain_servers} == before_cores
    for kk in alive(cluster):
        assert chain_on(kk)["state"] == "ACTIVE"


# --------------------------------------------------------------------------------------------------- agent killed
FAILOVER_STEPS = [  # (what, node it happens on, karaf.log pattern of the server {s} / chain {c})
    ("agent found dead, device unavailable", "master", r"Metron server {s} is unreachable"),
    ("device event on the chain's owner", "owner", r"Metron server {s} unavailable: its chains move"),
    ("readied on the other server (pipeline up, traffic untouched)", "owner", r"Chain {c} prepared on"),
    ("failover deadline passed, moving", "owner", r"Metron server {s} unavailable for \d+ ms, moving"),
    ("placed on the other server (not readied: moved from scratch)", "owner", r"Chain {c} placed on"),
    ("moved (switch rules, records written)", "owner", r"Chain {c} moved off lost server {s}"),
]


def failover_breakdown(cluster, roles, server, t0):
    """Where the failover's time went, from the nodes' karaf.logs: [(step, node, ms after the kill, line)]."""
    out = []
    for what, role, pattern in FAILOVER_STEPS:
        node = next(n for n in cluster.nodes if n.id == roles[role])
        hits = log_lines(node, pattern.format(s=re.escape(server), c=re.escape(CHAIN)), t0)
        out.append((what, node.id, round((hits[0][0] - t0) * 1000) if hits else None,
                    hits[0][1][-160:] if hits else ""))
    return out


# What happens on the survivors when the node acting for the chain dies, each from the log of the process it happens
# in: the elector drops the dead node's candidacies when its Raft session expires (ONOS's DistributedLeadershipStore's
# electionTimeoutMillis, 2500 ms, stood in by AtomixNode.SESSION_TIMEOUT), which moves the devices' masterships and
# the chain's leadership, and the new owner takes over. The Raft partitions are the storage members': an ONOS node's
# death changes no partition's leader (the step is listed to show that none did; when the nodes themselves held the
# partitions, ONOS's test mode, the dead node's partitions re-elected, 2.5-5 s by Atomix 3.1.9's election timers).
TAKEOVER_DONE = "new owner done (chain reconciled)"
RAFT_LEADER = "Raft partition elects a new leader"
TAKEOVER_STEPS = [  # (what, log pattern; {v} the killed node, {c} the chain)
    (RAFT_LEADER, r"RaftServer\{{(?:raft|system)-partition-\d+\}} - Transitioning to LEADER"),
    ("a survivor's own candidacy lost (its session expired too)", r"this instance's candidacy was lost"),
    ("device mastership moved off the killed node", r"master of \S+: {v} -> (?!null)"),
    ("new owner told it owns the chain", r"This instance now owns chain {c}\b"),
    (TAKEOVER_DONE, r"Chain {c} reconciled"),
]


def takeover_breakdown(cluster, victim, new, t0):
    """[(what, node, ms after the kill)] of TAKEOVER_STEPS on the survivors and the storage members, in time order;
    the partition or device named where the line names one."""
    out = []
    for what, pattern in TAKEOVER_STEPS:
        for n in cluster.storage if what == RAFT_LEADER else cluster.nodes:
            if n is victim or (what in ("new owner told it owns the chain", TAKEOVER_DONE) and n.id != new):
                continue
            for t, line in log_lines(n, pattern.format(v=re.escape(victim.id), c=re.escape(CHAIN)), t0)[:3]:
                named = re.search(r"RaftServer\{([a-z]+-partition-\d+)\}|master of (\S+):", line)
                label = f"{what} [{next(g for g in named.groups() if g)}]" if named else what
                out.append((label, n.id, round((t - t0) * 1000)))
    return sorted(out, key=lambda s: s[2])


def seen_on_every_node(nodes, check, t0, timeout):
    """Polls each node on a thread of its own, back to back, until check(node's karaf) holds there: {node id: (ms
    after t0 when the answer that showed it arrived, ms after t0 when that poll's questions were sent)}, None for a
    node where it did not hold within timeout. No node waits for another's answer: a round across all nodes (as
    before) counted the slowest node's lag once per round and the sleep between rounds."""
    end = t0 + timeout

    def poll(n):
        while time.time() < end:
            asked = time.time()
            try:
                ok = check(n.karaf)
            except Exception:  # noqa: BLE001 (a node busy or restarting answers nothing this time)
                ok = False
            if ok:
                return (time.time() - t0) * 1000, (asked - t0) * 1000
            time.sleep(0.02)
        return None
    with ThreadPoolExecutor(len(nodes)) as pool:
        return dict(zip([n.id for n in nodes], pool.map(poll, nodes)))


def test_a_drain_sent_to_a_node_that_does_not_own_the_chain_moves_it_through_its_owner(cluster, servers):
    """Any node takes a server drain (docs/failover.md#planned-restart-drain): the drain of the server running the
    chain, POSTed to a node that does not act for the chain, has the owner move it make-before-break to the other
    server (recorded in the shared scaling-requests map, run by the owner alone; before, the node answered 421 and
    the operator had to find the owner), and the undrain with moveBack, POSTed to the other non-owner, brings it
    back the same way. Read on every node: ACTIVE where it moved, one pipeline, no rule twice, packets through."""
    acting = leader(cluster)
    assert acting, f"no node leads {TOPIC}"
    others = [n for n in cluster.alive() if n.id != acting]
    drain_and_back(cluster, acting, others[0], others[-1])


def drain_and_back(cluster, acting, drain_on, undrain_on):
    """Drains the server running the chain through node drain_on and undrains it (moveBack) through undrain_on;
    asserts the chain's owner `acting` alone moved it each way, and the chain's state, pipelines, rules and traffic
    after each move."""
    k = cluster.alive()[0].karaf
    hosting = next((s for s in cluster.chain_servers if chain_cores(k, s)), None)
    assert hosting, "the chain runs on no agent"
    other = next(s for s in cluster.chain_servers if s != hosting)
    t0 = time.time()
    status, body = drain_on.karaf.http("POST", f"/onos/metron/servers/{hosting}/drain", timeout=90)
    if status != 200:  # whole: pytest cuts a long message in the middle of its assertion's text
        print(f"drain of {hosting} on {drain_on.id} (owner {acting}) answered {status}: {body}")
    assert status == 200, (drain_on.id, status, body)
    report = json.loads(body)
    print(f"drain of {hosting} on {drain_on.id} (owner {acting}): {time.time() - t0:.1f} s: {body[:400]}")
    assert report["drained"] and [(m["chain"], m["from"], m["to"]) for m in report["moves"]] == [
        (CHAIN, hosting, other)], report
    for n in cluster.alive():
        wait_for(f"{CHAIN} ACTIVE on {other} on {n}", lambda kk=n.karaf: active_on(kk, other), timeout=30,
                 interval=0.5)
    assert len(chain_cores(k, other)) == 1 and chain_cores(k, hosting) == [], metron_servers(k)
    assert not doubles(k, SW1) and not doubles(k, SW2), "a switch rule installed twice"
    movers = nodes_logging(cluster, rf"Chain {re.escape(CHAIN)}: ran the MOVE another instance recorded", t0)
    assert list(movers) == [acting], f"not moved by the owner {acting} alone: {movers}"
    cluster.net.assert_traffic("after a drain sent to a node that does not own the chain")

    t1 = time.time()
    status, body = undrain_on.karaf.http("POST", f"/onos/metron/servers/{hosting}/undrain?moveBack=true", timeout=90)
    assert status == 200, (undrain_on.id, status, body)
    report = json.loads(body)
    print(f"undrain of {hosting} on {undrain_on.id}: {time.time() - t1:.1f} s: {body[:300]}")
    assert not report["drained"] and [(m["from"], m["to"]) for m in report["moves"]] == [(other, hosting)], report
    for n in cluster.alive():
        wait_for(f"{CHAIN} ACTIVE on {hosting} on {n}", lambda kk=n.karaf: active_on(kk, hosting), timeout=30,
                 interval=0.5)
        assert not metron_servers(n.karaf)[hosting]["drained"], metron_servers(n.karaf)[hosting]
    assert len(chain_cores(k, hosting)) == 1 and chain_cores(k, other) == [], metron_servers(k)
    assert not doubles(k, SW1) and not doubles(k, SW2), "a switch rule installed twice"
    cluster.net.assert_traffic("after the undrain with moveBack")


# --------------------------------------------------------------------------------------------- storage member killed
PARTITION_EVENT = re.compile(r"RaftServer\{([a-z]+-partition-\d+)\} - (?:Transitioning to (LEADER)|Found leader (\S+))")


def partition_leaders(cluster, since=0.0):
    """{partition: storage member leading it} as the storage members' logs last told it since `since` (a member's
    "Transitioning to LEADER", a follower's "Found leader <id>", the latest line winning)."""
    events = sorted((kr.log_stamp(line), m.id, line) for m in cluster.storage if m.log_file.exists()
                    for line in m.log_file.read_text(errors="replace").splitlines()
                    if PARTITION_EVENT.search(line) and (kr.log_stamp(line) or 0) >= since)
    leaders = {}
    for _, member, line in events:
        partition, became, found = PARTITION_EVENT.search(line).groups()
        leaders[partition] = member if became else found
    return leaders


def leader_known_ms(cluster, partition, t0):
    """Ms after t0 at which a live storage member first logged a leader of partition (itself or another)."""
    stamps = [t for m in cluster.storage if not m.killed for t, line in log_lines(m, PARTITION_EVENT.pattern, t0)
              if PARTITION_EVENT.search(line).group(1) == partition]
    return round((min(stamps) - t0) * 1000) if stamps else None


class StatusPoll:
    """GETs of paths on each node, back to back on a thread per node, until stop(): each answer's status and time."""

    def __init__(self, nodes, paths):
        self.answers = []  # (epoch seconds, node id, path, status)
        self.running = True
        self.threads = [threading.Thread(target=self._poll, args=(n, paths), daemon=True) for n in nodes]
        for t in self.threads:
            t.start()

    def _poll(self, node, paths):
        while self.running:
            for path in paths:
                try:
                    status = node.karaf.http("GET", path, timeout=20)[0]
                except Exception:  # noqa: BLE001 (no answer at all is recorded as such)
                    status = "no answer"
                self.answers.append((time.time(), node.id, path, status))
            time.sleep(0.05)

    def stop(self):
        self.running = False
        for t in self.threads:
            t.join(timeout=30)
        return self

    @property
    def statuses(self):
        return {a[3] for a in self.answers}

    def summary(self, t0):
        counts = {st: sum(1 for a in self.answers if a[3] == st) for st in self.statuses}
        late = [round((a[0] - t0) * 1000) for a in self.answers if a[3] == 503]
        return f"{counts}" + (f"; 503 at {min(late)}..{max(late)} ms" if late else "")


STORAGE_STREAM_S = 20  # traffic across a storage member's kill and its partitions' elections


def test_a_storage_member_killed_leaves_the_chain_active_and_the_cluster_working(cluster, servers):
    """The Atomix storage member leading the most Raft partitions SIGKILLed while packets stream through the chain
    (ONOS 2.7 keeps its state in a separate Atomix cluster; one of its three members lost is a failure of its own,
    the one that re-elects partitions). The other two elect new leaders for its partitions; meanwhile the chain stays
    ACTIVE on every node, its traffic flows (the data plane never asks the store), nothing is redeployed, no node
    loses the chain. Once the partitions have leaders the cluster works on two members: a drain sent to a node that
    does not own the chain is moved through its owner and back. The member, started again on its Raft data, rejoins.
    Printed: how long each of its partitions had no leader, from the members' logs."""
    k = cluster.alive()[0].karaf
    leaders = partition_leaders(cluster)
    assert leaders and set(leaders.values()) <= {m.id for m in cluster.storage}, leaders
    victim = max(cluster.storage, key=lambda m: sum(1 for v in leaders.values() if v == m.id))
    led = sorted(p for p, v in leaders.items() if v == victim.id)
    before_cores = {s: chain_cores(k, s) for s in cluster.chain_servers}
    before_rules = (rules(k, SW1), rules(k, SW2))
    stream = Stream(cluster.net, "storage-kill", seconds=STORAGE_STREAM_S)
    reads = StatusPoll(cluster.alive(), [f"/onos/metron/chains/{CHAIN}", "/onos/metron/placements"])
    time.sleep(STREAM_LEAD_S)
    offsets = {n.id: n.karaf.log_file.stat().st_size for n in cluster.alive()}
    victim.kill()
    t0 = time.time()
    try:
        storage_member_killed(cluster, k, victim, led, t0, stream, reads, before_cores, before_rules)
        # Atomix logs "Failed to handle event" when a listener of the stand-in throws on its event thread: a
        # leadership or mastership change that was never told (session 30: a candidate Atomix listed once per
        # session made the stand-in's MastershipInfo throw; role changes were lost and a drain was refused)
        for n in cluster.alive():
            lost = [line for line in log_since(n, offsets[n.id]).splitlines()
                    if "Failed to handle event" in line or "telling the change of" in line]
            assert not lost, f"{n} lost cluster events across the kill: {lost[:3]}"
    finally:
        # the member comes back whatever failed, so the tests after this one run on three storage members
        t1 = time.time()
        victim.launch(cr.CLUSTER_ID, cluster.storage)
        victim.wait_started()
        print(f"storage member {victim} rejoined in {time.time() - t1:.1f} s; leaders now {partition_leaders(cluster)}")


def storage_member_killed(cluster, k, victim, led, t0, stream, reads, before_cores, before_rules):
    """The storage-member test's checks from the kill (t0) until the drain moved and back; the member still dead."""
    def reelected():
        now = partition_leaders(cluster, since=t0)
        return all(now.get(p) not in (None, victim.id) for p in led) and now
    now = wait_for(f"new leaders of {led} (led by the killed {victim})", reelected, timeout=60, interval=0.5)
    times = {p: leader_known_ms(cluster, p, t0) for p in led}
    print(f"storage member {victim} (led {led}) killed: new leaders {({p: now[p] for p in led})} after {times} ms")
    time.sleep(2)
    answers = reads.stop()
    print(f"Metron's REST reads on every node across the kill (status: count; 503 first..last ms after the kill): "
          f"{answers.summary(t0)}")
    # the store not answering is said as such (503 with Retry-After, StorageExceptionMapper), never a 500
    assert set(answers.statuses) <= {200, 503}, answers.summary(t0)
    for n in cluster.alive():
        wait_for(f"{CHAIN} ACTIVE on {n}", lambda kk=n.karaf: (c := chain_on(kk)) and c["state"] == "ACTIVE",
                 timeout=30, interval=0.5)
    time.sleep(3)  # whatever a node would redeploy, give it time to show
    assert {s: chain_cores(k, s) for s in cluster.chain_servers} == before_cores, "the pipeline was redeployed"
    assert (rules(k, SW1), rules(k, SW2)) == before_rules, "the switch rules changed"
    seen = stream.finish()
    print(f"traffic across the kill of storage member {victim}: "
          f"{json.dumps({x: v for x, v in seen.items() if x != 'verdicts'})}")
    assert seen["verdicts_ok"], seen["verdicts"]
    assert seen["lost"] <= NODE_KILL_LOSS_BOUND, f"{seen['lost']} of {seen['sent']} packets lost across the kill"

    acting = wait_for(f"a node acting for {CHAIN}", lambda: leader(cluster), timeout=30, interval=0.5)
    others = [n for n in cluster.alive() if n.id != acting]
    drain_and_back(cluster, acting, others[0], others[-1])


PAUSE_S = 10  # a stopped node: past the 2.5 s session timeout and the survivors' next keep-alives


def test_a_node_paused_past_its_session_knows_once_resumed_that_it_lost_the_chain(cluster, servers):
    """The node acting for the chain SIGSTOPped for PAUSE_S (a long GC pause, a partition: longer than ONOS's 2.5 s
    leadership session) and resumed. Meanwhile its sessions expire: another node owns the chain and masters what it
    mastered. Once resumed it is told none of that by the elector (events of an expired session are lost); ONOS's
    DistributedLeadershipStore then tells SERVICE_RESTORED with every leadership read afresh, and the node must act
    on what it lost: it names the survivors' device masters, and a drain POSTed to it is run by the chain's new
    owner, not by itself. Found at load 22 with a live node whose keep-alives came late: it kept itself the owner for
    minutes, ran a drain itself and was refused (the stand-in's elector view was never refreshed)."""
    acting = leader(cluster)
    assert acting, f"no node leads {TOPIC}"
    paused = next(n for n in cluster.nodes if n.id == acting)
    others = [n for n in cluster.alive() if n is not paused]
    # the devices it masters go to other nodes first (ONOS's REST relinquish): a master stopped past its session
    # finds its switch connections dropped by Open vSwitch (inactivity probe) when it resumes, and ONOS's
    # DeviceManager marks a device offline on a disconnect while its cached role still says MASTER, which the device
    # store takes (the stale master's term is the newest written) and nothing marks online again until the next
    # mastership change (seen in this test: s1 unavailable on every node after the resume). That is ONOS's device
    # store, not the leadership view this test is about.
    for d in [d for d, m in masters(others[0].karaf, cluster.devices).items() if m == acting]:
        status, body = paused.karaf.http("GET", f"/onos/v1/mastership/{d}/relinquish")
        assert status == 201, (d, status, body)  # ONOS's MastershipWebResource answers 201 Created
    wait_for(f"no device mastered by {acting}", lambda: acting not in masters(others[0].karaf, cluster.devices)
             .values(), timeout=30, interval=0.5)
    t0 = time.time()
    os.killpg(paused.karaf.process.pid, signal.SIGSTOP)
    try:
        new = wait_for(f"a node other than {acting} acting for {CHAIN} (read on {others[0]})",
                       lambda: (l := leaderboard(others[0].karaf).get(TOPIC)) not in (None, "none", acting) and l,
                       timeout=60, interval=0.5)
        time.sleep(max(0.0, PAUSE_S - (time.time() - t0)))
    finally:
        os.killpg(paused.karaf.process.pid, signal.SIGCONT)
    print(f"{paused} stopped {time.time() - t0:.1f} s: {new} acts for {CHAIN}")
    wait_for(f"{paused} naming the survivors' device masters", lambda: masters(paused.karaf, cluster.devices) ==
             masters(others[0].karaf, cluster.devices), timeout=60, interval=1)
    # (its masters view may match before its elector has reconnected: the restore is waited for, not read once)
    restored = wait_until(lambda: log_lines(paused, r"the elector is connected again", t0), timeout=30, interval=0.5)
    print(f"{paused} resumed: {[l[-120:] for _, l in restored or []]}")
    assert restored, f"{paused}'s elector sessions were not found suspended and restored: the pause tested nothing"
    assert leaderboard(paused.karaf).get(TOPIC) == new, leaderboard(paused.karaf)
    for n in cluster.alive():
        wait_for(f"every device available on {n}", lambda kk=n.karaf: all(
            (d := device(kk, x)) and d["available"] for x in cluster.devices), timeout=30, interval=0.5)
    drain_and_back(cluster, new, paused, paused)
    for n in cluster.alive():
        assert chain_on(n.karaf)["state"] == "ACTIVE", (n.id, chain_on(n.karaf))


def test_an_agent_killed_while_the_cluster_runs_is_handled_exactly_once_and_probed_by_one_node(cluster, servers):
    k = cluster.alive()[0].karaf
    # while all nodes run (the killed one rejoins later): each agent is asked for liveness by its master only
    assert_only_masters_probe(cluster, servers, k)
    cores = {s: chain_cores(k, s) for s in cluster.chain_servers}
    hosting = next((s for s, c in cores.items() if c), None)
    assert hosting, f"the chain runs on no agent: {cores}"
    other = next(s for s in cluster.chain_servers if s != hosting)
    agent = next(a for a in servers if f"metron:{a.address}" == hosting)
    roles = {"master": masters(k, [hosting])[hosting], "owner": leader(cluster)}
    t0 = time.time()
    agent.kill()

    seen = seen_on_every_node(cluster.alive(), lambda kk: active_on(kk, other), t0, timeout=90)
    if None in seen.values():
        write_result("agent_failover_ms", None, 3000, note=f"{CHAIN} not ACTIVE on {other} within 90 s on "
                     f"{[n for n, v in seen.items() if v is None]}")
        raise AssertionError(f"{CHAIN} not ACTIVE on {other} within 90 s: {seen}")
    ms = max(answered for answered, _ in seen.values())
    print(f"agent of {hosting} killed: {CHAIN} ACTIVE on {other} after {ms:.0f} ms (read on every node; per node, "
          f"the answer that showed it and when its questions were sent: {seen})")
    time.sleep(3)  # a second node handling it would show by now
    steps = failover_breakdown(cluster, roles, hosting, t0)
    print("failover breakdown (ms after the kill, from karaf.log):\n" + "\n".join(
        f"  {t if t is not None else '-':>6}  {n}  {w}" for w, n, t, _ in steps))
    # the owner's own account of the move after the deadline (switch rules, store round, what was readied when)
    account = re.search(r"\(.*\)\s*$", steps[-1][3])
    # the figure is the owner's own account of the moment the chain ran ACTIVE on the other server (its karaf.log:
    # switch rules in place, records written, on the clock of the kill); the REST reads that saw it on every node,
    # polled back to back, lag by what a read costs on the loaded machine (0.5-1.1 s at load 15-26) and are in the note
    moved = steps[-1][2]
    write_result("agent_failover_ms", moved if moved is not None else ms, 3000,
                 note=("ACTIVE on the other server by the owner's karaf.log" if moved is not None else
                       "the owner logged no move: time the test saw it ACTIVE on every node") + "; "
                 + "; ".join(f"{w} ({n}) {t} ms" for w, n, t, _ in steps if t is not None)
                 + (f"; the move: {account.group(0)}" if account else "")
                 + "; seen ACTIVE on the other server, per node (ms after the kill, each node polled on its own "
                   "thread, back to back): " + ", ".join(f"{n} answered {a:.0f} (asked at {q:.0f})"
                                                          for n, (a, q) in seen.items()))
    # handled exactly once: the device's master found the agent dead first (the node it hands the role to when it
    # gives it up, as ONOS's DeviceManager does on a disconnect, probes once and finds it dead too); the chain's
    # owner alone moved the chain
    noticed = nodes_logging(cluster, rf"Metron server {re.escape(hosting)} is unreachable", t0)
    movers = nodes_logging(cluster, rf"Chain {CHAIN} moved off lost server", t0)
    print(f"agent death noticed by {sorted(noticed, key=lambda n: noticed[n][0][0])}, chain moved by {list(movers)}")
    assert noticed and min(noticed, key=lambda n: noticed[n][0][0]) == roles["master"], (
        f"the agent's death was not noticed first by the device's master {roles['master']}: {noticed}")
    assert list(movers) == [roles["owner"]], f"not moved by the owner {roles['owner']} alone: {movers}"
    assert all(len(v) == 1 for v in movers.values()), movers
    assert len(chain_cores(k, other)) == 1, f"not exactly one pipeline on {other}: {metron_servers(k)[other]}"
    assert rules(k, SW1) and not doubles(k, SW1) and not doubles(k, SW2), "a switch rule installed twice"
    for kk in alive(cluster):
        assert (rules(kk, SW1), rules(kk, SW2)) == (rules(k, SW1), rules(k, SW2))
    after_failover = (rules(k, SW1), rules(k, SW2))
    cluster.net.assert_traffic("after the agent failover")

    # the agent returns where it served: its device is available again on every node and probed by its master
    # alone; the chain runs on where it moved (nothing of it goes back, nothing is deployed twice)
    t1 = time.time()
    servers[servers.index(agent)] = agent.restart()
    for n in cluster.alive():
        wait_for(f"{hosting} available again on {n}", lambda kk=n.karaf: (d := device(kk, hosting)) and d["available"],
                 timeout=30, interval=0.1)
    print(f"agent of {hosting} back: its device available on every node after {time.time() - t1:.1f} s")
    time.sleep(2)
    assert_only_masters_probe(cluster, servers, k)
    assert chain_cores(k, hosting) == [], f"the chain was deployed on the returned agent: {metron_servers(k)}"
    assert len(chain_cores(k, other)) == 1, metron_servers(k)[other]
    assert (rules(k, SW1), rules(k, SW2)) == after_failover, "the switch rules changed when the agent returned"
    again = nodes_logging(cluster, rf"Chain {CHAIN} (placed on|restored|moved off)", t1)
    assert not again, f"the chain was handled again when its old agent returned: {again}"
    for kk in alive(cluster):
        assert chain_on(kk)["state"] == "ACTIVE"
    # against its goal in bench/results (ratio to 3000 ms); what fails here is a failover as slow as before the
    # drivers watched the agent's channel (25-37 s)
    assert ms <= FAILOVER_BOUND_MS, f"agent failover took {ms:.0f} ms (bound {FAILOVER_BOUND_MS}, goal 3000)"


# --------------------------------------------------------------------------------------------------- node killed
STREAM_S, STREAM_LEAD_S = 14, 3  # traffic across a node's kill: its length, and how long before the kill it starts
NODE_KILL_LOSS_BOUND = 0  # the switches and agents keep forwarding whatever the controllers do


def write_traffic_result(name, seen, victim):
    RESULTS.mkdir(parents=True, exist_ok=True)
    doc = {"name": name, "value": seen["lost"], "unit": "packets", "sent": seen["sent"],
           "lost_between_s": seen["lost_between_s"], "tcpdump_dropped": seen["tcpdump_dropped"],
           "note": f"allowed packets of the chain sent at a fixed rate from {STREAM_LEAD_S} s before SIGKILL of "
                   f"{victim} (acting for the chain) until {STREAM_S - STREAM_LEAD_S} s after", "machine": machine()}
    (RESULTS / f"{name}.json").write_text(json.dumps(doc) + "\n")
def test_killing_the_node_acting_for_the_chain_leaves_it_active_and_another_node_takes_over(cluster, servers):
    acting = leader(cluster)
    assert acting, f"no node leads {TOPIC}:\n{cluster.nodes[0].karaf.ssh('onos:leaders', check=False)}"
    victim = next(n for n in cluster.nodes if n.id == acting)
    survivors = [n for n in cluster.nodes if n is not victim]
    k = survivors[0].karaf
    before_cores = {s: chain_cores(k, s) for s in cluster.chain_servers}
    before_rules = (rules(k, SW1), rules(k, SW2))
    # real packets through the chain from STREAM_LEAD_S before the kill until well after the takeover
    stream = Stream(cluster.net, "node-kill", seconds=STREAM_S)
    time.sleep(STREAM_LEAD_S)
    victim.kill()
    t0 = time.time()
    mastered = [d for d, m in masters(k, cluster.devices).items() if m == victim.id]

    def mastered_by_survivors():
        return all(m in {n.id for n in survivors} for m in masters(k, cluster.devices).values())
    wait_for(f"the devices {victim} mastered ({mastered}) mastered by the survivors", mastered_by_survivors,
             timeout=30, interval=0.1)
    print(f"{victim} killed: every device has a live master after {(time.time() - t0) * 1000:.0f} ms "
          f"({victim} mastered {mastered or 'none'}; Atomix expires a dead node's candidacies with its session)")

    def taken_over():
        new = leader(cluster)
        return new and new != acting and all((c := chain_on(n.karaf)) and c["state"] == "ACTIVE"
                                             for n in survivors) and new
    failure = None
    try:
        new = wait_for(f"another node acting for {CHAIN}", taken_over, timeout=TAKEOVER_WAIT_S, interval=0.1)
        ms = (time.time() - t0) * 1000
        print(f"{victim} killed: {new} acts for {CHAIN} after {ms:.0f} ms")
    except AssertionError as e:
        ms = (time.time() - t0) * 1000
        board = {str(n): {t: v for t, v in leaderboard(n.karaf, full=True).items() if t == TOPIC} for n in survivors}
        failure = (f"{e}\nno node acts for {CHAIN} {ms:.0f} ms after {victim} (its only candidate) died; "
                   f"leaderships of {TOPIC} on the survivors: {json.dumps(board)}")
    if failure:
        write_result("cluster_takeover_ms", None, 5000,
                     note=f"no takeover: no node led {TOPIC} within {TAKEOVER_WAIT_S} s of {victim}'s kill")
    else:
        steps = takeover_breakdown(cluster, victim, new, t0)
        print("takeover breakdown (ms after the kill, from karaf.log):\n" + "\n".join(
            f"  {t:>6}  {n}  {w}" for w, n, t in steps))
        done = next((t for w, n, t in steps if w == TAKEOVER_DONE and n == new), None)
        # the figure is the new owner's own account (its karaf.log, ms stamps on the same clock as the kill); the
        # test's view of it (SSH onos:leaders, REST, polled one after another) lags by what those reads cost
        write_result("cluster_takeover_ms", done if done is not None else ms, 5000,
                     note=("new owner done, from its karaf.log" if done is not None else
                           "the new owner logged no reconcile: time the test saw the new leader")
                     + f"; seen by the test (onos:leaders over SSH, REST) at {ms:.0f} ms; "
                     + "; ".join(f"{w} ({n}) {t} ms" for w, n, t in steps))
    # what must hold whoever acts: the chain stays ACTIVE and readable on the survivors, nothing is redeployed
    time.sleep(3)  # whatever a new owner would redeploy, give it time to show
    assert {s: chain_cores(k, s) for s in cluster.chain_servers} == before_cores, "the pipeline was redeployed"
    assert (rules(k, SW1), rules(k, SW2)) == before_rules, "the switch rules changed"
    for n in survivors:
        assert chain_on(n.karaf)["state"] == "ACTIVE", chain_on(n.karaf)
    # the switches: the dead node's connections gone, a survivor their master; they kept every flow; the packets
    # sent across the kill (the data plane never depends on a controller node) arrived
    assert_switch_roles(cluster, k)
    assert_ovs_holds_the_rules(cluster, k)
    seen = stream.finish()
    print(f"traffic across the kill of {victim} (at {STREAM_LEAD_S} s of {STREAM_S} s, {stream.pps} pps): "
          f"{json.dumps({x: v for x, v in seen.items() if x != 'verdicts'})}\n  " + "\n  ".join(seen["verdicts"]))
    write_traffic_result("cluster_node_kill_packets_lost", seen, victim)
    assert seen["verdicts_ok"], seen["verdicts"]
    assert seen["lost"] <= NODE_KILL_LOSS_BOUND, f"{seen['lost']} of {seen['sent']} packets lost across the kill"
    # the time against its goal is a benchmark figure (bench/results, ratio to 5000 ms), not a pass mark: on the
    # shared 2-CPU machine it varied 2.2-10.9 s with load; no takeover within TAKEOVER_WAIT_S fails above
    assert failure is None, failure


# --------------------------------------------------------------------------------------------------- node rejoins
def rejoin(cluster, victim):
    """Starts the killed node again and waits until it reads the chain and knows every device."""
    t0 = time.time()
    victim.restart()
    print(f"{victim} ready again after {time.time() - t0:.1f} s")
    for attempt in range(3):
        # the harness's boot races, not the cluster's (karaf_runtime.BOOT_RACES; Pax Web's "LoginService has
        # different IdentityService", 3 of 4 restarts in session 35, is gone since tests/karaf/jetty.xml): that boot
        # is given up at once and the node started again
        if wait_until(lambda: chain_on(victim.karaf) or victim.karaf.boot_races(), timeout=90) and chain_on(
                victim.karaf):
            break
        if not victim.karaf.boot_races() or attempt == 2:
            wait_for(f"{CHAIN} readable on {victim}", lambda: chain_on(victim.karaf), timeout=5, interval=1)
        print(f"{victim}: Pax Web did not deploy a web application ({victim.karaf.boot_races()}); killed and "
              f"started again")
        victim.kill()
        victim.restart()
    # every device, from the shared device store
    for did in cluster.devices:
        wait_for(f"{did} known on {victim}", lambda d=did: device(victim.karaf, d), timeout=60)
    print(f"{victim}: chain readable and every device known {time.time() - t0:.1f} s after its restart")


def wait_until(check, timeout, interval=1.0):
    """check()'s first true answer within timeout (an exception counts as no), else None."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            got = check()
        except Exception:  # noqa: BLE001 (a node restarting answers nothing)
            got = None
        if got:
            return got
        time.sleep(interval)
    return None


def test_a_killed_node_that_rejoins_duplicates_nothing(cluster, servers):
    victim = next((n for n in cluster.nodes if n.killed), None)
    if victim is None:
        pytest.skip("no node was killed (the takeover test did not get that far)")
    k = cluster.alive()[0].karaf
    before = {s: chain_cores(k, s) for s in cluster.chain_servers}, rules(k, SW1), rules(k, SW2)
    held = ovs_rules(cluster, k)
    rejoin(cluster, victim)
    time.sleep(5)  # whatever the rejoined node would deploy, give it time to show
    after = {s: chain_cores(k, s) for s in cluster.chain_servers}, rules(k, SW1), rules(k, SW2)
    assert after == before, "the rejoined node changed the deployment"
    assert (rules(victim.karaf, SW1), rules(victim.karaf, SW2)) == before[1:], "the rejoined node reads other rules"
    assert chain_on(victim.karaf)["state"] == chain_on(k)["state"]
    # its application service lists the apps it runs (loaded from its own archive, as ONOS's
    # DistributedApplicationStore does at start), as every other node does
    _, _, answers = cluster.installed
    listed = {a["name"]: a["state"] for a in json.loads(victim.karaf.http("GET", "/onos/v1/applications")[1])[
        "applications"] if a["name"] in answers}
    assert listed == {a: "ACTIVE" for a in answers}, f"the rejoined node lists {listed}"
    # the real switches: the rejoined node connected again (EQUAL), the same flows, each once
    assert_switch_roles(cluster, k)
    assert assert_ovs_holds_the_rules(cluster, victim.karaf) == held, "the switches' flows changed at the rejoin"


# --------------------------------------------------------------------------------------------------- owner killed
# during an agent's failover deadline
def log_since(node, offset):
    """What node's karaf.log gained after byte offset (read as it is written: the test reacts within ~10 ms)."""
    with open(node.karaf.log_file, "rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace")


def test_the_owner_killed_during_an_agent_failover_deadline_leaves_nothing_readied_and_the_chain_moves_once(
        cluster, servers):
    """The agent running the chain SIGKILLed; as soon as the chain's owner has readied the move on the other server
    (its karaf.log: "Chain ... prepared on <other>": pipeline up there, tags claimed, cores held, traffic untouched)
    and before its failover deadline passes, the owner node is SIGKILLed. The next owner takes back what the dead
    one readied (its record in the store) and moves the chain itself: the chain ends ACTIVE on the other server on
    every survivor, one pipeline of it on that agent (the agent's own report of its cores), moved by one node once,
    no move left readied (no core held for it), the chain's tags its placement's alone, no operation journalled, no
    switch rule twice, packets through. The agent and the node are then started again."""
    if len(cluster.alive()) < 3:
        pytest.skip("needs the three nodes (the rejoin test restarts the node the takeover test killed)")
    k = cluster.alive()[0].karaf
    wait_for(f"{CHAIN} ACTIVE", lambda: (c := chain_on(k)) and c["state"] == "ACTIVE", timeout=60)
    owner = None
    for attempt in range(3):
        cores = {s: chain_cores(k, s) for s in cluster.chain_servers}
        hosting = next((s for s, c in cores.items() if c), None)
        assert hosting, f"the chain runs on no agent: {cores}"
        other = next(s for s in cluster.chain_servers if s != hosting)
        agent = next(a for a in servers if f"metron:{a.address}" == hosting)
        acting = leader(cluster)
        assert acting, f"no node leads {TOPIC}"
        owner = next(n for n in cluster.nodes if n.id == acting)
        offset = owner.karaf.log_file.stat().st_size
        readied = f"Chain {CHAIN} prepared on {other} "
        moving = re.compile(rf"Metron server {re.escape(hosting)} unavailable for \d+ ms, moving")
        t0 = time.time()
        agent.kill()
        seen = ""
        while time.time() < t0 + 20 and not seen:
            text = log_since(owner, offset)
            if moving.search(text):
                seen = "moving"  # the deadline passed before the owner logged a readied move
            elif readied in text:
                owner.kill()
                seen = "readied"
            else:
                time.sleep(0.01)
        t_kill = time.time()
        if seen == "readied":
            break
        # not readied in time (a loaded machine): this failover runs its course; the agent back, then again
        print(f"attempt {attempt + 1}: the owner {owner} did not log a readied move before its deadline ({seen!r})")
        wait_for(f"{CHAIN} ACTIVE on {other}", lambda: active_on(k, other), timeout=60, interval=0.5)
        servers[servers.index(agent)] = agent.restart()
        for n in cluster.alive():
            wait_for(f"{hosting} available again on {n}", lambda kk=n.karaf: (d := device(kk, hosting))
                     and d["available"], timeout=30, interval=0.2)
        owner = None
    assert owner is not None and owner.killed, "the owner never readied the move before its failover deadline"
    try:
        text = log_since(owner, offset)
        print(f"agent of {hosting} killed; owner {owner} killed {(t_kill - t0) * 1000:.0f} ms later, after it readied "
              f"the move on {other}: {[l[-140:] for l in text.splitlines() if CHAIN in l or hosting in l][-4:]}")
        assert not moving.search(text) and "moved off lost server" not in text, (
            f"the owner's deadline passed before it was killed: not the case this test is about\n{text[-2000:]}")
        survivors = [n for n in cluster.nodes if not n.killed]
        wait_for(f"{CHAIN} ACTIVE on {other} on every survivor",
                 lambda: all(active_on(n.karaf, other) for n in survivors), timeout=TAKEOVER_WAIT_S + 30, interval=0.2)
        ms = (time.time() - t0) * 1000
        new = leader(cluster)
        print(f"{CHAIN} ACTIVE on {other} on every survivor {ms:.0f} ms after the agent's kill; {new} acts for it")
        time.sleep(3)  # a second deployment, a late call of the dead owner, would show by now
        k = survivors[0].karaf
        # moved by the new owner alone, once, after it took back what the dead owner had readied
        movers = nodes_logging(cluster, rf"Chain {re.escape(CHAIN)} moved off lost server", t0)
        taken = nodes_logging(cluster, rf"Chain {re.escape(CHAIN)}: its move readied on {re.escape(other)} "
                                       r"taken back", t0)
        print(f"moved by {list(movers)}; the readied move taken back by {list(taken)}: "
              f"{[l[-200:] for v in taken.values() for _, l in v]}")
        assert list(movers) == [new] and len(movers[new]) == 1, f"not moved once by the new owner {new}: {movers}"
        assert list(taken) == [new], f"the dead owner's readied move was not taken back by {new}: {taken}"
        # one pipeline of it on the agents (each agent's report of its cores): on the other server, none elsewhere
        for n in survivors:
            assert chain_cores(n.karaf, other) and len(chain_cores(n.karaf, other)) == 1, metron_servers(n.karaf)
            assert chain_cores(n.karaf, hosting, dead=True) == [], metron_servers(n.karaf)
            assert chain_on(n.karaf)["state"] == "ACTIVE", chain_on(n.karaf)
        # nothing claimed for a move: no readied placement, the chain's tags exactly its placement's, on the other
        view = placements_view(k)
        assert view["readied"] == [], f"a move is still readied (its cores held): {view['readied']}"
        placed = next(p for p in view["placements"] if p["chain"] == CHAIN)
        tags = [t for t in json.loads(k.http("GET", "/onos/metron/tags")[1])["tags"] if t["chain"] == CHAIN]
        print(f"placement {json.dumps(placed)[:300]}; tags {tags}")
        as_tag = [json.dumps({x: v for x, v in t.items() if x not in ("server", "nic", "chain", "groupId")},
                             sort_keys=True) for t in tags]
        placed_tags = sorted(json.dumps(g["tag"], sort_keys=True) for g in placed["groups"])
        assert placed_tags == sorted(as_tag), (placed, tags)
        assert all(t["server"] == other for t in tags), tags
        assert not in_progress(k), f"an operation is journalled: {in_progress(k)}"
        # the switches: the chain's rules once, the same on every survivor and in OVS; packets through it
        assert rules(k, SW1) and not doubles(k, SW1) and not doubles(k, SW2), "a switch rule installed twice"
        for n in survivors:
            assert (rules(n.karaf, SW1), rules(n.karaf, SW2)) == (rules(k, SW1), rules(k, SW2))
        assert_ovs_holds_the_rules(cluster, k)
        cluster.net.assert_traffic("after the owner died during the agent's failover deadline")
    finally:
        # back as the next tests want it, whatever happened here: both agents, three nodes
        servers[servers.index(agent)] = agent.restart()
        for n in cluster.alive():
            wait_for(f"{hosting} available again on {n}", lambda kk=n.karaf: (d := device(kk, hosting))
                     and d["available"], timeout=30, interval=0.2)
        rejoin(cluster, owner)


# --------------------------------------------------------------------------------------------------- split
SPLIT_RECOVERY_BOUND_S = 5 + 10  # a takeover's 5 s goal + one agent step's timeout (MetronComponent.STEP_TIMEOUT)


def scaling(k):
    """The chain's scaling view on node k: groups, inProgress (its journalled operation), history. A 503 (the
    cluster store did not answer: a node was just killed, a store partition elects a new leader) is retried after
    its Retry-After, for up to 20 s, as a client does."""
    deadline = time.time() + 20
    while True:
        status, body = k.http("GET", f"/onos/metron/scaling/{CHAIN}", timeout=20)
        if status != 503 or time.time() > deadline:
            break
        print(f"GET scaling on {k}: 503, retried: {body[:200]}")
        time.sleep(2)
    assert status == 200, (status, body)
    return json.loads(body)


def in_progress(k):
    return scaling(k)["inProgress"]


def assert_scaled_consistently(k, servers):
    """The chain as scaling left it, read on node k: ACTIVE; every traffic class (or part of a class divided by a
    source-port bit) in exactly one group; each group's core running the chain on the group's agent and no other
    core of the chain on any agent (no orphan pipeline); no switch rule twice. Answers the groups."""
    assert chain_on(k)["state"] == "ACTIVE", chain_on(k)
    groups = scaling(k)["groups"]
    parts = [(c, g.get("slices", {}).get(str(c), {}).get("text", "whole")) for g in groups for c in g["classes"]]
    assert parts and len(parts) == len(set(parts)), f"a class (part) in two groups: {groups}"
    for a in servers:
        sid = f"metron:{a.address}"
        placed = sorted(g["core"] for g in groups if g["server"] == sid)
        assert chain_cores(k, sid) == placed, (f"{sid} runs the chain on cores {chain_cores(k, sid)}, its groups "
                                                f"there are on {placed}: {groups}")
    assert not doubles(k, SW1) and not doubles(k, SW2), "a switch rule installed twice"
    return [(g["id"], g["server"], g["core"], g["classes"], g.get("slices")) for g in groups]


def test_a_split_interrupted_by_killing_the_acting_node_is_finished_or_rolled_back_by_the_next_owner(cluster,
                                                                                                    servers):
    """The chain's owner splits g0 (the operator's REST, on that node). Every agent has one worker core, so the new
    half goes to the other server (a scale-out): the agent there is stopped (SIGSTOP) first, so the split hangs in
    its first agent call with its operation journalled; the owner node is then SIGKILLed and the agent resumed
    (SIGCONT; the dead node's request may still reach it). The next owner must finish or roll back the operation:
    journal empty, chain ACTIVE, each class on one core, no orphan pipeline, no rule twice; then it scales again."""
    k0 = cluster.alive()[0].karaf
    acting = leader(cluster)
    assert acting, f"no node leads {TOPIC}"
    owner = next(n for n in cluster.nodes if n.id == acting)
    home = scaling(owner.karaf)["groups"][0]["server"]
    far = next(a for a in servers if f"metron:{a.address}" != home)
    before = assert_scaled_consistently(k0, servers)
    rules_before = (rules(k0, SW1), rules(k0, SW2))
    wait_for(f"a load report of {CHAIN} on {owner}", lambda: "load" in json.loads(owner.karaf.http(
        "GET", f"/onos/metron/scaling/{CHAIN}")[1]), timeout=30)
    answer = {}

    def split():
        try:
            answer["reply"] = owner.karaf.http("POST", f"/onos/metron/scaling/{CHAIN}/split?group=g0", timeout=60)
        except Exception as e:  # noqa: BLE001 (the node is killed under the request)
            answer["error"] = repr(e)
    watcher = next(n for n in cluster.alive() if n is not owner).karaf
    op = None
    for attempt in range(3):
        answer.clear()
        os.kill(far.process.pid, signal.SIGSTOP)
        try:
            t = threading.Thread(target=split, daemon=True)
            t.start()
            # the split reads the other server's resources from the cache the load monitor refreshes every second
            # (fresh for 2 s); a cache older than that makes it ask the stopped agent, which answers nothing: the
            # split is then refused after the step timeout with nothing journalled, and tried again
            op = wait_for(f"the split of {CHAIN} journalled (read on another node)", lambda: in_progress(watcher)
                          or (("reply" in answer or "error" in answer) and [answer]), timeout=15, interval=0.05)
            if "reply" not in answer and "error" not in answer:
                print(f"split in flight on {owner}: {json.dumps(op)[:400]}")
                owner.kill()
                t0 = time.time()
                break
        finally:
            os.kill(far.process.pid, signal.SIGCONT)
        print(f"split attempt {attempt + 1} not in flight (answered before the kill): {answer}")
        t.join(timeout=30)
        time.sleep(2)
    assert owner.killed, f"the split was never in flight: {answer}"
    survivors = [n for n in cluster.nodes if not n.killed]

    def recovered():
        return all(not in_progress(n.karaf) and (c := chain_on(n.karaf)) and c["state"] == "ACTIVE"
                   for n in survivors)
    wait_for(f"the journalled split of {CHAIN} finished or rolled back by the next owner", recovered,
             timeout=SPLIT_RECOVERY_BOUND_S + 15, interval=0.2)
    s = time.time() - t0
    new = wait_for(f"another node acting for {CHAIN}", lambda: (l := leader(cluster)) and l != acting and l,
                   timeout=30, interval=0.5)
    history = scaling(survivors[0].karaf)["history"]
    print(f"{owner} killed mid-split: {new} recovered it in {s:.1f} s; last history entry: "
          f"{json.dumps(history[-1:])[:500]}")
    time.sleep(3)  # a late agent call of the dead node (resumed agent) would show by now
    t.join(timeout=5)
    for n in survivors:
        after = assert_scaled_consistently(n.karaf, servers)
    assert history and history[-1]["outcome"] in ("DONE", "ROLLED_BACK"), history[-3:]
    if history[-1]["outcome"] == "ROLLED_BACK":
        assert after == before, f"rolled back, yet the groups are not as before: {before} -> {after}"
        # read on a survivor: the first live node before the kill may be the one killed
        k1 = survivors[0].karaf
        assert (rules(k1, SW1), rules(k1, SW2)) == rules_before, "rolled back, yet the switch rules changed"
    assert s <= SPLIT_RECOVERY_BOUND_S, f"the next owner took {s:.1f} s (bound {SPLIT_RECOVERY_BOUND_S} s)"
    # and the chain scales again, on its new owner
    k = next(n for n in survivors if n.id == new).karaf
    if len(after) == 1:
        status, body = k.http("POST", f"/onos/metron/scaling/{CHAIN}/split?group=g0", timeout=60)
    else:
        status, body = k.http("POST", f"/onos/metron/scaling/{CHAIN}/merge?keep=g0&retire="
                              + next(g[0] for g in after if g[0] != "g0"), timeout=60)
    print("scaling again on the new owner:", status, body[:400])
    assert status == 200 and json.loads(body)["outcome"] == "DONE", (status, body)
    again = assert_scaled_consistently(k, servers)
    assert len(again) != len(after), (after, again)


# --------------------------------------------------------------------------------------------------- delete
def test_a_delete_on_one_node_during_a_failure_stays_deleted_on_all(cluster, servers):
    """Every agent dead (no server left for the chain), the operator deletes it on one node: the answer says so,
    and no node ever shows the chain ACTIVE again."""
    k = cluster.alive()[-1].karaf
    ours = {d: {int(f["id"]) for f in metron_flows(k, d)} for d in (SW1, SW2)}
    for a in servers:
        a.kill()
    status, body = k.http("DELETE", f"/onos/metron/chains/{CHAIN}")
    print(f"DELETE on {cluster.alive()[-1]} with every agent dead:", status, body[:400])
    assert status != 421, (f"the operator's DELETE on {cluster.alive()[-1]} was refused ({status} {body}): another "
                           f"node acts for the chain and nothing was recorded; states now: "
                           f"{[(chain_on(kk) or {}).get('state') for kk in alive(cluster)]}")
    deadline = time.time() + 15
    seen = set()
    while time.time() < deadline:
        for kk in alive(cluster):
            c = chain_on(kk)
            seen.add(c["state"] if c else "gone")
            assert not c or c["state"] != "ACTIVE", f"the deleted chain is ACTIVE again on a node: {c}"
        time.sleep(0.5)
    print("states seen after the delete:", sorted(seen))
    assert status in (200, 202, 204), f"DELETE answered {status}: {body}"
    # the switches are reachable: none of the chain's rules is left on them (ovs-ofctl dump-flows)
    left = {d: sorted(set(c) & ours[d]) for d, c in ovs_rules(cluster, k).items()}
    print(f"the chain's flows ({ {d: len(v) for d, v in ours.items()} }) left on the switches after the delete: {left}")
    assert not any(left.values()), f"the deleted chain's rules are still on the switches: {left}"

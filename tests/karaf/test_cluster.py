"""Metron on a 3-node cluster: three real Karaf 4.2.9 nodes, each in its own network namespace, whose ONOS Cluster,
Leadership, Mastership and Storage services are backed by a real Atomix 3.1.9 cluster (one member embedded in each
node, Raft management group + Raft partition group over the three).

Real: Karaf, Felix, Jetty; ONOS 2.7.0's Central bundles (onos-api, core-common, core-serializers, cli, rest);
Atomix 3.1.9's own bundles from Central (as ONOS installs them), its membership, Raft partitions, LeaderElector and
AtomicMap primitives, spoken over TCP between the namespaces; the Metron .oar files, installed once through ONOS's
REST on one node; real metron-agents (DPDK null vdevs) reached over gRPC from every node.
Stood in for (tests/karaf/onos-standin, Central does not serve them): ONOS's core services on top of Atomix. The
stand-in's ClusterService reads Atomix membership; LeadershipService and MastershipService are elections on Atomix
LeaderElectors (a device's master is its election's leader; a dead node's candidacies go when its Raft session
expires); ConsistentMaps are Atomix AtomicMaps; apps, network config and flow tables are shared through Atomix maps
(the device and link stores are shared as ONOS's GossipDeviceStore/GossipLinkStore share theirs: a device's master
writes what it accepted, every node applies it and posts the DeviceEvents; ONOS keeps flow entries with a device's
master, here every node reads one shared flow table per device). ONOS's own
failure detector (Phi accrual over its messaging) is Atomix's membership here. There is no OpenFlow switch (the
switches of netcfg are the stand-in's NetcfgSwitchProvider; their rules are recorded) and no OVS.

Measured (bench/results): cluster_takeover_ms (the node acting for a chain killed -> another node acts for it and
the chain is ACTIVE on the survivors; goal 5000) and agent_failover_ms (the agent running a chain killed -> the
chain ACTIVE on the other server, read on every node; goal 3000).
Status on the merged code (main's app and drivers, the shared device/link stores): see tests/karaf/README.md
"Status"; nothing is marked xfail.
"""
import json
import os
import time
from pathlib import Path

import pytest

import cluster_runtime as cr
import karaf_runtime as kr
from conftest import BOOT_FEATURES, STANDIN_JAR, Agent, install_order
from test_karaf import (APP, SW1, SW2, chain_json, device, metron_flows, metron_servers, scr_components,
                        switch_netcfg, wait_for)

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
def servers(cluster):
    """Two quiet agents (one worker core each) on the bridge's address, reachable from every namespace."""
    agents = [Agent("net_null0,no-rx=1", ("--lcores", "0@0,1@1"), host=cluster.gateway) for _ in range(2)]
    yield agents
    for a in agents:
        a.close()


def alive(cluster):
    return [n.karaf for n in cluster.alive()]


def chain_on(k):
    status, body = k.http("GET", f"/onos/metron/chains/{CHAIN}", timeout=20)
    return json.loads(body) if status == 200 else None


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


def chain_cores(k, server):
    return sorted(c["id"] for c in metron_servers(k).get(server, {}).get("cores", []) if c["chain"] == CHAIN)


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


# --------------------------------------------------------------------------------------------------- a chain
def test_a_chain_submitted_on_one_node_is_deployed_once_and_readable_on_all(cluster, servers):
    first, second = cluster.nodes[0].karaf, cluster.nodes[1].karaf
    ids = [f"metron:{a.address}" for a in servers]
    cfg = switch_netcfg(*ids)
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


# --------------------------------------------------------------------------------------------------- node killed
def test_killing_the_node_acting_for_the_chain_leaves_it_active_and_another_node_takes_over(cluster, servers):
    acting = leader(cluster)
    assert acting, f"no node leads {TOPIC}:\n{cluster.nodes[0].karaf.ssh('onos:leaders', check=False)}"
    victim = next(n for n in cluster.nodes if n.id == acting)
    survivors = [n for n in cluster.nodes if n is not victim]
    k = survivors[0].karaf
    before_cores = {s: chain_cores(k, s) for s in cluster.chain_servers}
    before_rules = (rules(k, SW1), rules(k, SW2))
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
    write_result("cluster_takeover_ms", None if failure else ms, 5000,
                 note=failure and f"no takeover: no node led {TOPIC} within {TAKEOVER_WAIT_S} s of {victim}'s kill")
    # what must hold whoever acts: the chain stays ACTIVE and readable on the survivors, nothing is redeployed
    time.sleep(3)  # whatever a new owner would redeploy, give it time to show
    assert {s: chain_cores(k, s) for s in cluster.chain_servers} == before_cores, "the pipeline was redeployed"
    assert (rules(k, SW1), rules(k, SW2)) == before_rules, "the switch rules changed"
    for n in survivors:
        assert chain_on(n.karaf)["state"] == "ACTIVE", chain_on(n.karaf)
    # the time against its goal is a benchmark figure (bench/results, ratio to 5000 ms), not a pass mark: on the
    # shared 2-CPU machine it varied 2.2-10.9 s with load; no takeover within TAKEOVER_WAIT_S fails above
    assert failure is None, failure


# --------------------------------------------------------------------------------------------------- agent killed
def test_an_agent_killed_while_the_cluster_runs_is_handled_exactly_once(cluster, servers):
    k = cluster.alive()[0].karaf
    cores = {s: chain_cores(k, s) for s in cluster.chain_servers}
    hosting = next((s for s, c in cores.items() if c), None)
    assert hosting, f"the chain runs on no agent: {cores}"
    other = next(s for s in cluster.chain_servers if s != hosting)
    agent = next(a for a in servers if f"metron:{a.address}" == hosting)
    agent.kill()
    t0 = time.time()

    def moved():
        for kk in alive(cluster):
            c = chain_on(kk)
            if not c or c.get("state") != "ACTIVE" or other not in json.dumps(
                    json.loads(kk.http("GET", "/onos/metron/placements")[1])):
                return False
        return True
    try:
        wait_for(f"{CHAIN} ACTIVE on {other}", moved, timeout=90, interval=0.1)
    except AssertionError:
        write_result("agent_failover_ms", None, 3000, note=f"{CHAIN} not ACTIVE on {other} within 90 s")
        raise
    ms = (time.time() - t0) * 1000
    print(f"agent of {hosting} killed: {CHAIN} ACTIVE on {other} after {ms:.0f} ms")
    write_result("agent_failover_ms", ms, 3000)
    time.sleep(3)  # a second node handling it would show by now
    assert len(chain_cores(k, other)) == 1, f"not exactly one pipeline on {other}: {metron_servers(k)[other]}"
    assert rules(k, SW1) and not doubles(k, SW1), "a switch rule installed twice after the failover"
    for kk in alive(cluster):
        assert (rules(kk, SW1), rules(kk, SW2)) == (rules(k, SW1), rules(k, SW2))
    # against its goal in bench/results (ratio to 3000 ms: 2.8-5.1 s measured at load 11-15); what fails here is
    # a failover as slow as before the drivers watched the agent's channel (25-37 s)
    assert ms <= FAILOVER_BOUND_MS, f"agent failover took {ms:.0f} ms (bound {FAILOVER_BOUND_MS}, goal 3000)"


# --------------------------------------------------------------------------------------------------- node rejoins
def test_a_killed_node_that_rejoins_duplicates_nothing(cluster, servers):
    victim = next((n for n in cluster.nodes if n.killed), None)
    if victim is None:
        pytest.skip("no node was killed (the takeover test did not get that far)")
    k = cluster.alive()[0].karaf
    before = {s: chain_cores(k, s) for s in cluster.chain_servers}, rules(k, SW1), rules(k, SW2)
    t0 = time.time()
    victim.restart()
    print(f"{victim} ready again after {time.time() - t0:.1f} s")
    try:
        wait_for(f"{CHAIN} readable on {victim}", lambda: chain_on(victim.karaf), timeout=90, interval=1)
    except AssertionError:
        # the harness's boot race, not the cluster's: Pax Web failed to deploy Metron's web app on the restarted
        # node ("Error deploying web application ... LoginService has different IdentityService", seen in 1 of 3
        # runs): that node is started once more
        if "Error deploying web application" not in victim.karaf.log_file.read_text(errors="replace"):
            raise
        print(f"{victim}: Pax Web did not deploy a web application; killed and started once more")
        victim.kill()
        victim.restart()
        wait_for(f"{CHAIN} readable on {victim}", lambda: chain_on(victim.karaf), timeout=120, interval=1)
    # every device, a server whose agent died before the node rejoined too: the device store is shared
    for did in cluster.devices:
        wait_for(f"{did} known on {victim}", lambda d=did: device(victim.karaf, d), timeout=60)
    print(f"{victim}: chain readable and every device known {time.time() - t0:.1f} s after its restart")
    time.sleep(5)  # whatever the rejoined node would deploy, give it time to show
    after = {s: chain_cores(k, s) for s in cluster.chain_servers}, rules(k, SW1), rules(k, SW2)
    assert after == before, "the rejoined node changed the deployment"
    assert (rules(victim.karaf, SW1), rules(victim.karaf, SW2)) == before[1:], "the rejoined node reads other rules"
    assert chain_on(victim.karaf)["state"] == chain_on(k)["state"]


# --------------------------------------------------------------------------------------------------- delete
def test_a_delete_on_one_node_during_a_failure_stays_deleted_on_all(cluster, servers):
    """Every agent dead (no server left for the chain), the operator deletes it on one node: the answer says so,
    and no node ever shows the chain ACTIVE again."""
    for a in servers:
        a.kill()
    k = cluster.alive()[-1].karaf
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

"""Three Karaf nodes (karaf_runtime.Karaf) forming one ONOS-like cluster on an Atomix 3.1.9 storage cluster of three
members, each node and member in its own network namespace, for tests/karaf/test_cluster.py. As root (ip netns).

This is how ONOS 2.7 runs as a cluster: its nodes are Atomix members that hold no partition, and the cluster's Raft
partitions are held by separate Atomix members (atomix-agent in ONOS's deployments; here
tests/karaf/atomix-storage's AtomixStorageMember on Central's io.atomix:atomix 3.1.9) that each node's cluster.json
names as "storage". ONOS 2.7 nodes without storage nodes do not form a multi-node cluster (measured,
../shared/notes/onos-runtime.md "Clustering"), so an ONOS node's death never takes a Raft server with it; a storage
member's death is a failure of its own.

Network: a Linux bridge in the root namespace with address <subnet>.254 (the test and the agents use it); node i
lives in namespace `mc<tag>-<i>` on a veth into the bridge with <subnet>.<i+1>, storage member i in `mc<tag>-a<i>`
with <subnet>.<i+11>. Each namespace's `lo` also carries the resolver's address from /etc/resolv.conf, so a DNS
lookup fails at once instead of timing out: Netty and Atomix resolve peer addresses on their event loops, and a
10 s reverse lookup per peer keeps SWIM membership from ever converging (../shared/notes/onos-runtime.md,
"Clustering"). Nothing is routed out of the namespaces, so Karaf's resolver there cannot reach Maven Central:
`warm_cache` first boots one Karaf in the root namespace, with the project's apps installed, to fill the cache
(~/.cache/metron/karaf/m2) with every bundle (Atomix's included).

Each node's etc/metron-cluster.json names it, the three nodes and the three storage members (the stand-in's
counterpart of ONOS's cluster.json; org.metron.standin.cluster.AtomixNode joins with it). `Cluster.close()` kills
every Karaf, storage member and agent it started and deletes every namespace, veth and bridge it made, whatever
happened before.
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import karaf_runtime as kr

ATOMIX_PORT = 9876  # an ONOS node's (cluster.json "node" port)
STORAGE_PORT = 5679  # an atomix-agent's, as ONOS's deployment tools configure it
HEAP = os.environ.get("METRON_CLUSTER_HEAP", "512M")
STORAGE_HEAP = "256M"
CLUSTER_ID = "metron-test"
STORAGE_DIR = kr.ROOT / "tests" / "karaf" / "atomix-storage" / "target"
STORAGE_START_S = 180  # three members electing their partitions' leaders on a loaded 2-CPU machine: ~16 s idle


def sh(*cmd, check=True):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stdout}")
    return r.stdout


def resolvers():
    """The nameserver addresses of /etc/resolv.conf (IPv4 only)."""
    out = []
    for line in Path("/etc/resolv.conf").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "nameserver" and parts[1].count(".") == 3:
            out.append(parts[1])
    return out


def warm_cache(boot_features, system_artifacts, oars):
    """Fills Karaf's resolver cache once per set of features (the boot features and the apps' features): a root
    namespace Karaf (it can reach Central) boots and installs the apps, then stops. Skipped when the marker of the
    same inputs is there."""
    h = hashlib.sha256(kr.FEATURES_XML.read_bytes())
    for o in oars:
        h.update(o.name.encode())
        h.update(",".join(o.features).encode())
    marker = kr.CACHE / "m2" / f".cluster-warm-{h.hexdigest()[:16]}"
    if marker.exists():
        return
    k = kr.Karaf(Path(tempfile.mkdtemp(prefix="hk-cluster-warm-")))
    try:
        k.assemble(boot_features, system_artifacts)
        k.start(max_mem=HEAP)
        for o in oars:
            status, body = k.http("POST", "/onos/v1/applications?activate=true", o.path.read_bytes(),
                                  content_type="application/octet-stream", timeout=300)
            if status != 200:
                raise RuntimeError(f"warming the cache: {o.name} refused ({status}): {body}")
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(time.ctime() + "\n")
    finally:
        k.stop()
        shutil.rmtree(k.base, ignore_errors=True)


BOOT_RACES = kr.BOOT_RACES  # see karaf_runtime and `ready`
# What a boot costs a node's own JVM, measured with tests/karaf/probe_restart.py (a node of the running cluster
# SIGKILLed and started again on its directory, as the rejoin test does): 46 CPU s (Karaf up to Pax Web 11, the Atomix
# rejoin with its Raft replay 10 when the nodes held the partitions, stand-in and app 7, the REST and Metron web
# contexts 16). At load 40 that took
# 333 s of wall time: the JVM got 14 % of a CPU. The wall clock measures the shared machine's load, so a boot is
# judged by the work it did: not ready after BOOT_CPU_S CPU seconds (about three boots) is a boot going round, not a
# slow one; under STALL_CPU_S in STALL_S (a starved boot measured 7 CPU s a minute at the least) is a blocked one.
BOOT_CPU_S = 150
STALL_S, STALL_CPU_S = 60, 2.0


# Where a boot's progress is told each minute: the terminal, even under pytest's capture (conftest sets it), so a
# run a timeout interrupts (CI) still shows which boot took its time and how busy the machine was.
progress = print


def _boot_failure(node, since):
    """Waits until the node's Karaf is ready (None) or its boot failed: the reason, from the karaf.log lines stamped
    since `since` (epoch seconds)."""
    history = [(time.time(), node.karaf.cpu_seconds())]
    while True:
        try:
            node.karaf.wait_ready(10)
            return None
        except RuntimeError as e:
            reason = str(e).splitlines()[0]
        raced = node.karaf.boot_races(since)
        now, cpu = time.time(), node.karaf.cpu_seconds()
        history.append((now, cpu))
        if int(now - history[0][0]) // 60 != int(history[-2][0] - history[0][0]) // 60:
            progress(f"  {node} booting: {now - history[0][0]:.0f} s, {cpu:.0f} CPU s of its own, "
                     f"load {os.getloadavg()[0]:.1f}")
        if raced:
            return f"boot race {raced}"
        if node.karaf.process.poll() is not None:
            return reason
        if cpu > BOOT_CPU_S:
            return f"not ready after {cpu:.0f} CPU s of its own ({now - history[0][0]:.0f} s)"
        window = [c for t, c in history if t >= now - STALL_S]
        if now - history[0][0] >= STALL_S and cpu - window[0] < STALL_CPU_S:
            return f"blocked: {cpu - window[0]:.1f} CPU s in the last {STALL_S} s, not ready"


# How many times a node whose boot raced is started again before the race is raised: this session's cluster boot saw
# Jersey's race on the same node twice in a row (the second start alone, the other two up), as the rejoin test saw
# Pax Web's (test_cluster.rejoin allows as many).
BOOT_RETRIES = 2


def ready(node):
    """Waits until the node's Karaf is ready. Three Karafs booting at once on two CPUs sometimes come up without a
    working web container (karaf.log: Jersey's "InjectionManagerFactory not found" for ONOS's REST servlet, Pax
    Web's "Error deploying web application"): such a node is killed and started again on its own directory (its
    Atomix member joins again), up to BOOT_RETRIES times; a node merely slow is waited for, judged by the work its JVM
    did (BOOT_CPU_S, STALL_S), never killed for the time it took: the earlier wall-clock restart after 150 s killed a
    rejoining node in its catch-up and its second boot, starting over, took longer than the 300 s it was given. A
    failure after the last retry is raised."""
    t0 = time.time()
    # a restarted node's karaf.log holds its earlier boots too: this boot's lines are those since its launch
    failure = _boot_failure(node, node.karaf.launched_at)
    for attempt in range(BOOT_RETRIES):
        if failure is None:
            return
        print(f"{node} not ready ({failure}, {time.time() - t0:.0f} s): starting it again ({attempt + 1} of "
              f"{BOOT_RETRIES})")
        node.kill()
        node.karaf.launch(wrapper=("ip", "netns", "exec", node.netns), max_mem=HEAP)
        node.killed = False
        failure = _boot_failure(node, node.karaf.launched_at)
    if failure is not None:
        raise RuntimeError(f"{node} not ready after {BOOT_RETRIES + 1} starts: {failure}\n"
                           f"{node.karaf.log_problems()}")


def kill_group(process):
    """SIGKILL of a process we started in a session of its own, and all it started."""
    if process is not None and process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


class Node:
    """One Karaf of the cluster: its namespace, address and ONOS node id."""

    def __init__(self, index, netns, ip):
        self.index = index
        self.id = f"onos-{index + 1}"
        self.netns = netns
        self.ip = ip
        self.karaf = kr.Karaf(Path(tempfile.mkdtemp(prefix=f"hk-cluster-{self.id}-")), host=ip)
        self.killed = False

    def kill(self):
        """SIGKILL of the node's whole Karaf (a crash: no leave, no session close)."""
        kill_group(self.karaf.process)
        self.killed = True

    def restart(self):
        """Starts the killed node again on its own Karaf directory and waits until it is ready (Atomix rejoined: the
        stand-in's services wait for it). As ONOS's onos-service starts Karaf again (`karaf server` on the same
        installation, no `clean`), data/ is kept: Felix's bundle cache (the apps' bundles and their start state,
        Karaf's features state, Config Admin's configurations). Its Atomix member holds no partition: it joins the
        storage members' cluster again with new sessions."""
        self.karaf.launch(wrapper=("ip", "netns", "exec", self.netns), max_mem=HEAP)
        self.killed = False
        ready(self)

    @property
    def log_file(self):
        return self.karaf.log_file

    @property
    def base(self):
        return self.karaf.base

    def __repr__(self):
        return f"{self.id}@{self.ip}"


class StorageMember:
    """One Atomix storage member (AtomixStorageMember): its namespace, address, Raft data and log."""

    def __init__(self, index, netns, ip):
        self.index = index
        self.id = f"atomix-{index + 1}"
        self.netns = netns
        self.ip = ip
        self.base = Path(tempfile.mkdtemp(prefix=f"hk-cluster-{self.id}-"))
        self.log_file = self.base / "atomix.log"
        self.process = None
        self.killed = False

    def launch(self, cluster_id, members):
        """Starts the member on its data directory (kept across restarts, as an atomix-agent's)."""
        jar = STORAGE_DIR / "metron-atomix-storage-1.0-SNAPSHOT.jar"
        if not jar.exists():
            raise RuntimeError(f"{jar} is missing: `mvn install` builds it (tests/karaf/atomix-storage)")
        java = kr.java11_home() / "bin" / "java"
        log = open(self.log_file, "ab")
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", self.netns, str(java), f"-Xmx{STORAGE_HEAP}",
             # karaf.log's stamp (karaf_runtime.log_stamp reads both)
             "-Dorg.slf4j.simpleLogger.showDateTime=true",
             "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss,SSS",
             "-cp", f"{jar}:{STORAGE_DIR / 'lib'}/*", "org.metron.standin.storage.AtomixStorageMember",
             cluster_id, self.id, str(self.base / "data"),
             *[f"{m.id}@{m.ip}:{STORAGE_PORT}" for m in members]],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self.launched_at = time.time()
        self.killed = False

    def wait_started(self, timeout=STORAGE_START_S):
        end = time.time() + timeout
        while time.time() < end:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self} exited ({self.process.returncode}):\n{self.tail()}")
            if any(f"storage member {self.id} started" in line for line in self.lines_since(self.launched_at)):
                return
            time.sleep(0.5)
        raise RuntimeError(f"{self} not started after {timeout} s:\n{self.tail()}")

    def lines_since(self, since):
        if not self.log_file.exists():
            return []
        return [line for line in self.log_file.read_text(errors="replace").splitlines()
                if (t := kr.log_stamp(line)) is not None and t >= since - 0.001]

    def tail(self, n=30):
        return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-n:]) if self.log_file.exists() else ""

    def kill(self):
        """SIGKILL (a crash: no leave)."""
        kill_group(self.process)
        self.killed = True

    def __repr__(self):
        return f"{self.id}@{self.ip}"


class Cluster:
    def __init__(self, size=3):
        self.tag = f"{os.getpid() % 10000}"
        self.subnet = f"10.213.{os.getpid() % 250}"
        self.gateway = f"{self.subnet}.254"
        self.bridge = f"mcbr{self.tag}"
        self.size = size
        self.nodes = []
        self.storage = []
        self.made_netns, self.made_links = [], []

    # ------------------------------------------------------------------ network
    def net_up(self):
        sh("ip", "link", "add", self.bridge, "type", "bridge")
        self.made_links.append(self.bridge)
        sh("ip", "addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        sh("ip", "link", "set", self.bridge, "up")
        for i in range(self.size):
            self.nodes.append(Node(i, *self._namespace(f"{i + 1}", i + 1)))
        for i in range(self.size):
            self.storage.append(StorageMember(i, *self._namespace(f"a{i + 1}", i + 11)))

    def _namespace(self, name, host):
        """Namespace mc<tag>-<name> on a veth into the bridge with address <subnet>.<host>: (namespace, address)."""
        ns, ip = f"mc{self.tag}-{name}", f"{self.subnet}.{host}"
        sh("ip", "netns", "add", ns)
        self.made_netns.append(ns)
        host_end, ns_end = f"mc{self.tag}h{name}", f"mc{self.tag}n{name}"
        sh("ip", "link", "add", host_end, "type", "veth", "peer", "name", ns_end)
        self.made_links.append(host_end)
        sh("ip", "link", "set", ns_end, "netns", ns)
        sh("ip", "link", "set", host_end, "master", self.bridge)
        sh("ip", "link", "set", host_end, "up")
        sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
        sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"{ip}/24", "dev", ns_end)
        sh("ip", "netns", "exec", ns, "ip", "link", "set", ns_end, "up")
        # the name-resolution fix: the resolver's address answers inside the namespace (nothing listens: a
        # lookup fails in milliseconds instead of timing out)
        for r in resolvers():
            sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"{r}/32", "dev", "lo", check=False)
        return ns, ip

    # ------------------------------------------------------------------ karafs
    def boot(self, boot_features, system_artifacts):
        """Starts the storage members (all at once: Raft elects with a majority up) and waits until each has its
        partitions, then assembles every node's Karaf with its cluster.json, starts all at once and waits until each
        is ready."""
        for m in self.storage:
            m.launch(CLUSTER_ID, self.storage)
        for m in self.storage:
            m.wait_started()
        members = [{"id": n.id, "ip": n.ip, "port": ATOMIX_PORT} for n in self.nodes]
        storage = [{"id": m.id, "ip": m.ip, "port": STORAGE_PORT} for m in self.storage]
        for n in self.nodes:
            n.karaf.assemble(boot_features, system_artifacts)
            (n.karaf.home / "etc" / "metron-cluster.json").write_text(
                json.dumps({"name": CLUSTER_ID, "node": n.id, "nodes": members, "storage": storage}, indent=1))
        for n in self.nodes:
            n.karaf.launch(wrapper=("ip", "netns", "exec", n.netns), max_mem=HEAP)
        errors = {}

        def wait(n):
            try:
                ready(n)
            except Exception as e:  # noqa: BLE001 (reported below, per node)
                errors[n.id] = e

        threads = [threading.Thread(target=wait, args=(n,)) for n in self.nodes]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise RuntimeError("cluster nodes not ready: " + "; ".join(f"{k}: {v}" for k, v in errors.items()))

    def alive(self):
        return [n for n in self.nodes if not n.killed]

    # ------------------------------------------------------------------ cleanup
    def close(self, keep=False):
        for member in [*self.nodes, *self.storage]:
            try:
                if not member.killed:
                    member.kill()
            except Exception:  # noqa: BLE001 (cleanup goes on)
                pass
            if not keep:
                shutil.rmtree(member.base, ignore_errors=True)
        for ns in self.made_netns:
            # whatever still runs in the namespace was started by this cluster
            for pid in sh("ip", "netns", "pids", ns, check=False).split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            sh("ip", "netns", "del", ns, check=False)
        for link in reversed(self.made_links):
            sh("ip", "link", "del", link, check=False)
        self.made_netns, self.made_links = [], []

"""Probe (not part of the suite): kills and restarts cluster nodes repeatedly, as the rejoin test does, and records
where a restart's time goes. Run as root under the machine lock:
  PROBE_N=3 flock /tmp/metron-sys.lock timeout 900 python3 -m pytest -s -p no:cacheprovider tests/karaf/probe_restart.py
Per restart: karaf.log milestones (s after launch), the restarted JVM's CPU seconds (and its busiest threads), the
machine's CPU use by process group, Raft data size; a thread dump (SIGQUIT, to karaf-console.out) every 40 s while
not ready. Results appended to $PROBE_OUT (default /tmp/probe_restart.jsonl)."""
import json
import os
import re
import shutil
import signal
import threading
import time
from datetime import datetime
from pathlib import Path

import test_cluster as tc
from test_cluster import cluster, servers  # noqa: F401 (fixtures)
from test_karaf import wait_for

OUT = Path(os.environ.get("PROBE_OUT", "/tmp/probe_restart.jsonl"))
N = int(os.environ.get("PROBE_N", "3"))
LIMIT_S = int(os.environ.get("PROBE_LIMIT_S", "420"))
TICK = os.sysconf("SC_CLK_TCK")

MILESTONES = {
    "standin_bundle_started": r"Registering commands for bundle org.metron.metron-onos-standin",
    "pax_web": r"Pax Web available",
    "atomix_start": r"starting Atomix member",
    "raft_open_system": r"Starting server for partition PartitionId\{id=1, group=system\}",
    "raft_follower_system": r"RaftServer\{system-partition-1\} - Transitioning to FOLLOWER",
    "raft_system_started": r"raft-partition-group-system-\d+ \| RaftPartitionGroup.*Started|RaftPartitionGroup .*\| Started",
    "raft_leader_raft2": r"RaftServer\{raft-partition-2\} - Found leader",
    "raft_data_started": r"raft-partition-group-raft-\d+ \| RaftPartitionGroup",
    "atomix_started": r"Atomix member \S+ started",
    "devices_started": r"DeviceManagerStandin.*Started",
    "metron_app": r"metron-app .*(ChainManager|activated|Started)",
}


def pids_of_group(pgid):
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                st = (d / "stat").read_text()
                fields = st[st.rindex(")") + 2:].split()
                if int(fields[2]) == pgid:
                    out.append(int(d.name))
            except (OSError, ValueError):
                pass
    return out


def cpu_of(pid):
    try:
        st = Path(f"/proc/{pid}/stat").read_text()
        f = st[st.rindex(")") + 2:].split()
        return (int(f[11]) + int(f[12])) / TICK
    except (OSError, ValueError):
        return 0.0


def java_pid(node):
    for pid in pids_of_group(node.karaf.process.pid):
        try:
            if Path(f"/proc/{pid}/exe").resolve().name == "java":
                return pid
        except OSError:
            pass
    return None


def threads(pid):
    """{tid: (name, cpu s)}"""
    out = {}
    for t in Path(f"/proc/{pid}/task").glob("*"):
        try:
            st = (t / "stat").read_text()
            name = st[st.index("(") + 1:st.rindex(")")]
            f = st[st.rindex(")") + 2:].split()
            out[t.name] = (name, (int(f[11]) + int(f[12])) / TICK)
        except (OSError, ValueError):
            pass
    return out


def groups():
    """{label: [pids]}: each Karaf JVM of the cluster, agents, OVS, everything else."""
    c = tc.pytest.cluster_instance
    lab = {}
    if c is None:
        return {}
    for n in c.nodes:
        if n.karaf.process and n.karaf.process.poll() is None:
            for p in pids_of_group(n.karaf.process.pid):
                lab[p] = n.id
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        p = int(d.name)
        try:
            comm = (d / "comm").read_text().strip()
        except OSError:
            continue
        g = lab.get(p) or ("agent" if comm.startswith("metron-agent") else "ovs" if comm.startswith("ovs")
                           else "java-other" if comm == "java" else "rest")
        out.setdefault(g, []).append(p)
    return out


def machine_busy():
    f = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    v = list(map(int, f))
    idle = v[3] + v[4]
    return sum(v) / TICK, idle / TICK


def log_times(node, mark, t_launch):
    text = node.karaf.log_file.read_bytes()[mark:].decode(errors="replace")
    got = {}
    for line in text.splitlines():
        m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d),(\d{3})", line)
        if not m:
            continue
        t = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").timestamp() + int(m.group(2)) / 1000
        for k, pat in MILESTONES.items():
            if k not in got and re.search(pat, line):
                got[k] = round(t - t_launch, 1)
    got["mgmt_restarts"] = text.count("Error destroying ConnectorServerFactory")
    got["ssh_activator_errors"] = text.count("Error starting activator")
    return got


def du(path):
    total = 0
    for p in Path(path).rglob("*"):
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:
            pass
    return total


def restart_measured(c, victim, it):
    home = victim.karaf.home
    f = victim.karaf.log_file
    mark = f.stat().st_size if f.exists() else 0
    db = {str(p.relative_to(home / "data" / "db")): p.stat().st_size
          for p in (home / "data" / "db").rglob("*") if p.is_file()}
    os.environ["KARAF_OPTS"] = f"-Xlog:gc:file={home}/data/log/gc-{it}.log:uptime"
    t0 = time.time()
    victim.karaf.launch(wrapper=("ip", "netns", "exec", victim.netns), max_mem=tc.cr.HEAP)
    victim.killed = False
    os.environ.pop("KARAF_OPTS", None)
    samples, stop = [], threading.Event()
    jpid = {"pid": None}
    thr0, thr_last = {}, {}

    def sample():
        last_busy = machine_busy()
        last = {}
        dumps = 0
        while not stop.wait(2):
            now = time.time() - t0
            if jpid["pid"] is None:
                jpid["pid"] = java_pid(victim)
            g = groups()
            cpu = {k: sum(cpu_of(p) for p in v) for k, v in g.items()}
            tot, idle = machine_busy()
            row = {"t": round(now, 1), "load1": os.getloadavg()[0],
                   "machine_busy": round(((tot - last_busy[0]) - (idle - last_busy[1])) / max(1e-6, tot - last_busy[0])
                                         * os.cpu_count(), 2)}
            row["cpu"] = {k: round(v - last.get(k, v), 2) for k, v in cpu.items()}
            last, last_busy = cpu, (tot, idle)
            samples.append(row)
            if jpid["pid"]:
                t = threads(jpid["pid"])
                for tid, v in t.items():
                    thr0.setdefault(tid, v)
                thr_last.update(t)
                if now > 40 * (dumps + 1):
                    dumps += 1
                    os.kill(jpid["pid"], signal.SIGQUIT)
    surv0 = {n.id: threads(java_pid(n)) for n in c.nodes if n is not victim and java_pid(n)}
    th = threading.Thread(target=sample, daemon=True)
    th.start()
    ready_s, err = None, None
    try:
        victim.karaf.wait_ready(LIMIT_S)
        ready_s = round(time.time() - t0, 1)
    except RuntimeError as e:
        err = str(e).splitlines()[0]
    stop.set()
    th.join()
    busiest = {}
    for tid, (name, cpu) in thr_last.items():
        key = re.sub(r"\d+", "#", name)
        busiest[key] = busiest.get(key, 0) + cpu  # the JVM is new: a thread's CPU since its start
    busiest = dict(sorted(((k, round(v, 1)) for k, v in busiest.items()), key=lambda kv: -kv[1])[:15])
    jcpu = cpu_of(jpid["pid"]) if jpid["pid"] else None
    surv = {}
    for n in c.nodes:
        if n.id in surv0 and java_pid(n):
            now_t, by = threads(java_pid(n)), {}
            for tid, (name, cpu) in now_t.items():
                key = re.sub(r"\d+", "#", name)
                by[key] = by.get(key, 0) + cpu - surv0[n.id].get(tid, (name, 0))[1]
            surv[n.id] = dict(sorted(((k, round(v, 1)) for k, v in by.items()), key=lambda kv: -kv[1])[:12])
    tot = {}
    for s in samples:
        for k, v in s["cpu"].items():
            tot[k] = round(tot.get(k, 0) + v, 1)
    rec = {"iteration": it, "victim": victim.id, "ready_s": ready_s, "error": err,
           "milestones": log_times(victim, mark, t0), "java_cpu_s": jcpu, "threads_cpu_s": busiest,
           "cpu_s_by_group": tot, "survivor_threads_cpu_s": surv, "load1_start_end": [samples[0]["load1"] if samples else None,
                                                      os.getloadavg()[0]],
           "db_bytes": sum(db.values()), "db_files": len(db),
           "db_biggest": dict(sorted(db.items(), key=lambda kv: -kv[1])[:6])}
    keep = Path(f"/tmp/probe-restart-{os.getpid()}-{it}")
    keep.mkdir(exist_ok=True)
    for src in (victim.karaf.log_file, victim.karaf.console_log, *home.glob("data/log/gc-*.log")):
        if src.exists():
            shutil.copy(src, keep / src.name)
    (keep / "samples.json").write_text(json.dumps(samples))
    rec["kept"] = str(keep)
    with open(OUT, "a") as o:
        o.write(json.dumps(rec) + "\n")
    print(json.dumps(rec, indent=1))
    return rec


def raft_entries(node):
    """Entries in the node's Raft logs of the data partitions (Atomix 3.1 segments: a 64-byte descriptor, then
    entries of [int length][int checksum][bytes], a zero length after the last)."""
    import struct
    n = 0
    for seg in (node.karaf.home / "data" / "db" / "partitions" / "data").rglob("*.log"):
        b = seg.read_bytes()
        pos = 64
        while pos + 8 <= len(b):
            ln = struct.unpack(">i", b[pos:pos + 4])[0]
            if ln <= 0:
                break
            pos += 8 + ln
            n += 1
    return n


def test_restarts(cluster, servers):  # noqa: F811
    print("fresh boot + install, CPU s per node JVM:", {n.id: cpu_of(java_pid(n)) for n in cluster.nodes})
    tc.test_apps_installed_on_one_node_are_active_on_all_three(cluster)
    tc.test_a_chain_submitted_on_one_node_is_deployed_once_and_readable_on_all(cluster, servers)
    fails = 0
    for it in range(N):
        acting = tc.leader(cluster) or cluster.nodes[it % 3].id
        victim = next(n for n in cluster.nodes if n.id == acting)
        k = next(n for n in cluster.nodes if n is not victim).karaf
        c0 = {n.id: cpu_of(java_pid(n)) for n in cluster.nodes}
        e0 = raft_entries(cluster.nodes[0])
        time.sleep(20)  # a running cluster, as when the takeover test kills its node
        print("Raft entries a second (data partitions, as onos-1 logs them):", (raft_entries(cluster.nodes[0]) - e0) / 20)
        print("steady 3-node CPU share per node JVM:",
              {n.id: round((cpu_of(java_pid(n)) - c0[n.id]) / 20, 2) for n in cluster.nodes}, os.getloadavg())
        victim.kill()
        survivors = {n.id for n in cluster.nodes if n is not victim}
        wait_for("devices mastered by survivors",
                 lambda: all(m in survivors for m in tc.masters(k, cluster.devices).values()), timeout=60)
        c0 = {n.id: cpu_of(java_pid(n)) for n in cluster.nodes if n is not victim}
        time.sleep(10)
        print("survivors' CPU share with one node dead:",
              {n.id: round((cpu_of(java_pid(n)) - c0[n.id]) / 10, 2) for n in cluster.nodes if n is not victim})
        rec = restart_measured(cluster, victim, it)
        if rec["ready_s"] is None:
            fails += 1
            victim.kill()
            victim.restart()  # the harness's own path, to go on
        wait_for(f"{tc.CHAIN} readable on {victim}", lambda: tc.chain_on(victim.karaf), timeout=120, interval=1)
    print(f"{fails} of {N} restarts not ready within {LIMIT_S} s")

"""Split and merge at load (issue 14 item 6, docs/scaling.md#at-load), shared by tests/e2e/test_scaling_at_load.py and
bench/scaling/atload_bench.py: the demo chain FW(4 rules) -> NAPT -> LB (one traffic class, no SpinCycles: the
load is the real per-packet work) on paper-fig3 with the embedded host, one agent, real OVS and real packets;
metron-blast sends FLOWS UDP flows of the class from the source namespace (sendmmsg) and counts every frame at the
sink (recvmmsg, per flow: sequence gaps and the NAPT translations seen).

A rate ladder finds what the path (veth -> OVS userspace -> agent -> OVS -> sink) holds at steady state with no
scaling; at the chosen rate a baseline window with no operation is followed by a split of the class by the
operator's REST call (a one-class group is divided by a source-port bit: the class split), and a merge back.
Loss per window is exact per flow (sent - received); a gap's packets are placed in time by the send times of the
packets on either side of it (the window holding its midpoint)."""
import json
import sys
import time
from pathlib import Path

import workload

FLOWS = 1024            # source ports 40000..41023: every source-port bit splits them evenly
SPORT = 40000
SETUP_PPS = 2000        # every flow's NAPT mapping made on one core before the measurement
MARGIN_S = (0.5, 1.5)   # an operation's window: from the previous window's end (0.5 s or more before the REST
                        # call) to 1.5 s after it answered


def deploy(s, name="demo"):
    """The demo chain on one core (up to 2), autoScale off (only the operator's calls scale it); answers its
    firewall plan."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "deploy" / "demo"))
    from metron_demo import chains
    net = s.network()
    body, plan = chains.fw_napt_lb(name, 4, net["ingress"][0], net["egress"][0], cores=1, max_cores=2)
    chain = workload.submit(s.host, body)
    if chain["state"] != "ACTIVE":
        raise AssertionError(f"chain {name} not active: {chain}")
    return plan


def enlarge_switch_buffers(s, nbytes):
    """The emulation's fix for the loss this workload found (docs/scaling.md#at-load): every lost frame was
    dropped by a full receive buffer of one of Open vSwitch's port sockets (socket_drops), whose main thread
    forwards and also installs the re-tag bundle. Answers how many sockets now hold `nbytes`."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "topologies"))
    from metron_topo.ovs import Ovs
    return Ovs(s.state["run_dir"]).enlarge_port_buffers(nbytes)


def counters(s, node):
    """(tx, rx) packets of a host's eth0, read live from sysfs in its namespace."""
    import subprocess
    out = subprocess.run(["ip", "netns", "exec", s.netns(node), "cat", "/sys/class/net/eth0/statistics/tx_packets",
                          "/sys/class/net/eth0/statistics/rx_packets"], capture_output=True, text=True, timeout=10,
                         check=True).stdout.split()
    return int(out[0]), int(out[1])


def drop_counters(s):
    """Every counter of the path that can say where a frame was lost, flattened to {name: value}: OVS's interface
    statistics (rx/tx dropped and errors of every port of every switch) and the agent's (its ports' rx_dropped
    counts the fanout sockets' kernel drops, i.e. full rx rings)."""
    out = ovs_drops(s)

    def walk(prefix, x):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(f"{prefix} {k}", v)
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(f"{prefix} {v.get('name', v.get('id', i)) if isinstance(v, dict) else i}", v)
        elif isinstance(x, (int, float)) and any(w in prefix.lower() for w in ("drop", "miss", "err", "shed")):
            out[prefix.strip()] = x
    walk("agent", s.agent_stats())
    out.update(agent_metrics(s))
    out.update(socket_drops(s))
    # the kernel's per-CPU input backlog (a veth delivers into it): machine-wide, other users' drops count too
    rows = [line.split() for line in Path("/proc/net/softnet_stat").read_text().splitlines()]
    out["kernel backlog drops (machine-wide)"] = sum(int(r[1], 16) for r in rows)
    return out


# Open vSwitch writes interface statistics to its database every 5 s (Open_vSwitch other_config:
# stats-update-interval, 5000 ms at the least): ovs_drops read right after a step may not hold its drops yet (one
# fast-network run: 1660 frames lost, no counter moved); read after this long, they do.
OVS_STATS_S = 5.5


def ovs_drops(s):
    """Open vSwitch's drop and error counters of every interface of every switch: {"ovs <iface> <key>": n}, as the
    database last had them (up to OVS_STATS_S old)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "topologies"))
    from metron_topo.ovs import Ovs
    out = {}
    doc = json.loads(Ovs(s.state["run_dir"]).vsctl("--format=json", "--", "--columns=name,statistics", "list",
                                                   "Interface").stdout)
    for name, stats in doc["data"]:
        for key, value in stats[1]:
            if "drop" in key or "error" in key:
                out[f"ovs {name} {key}"] = value
    return out


def agent_metrics(s, server="srv1"):
    """The agent's drop counters from its metrics endpoint (per NIC rx/tx dropped, per core and group drops,
    flow table refusals): {"agent <metric>{labels}": value}."""
    import urllib.request
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "topologies"))
    from metron_topo.agent import METRICS_PORT
    host = s.state["nodes"][server]["agent"].rsplit(":", 1)[0]
    text = urllib.request.urlopen(f"http://{host}:{METRICS_PORT}/metrics", timeout=10).read().decode()
    out = {}
    for line in text.splitlines():
        name = line.split("{")[0].split(" ")[0]
        if not line.startswith("#") and any(w in name for w in ("drop", "refused", "failures")):
            out["agent " + line.rsplit(" ", 1)[0]] = float(line.rsplit(" ", 1)[1])
    return out


def socket_drops(s):
    """Drops of every AF_PACKET socket in the switches' and servers' namespaces ({"<netns> <process> <iface>
    socket drops": n}, from `ss -0 -m`: the socket's receive buffer was full). Open vSwitch's userspace datapath
    reads each veth port through one such socket in its main thread; the agent's fanout sockets are here too."""
    import re
    import subprocess
    base = s.netns("src").rsplit("-", 1)[0]
    out = {}
    for ns in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split():
        if not ns.startswith(base + "-") or ns.endswith(("-src", "-sink")):
            continue
        ss = subprocess.run(["ip", "netns", "exec", ns, "ss", "-0", "-m", "-p", "-a"], capture_output=True, text=True,
                            timeout=10).stdout
        for line in ss.splitlines():
            m = re.search(r"\*:(\S+)\s.*users:\(\(\"([^\"]+)\".*\bd(\d+)\)", line)
            if m:
                key = f"{ns} {m.group(2)} {m.group(1)} socket drops"
                out[key] = out.get(key, 0) + int(m.group(3))
    return out


def counter_deltas(before, after):
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


class Run:
    """One sender and one sink for the whole measurement; mark(label, lo_ns, hi_ns) names windows that
    finish() accounts for."""

    def __init__(self, s, dport):
        self.s = s
        self.sink = workload.BlastSink(s.netns("sink"))
        try:
            self.sender = workload.BlastSender(s.netns("src"), FLOWS, sport=SPORT, dport=dport)
        except Exception:
            self.sink.kill()
            raise
        self.marks = []
        self.pps = 0

    def rate(self, pps):
        self.pps = pps
        self.sender.rate(pps)

    def hold(self, label, seconds, settle=0.5):
        """Holds the current rate for `seconds`; the window (after `settle`) is marked; answers the live
        estimate (sent, received) from the veths' counters over it."""
        time.sleep(settle)
        lo, (tx0, _), (_, rx0) = time.time_ns(), counters(self.s, "src"), counters(self.s, "sink")
        time.sleep(seconds)
        hi, (tx1, _), (_, rx1) = time.time_ns(), counters(self.s, "src"), counters(self.s, "sink")
        self.marks.append({"label": label, "lo": lo, "hi": hi, "pps": self.pps})
        return tx1 - tx0, rx1 - rx0

    def operate(self, label, call):
        """Runs call() (a REST operation) at the current rate; marks its window; answers what it answered."""
        time.sleep(MARGIN_S[0])
        # from the previous window's end, so that no frame lost between two windows goes unaccounted
        lo = self.marks[-1]["hi"] if self.marks else time.time_ns() - int(MARGIN_S[0] * 1e9)
        t0 = time.time_ns()
        out = call()
        t1 = time.time_ns()
        time.sleep(MARGIN_S[1])
        self.marks.append({"label": label, "lo": lo, "hi": time.time_ns(), "pps": self.pps,
                           "callMs": (t1 - t0) / 1e6})
        return out

    def finish(self):
        """Stops; answers the report: per window sent, lost, loss, and per flow the translations."""
        try:
            log = self.sender.finish()
            self.quiesce()
            got = self.sink.finish()
        finally:
            self.sender.kill()
            self.sink.kill()
        return account(log, got, self.marks)

    def quiesce(self, still_s=0.5, most_s=10.0):
        """Waits until the sink's receive counter holds still for `still_s`: with enlarged switch port buffers
        (enlarge_switch_buffers) frames sent last can sit queued for seconds behind a backlog, and counting them
        lost because the count stopped first would blame the last window for the path's latency."""
        end = time.monotonic() + most_s
        last = counters(self.s, "sink")[1]
        while time.monotonic() < end:
            time.sleep(still_s)
            now = counters(self.s, "sink")[1]
            if now == last:
                return
            last = now

    def kill(self):
        self.sender.kill()
        self.sink.kill()


def sent_between(log, lo, hi):
    """Frames sent in [lo, hi) ns, from the sender's rate changes (it keeps its rate exactly: sendmmsg retries
    what the kernel refused)."""
    total = 0
    changes = log["changes"] + [{"ns": log["end_ns"], "pps": 0, "sent": sum(log["sent"])}]
    for a, b in zip(changes, changes[1:]):
        x, y = max(lo, a["ns"]), min(hi, b["ns"])
        if y > x and b["ns"] > a["ns"]:
            total += (b["sent"] - a["sent"]) * (y - x) / (b["ns"] - a["ns"])
    return int(total)


def account(log, got, marks):
    sent = log["sent"]
    flows = got["flows"] + [{"received": 0, "top": -1, "maps": []}] * (len(sent) - len(got["flows"]))
    lost_total = sum(n - f["received"] for n, f in zip(sent, flows))
    tail = sum(n - 1 - f["top"] for n, f in zip(sent, flows))  # lost after a flow's last received frame
    windows = []
    for m in marks:
        lost = sum(g[2] for g in got["gaps"] if m["lo"] <= (g[3] + g[4]) // 2 < m["hi"])
        n = sent_between(log, m["lo"], m["hi"])
        windows.append({**m, "sent": n, "lost": lost, "seconds": (m["hi"] - m["lo"]) / 1e9})
    start = log["changes"][0]["ns"] if log["changes"] else 0
    timeline = {}
    for g in got["gaps"]:  # lost packets per 100 ms of send time since the first rate
        bucket = round(((g[3] + g[4]) // 2 - start) / 1e8) / 10
        timeline[bucket] = timeline.get(bucket, 0) + g[2]
    changed = {i: f["maps"] for i, f in enumerate(flows) if len(f["maps"]) > 1 or f.get("extraMaps")}
    return {"sent": sum(sent), "received": sum(f["received"] for f in flows), "lost": lost_total,
            "lostAtTail": tail, "gaps": len(got["gaps"]) + got["extraGaps"], "socketDrops": got["socketDrops"],
            "reordered": sum(f.get("reordered", 0) for f in flows), "retries": log["retries"],
            "windows": windows, "lossTimeline": sorted(timeline.items()),
            "rateTimeline": [((c["ns"] - start) / 1e9, c["pps"]) for c in log["changes"]], "mappingsChanged": changed,
            "unmapped": [i for i, f in enumerate(flows) if not f["maps"]]}


TOLERANCE = 0.01  # of the frames sent in a ladder step: in flight at the sink's counter read, not lost


def held(step):
    """Whether a ladder step (pps, sent, received) held its rate: what the sink received within TOLERANCE."""
    _, tx, rx = step
    return tx - rx <= TOLERANCE * tx


def ladder(run, rates, hold_s=3.0):
    """Steps the rate up; stops after the first step whose live estimate (veth counters: frames sent by the source
    minus frames received at the sink) exceeds TOLERANCE of what was sent: a loss, or a backlog growing in the
    switch's enlarged buffers, which is as unsustainable; answers
    [(pps, sent, received)] (the exact loss per step is in the final report's windows)."""
    steps = []
    for pps in rates:
        run.rate(pps)
        tx, rx = run.hold(f"steady {pps}", hold_s, settle=1.5)
        steps.append((pps, tx, rx))
        print(f"ladder: {pps} pps: sent {tx}, received {rx} (veth counters)", file=sys.stderr, flush=True)
        if not held(steps[-1]):
            break
    return steps


def split_and_merge(run, host, chain, pps, window_s):
    """At `pps`: a baseline window (no operation) as long as an operation's, the split, a steady window, the
    merge; answers the two history entries."""
    run.rate(pps)
    run.hold(f"settle {pps}", 2.0, settle=0.0)
    run.hold("baseline", window_s, settle=0.0)
    split = run.operate("split", lambda: host.call("POST", f"/scaling/{chain}/split?group=g0"))
    run.hold("split steady", 2.0, settle=0.0)
    doc = host.call("GET", f"/scaling/{chain}")
    other = [g["id"] for g in doc["groups"] if g["id"] != "g0"]
    if len(other) != 1:
        raise AssertionError(f"after the split: {json.dumps(doc['groups'])}")
    merge = run.operate("merge", lambda: host.call("POST", f"/scaling/{chain}/merge?keep=g0&retire={other[0]}"))
    run.hold("after merge", 1.0, settle=0.0)
    return split, merge, doc


def window(report, label):
    return next(w for w in report["windows"] if w["label"] == label)

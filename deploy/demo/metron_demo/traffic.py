"""Real packets for the demo and the end-to-end tests: a generated pcap of allowed and denied flows replayed from
the source namespace with tcpreplay, a capture at the sink with tcpdump, a continuous probe for submit->traffic
time, and the analysis of what arrived. Each packet carries its flow id in the payload ("metron-<kind>-<id>")."""
import re
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import chains

SRC_IP, SINK_IP = "10.0.0.1", "10.0.0.2"
SRC_MAC, SINK_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
PAYLOAD = re.compile(rb"metron-(allow|deny|probe)-(\d+)")


@dataclass(frozen=True)
class Flow:
    kind: str  # "allow" | "deny"
    id: int
    src: str
    proto: str  # "udp" | "tcp"
    sport: int
    dport: int


def flows(plan, allowed=12, denied=12):
    """Allowed flows (udp to the service port from the source host) and denied ones (explicitly denied sources,
    and traffic that only the final 'deny all' catches)."""
    out = [Flow("allow", i, SRC_IP, "udp", 20000 + i, plan.allowed_port) for i in range(allowed)]
    for i in range(denied):
        if i % 2 == 0:
            out.append(Flow("deny", i, plan.denied_sources[(i * 37) % len(plan.denied_sources)], "udp", 30000 + i,
                            plan.allowed_port))
        else:
            out.append(Flow("deny", i, SRC_IP, "tcp", 30000 + i, 80))
    return out


def frame(flow, seq=0):
    from scapy.all import IP, TCP, UDP, Ether, Raw
    l4 = UDP(sport=flow.sport, dport=flow.dport) if flow.proto == "udp" else \
        TCP(sport=flow.sport, dport=flow.dport, flags="S", seq=seq)
    return Ether(src=SRC_MAC, dst=SINK_MAC) / IP(src=flow.src, dst=SINK_IP) / l4 / \
        Raw(b"metron-%s-%d-%d" % (flow.kind.encode(), flow.id, seq))


def write_pcap(path, flow_list, packets_per_flow=4):
    from scapy.all import wrpcap
    frames = [frame(f, k) for k in range(packets_per_flow) for f in flow_list]
    wrpcap(str(path), frames)
    return len(frames)


def replay(netns, pcap, pps=2000):
    """Sends a pcap out of the namespace's eth0 at a fixed rate (tcpreplay); returns packets sent."""
    out = subprocess.run(["ip", "netns", "exec", netns, "tcpreplay", "-q", "-i", "eth0", f"--pps={pps}", str(pcap)],
                         capture_output=True, text=True, check=True)
    m = re.search(r"(\d+) packets", out.stdout)
    return int(m.group(1)) if m else None


SNAPLEN = 2048
BUFFER_KB = 32768


class Capture:
    """tcpdump on the sink's eth0 into a pcap until stopped (then parsed with scapy)."""

    def __init__(self, netns, path):
        self.path = Path(path)
        # In immediate mode libpcap takes a TPACKET_V2 ring whose slots are sized by the snap length: with tcpdump's
        # default (262144 bytes) its 2 MB buffer held about 8 frames, and on this loaded machine tcpdump lost frames
        # whenever it was descheduled for a few ms ("packets dropped by kernel"), which tests read as the network's
        # loss (docs/updates.md, measured). Frames here are at most 1518 bytes: 2048-byte slots, 32 MB of them.
        self.proc = subprocess.Popen(["ip", "netns", "exec", netns, "tcpdump", "-i", "eth0", "-U", "--immediate-mode", "-n",
                                      "-s", str(SNAPLEN), "-B", str(BUFFER_KB), "-w", str(self.path), "ip"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.summary, self.dropped = "", None
        # tcpdump prints "listening on ..." once the socket is bound: only then is nothing missed.
        line = self.proc.stderr.readline()
        if b"listening" not in line:
            self.proc.kill()
            raise RuntimeError(f"tcpdump in {netns} did not start: {line.decode().strip()}")

    def stop(self):
        time.sleep(0.3)
        self.proc.terminate()
        self.proc.wait(timeout=10)
        # tcpdump's own account at exit ("N packets captured", "M packets dropped by kernel")
        self.summary = "; ".join(line.strip() for line in self.proc.stderr.read().decode(errors="replace").splitlines()
                                 if "packets" in line)
        m = re.search(r"(\d+) packets dropped by kernel", self.summary)
        self.dropped = int(m.group(1)) if m else None
        from scapy.all import rdpcap
        return rdpcap(str(self.path)) if self.path.exists() and self.path.stat().st_size > 24 else []


class Probe:
    """Sends one allowed frame per millisecond (raw AF_PACKET socket in the source namespace, so nothing else is
    in the way) carrying its send time, until stopped: the first one seen at the sink dates 'traffic flowing'."""

    def __init__(self, netns, plan):
        self.netns, self.plan = netns, plan
        self.proc = None

    def start(self):
        script = (
            "import socket, struct, sys, time\n"
            "from scapy.all import Ether, IP, UDP, Raw\n"
            "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind(('eth0', 0))\n"
            f"head = Ether(src='{SRC_MAC}', dst='{SINK_MAC}') / IP(src='{SRC_IP}', dst='{SINK_IP}') / "
            f"UDP(sport=19999, dport={self.plan.allowed_port})\n"
            "while True:\n"
            "    s.send(bytes(head / Raw(b'metron-probe-%d' % time.time_ns())))\n"
            "    time.sleep(0.001)\n")
        self.proc = subprocess.Popen(["ip", "netns", "exec", self.netns, "/usr/bin/python3", "-c", script],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)  # scapy import
        return self

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()


@dataclass
class Arrivals:
    allowed: dict = field(default_factory=dict)   # flow id -> list of (src, sport, dst, dport)
    denied: Counter = field(default_factory=Counter)
    probes: list = field(default_factory=list)    # (arrival time_ns, sent time_ns)
    dst_macs: Counter = field(default_factory=Counter)  # destination MAC of allowed packets and probes


def analyze(packets):
    from scapy.all import IP, TCP, UDP, Ether, Raw
    a = Arrivals()
    for p in packets:
        if Raw not in p or IP not in p:
            continue
        m = PAYLOAD.search(bytes(p[Raw].load))
        if not m:
            continue
        kind, n = m.group(1).decode(), int(m.group(2))
        if kind != "deny" and Ether in p:
            a.dst_macs[p[Ether].dst] += 1
        l4 = p[UDP] if UDP in p else p[TCP] if TCP in p else None
        if kind == "allow":
            a.allowed.setdefault(n, []).append((p[IP].src, l4.sport if l4 else 0, p[IP].dst, l4.dport if l4 else 0))
        elif kind == "deny":
            a.denied[n] += 1
        else:
            a.probes.append((int(p.time * 1e9), n))
    return a


def check(arrivals, flow_list):
    """The demo's verdicts: every allowed flow arrived, translated (NAPT source, LB backend), balanced across
    backends; no denied flow arrived. Returns (ok, lines)."""
    lines, ok = [], True
    allowed = [f for f in flow_list if f.kind == "allow"]
    missing = sorted(f.id for f in allowed if f.id not in arrivals.allowed)
    ok &= not missing
    lines.append(f"allowed flows arrived      {len(allowed) - len(missing)}/{len(allowed)}"
                 + (f"  MISSING {missing}" if missing else ""))
    bad = [(i, t) for i, ts in arrivals.allowed.items() for t in ts
           if t[0] != chains.NAPT_ADDRESS or t[2] not in chains.BACKENDS or t[3] != chains.BACKEND_PORT]
    ok &= not bad
    lines.append(f"translated (NAPT src {chains.NAPT_ADDRESS}, LB -> backend:{chains.BACKEND_PORT})  "
                 + ("all" if not bad else f"WRONG {bad[:3]}"))
    per_backend = Counter(ts[0][2] for ts in arrivals.allowed.values())
    spread = max(per_backend.values(), default=0) - min((per_backend.get(b, 0) for b in chains.BACKENDS), default=0)
    balanced = len(arrivals.allowed) > 0 and spread <= 1
    ok &= balanced
    lines.append(f"balanced over backends     {dict(sorted(per_backend.items()))}"
                 + ("" if balanced else "  UNBALANCED"))
    consistent = all(len({(t[1], t[2]) for t in ts}) == 1 for ts in arrivals.allowed.values())
    ok &= consistent
    lines.append(f"per-flow state kept        {'yes' if consistent else 'NO: a flow changed NAPT port/backend'}")
    # the last hop writes the sink's own MAC over the chain's marker (docs/contracts.md#egress)
    addressed = set(arrivals.dst_macs) <= {SINK_MAC}
    ok &= addressed
    lines.append(f"addressed to the sink      {dict(arrivals.dst_macs)}" + ("" if addressed else "  NOT THE SINK'S MAC"))
    denied = sum(arrivals.denied.values())
    ok &= denied == 0
    lines.append(f"denied packets at sink     {denied}")
    return ok, lines


def first_probe_after(arrivals, t0_ns):
    """Arrival time (ns) of the first probe sent after t0, or None."""
    times = [arr for arr, sent in arrivals.probes if sent >= t0_ns]
    return min(times) if times else None


class Background(threading.Thread):
    """Runs fn in a thread and keeps its result or exception (for a submit that overlaps traffic)."""

    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn, self.result, self.error = fn, None, None

    def run(self):
        try:
            self.result = self.fn()
        except BaseException as e:  # reported by the caller
            self.error = e

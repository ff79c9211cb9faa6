"""The real-data-plane side of the differential checker: deploy a chain through the embedded host (REST ->
OVS rules + agent pipeline), replay frames the synthesizer generated from the source host, capture where the
chain's traffic leaves and compare frame by frame with the reference interpreter (the chain's own Click NFs,
NF by NF: `metron-synth --compare`, synthesizer/README.md#real-data-plane). Used by test_real_equivalence.py
and by `make check-long`."""
import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from metron_demo import traffic
from metron_topo.ovs import Ovs

REPO = Path(__file__).resolve().parents[2]
SYNTH = REPO / "synthesizer" / "bin" / "metron-synth"
# Frames per second for the first replay: new flows reach OVS's userspace slow path one by one; with ~1000 rules
# 3000 new flows/s lost packets there on this machine, 1000/s none (with 23,000 rules, fw4000, a few percent).
RATE = int(os.environ.get("METRON_REAL_PPS", "1000"))
# The slow second replay of frames that did not arrive (losses vs. mismatches).
RETRY_RATE = 200


def synth(*args, timeout=3600):
    """Runs metron-synth; its JVM gets the heap a million-frame comparison needs."""
    p = subprocess.run([str(SYNTH), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, METRON_SYNTH_JAVA_OPTS="-Xmx2g"))
    if p.returncode not in (0, 3):
        raise RuntimeError(f"metron-synth {' '.join(map(str, args))} failed ({p.returncode}): {p.stderr.strip()}")
    return p


class Capture:
    """tcpdump of the frames arriving at a host (inbound only: nothing the host's own kernel sends); another
    interface of the namespace, or another direction, when given."""

    def __init__(self, netns, path, iface="eth0", direction="in"):
        self.path = Path(path)
        self.proc = subprocess.Popen(["ip", "netns", "exec", netns, "tcpdump", "-i", iface, "-Q", direction, "-n", "-s",
                                      "0", "-B", "32768", "-U", "--immediate-mode", "-w", str(self.path)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        if "listening" not in line:
            self.proc.kill()
            raise RuntimeError(f"tcpdump in {netns} did not start: {line.strip()}")

    def stop(self):
        """Stops it; returns the frames the kernel dropped before tcpdump read them."""
        self.proc.send_signal(signal.SIGINT)
        err = self.proc.communicate(timeout=30)[1]
        m = re.search(r"(\d+) packets? dropped by kernel", err)
        return int(m.group(1)) if m else 0


def replay(netns, pcap, pps):
    out = subprocess.run(["ip", "netns", "exec", netns, "tcpreplay", "-q", "-i", "eth0", f"--pps={pps}", str(pcap)],
                         capture_output=True, text=True, check=True, timeout=4 * 3600)
    m = re.search(r"(\d+) packets", out.stdout)
    return int(m.group(1)) if m else 0


def quiet_hosts(session):
    """No kernel sends frames of its own into the checked paths (IPv6 router solicitations, MLD reports, ...):
    the end hosts', the server's, and the switch namespace's (its veth ends face the hosts directly)."""
    spaces = {session.state["nodes"][n]["netns"] for n in session.state["nodes"]}
    for ns in sorted(spaces):
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                        "net.ipv6.conf.default.disable_ipv6=1"], check=True, capture_output=True)


def deploy(session, chain_file, name=None):
    """Submits a chain over REST with the topology's ingress and egress points; returns its JSON."""
    chain = json.loads(Path(chain_file).read_text())
    if name:
        chain["name"] = name
    net = session.network()
    chain.setdefault("deployment", {}).update(ingressPoint=net["ingress"][0], egressPoint=net["egress"][0])
    return session.host.call("POST", "/chains", json.dumps(chain).encode()), chain


@dataclass
class Result:
    chain: str
    frames: int
    report: dict
    seconds: float
    kernel_drops: int = 0
    ovs_lost: int = 0
    replies: dict = None  # the reply pass's report (chains with a reply ingress)
    window: int = 0  # frames per window of a windowed trace (0: one window)
    skipped: str = None  # what the reply pass left out (a windowed trace: all but its last window)
    ovs_unread: int = 0  # frames the kernel received on OVS's ports that its datapath never read
    diagnosis: list = field(default_factory=list)

    def reports(self):
        return [r for r in (self.report, self.replies) if r]

    @property
    def mismatches(self):
        return sum(r["mismatches"] for r in self.reports())

    @staticmethod
    def _line(what, r):
        return (f"{r['sent']} {what}, {r['delivered']} delivered, {r['dropped']} dropped, "
                f"{r['mismatches']} mismatches ({r.get('missing', 0)} of them frames missing after the retry too), "
                f"{r['losses']} losses, "
                f"{r['outsideModel']} outside the model, {r['checksumExceptions']} bad-checksum frames forwarded")

    def summary(self):
        lines = [f"{self.chain}: " + self._line("frames", self.report)]
        if self.replies:
            lines.append(f"{self.chain} replies: " + self._line("replies", self.replies))
        if self.window:
            lines.append(f"{self.chain}: {-(-self.frames // self.window)} windows of {self.window} frames (a third "
                         f"of the shortest idle timeout each; one mapping per flow checked per window and pass)")
        if self.skipped:
            lines.append(f"{self.chain}: {self.skipped}")
        lines.append(f"{self.chain}: losses = frames the first replay lost and a slow second one delivered; capture "
                     f"drops {self.kernel_drops}, OVS upcalls lost {self.ovs_lost}, frames OVS never read "
                     f"{self.ovs_unread}; {self.seconds:.0f} s")
        return "\n".join(lines)

    def explain(self):
        details = [d for r in self.reports() for d in r["mismatchDetails"]]
        return "\n".join([self.summary(), json.dumps(details[:3], indent=1)] + self.diagnosis)


def ovs_lost(session):
    """Upcalls the userspace datapath dropped so far (`dpctl/show` 'lost')."""
    out = Ovs(session.state["run_dir"]).appctl("dpctl/show").stdout
    return sum(int(x) for x in re.findall(r"lost:(\d+)", out))


def ovs_unread(session):
    """Frames the kernel received on OVS's ports that the userspace datapath never read so far: its ports' RX
    counts are the kernel's (veths), its threads' 'packets received' what it read; the difference is what the
    ports' packet sockets dropped when the datapath thread fell behind (no OVS counter shows it)."""
    ovs = Ovs(session.state["run_dir"])
    ports = sum(int(x) for x in re.findall(r"RX packets:(\d+)", ovs.appctl("dpctl/show", "-s").stdout))
    read = sum(int(x) for x in re.findall(r"packets received: (\d+)",
                                          ovs.appctl("dpif-netdev/pmd-stats-show").stdout))
    return ports - read


def retry_fits(report, window, rate):
    """A windowed trace's flow state is compared per window and replay pass: the retry of one window's missing
    frames must last no longer than the window did (a third of the chain's shortest idle timeout)."""
    per = {}
    for i in report["missingIds"]:
        per[i // window] = per.get(i // window, 0) + 1
    worst = max(per.items(), key=lambda kv: kv[1], default=(0, 0))
    if worst[1] / RETRY_RATE > window / rate:
        raise RuntimeError(f"window {worst[0]} lost {worst[1]} frames: their retry at {RETRY_RATE}/s would last "
                           f"{worst[1] / RETRY_RATE:.0f} s, longer than the window's {window / rate:.0f} s (a third of "
                           f"the chain's shortest idle timeout); replay slower (METRON_REAL_PPS)")


def replay_and_compare(session, sender, pcap, work, tag, compare, rate, window=0, then=None):
    """Replays `pcap` from host `sender` while capturing what arrives at sink (egress 0) and src (egress 1),
    compares (`compare`: the metron-synth arguments naming the expectations), replays what did not arrive again
    slowly and compares once more. Returns the report and the frames the capturing kernels dropped. `window`:
    frames per window of a windowed trace (flow state compared per window and pass). `then(captures)` runs right
    after the first replay, before any comparing (a windowed trace's reply pass, while its mappings live)."""
    def run(suffix, frames_file, pps):
        caps = {k: Capture(session.netns(h), work / f"{tag}-{h}{suffix}.pcap") for k, h in ((0, "sink"), (1, "src"))}
        replay(session.netns(sender), frames_file, pps)
        time.sleep(1.0)
        return sum(c.stop() for c in caps.values()), [a for k, h in ((0, "sink"), (1, "src"))
                                                      for a in ("--capture" if not suffix else "--retry",
                                                                f"{k}={work / f'{tag}-{h}{suffix}.pcap'}")]
    report, missing = work / f"{tag}-report.json", work / f"{tag}-missing.pcap"
    if window:
        compare = [*compare, "--window", window]
    drops, captures = run("", pcap, rate)
    if then:
        then(captures)
    synth(*compare, *captures, "--report", report, "--missing-pcap", missing)
    retries = []
    first = json.loads(report.read_text())
    if window:
        retry_fits(first, window, rate)
    if first["missing"]:
        more, retries = run("-retry", missing, RETRY_RATE)
        drops += more
    synth(*compare, *captures, *retries, "--report", report)
    return json.loads(report.read_text()), drops, captures + retries


def check(session, chain_file, frames, workdir, seed=1, rate=RATE, name=None):
    """Deploys a chain, replays `frames` generated frames (and, with a reply ingress, replies to what arrived from
    the sink) and compares; removes the chain after."""
    t0 = time.monotonic()
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    quiet_hosts(session)
    answer, chain = deploy(session, chain_file, name)
    name = chain["name"]
    try:
        assert answer["state"] == "ACTIVE", answer
        spec = work / "chain.json"
        spec.write_text(json.dumps(chain))
        inp = work / "in.pcap"
        out = synth(spec, "--frames", frames, "--seed", seed, "--pps", rate, "--pcap", inp).stdout
        m = re.search(r"in windows of (\d+) frames", out)
        window = int(m.group(1)) if m else 0
        macs = ["--egress-mac", f"0={traffic.SINK_MAC}", "--egress-mac", f"1={traffic.SRC_MAC}"]
        lost0, unread0 = ovs_lost(session), ovs_unread(session)
        answered = {}

        def reply_pass(captures, since=0):
            # replies to what arrived, from the sink; `since`: to forward frames from that id on only
            rin, rexp = work / "replies.pcap", work / "replies-expected.json"
            synth(spec, "--replies", rin, "--forward", inp, *captures, "--seed", seed, *macs, "-o", rexp,
                  "--since", since)
            answered["report"], answered["drops"], _ = replay_and_compare(
                session, "sink", rin, work, "replies", ["--compare-expected", rexp, "--inputs", rin], rate)

        has_replies = len(chain["ingress"]) > 1
        # a windowed trace outlasts the idle timeouts: replies answer its last window, right after the forward
        # replay (before comparing it), while that window's mappings live; earlier windows' may have expired, as
        # Click's would (the reply model has one reply per forward frame, no timing)
        last = (frames - 1) // window * window if window else 0
        forward, drops, captures = replay_and_compare(
            session, "src", inp, work, "forward", [spec, "--compare", inp, *macs], rate, window,
            then=(lambda caps: reply_pass(caps, last)) if has_replies and window else None)
        if has_replies and not window:
            reply_pass(captures)
        replies = answered.get("report")
        drops += answered.get("drops", 0)
        skipped = (f"reply pass answered the last window only (frames {last} on, of windows of {window} frames)"
                   if replies and window else None)
        result = Result(name, frames, forward, time.monotonic() - t0, drops, ovs_lost(session) - lost0, replies,
                        window=window, skipped=skipped, ovs_unread=ovs_unread(session) - unread0)
        keep = os.environ.get("METRON_REAL_RESULTS")
        if keep:  # the whole work directory (captures, reports) for a look afterwards
            shutil.copytree(work, Path(keep) / name, dirs_exist_ok=True)
        if result.mismatches:
            result.diagnosis = diagnose(session, forward if forward["mismatches"] else replies)
        return result
    finally:
        session.host.call("DELETE", "/chains/" + name)


def diagnose(session, report):
    """What the first mismatching frame met: OVS's trace of it through the ingress switch's rules, the rule
    counts, the agent's counters."""
    lines = []
    detail = next((d for d in report["mismatchDetails"] if "input" in d), None)
    ovs = Ovs(session.state["run_dir"])
    for sw in ("s1", "s2"):
        node = session.state["nodes"][sw]
        flows = session.flows(sw)
        if detail:
            trace = ovs.appctl("ofproto/trace", node["bridge"], "in_port=1", detail["input"]).stdout
            lines.append(f"--- ofproto/trace on {sw} of frame {detail['id']}:\n{trace.strip()}")
            met = set(re.findall(r"cookie (0x[0-9a-f]+)", trace))
            lines += [f"--- {sw} dump-flows, the rules it met:"] + [f for f in flows
                                                                     if f.split(",")[0].split("=")[1] in met]
        lines.append(f"--- {sw}: {len(flows)} rules")
    try:
        lines.append("--- agent counters: " + json.dumps(session.agent_stats(), indent=1)[:4000])
    except RuntimeError as e:
        lines.append(f"--- agent counters unavailable: {e}")
    return lines

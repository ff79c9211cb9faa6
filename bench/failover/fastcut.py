"""A link cut at the fast path's rate (issue 23 item 3, docs/failover.md#at-rate-on-the-fast-network), shared by
tests/e2e/test_fast_linkcut_e2e.py and bench/failover/fastcut_bench.py: FW(4) -> NAPT -> LB through the embedded
host on paper-fig5 brought up `--fast` (OVS-DPDK; its switch-switch links are memif ports, which a cut takes
down, topologies/metron_topo/fastnet.py), metron-fastgen sending 1024 UDP flows from src to sink. The chain's
path is s1 -> s3 (-> srv1 -> s3 -> sink); its backup for that link goes over s2. One run per mode:

  groups      the backup armed in s1 as an OpenFlow fast-failover group (the host's default); the host is
              started with its reaction to failures delayed by REACTION_DELAY_MS, so that the cut step shows
              what the switch does alone and the next step what the host's move onto the backup costs
  controller  the same precomputed backup applied by the host once it hears of the port (--failover-groups off),
              no delay

Each run: the backups computed (and, for groups, the group on s1), a warmup at 2 kpps (every flow's NAPT
mapping), then three steps at the rate: no cut (the path's own loss); the cut, CUT_AFTER_S in (launcher.set_port:
both memif ends administratively down, as a cable pull takes both ends' carrier); after it (the groups' host
moves the chain onto the backup's plain rules here). The sink's counts tell what was lost, duplicated, reordered,
remapped (NAPT/LB translation changed), and when (`lostRanges`, ms from the step's start, on the same clock as
the cut). A mode's loss across the cut is that of the cut step and the step after it."""
import os
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "bench" / "fastnet"))
sys.path.insert(0, str(REPO / "deploy" / "demo"))

import moves  # noqa: E402
from metron_demo.polling import wait_for as wait  # noqa: E402
from metron_topo import fastgen, launcher  # noqa: E402

TOPOLOGY = "paper-fig5"
CUT = ("s1", 2)          # s1's port to s3: the chain's path
STEP_S = 4.0             # each measured step
CUT_AFTER_S = 1.5        # the cut, from the start of the cut step
WARMUP_S = 3.0
# The groups' host waits this long after the port goes down: past the end of the cut step (STEP_S - CUT_AFTER_S
# plus the sink's drain), well inside the step after it.
REACTION_DELAY_MS = 4000
MODES = {"groups": ["--reroute-delay-ms", str(REACTION_DELAY_MS)], "controller": ["--failover-groups", "off"]}


def ff_groups(s, switch="s1"):
    return {g: buckets for g, (kind, buckets) in s.groups(switch).items() if kind == "ff"}


def one_cut(mode, run_root, pps=moves.PPS):
    """One topology, one chain, one cut in `mode` at `pps` offered. Answers {mode, pps, baseline, step (the cut
    step's report), after (the next step's), cutMs (when the cut was sent, from the cut step's start), cutTookMs,
    lost (both steps' frames), lostMs (the cut step's lost frames in ms of the rate really sent), totalMs (both
    steps'), groupsBefore/groupsAfter (s1's fast-failover groups, packets per bucket, before the cut and as the
    cut step ended), reason (the host's own account of its move)}."""
    with moves.session(TOPOLOGY, run_root, host_args=MODES[mode]) as s:
        try:
            return _cut(s, mode, pps)
        finally:
            for f in Path(s.state["run_dir"]).glob("*.log"):  # the run directory goes with the topology
                (Path(run_root) / f.name).write_bytes(f.read_bytes())


def _cut(s, mode, pps):
    plan = moves.deploy(s, "cut")
    log = Path(s.state["run_dir"]) / "host.log"
    wait(lambda: re.search(r"failover backups for .* [1-9]\d* links", log.read_text()), 90, "the link backups")
    before = wait(lambda: ff_groups(s), 60, "the fast-failover group on s1") if mode == "groups" else {}
    gen = fastgen.Background(s.state, [pps, pps, pps], STEP_S, dport=plan.allowed_port, warmup_seconds=WARMUP_S)
    try:
        warm = gen.wait_report(0, timeout=90)
        if warm["lost"] or warm["received"] != warm["sent"]:
            raise AssertionError(f"the warmup at 2 kpps lost frames: {warm}")
        baseline = gen.wait_report(1, timeout=90)
        t0 = gen.wait_step(2)
        time.sleep(max(0.0, CUT_AFTER_S - (time.time_ns() - t0) / 1e9))
        a = time.time_ns()
        launcher.set_port(s.state, *CUT, up=False)
        b = time.time_ns()
        step = gen.wait_report(2, timeout=90)
        ended = ff_groups(s) if mode == "groups" else {}  # before the delayed host acts
        after = gen.finish()[-1]
    finally:
        gen.kill()
    reason = wait(lambda: (lambda r: r if "rerouted after" in r else None)(
        s.host.call("GET", "/chains/cut").get("reason", "")), 60, "the host's reroute")
    time.sleep(2.0)  # a port's second status message (its link state after its config) comes a little later
    lost = step["lost"] + after["lost"]
    return {"mode": mode, "pps": pps, "baseline": baseline, "step": step, "after": after,
            "cutMs": (a - t0) / 1e6, "cutTookMs": (b - a) / 1e6, "lost": lost,
            "lostMs": step["lost"] * 1e3 / step["achievedPps"], "totalMs": lost * 1e3 / step["achievedPps"],
            "groupsBefore": before, "groupsAfter": ended, "reason": reason, "load": list(os.getloadavg()),
            "reroutes": reroutes(log.read_text(), a)}


REROUTED = re.compile(r"^(\d\d):(\d\d):(\d\d\.\d{3}) .*Chain cut rerouted after (.*?) \(\d+ rules moved off \S+\) "
                      r"(.*?) in (\d+) ms", re.M)


def reroutes(host_log, cut_unix_ns):
    """The host's moves of the chain after the cut, from its log: [{cause, how ("from the backup precomputed for
    the link" or "recomputed"), tookMs, doneMs (when it ended, ms after the cut was sent)}]. The log's clock is
    the machine's local time of day (UTC here)."""
    day = cut_unix_ns // 86_400_000_000_000 * 86_400_000
    out = []
    for m in REROUTED.finditer(host_log):
        t = day + (int(m.group(1)) * 3600 + int(m.group(2)) * 60) * 1000 + float(m.group(3)) * 1000
        out.append({"cause": m.group(4), "how": m.group(5), "tookMs": int(m.group(6)),
                    "doneMs": round(t - cut_unix_ns / 1e6, 1)})
    return out


def describe(r):
    st, af, bl = r["step"], r["after"], r["baseline"]
    return (f"{r['mode']}: cut at {r['cutMs']:.0f} ms (took {r['cutTookMs']:.0f} ms) into a step of "
            f"{st['achievedPps']:.0f} pps ({st['pps']:.0f} asked), {st['sent']} frames: lost {st['lost']} "
            f"({r['lostMs']:.1f} ms worth), duplicated {st['duplicates']}, reordered {st['reordered']}, remapped "
            f"{st['remapped']}, lost ranges (ms, frames) {st['lostRanges']}; next step: lost {af['lost']} of "
            f"{af['sent']} {af['lostRanges']}, reordered {af['reordered']}, remapped {af['remapped']}; across the cut "
            f"{r['lost']} ({r['totalMs']:.1f} ms worth); no-cut step before: lost {bl['lost']} of {bl['sent']} at "
            f"{bl['achievedPps']:.0f} pps; s1's groups before {r['groupsBefore']} as the cut step ended "
            f"{r['groupsAfter']}; host's moves (ended ms after the cut, took ms): "
            + "; ".join(f"{m['cause']}: {m['how']}, {m['doneMs']:.0f}, {m['tookMs']}" for m in r["reroutes"])
            + f"; load {r['load']}")

#!/usr/bin/env python3
"""Steady-state lossless rate of the fast emulated network against the kernel-veth one, same run (issue 23 item 1;
`make fastnet-bench`, part of `make bench`). Root, after `make build`, under /tmp/metron-sys.lock.

  fastnet_bench.py OUT [FAST_RATES [KERNEL_RATES]]   rates: comma-separated ladders in pps

Both networks carry the demo chain FW(4 rules) -> NAPT -> LB on paper-fig3, deployed through the embedded host,
1024 UDP flows with a sequence number per flow in every payload:
- kernel path (veths, userspace OVS with system ports, the agent's fanout sockets): metron-blast sends and counts
  (bench/scaling/atload.py, with its enlarged switch port buffers, the kernel path's best setting), one window
  per ladder step, loss exact per flow;
- fast path (topo up --fast: OVS-DPDK, vhost-user, topologies/README.md#fast-network): metron-fastgen sends and counts.
A step is lossless when it lost, duplicated and reordered nothing; the lossless rate is the rate really sent in
the highest step below the first that was not (metron-fastgen's schedule slips when it is descheduled). Writes
fastnet_lossless_pps.json (fast path, against the kernel path)
and fastnet_lossless_pps_vs_target.json (fast path, against issue 23's 250 kpps floor); the full report (every
step, load average) goes to stdout."""
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "deploy" / "demo"))
sys.path.insert(0, str(REPO / "bench" / "scaling"))
sys.path.insert(0, str(REPO / "topologies"))

from metron_demo.session import Session  # noqa: E402
from metron_topo import fastgen  # noqa: E402
import atload  # noqa: E402
from scaling_bench import write  # noqa: E402

FAST_RATES = (100_000, 265_000, 400_000, 500_000, 600_000, 800_000, 1_000_000)
KERNEL_RATES = (10_000, 25_000, 50_000, 75_000, 100_000, 150_000)
STEP_S = 3.0
TARGET_PPS = 250_000  # issue 23 item 2: the fast path's lossless ceiling must be at least this
PORT_BUFFER = 8 << 20  # the kernel path's switch port socket buffers (atload.enlarge_switch_buffers)


def ceiling(steps, lossless, rate):
    """The rate really carried (rate(step)) by the highest step of the ladder's lossless prefix (0 when its first
    step lost)."""
    best = 0
    for _, step in steps:
        if not lossless(step):
            break
        best = rate(step)
    return best


def kernel(tmp, rates):
    """The kernel path's ladder: [(pps, window)] with each window's exact loss, stopping after the first step
    the path did not hold."""
    with Session("paper-fig3", run_root=Path(tmp) / "kernel", log=lambda m: None) as s:
        plan = atload.deploy(s)
        atload.enlarge_switch_buffers(s, PORT_BUFFER)
        run = atload.Run(s, plan.allowed_port)
        try:
            run.rate(atload.SETUP_PPS)
            run.hold("setup", 2.0, settle=0.0)
            for pps in rates:
                run.rate(pps)
                tx, rx = run.hold(f"steady {pps}", STEP_S, settle=1.0)
                if not atload.held((pps, tx, rx)):
                    break
            run.rate(atload.SETUP_PPS)
            run.hold("drain", 1.0, settle=0.0)
            report = run.finish()
        except BaseException:
            run.kill()
            raise
    windows = [w for w in report["windows"] if w["label"].startswith("steady ")]
    return [(w["pps"], w) for w in windows], report


def kernel_lossless(window):
    return window["lost"] == 0


def fast(tmp, rates):
    with Session("paper-fig3", run_root=Path(tmp) / "fast", log=lambda m: None, fast=True) as s:
        plan = atload.deploy(s)
        steps = fastgen.run(s.state, rates, STEP_S, dport=plan.allowed_port)
        drops = {k: v for k, v in atload.drop_counters(s).items() if v}
    return [(st["pps"], st) for st in steps if not st["warmup"]], steps, drops


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "bench" / "results"
    fast_rates = tuple(int(r) for r in sys.argv[2].split(",")) if len(sys.argv) > 2 else FAST_RATES
    kernel_rates = tuple(int(r) for r in sys.argv[3].split(",")) if len(sys.argv) > 3 else KERNEL_RATES
    why = fastgen.fastnet.unavailable() or (None if fastgen.binary() else "metron-fastgen not built (make e2e-build)")
    if why:
        sys.exit(f"fastnet_bench: fast network unavailable: {why}")
    out.mkdir(parents=True, exist_ok=True)
    load = [os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="metron-fastnet-") as tmp:
        k_steps, k_report = kernel(tmp, kernel_rates)
        load.append(os.getloadavg())
        f_steps, f_all, f_drops = fast(tmp, fast_rates)
        load.append(os.getloadavg())
    # metron-blast keeps its rate (it resends what the kernel refuses); metron-fastgen's schedule may slip
    k_pps = ceiling(k_steps, kernel_lossless, lambda w: round(w["sent"] / w["seconds"], -2))
    f_pps = ceiling(f_steps, fastgen.lossless, lambda st: round(st["achievedPps"], -2))
    print(json.dumps({"kernel": {"steps": [{"pps": p, "sent": w["sent"], "lost": w["lost"]} for p, w in k_steps],
                                 "lossless": k_pps, "reordered": k_report["reordered"]},
                      "fast": {"steps": f_all, "lossless": f_pps, "dropCounters": f_drops},
                      "loadavg": load, "cpus": os.cpu_count()}))
    write(out, "fastnet_lossless_pps", f_pps, "pps",
          f"kernel veth path, same run ({len(k_steps)} steps of {STEP_S:.0f} s)", k_pps)
    write(out, "fastnet_lossless_pps_vs_target", f_pps, "pps", "issue 23 floor (250 kpps)", TARGET_PPS)


if __name__ == "__main__":
    main()

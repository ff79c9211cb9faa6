#!/usr/bin/env python3
"""Split and merge at load (bench/scaling/atload.py; part of `make bench` via e2e-bench). Root, after `make build`.

  atload_bench.py OUT [RATES]   RATES: comma-separated ladder in pps (default 10000,...,200000)
  METRON_ATLOAD_PORT_BUFFER=0   keep the switch's default port socket buffers (see atload.enlarge_switch_buffers)

Writes scaling_atload_max_pps.json (the highest ladder rate the emulated path held with no loss, against the
100 kpps target), scaling_atload_split_lost_packets.json and scaling_atload_merge_lost_packets.json (packets lost
in the operation's window, against the loss over an equal-or-longer window with no operation, same run),
scaling_atload_napt_mappings_changed.json (flows whose NAPT translation changed over both operations, against
the flow count); the full report (every window, load average) goes to stdout."""
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "deploy" / "demo"))
sys.path.insert(0, str(HERE))

from metron_demo.session import Session  # noqa: E402
import atload  # noqa: E402
from scaling_bench import write  # noqa: E402

TARGET_PPS = 100_000
DEFAULT_RATES = (10_000, 25_000, 50_000, 75_000, 100_000, 125_000, 150_000, 200_000)


PORT_BUFFER = 8 << 20  # bytes per switch port socket (atload.enlarge_switch_buffers); 0 keeps the default


def measure(s, rates, op_pps=None, port_buffer=PORT_BUFFER, margin=0):
    """One run: ladder, then split and merge at the highest rate the ladder held, or `margin` steps below it (a
    test on a shared machine keeps room for the other loads' swings), or `op_pps`; answers the report with
    "ladder", "opPps", "split", "merge", "loadavg", "portBuffer", "drops"."""
    plan = atload.deploy(s)
    buffers = atload.enlarge_switch_buffers(s, port_buffer) if port_buffer else 0
    run = atload.Run(s, plan.allowed_port)
    drops = atload.drop_counters(s)
    try:
        run.rate(atload.SETUP_PPS)
        run.hold("setup", 2.0, settle=0.0)
        steps = atload.ladder(run, rates)
        held = [step[0] for step in steps if atload.held(step)]
        pps = op_pps or (held[max(0, len(held) - 1 - margin)] if held else rates[0])
        split, merge, during = atload.split_and_merge(run, s.host, "demo", pps, 3.0)
        run.rate(atload.SETUP_PPS)
        run.hold("drain", 1.0, settle=0.0)
        report = run.finish()
        report["drops"] = atload.counter_deltas(drops, atload.drop_counters(s))
    except BaseException:
        run.kill()
        raise
    report.update(ladder=steps, opPps=pps, split=split, merge=merge, groupsWhileSplit=during["groups"],
                  loadWhileSplit=during.get("load", {"groups": []}),
                  loadavg=os.getloadavg(),
                  portBuffer={"bytes": port_buffer, "sockets": buffers})
    return report


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[1] / "bench" / "results"
    rates = tuple(int(r) for r in sys.argv[2].split(",")) if len(sys.argv) > 2 else DEFAULT_RATES
    port_buffer = int(os.environ.get("METRON_ATLOAD_PORT_BUFFER", PORT_BUFFER))
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="metron-atload-") as tmp, \
            Session("paper-fig3", run_root=Path(tmp), log=lambda m: None) as s:
        report = measure(s, rates, port_buffer=port_buffer)
    print(json.dumps(report, default=str))
    windows = {w["label"]: w for w in report["windows"]}
    held = [step[0] for step in report["ladder"] if atload.held(step)]
    write(out, "scaling_atload_max_pps", max(held, default=0), "pps", "target (issue 14 item 6)", TARGET_PPS)
    base = windows["baseline"]
    for op in ("split", "merge"):
        w = windows[op]
        write(out, f"scaling_atload_{op}_lost_packets", w["lost"], "packets",
              f"no operation, same run, {base['seconds']:.1f} s window vs {w['seconds']:.1f} s, at {w['pps']} pps",
              base["lost"])
    write(out, "scaling_atload_napt_mappings_changed", len(report["mappingsChanged"]), "flows",
          f"flows sent ({atload.FLOWS}); split and merge at {report['opPps']} pps", atload.FLOWS)


if __name__ == "__main__":
    main()

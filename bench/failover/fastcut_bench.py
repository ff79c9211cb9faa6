#!/usr/bin/python3
"""Packets lost across a link cut at the fast path's rate (issue 23 item 3; `make fastcut-bench`, part of `make
bench`). Root, after `make build`, under /tmp/metron-sys.lock. The scenario is bench/failover/fastcut.py's (also
tests/e2e/test_fast_linkcut_e2e.py): FW(4)->NAPT->LB on paper-fig5 `--fast`, 1024 UDP flows at moves.PPS offered
(~250-262 kpps sent), the s1-s3 link cut; rounds alternate the modes, each on a fresh topology:
  failover_fastpath_lost_packets / failover_fastpath_lost_ms: lost across the cut (the cut step and the step
      after it, the host's move onto the backup included) with the backup armed as a fast-failover group; baseline:
      the same precomputed backup applied by the host after the port-down event (--failover-groups off); medians.
  failover_fastpath_switch_lost_ms: with the group, the cut step alone (the host's reaction delayed past it):
      what the switch's own switchover costs.
  failover_fastpath_controller_move_ms: the host's first move onto the backup (its own timing, from its log), with
      groups off: how long traffic waits for the controller here.
usage: fastcut_bench.py OUT_DIR [ROUNDS]"""
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "deploy" / "demo"))

import fastcut  # noqa: E402
from bench import machine, write  # noqa: E402


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[1] / "bench" / "results"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    runs = {m: [] for m in fastcut.MODES}
    with tempfile.TemporaryDirectory(prefix="metron-fastcut-") as tmp:
        for k in range(rounds):
            for mode in fastcut.MODES:
                r = fastcut.one_cut(mode, Path(tmp) / f"{mode}-{k}")
                print(f"round {k} " + fastcut.describe(r), flush=True)
                runs[mode].append(r)
    pps = [round(r["step"]["achievedPps"]) for rs in runs.values() for r in rs]
    common = {"machine": machine(), "pps_sent": pps, "pps_offered": fastcut.moves.PPS,
              "loads": [r["load"][0] for rs in runs.values() for r in rs]}
    desc = (f"lost across a cut of the s1-s3 link on the fast path (paper-fig5 --fast: OVS-DPDK, memif links; "
            f"FW(4)->NAPT->LB, 1024 UDP flows at {min(pps)}-{max(pps)} pps), backup armed as a fast-failover "
            f"group; median of {rounds}")
    base = ("the same link backup applied by the host after the port-down event (--failover-groups off), same run "
            "and rate")
    for unit, key, name in (("packets", "lost", "failover_fastpath_lost_packets"),
                            ("ms", "totalMs", "failover_fastpath_lost_ms")):
        value = statistics.median(r[key] for r in runs["groups"])
        baseline = statistics.median(r[key] for r in runs["controller"])
        write(out, name, {"description": desc, "value": round(value, 1), "unit": unit, "baseline": base,
                          "baseline_value": round(baseline, 1),
                          "ratio": round(value / baseline, 4) if baseline else None, "goal": "<= 50 ms worth",
                          "rounds": {m: [round(r[key], 1) for r in rs] for m, rs in runs.items()}, **common})
    write(out, "failover_fastpath_switch_lost_ms", {
        "description": "with the fast-failover group, the cut step alone (the host's reaction delayed past it): "
                       f"the switch's own switchover at the fast path's rate; median of {rounds}",
        "value": round(statistics.median(r["lostMs"] for r in runs["groups"]), 1), "unit": "ms",
        "rounds": [round(r["lostMs"], 1) for r in runs["groups"]], **common})
    moves_ms = [r["reroutes"][0]["tookMs"] for r in runs["controller"] if r["reroutes"]]
    write(out, "failover_fastpath_controller_move_ms", {
        "description": "groups off: the host's first move of the chain onto the link's backup (its own timing) while "
                       f"the fast path carries the rate on the same 2 CPUs; median of {len(moves_ms)}",
        "value": statistics.median(moves_ms) if moves_ms else None, "unit": "ms", "rounds": moves_ms,
        "all_moves": [r["reroutes"] for r in runs["controller"]], **common})
    return 0


if __name__ == "__main__":
    sys.exit(main())

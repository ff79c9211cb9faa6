#!/usr/bin/python3
"""Packets lost across a link cut (issue 23 item 3), one JSON per figure in the results directory:
  failover_linkcut_lost_packets / failover_linkcut_lost_ms: FW(50)->NAPT->LB on paper-fig5 (kernel path: veths,
      userspace OVS), one UDP flow at a steady rate through the chain, the s1-s3 link cut (its veth set down) while
      it runs; value: the median over rounds with the backup armed as an OpenFlow fast-failover group on s1;
      baseline: the same precomputed link backup applied by the controller after OVS reports the port down
      (--failover-groups off). Both in the same run, at the same rate, rounds alternating.
  failover_linkcut_outage_ms: the longest run of consecutive lost packets, in ms of the flow: the outage the cut
      caused, apart from any loss the loaded emulated network has on its own (counted in the figures above).
The rate (default 2000 pps) is one this kernel path carries with no loss of its own at a load of 10-15.
usage: linkcut_bench.py OUT_DIR [PPS] [ROUNDS]"""
import re
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))

from bench import machine, write  # noqa: E402
from metron_demo import linkcut, scenario  # noqa: E402
from metron_demo.polling import wait_for as wait  # noqa: E402
from metron_demo.session import Session  # noqa: E402

SECONDS = 4
CUT_AFTER_S = 1.5
MODES = {"groups": [], "controller": ["--failover-groups", "off"]}


def one_cut(mode, pps, k):
    """Deploys the chain on a fresh paper-fig5, waits for its link backups, cuts s1-s3 under traffic."""
    with Session("paper-fig5", log=lambda m: None, host_args=MODES[mode]) as s:
        chain, _, _, _ = scenario.deploy(s, "cut", 50)
        if chain["state"] != "ACTIVE":
            raise RuntimeError(f"chain not ACTIVE: {chain}")
        log = Path(s.state["run_dir"]) / "host.log"
        wait(lambda: re.search(r"failover backups for .* [1-9]\d* links", log.read_text()), 60, "the link backups")
        if mode == "groups":
            wait(lambda: any(kind == "ff" for kind, _ in s.groups("s1").values()), 60, "the groups on s1")
        r = linkcut.cut_while_sending(s, "s1", 2, pps, SECONDS, CUT_AFTER_S, f"{mode}-{k}")
        r["outage_ms"] = max((b - a + 1 for a, b in r["gaps"]), default=0) * 1000.0 / pps
        # what the controller did and how long its move took (its own account in the chain's reason)
        wait(lambda: "rerouted after" in s.host.call("GET", "/chains")["chains"][0].get("reason", ""), 60,
             "the controller's reroute")
        r["reason"] = s.host.call("GET", "/chains")["chains"][0]["reason"]
        print(f"{mode} round {k}: lost {r['lost']} of {r['sent']} ({r['lost_ms']:.1f} ms worth) gaps {r['gaps']}; "
              f"{r['reason']}", flush=True)
        return r


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "bench" / "results"
    pps = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    runs = {m: [] for m in MODES}
    for k in range(rounds):
        for mode in MODES:  # alternating: both see the same machine state
            runs[mode].append(one_cut(mode, pps, k))
    for unit, key, name in (("packets", "lost", "failover_linkcut_lost_packets"),
                            ("ms", "lost_ms", "failover_linkcut_lost_ms"),
                            ("ms", "outage_ms", "failover_linkcut_outage_ms")):
        value = statistics.median(r[key] for r in runs["groups"])
        base = statistics.median(r[key] for r in runs["controller"])
        write(out, name, {
            "description": f"lost across a cut of the s1-s3 link (paper-fig5, FW(50)->NAPT->LB, one UDP flow at "
                           f"{pps} pps, kernel veths), backup armed as a fast-failover group; median of {rounds}",
            "value": round(value, 1), "unit": unit,
            "baseline": "the same link backup applied by the controller after the port-down event "
                        "(--failover-groups off), same run and rate",
            "baseline_value": round(base, 1), "ratio": round(value / base, 3) if base else None,
            "machine": machine(), "pps": pps, "rounds": {m: [r[key] for r in rs] for m, rs in runs.items()},
            "controller_reasons": [r["reason"] for r in runs["controller"]]})
    return 0


if __name__ == "__main__":
    sys.exit(main())

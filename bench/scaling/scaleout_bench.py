#!/usr/bin/python3
"""Scale-out reaction against the same-server split, side by side in one run (issue 14, docs/scaling.md#scale-out).
The demo chain (FW -> SpinCycles -> NAPT -> LB: one stateful class) ramps up until the controller divides its class
and back down until the halves join (tests/e2e/test_class_split.py's DemoRun, the scenario the e2e tests check), on
two topologies in alternating rounds:

  two-servers   one worker core per server: the split finds no core on the chain's server and places the new
                half on the other one (other agent's DeployPipeline, state over gRPC, path rules, re-tag)
  paper-fig3    a server with a second core: the class is divided onto it (the baseline)

  scaling_scaleout_reaction_ms     overload onset -> the split DONE (its history entry's reaction), scale-out,
                                   median of TRIALS; baseline the same-server split's median, same run
  scaling_scaleout_lost_packets    packets lost at the sink over the whole run (split and merge back), worst trial;
                                   baseline the same-server runs' worst

Usage: scaleout_bench.py OUT_DIR   (root; needs `make build`; SCALEOUT_BENCH_TRIALS, default 3)"""
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "deploy" / "demo"))
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(HERE))

from metron_demo.session import Session  # noqa: E402
from scaling_bench import out_dir, write  # noqa: E402
from test_class_split import DemoRun  # noqa: E402
import workload  # noqa: E402

TOPOLOGIES = {"scale-out": "two-servers", "same server": "paper-fig3"}


def one(topology, work):
    """One split and merge back of the demo chain on `topology`: the split's reaction and steps, packets lost."""
    with Session(topology, run_root=work, log=lambda m: None) as s:
        run = DemoRun(s, work)
        split = next(e for e in run.after["history"] if e["kind"] == "split")
        assert split["outcome"] == "DONE", split
        lost = workload.lost(run.arrivals, run.log["sent"])
        return {"reaction_ms": split["reactionMs"], "steps": split["steps"], "reason": split["reason"],
                "lost": sum(len(v) for v in lost.values())}


def main():
    out = out_dir(__doc__)
    trials = int(os.environ.get("SCALEOUT_BENCH_TRIALS", "3"))
    runs = {k: [] for k in TOPOLOGIES}
    with tempfile.TemporaryDirectory(prefix="metron-scaleout-bench-") as tmp:
        for t in range(trials):
            for what, topology in TOPOLOGIES.items():  # alternating: both see the same machine state
                r = one(topology, Path(tmp) / f"{t}-{topology}")
                runs[what].append(r)
                print(f"trial {t} {what} ({topology}): reaction {r['reaction_ms']} ms, lost {r['lost']}, steps "
                      f"[{r['steps']}]", file=sys.stderr)
    # the scale-out runs must have gone to the other server, the baseline's must have stayed
    assert all("another server" in r["reason"] for r in runs["scale-out"]), runs["scale-out"]
    assert not any("another server" in r["reason"] for r in runs["same server"]), runs["same server"]
    med = {k: statistics.median(r["reaction_ms"] for r in v) for k, v in runs.items()}
    write(out, "scaling_scaleout_reaction_ms", med["scale-out"], "ms",
          f"same-server class split (paper-fig3), same run; medians of {trials} alternating trials",
          med["same server"])
    write(out, "scaling_scaleout_lost_packets", max(r["lost"] for r in runs["scale-out"]), "packets",
          f"same-server class split, same run; worst of {trials} trials (split and merge back)",
          max(r["lost"] for r in runs["same server"]))


if __name__ == "__main__":
    main()
